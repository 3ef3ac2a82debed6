package exec

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver/exec/eval"
	"github.com/quiverdb/quiver/physical"
)

// exprEvaluator is the part of *eval.Evaluator the exchange and sort
// operators use.
type exprEvaluator interface {
	Eval(ctx context.Context, mem memory.Allocator, b arrow.RecordBatch) (arrow.Array, error)
}

// compileEval compiles a computed sort or repartition key.
func compileEval(e physical.Expr) (exprEvaluator, error) {
	ev, err := eval.Compile(e)
	if err != nil {
		return nil, err
	}
	return ev, nil
}
