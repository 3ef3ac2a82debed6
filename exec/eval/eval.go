package eval

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
)

// Evaluator evaluates one compiled expression. It is safe for concurrent use
// by many partitions (it holds no per-call state).
type Evaluator struct {
	expr physical.Expr
}

// Compile prepares e for evaluation (validates it, precompiles LIKE patterns,
// IN-list sets and function kernels).
func Compile(e physical.Expr) (*Evaluator, error) {
	return nil, qerr.NotImplementedf("eval: not implemented yet")
}

// Eval evaluates over batch and returns an array of batch.NumRows() values of
// the expression's DataType. The caller owns the result and must Release it.
// Buffers come from mem.
func (ev *Evaluator) Eval(ctx context.Context, mem memory.Allocator, batch arrow.RecordBatch) (arrow.Array, error) {
	return nil, qerr.NotImplementedf("eval: not implemented yet")
}
