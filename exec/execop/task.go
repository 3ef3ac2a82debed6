package execop

import (
	"context"
	"errors"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver/physical"
	"golang.org/x/sync/errgroup"
)

// BuildFunc builds the operator producing one partition of a plan node's
// output, building its inputs recursively. exec.Build is the one
// implementation; a TaskContext carries it so that operators in other
// packages build their inputs without importing exec.
type BuildFunc func(tc *TaskContext, p physical.Plan, partition int) (Operator, error)

// NewTaskContext returns a TaskContext allocating from mem (use an
// *AccountingAllocator to enforce a memory limit) with batchSize rows per
// batch (DefaultBatchSize if ≤ 0), building inputs with build.
func NewTaskContext(mem memory.Allocator, batchSize int, build BuildFunc) *TaskContext {
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	if batchSize <= 0 {
		batchSize = DefaultBatchSize
	}
	return &TaskContext{Mem: mem, BatchSize: batchSize, build: build}
}

// BatchRows is the target rows per batch.
func (tc *TaskContext) BatchRows() int {
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
			defer RecoverRoot(&err, "partition of "+p.String())
			parts[i], err = Drain(gctx, tc, p, i)
			return err
		})
	}
	err := g.Wait()
	var out []arrow.RecordBatch
	for _, bs := range parts {
		out = append(out, bs...)
	}
	if err != nil {
		ReleaseAll(out)
		return nil, err
	}
	return out, nil
}

// Drain builds, opens and runs one partition to the end; on error it
// releases what it collected.
func Drain(ctx context.Context, tc *TaskContext, p physical.Plan, partition int) (out []arrow.RecordBatch, err error) {
	op, err := tc.Build(p, partition)
	if err != nil {
		return nil, err
	}
	defer func() {
		if cerr := op.Close(); err == nil && cerr != nil {
			err = cerr
		}
		if err != nil {
			ReleaseAll(out)
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

func ReleaseAll(bs []arrow.RecordBatch) {
	for _, b := range bs {
		b.Release()
	}
}

// Build returns the operator producing partition of p's output, built by
// the context's BuildFunc. Operators call it for their inputs.
func (tc *TaskContext) Build(p physical.Plan, partition int) (Operator, error) {
	return tc.build(tc, p, partition)
}
