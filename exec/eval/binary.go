package eval

import (
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
)

// compileBinary dispatches a binary operator to its kernel family.
func compileBinary(e *physical.Binary) (node, error) {
	if e.Left == nil || e.Right == nil || e.Type == nil {
		return nil, qerr.Internalf("eval: binary %s with a nil operand or type", e.Op)
	}
	switch e.Op {
	case physical.OpEq, physical.OpNotEq, physical.OpLt, physical.OpLtEq, physical.OpGt, physical.OpGtEq:
		return compileCompare(e)
	case physical.OpAnd, physical.OpOr:
		return compileLogic(e)
	case physical.OpAdd, physical.OpSub, physical.OpMul, physical.OpDiv, physical.OpMod:
		return compileArith(e)
	case physical.OpConcat:
		return compileConcat([]physical.Expr{e.Left, e.Right}, true)
	}
	return nil, qerr.NotImplementedf("eval: operator %s is not supported", e.Op)
}
