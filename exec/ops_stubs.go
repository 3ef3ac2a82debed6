package exec

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
)

// Stubs replaced by the real operators.

func notYet(what string) error { return qerr.NotImplementedf("exec: %s not implemented yet", what) }

func newScan(tc *TaskContext, n *physical.Scan, partition int) (Operator, error) {
	return nil, notYet("scan")
}
func newFilter(tc *TaskContext, n *physical.Filter, partition int) (Operator, error) {
	return nil, notYet("filter")
}
func newProjection(tc *TaskContext, n *physical.Projection, partition int) (Operator, error) {
	return nil, notYet("projection")
}
func newSort(tc *TaskContext, n *physical.Sort, partition int) (Operator, error) {
	return nil, notYet("sort")
}
func newSortPreservingMerge(tc *TaskContext, n *physical.SortPreservingMerge, partition int) (Operator, error) {
	return nil, notYet("merge")
}
func newLimit(tc *TaskContext, n *physical.Limit, partition int) (Operator, error) {
	return nil, notYet("limit")
}
func newLocalLimit(tc *TaskContext, n *physical.LocalLimit, partition int) (Operator, error) {
	return nil, notYet("local limit")
}
func newUnion(tc *TaskContext, n *physical.Union, partition int) (Operator, error) {
	return nil, notYet("union")
}
func newValues(tc *TaskContext, n *physical.Values, partition int) (Operator, error) {
	return nil, notYet("values")
}
func newEmpty(tc *TaskContext, n *physical.Empty, partition int) (Operator, error) {
	return nil, notYet("empty")
}
func newRepartition(tc *TaskContext, n *physical.Repartition, partition int) (Operator, error) {
	return nil, notYet("repartition")
}
func newCoalesce(tc *TaskContext, n *physical.Coalesce, partition int) (Operator, error) {
	return nil, notYet("coalesce")
}

// instrument wraps op to record metrics for p when metrics are enabled.
func (tc *TaskContext) instrument(p physical.Plan, op Operator) Operator { return op }

// CollectAll runs every partition of p in parallel and returns all batches
// (in no particular order); the caller releases them.
func CollectAll(ctx context.Context, tc *TaskContext, p physical.Plan) ([]arrow.RecordBatch, error) {
	return nil, notYet("CollectAll")
}

// Shared returns the value stored under key, creating it with mk on first
// use. Partitions of one query use it to share exchanges and join build
// sides. Safe for concurrent use.
func (tc *TaskContext) Shared(key any, mk func() any) any {
	tc.shared.mu.Lock()
	defer tc.shared.mu.Unlock()
	if tc.shared.m == nil {
		tc.shared.m = map[any]any{}
	}
	v, ok := tc.shared.m[key]
	if !ok {
		v = mk()
		tc.shared.m[key] = v
	}
	return v
}

// Grow reserves n bytes of non-Arrow memory (hash tables, sort indices)
// against the query's memory limit; it returns a Resources error if over.
func (tc *TaskContext) Grow(n int64) error { return nil }

// Shrink returns n bytes reserved with Grow.
func (tc *TaskContext) Shrink(n int64) {}
