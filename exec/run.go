package exec

import (
	"context"
	"errors"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver/physical"
	"golang.org/x/sync/errgroup"
)

// NewTaskContext returns a TaskContext allocating from mem (use an
// *AccountingAllocator to enforce a memory limit) with batchSize rows per
// batch (DefaultBatchSize if ≤ 0).
func NewTaskContext(mem memory.Allocator, batchSize int) *TaskContext {
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	if batchSize <= 0 {
		batchSize = DefaultBatchSize
	}
	return &TaskContext{Mem: mem, BatchSize: batchSize}
}

// batchSize is the target rows per batch.
func (tc *TaskContext) batchSize() int {
	if tc.BatchSize <= 0 {
		return DefaultBatchSize
	}
	return tc.BatchSize
}

// CollectAll runs every partition of p in parallel and returns all batches
// (grouped by partition, partitions in order). The caller owns the batches
// and releases them. On error every batch already collected is released and
// every partition is stopped before CollectAll returns.
func CollectAll(ctx context.Context, tc *TaskContext, p physical.Plan) ([]arrow.RecordBatch, error) {
	n := p.OutputPartitions()
	parts := make([][]arrow.RecordBatch, n)
	g, gctx := errgroup.WithContext(ctx)
	for i := range n {
		g.Go(func() (err error) {
			defer recoverRoot(&err, "partition of "+p.String())
			parts[i], err = drain(gctx, tc, p, i)
			return err
		})
	}
	err := g.Wait()
	var out []arrow.RecordBatch
	for _, bs := range parts {
		out = append(out, bs...)
	}
	if err != nil {
		releaseAll(out)
		return nil, err
	}
	return out, nil
}

// drain builds, opens and runs one partition to the end; on error it
// releases what it collected.
func drain(ctx context.Context, tc *TaskContext, p physical.Plan, partition int) (out []arrow.RecordBatch, err error) {
	op, err := Build(tc, p, partition)
	if err != nil {
		return nil, err
	}
	defer func() {
		if cerr := op.Close(); err == nil && cerr != nil {
			err = cerr
		}
		if err != nil {
			releaseAll(out)
			out = nil
		}
	}()
	if err := op.Open(ctx); err != nil {
		return nil, err
	}
	for {
		b, err := op.Next(ctx)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		if b.NumRows() == 0 {
			b.Release()
			continue
		}
		out = append(out, b)
	}
}

func releaseAll(bs []arrow.RecordBatch) {
	for _, b := range bs {
		b.Release()
	}
}

// Execute returns one operator over all partitions of p: Build(p, 0) when p
// has one partition, else an operator that runs every partition in its own
// goroutine and merges their batches in no particular order. The caller
// Opens, drains and Closes it.
func Execute(ctx context.Context, tc *TaskContext, p physical.Plan) (Operator, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if p.OutputPartitions() == 1 {
		return Build(tc, p, 0)
	}
	return &coalesceOp{tc: tc, input: p}, nil
}
