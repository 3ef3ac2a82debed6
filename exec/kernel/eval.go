package kernel

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver/exec/eval"
	"github.com/quiverdb/quiver/physical"
)

// ExprEvaluator is the part of *eval.Evaluator the exchange and sort
// operators use.
type ExprEvaluator interface {
	Eval(ctx context.Context, mem memory.Allocator, b arrow.RecordBatch) (arrow.Array, error)
}

// CompileEval compiles a computed sort or repartition key.
func CompileEval(e physical.Expr) (ExprEvaluator, error) {
	ev, err := eval.Compile(e)
	if err != nil {
		return nil, err
	}
	return ev, nil
}
