package sql

import (
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/quiverdb/quiver/functions"
	"github.com/quiverdb/quiver/logical"
	"github.com/quiverdb/quiver/qerr"
)

// libraryCall lowers a call of a function of the registry (args already
// lowered): aliases resolve to the canonical name, aggregates TiDB does not
// know as such become AggExprs, and the functions the registry marks as
// lowered become the expressions they stand for.
func (b *builder) libraryCall(name string, n *ast.FuncCallExpr, args []logical.Expr, ctx *exprCtx) (logical.Expr, error) {
	switch name {
	case "grouping":
		// GROUPING(...) is resolved against the grouping sets (select.go).
		return &logical.ScalarFunc{Name: name, Args: args}, nil
	case "trim":
		return trimCall(n, args)
	case "position", "locate":
		// POSITION(sub IN s) reaches here as position(sub, s); MySQL's
		// LOCATE(sub, s) takes the same order.
		if len(args) == 2 {
			return &logical.ScalarFunc{Name: "strpos", Args: []logical.Expr{args[1], args[0]}}, nil
		}
	case "curdate":
		name = "current_date"
	}
	f, ok := functions.Lookup(name)
	if !ok {
		if notYet[name] {
			return nil, qerr.NotImplementedf("sql: function %s is not supported yet", name)
		}
		return nil, functions.Unknown(name)
	}
	if f.Kind == functions.Aggregate {
		if err := aggregateAllowed(f, args, ctx); err != nil {
			return nil, err
		}
	}
	return logical.Call(name, args)
}

// trimCall lowers TRIM(s), TRIM([BOTH|LEADING|TRAILING] [chars] FROM s)
// (TiDB's args: s, chars, direction) to btrim, ltrim or rtrim.
func trimCall(n *ast.FuncCallExpr, args []logical.Expr) (logical.Expr, error) {
	if len(args) == 1 {
		return &logical.ScalarFunc{Name: "trim", Args: args}, nil
	}
	name := "btrim"
	if len(n.Args) == 3 {
		if d, ok := n.Args[2].(*ast.TrimDirectionExpr); ok {
			switch d.Direction {
			case ast.TrimLeading:
				name = "ltrim"
			case ast.TrimTrailing:
				name = "rtrim"
			}
		}
	}
	return &logical.ScalarFunc{Name: name, Args: args[:2]}, nil
}

// aggregateAllowed checks an aggregate that reaches the lowering as a plain
// function call (TiDB knows count, sum and the like as aggregates, not
// bool_and or any_value) is where aggregates may be.
func aggregateAllowed(f *functions.Func, args []logical.Expr, ctx *exprCtx) error {
	if !ctx.aggOK {
		return qerr.Planf("aggregate functions are not allowed in %s: %s", ctx.clause, f.Name)
	}
	if ctx.inAgg {
		return qerr.Planf("aggregate function calls cannot be nested: %s", f.Name)
	}
	for _, a := range args {
		if containsAgg(a) {
			return qerr.Planf("aggregate function calls cannot be nested: %s", f.Name)
		}
	}
	return nil
}

func containsAgg(e logical.Expr) bool {
	found := false
	logical.InspectExpr(e, func(x logical.Expr) bool {
		if _, ok := x.(*logical.AggExpr); ok {
			found = true
		}
		return !found
	})
	return found
}

// notYet are well-known functions Quiver does not have yet: calling one is
// "not implemented", not "unknown".
var notYet = map[string]bool{

	"group_concat": true,
	"listagg":      true, "regr_slope": true, "regr_intercept": true, "mode": true,
}
