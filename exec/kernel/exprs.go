package kernel

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver/physical"
)

// ExprRunner evaluates one expression of a hash aggregate or join over a
// batch. Plain column references (the usual group, argument and join keys)
// take the column directly; anything else goes through exec/eval.
type ExprRunner struct {
	Col  int           // ≥ 0: the input column; -1: use ev
	ev   ExprEvaluator // compiled by compileEval (exec/eval)
	Type arrow.DataType
}

func CompileExpr(e physical.Expr) (ExprRunner, error) {
	if c, ok := e.(*physical.Column); ok {
		return ExprRunner{Col: c.Index, Type: c.Type}, nil
	}
	ev, err := CompileEval(e)
	if err != nil {
		return ExprRunner{}, err
	}
	return ExprRunner{Col: -1, ev: ev, Type: e.DataType()}, nil
}

func CompileExprs(es []physical.Expr) ([]ExprRunner, error) {
	out := make([]ExprRunner, len(es))
	for i, e := range es {
		r, err := CompileExpr(e)
		if err != nil {
			return nil, err
		}
		out[i] = r
	}
	return out, nil
}

// Eval returns the expression's values over b; the caller releases them.
func (x ExprRunner) Eval(ctx context.Context, mem memory.Allocator, b arrow.RecordBatch) (arrow.Array, error) {
	if x.Col >= 0 {
		a := b.Column(x.Col)
		a.Retain()
		return a, nil
	}
	return x.ev.Eval(ctx, mem, b)
}

// EvalAll evaluates xs over b. On error nothing is left to release.
func EvalAll(ctx context.Context, mem memory.Allocator, xs []ExprRunner, b arrow.RecordBatch) ([]arrow.Array, error) {
	out := make([]arrow.Array, 0, len(xs))
	for _, x := range xs {
		a, err := x.Eval(ctx, mem, b)
		if err != nil {
			ReleaseArrays(out)
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}
