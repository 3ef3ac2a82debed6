package exec

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
)

// exprEvaluator is the part of *eval.Evaluator the exchange and sort
// operators use.
type exprEvaluator interface {
	Eval(ctx context.Context, mem memory.Allocator, b arrow.RecordBatch) (arrow.Array, error)
}

// compileEval compiles a computed sort or repartition key.
// TODO(exec): use eval.Compile once exec/eval builds.
func compileEval(e physical.Expr) (exprEvaluator, error) {
	return nil, qerr.NotImplementedf("exec: computed key %s not supported yet", e)
}
