package exec

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver/physical"
)

// exprRunner evaluates one expression of a hash aggregate or join over a
// batch. Plain column references (the usual group, argument and join keys)
// take the column directly; anything else goes through exec/eval.
type exprRunner struct {
	col int           // ≥ 0: the input column; -1: use ev
	ev  exprEvaluator // compiled by compileEval (exec/eval)
	dt  arrow.DataType
}

func compileExpr(e physical.Expr) (exprRunner, error) {
	if c, ok := e.(*physical.Column); ok {
		return exprRunner{col: c.Index, dt: c.Type}, nil
	}
	ev, err := compileEval(e)
	if err != nil {
		return exprRunner{}, err
	}
	return exprRunner{col: -1, ev: ev, dt: e.DataType()}, nil
}

func compileExprs(es []physical.Expr) ([]exprRunner, error) {
	out := make([]exprRunner, len(es))
	for i, e := range es {
		r, err := compileExpr(e)
		if err != nil {
			return nil, err
		}
		out[i] = r
	}
	return out, nil
}

// eval returns the expression's values over b; the caller releases them.
func (x exprRunner) eval(ctx context.Context, mem memory.Allocator, b arrow.RecordBatch) (arrow.Array, error) {
	if x.col >= 0 {
		a := b.Column(x.col)
		a.Retain()
		return a, nil
	}
	return x.ev.Eval(ctx, mem, b)
}

// evalAll evaluates xs over b. On error nothing is left to release.
func evalAll(ctx context.Context, mem memory.Allocator, xs []exprRunner, b arrow.RecordBatch) ([]arrow.Array, error) {
	out := make([]arrow.Array, 0, len(xs))
	for _, x := range xs {
		a, err := x.eval(ctx, mem, b)
		if err != nil {
			freeArrays(out)
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}

// freeArrays releases every non-nil array of as.
func freeArrays(as []arrow.Array) {
	for _, a := range as {
		if a != nil {
			a.Release()
		}
	}
}
