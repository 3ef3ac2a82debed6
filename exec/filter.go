package exec

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver/exec/eval"
	"github.com/quiverdb/quiver/physical"
)

// filterOp keeps the rows of its input where the predicate is TRUE: it
// evaluates the predicate to a selection vector and takes those rows.
// Batches with no selected row are dropped; fully selected batches pass
// through untouched.
type filterOp struct {
	tc     *TaskContext
	schema *arrow.Schema
	input  Operator
	pred   *eval.Evaluator
	sel    []int32 // reused selection buffer
	closed bool
}

func newFilter(tc *TaskContext, n *physical.Filter, partition int) (Operator, error) {
	pred, err := eval.Compile(n.Predicate)
	if err != nil {
		return nil, err
	}
	input, err := Build(tc, n.Input, partition)
	if err != nil {
		return nil, err
	}
	return &filterOp{tc: tc, schema: n.Schema(), input: input, pred: pred}, nil
}

func (f *filterOp) Open(ctx context.Context) error { return f.input.Open(ctx) }

func (f *filterOp) Next(ctx context.Context) (arrow.RecordBatch, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		b, err := f.input.Next(ctx)
		if err != nil {
			return nil, err
		}
		out, err := f.apply(ctx, b)
		b.Release()
		if err != nil {
			return nil, err
		}
		if out != nil {
			return out, nil
		}
	}
}

// apply returns b's selected rows, or nil if none; b keeps its reference.
func (f *filterOp) apply(ctx context.Context, b arrow.RecordBatch) (arrow.RecordBatch, error) {
	if b.NumRows() == 0 {
		return nil, nil
	}
	sel, err := f.pred.EvalSelection(ctx, f.tc.Mem, b, f.sel)
	f.sel = sel
	if err != nil {
		return nil, err
	}
	switch int64(len(sel)) {
	case 0:
		return nil, nil
	case b.NumRows():
		b.Retain()
		return b, nil
	}
	return takeBatch(ctx, f.tc.Mem, f.schema, b, sel)
}

func (f *filterOp) Close() error {
	if f.closed {
		return nil
	}
	f.closed = true
	return f.input.Close()
}
