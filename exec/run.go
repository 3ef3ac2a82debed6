package exec

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver/exec/execop"
	"github.com/quiverdb/quiver/physical"
)

// NewTaskContext returns a TaskContext allocating from mem (use an
// *AccountingAllocator to enforce a memory limit) with batchSize rows per
// batch (DefaultBatchSize if ≤ 0), whose operators build their inputs with
// Build.
func NewTaskContext(mem memory.Allocator, batchSize int) *execop.TaskContext {
	return execop.NewTaskContext(mem, batchSize, Build)
}

// Execute returns one operator over all partitions of p: Build(p, 0) when p
// has one partition, else an operator that runs every partition in its own
// goroutine and merges their batches in no particular order. The caller
// Opens, drains and Closes it.
func Execute(ctx context.Context, tc *execop.TaskContext, p physical.Plan) (execop.Operator, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if p.OutputPartitions() == 1 {
		return Build(tc, p, 0)
	}
	return &coalesceOp{tc: tc, input: p}, nil
}
