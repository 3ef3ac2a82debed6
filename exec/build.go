package exec

import (
	"github.com/quiverdb/quiver/exec/aggregate"
	"github.com/quiverdb/quiver/exec/execop"
	"github.com/quiverdb/quiver/exec/expand"
	"github.com/quiverdb/quiver/exec/join"
	"github.com/quiverdb/quiver/exec/scan"
	"github.com/quiverdb/quiver/exec/shuffle"
	"github.com/quiverdb/quiver/exec/sort"
	"github.com/quiverdb/quiver/exec/window"
	"github.com/quiverdb/quiver/exec/write"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
)

// Build returns the operator producing partition of p's output, building its
// inputs recursively. This is the one type switch from physical nodes to
// operators. The caller Opens, drains and Closes the returned operator.
func Build(tc *execop.TaskContext, p physical.Plan, partition int) (execop.Operator, error) {
	if partition < 0 || partition >= p.OutputPartitions() {
		return nil, qerr.Internalf("exec: partition %d out of range for %s (%d partitions)", partition, p, p.OutputPartitions())
	}
	var (
		op  execop.Operator
		err error
	)
	switch n := p.(type) {
	case *physical.Scan:
		op, err = scan.NewScan(tc, n, partition)
	case *physical.Filter:
		op, err = newFilter(tc, n, partition)
	case *physical.Projection:
		op, err = newProjection(tc, n, partition)
	case *physical.HashAggregate:
		markUnread(tc, n)
		op, err = aggregate.NewHashAggregate(tc, n, partition)
	case *physical.HashJoin:
		op, err = join.NewHashJoin(tc, n, partition)
	case *physical.NestedLoopJoin:
		op, err = join.NewNestedLoopJoin(tc, n, partition)
	case *physical.Sort:
		op, err = sort.NewSort(tc, n, partition)
	case *physical.Window:
		op, err = window.NewWindow(tc, n, partition)
	case *physical.FileSink:
		op, err = write.NewFileSink(tc, n, partition)
	case *physical.FileCommit:
		op, err = write.NewFileCommit(tc, n, partition)
	case *physical.Expand:
		op, err = expand.NewExpand(tc, n, partition)
	case *physical.SortPreservingMerge:
		op, err = newSortPreservingMerge(tc, n, partition)
	case *physical.Limit:
		op, err = newLimit(tc, n, partition)
	case *physical.LocalLimit:
		op, err = newLocalLimit(tc, n, partition)
	case *physical.Union:
		op, err = newUnion(tc, n, partition)
	case *physical.Values:
		op, err = newValues(tc, n, partition)
	case *physical.Empty:
		op, err = newEmpty(tc, n, partition)
	case *physical.RecursiveQuery:
		op, err = newRecursiveQuery(tc, n, partition)
	case *physical.WorkTable:
		op, err = newWorkTable(tc, n, partition)
	case *physical.Repartition:
		op, err = newRepartition(tc, n, partition)
	case *physical.Coalesce:
		op, err = newCoalesce(tc, n, partition)
	case *physical.ShuffleWriter:
		op, err = shuffle.NewShuffleWriter(tc, n, partition)
	case *physical.ShuffleReader:
		op, err = shuffle.NewShuffleReader(tc, n, partition)
	case *physical.CacheReader:
		op, err = shuffle.NewCacheReader(tc, n, partition)
	case *physical.UnresolvedShuffle:
		return nil, qerr.Internalf("exec: stage %d's output was not resolved before the task ran", n.StageID)
	default:
		return nil, qerr.NotImplementedf("exec: no operator for %T", p)
	}
	if err != nil {
		return nil, err
	}
	return tc.Instrument(p, op), nil
}
