package planner

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver/logical"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
)

// Expr translates a logical expression over schema s into a physical one:
// columns become indices, every node gets its resolved type. This is the one
// type switch from logical to physical expressions. Subqueries and outer
// references must have been decorrelated by the optimizer.
func Expr(e logical.Expr, s *logical.Schema) (physical.Expr, error) {
	typ, _, err := e.DataType(s)
	if err != nil {
		return nil, err
	}
	conv := func(x logical.Expr) (physical.Expr, error) { return Expr(x, s) }
	switch e := e.(type) {
	case *logical.Column:
		i, err := s.IndexOf(e.Qualifier, e.Name)
		if err != nil {
			return nil, err
		}
		return &physical.Column{Index: i, Name: s.Field(i).Name, Type: typ}, nil
	case *logical.Literal:
		return &physical.Literal{Type: e.Type, Value: e.Value}, nil
	case *logical.Alias:
		return conv(e.Expr)
	case *logical.Binary:
		l, err := conv(e.Left)
		if err != nil {
			return nil, err
		}
		r, err := conv(e.Right)
		if err != nil {
			return nil, err
		}
		return &physical.Binary{Op: physical.BinaryOp(e.Op), Left: l, Right: r, Type: typ}, nil
	case *logical.Not:
		x, err := conv(e.Expr)
		if err != nil {
			return nil, err
		}
		return &physical.Not{Expr: x}, nil
	case *logical.Negative:
		x, err := conv(e.Expr)
		if err != nil {
			return nil, err
		}
		return &physical.Negative{Expr: x}, nil
	case *logical.IsNull:
		x, err := conv(e.Expr)
		if err != nil {
			return nil, err
		}
		return &physical.IsNull{Expr: x, Negated: e.Negated}, nil
	case *logical.Cast:
		x, err := conv(e.Expr)
		if err != nil {
			return nil, err
		}
		return &physical.Cast{Expr: x, Type: e.Type}, nil
	case *logical.Case:
		out := &physical.Case{Type: typ}
		if e.Operand != nil {
			if out.Operand, err = conv(e.Operand); err != nil {
				return nil, err
			}
		}
		for _, w := range e.Whens {
			c, err := conv(w.Cond)
			if err != nil {
				return nil, err
			}
			t, err := conv(w.Then)
			if err != nil {
				return nil, err
			}
			out.Whens = append(out.Whens, physical.When{Cond: c, Then: t})
		}
		if e.Else != nil {
			if out.Else, err = conv(e.Else); err != nil {
				return nil, err
			}
		}
		return out, nil
	case *logical.Like:
		x, err := conv(e.Expr)
		if err != nil {
			return nil, err
		}
		p, err := conv(e.Pattern)
		if err != nil {
			return nil, err
		}
		return &physical.Like{Expr: x, Pattern: p, Negated: e.Negated, CaseInsensitive: e.CaseInsensitive}, nil
	case *logical.InList:
		x, err := conv(e.Expr)
		if err != nil {
			return nil, err
		}
		list, err := exprs(e.List, s)
		if err != nil {
			return nil, err
		}
		return &physical.InList{Expr: x, List: list, Negated: e.Negated}, nil
	case *logical.ScalarFunc:
		args, err := exprs(e.Args, s)
		if err != nil {
			return nil, err
		}
		return &physical.ScalarFunc{Name: e.Name, Args: args, Type: typ}, nil
	case *logical.AggExpr:
		return nil, qerr.Internalf("planner: aggregate %s outside an Aggregate", e)
	case *logical.ScalarSubquery, *logical.Exists, *logical.InSubquery, *logical.OuterRef:
		return nil, qerr.NotImplementedf("planner: subquery expression %s was not decorrelated", e)
	}
	return nil, qerr.Internalf("planner: unknown expression %T", e)
}

func exprs(es []logical.Expr, s *logical.Schema) ([]physical.Expr, error) {
	out := make([]physical.Expr, len(es))
	for i, e := range es {
		p, err := Expr(e, s)
		if err != nil {
			return nil, err
		}
		out[i] = p
	}
	return out, nil
}

// aggregate translates one aggregate list entry (an AggExpr, maybe aliased).
func aggregate(e logical.Expr, s *logical.Schema, name string) (physical.AggregateExpr, error) {
	a, ok := logical.StripAlias(e).(*logical.AggExpr)
	if !ok {
		return physical.AggregateExpr{}, qerr.Internalf("planner: %s is not an aggregate", e)
	}
	typ, _, err := a.DataType(s)
	if err != nil {
		return physical.AggregateExpr{}, err
	}
	out := physical.AggregateExpr{Func: physical.AggFunc(a.Func), Distinct: a.Distinct, Type: typ, Name: name, Filter: a.Filter}
	if a.Collects() {
		for _, o := range a.Order {
			out.Order = append(out.Order, physical.AggOrder{Desc: o.Desc, NullsFirst: o.NullsFirst})
		}
		args, err := exprs(a.Args, s)
		if err != nil {
			return out, err
		}
		ts := make([]arrow.DataType, len(args))
		for i, e := range args {
			ts[i] = e.DataType()
		}
		out.Arg = &physical.ScalarFunc{Name: physical.PairFunc, Args: args, Type: physical.RowType(ts...)}
		return out, nil
	}
	if len(a.Args) == 2 && a.Func.TwoArgs() {
		args, err := exprs(a.Args, s)
		if err != nil {
			return out, err
		}
		out.Arg = &physical.ScalarFunc{Name: physical.PairFunc, Args: args, Type: physical.PairType(args[0].DataType(), args[1].DataType())}
		return out, nil
	}
	if len(a.Args) > 1 {
		return out, qerr.NotImplementedf("planner: %s with %d arguments", a.Func, len(a.Args))
	}
	if len(a.Args) == 1 {
		if out.Arg, err = Expr(a.Args[0], s); err != nil {
			return out, err
		}
	}
	return out, nil
}

// castTo wraps e in a cast unless it already has type t.
func castTo(e physical.Expr, t arrow.DataType) physical.Expr {
	if arrow.TypeEqual(e.DataType(), t) {
		return e
	}
	return &physical.Cast{Expr: e, Type: t}
}
