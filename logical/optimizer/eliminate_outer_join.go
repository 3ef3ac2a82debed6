package optimizer

// eliminate_outer_join turns an outer join under a filter that rejects the
// NULL-padded rows into a join that does not make them:
//
//	Filter: d.m = __sq_1.m              Filter: d.m = __sq_1.m
//	  Left Join:                  →       Inner Join:
//	    <d ...>, __sq_1                     <d ...>, __sq_1
//
// A conjunct rejects a side's padding when it cannot be TRUE while every
// column of that side is NULL (a comparison, IN, LIKE or IS NOT NULL of an
// expression that is NULL when one of its operands is). A Left join with
// the right side's padding rejected is Inner, a Right join with the left
// side's likewise, and a Full join becomes Right when its right padding is
// rejected, Left when its left padding is, Inner when both are. The filter
// stays; push_down_filter then moves it into the inner join as keys or down
// a side, which the outer join forbade.
// Decorrelation joins an uncorrelated scalar subquery that may yield no row
// (TPC-DS q06: `d_month_seq = (SELECT DISTINCT ...)`) with a Left join, so
// this rule is what lets that subquery's equality filter its side early.

import (
	"context"

	"github.com/quiverdb/quiver/logical"
)

// EliminateOuterJoin is the outer-join-to-inner-join rule.
type EliminateOuterJoin struct{}

// Name implements Rule.
func (EliminateOuterJoin) Name() string { return "eliminate_outer_join" }

// Rewrite implements Rule.
func (EliminateOuterJoin) Rewrite(ctx context.Context, p logical.Plan) (logical.Plan, bool, error) {
	return transformUp(ctx, p, func(p logical.Plan) (logical.Plan, bool, error) {
		f, ok := p.(*logical.Filter)
		if !ok {
			return p, false, nil
		}
		j, ok := f.Input.(*logical.Join)
		if !ok || j.NullAware {
			return p, false, nil
		}
		var typ logical.JoinType
		ls, rs := j.Left.Schema(), j.Right.Schema()
		switch j.Type {
		case logical.LeftJoin:
			if !rejectsPadding(f.Predicate, rs, ls) {
				return p, false, nil
			}
			typ = logical.InnerJoin
		case logical.RightJoin:
			if !rejectsPadding(f.Predicate, ls, rs) {
				return p, false, nil
			}
			typ = logical.InnerJoin
		case logical.FullJoin:
			rejL, rejR := rejectsPadding(f.Predicate, ls, rs), rejectsPadding(f.Predicate, rs, ls)
			switch {
			case rejL && rejR:
				typ = logical.InnerJoin
			case rejR:
				typ = logical.RightJoin // the left-only rows, padded on the right, go
			case rejL:
				typ = logical.LeftJoin
			default:
				return p, false, nil
			}
		default:
			return p, false, nil
		}
		nj, err := logical.NewJoin(j.Left, j.Right, typ, j.On, j.Filter, j.NullAware, j.MarkName)
		if err != nil {
			return nil, false, err
		}
		nf, err := logical.NewFilter(nj, f.Predicate)
		if err != nil {
			return nil, false, err
		}
		return nf, true, nil
	})
}

// rejectsPadding reports whether pred cannot be TRUE for a row whose
// columns from side (the padded side's schema) are all NULL; other is the
// join's other side, whose columns never count as the padded side's.
func rejectsPadding(pred logical.Expr, side, other *logical.Schema) bool {
	for _, c := range logical.SplitAnd(pred) {
		if nullRejects(c, side, other) {
			return true
		}
	}
	return false
}

// nullRejects reports whether e is FALSE or NULL whenever every column of
// side is NULL.
func nullRejects(e logical.Expr, side, other *logical.Schema) bool {
	switch e := e.(type) {
	case *logical.Binary:
		switch {
		case e.Op == logical.OpAnd:
			return nullRejects(e.Left, side, other) || nullRejects(e.Right, side, other)
		case e.Op == logical.OpOr:
			return nullRejects(e.Left, side, other) && nullRejects(e.Right, side, other)
		case e.Op.IsComparison():
			return nullIfSideNull(e.Left, side, other) || nullIfSideNull(e.Right, side, other)
		}
	case *logical.Not:
		return nullIfSideNull(e.Expr, side, other)
	case *logical.IsNull:
		return e.Negated && nullIfSideNull(e.Expr, side, other)
	case *logical.InList:
		return nullIfSideNull(e.Expr, side, other)
	case *logical.Like:
		return nullIfSideNull(e.Expr, side, other)
	case *logical.Alias:
		return nullRejects(e.Expr, side, other)
	}
	return false
}

// nullIfSideNull reports whether e is NULL whenever every column of side is
// NULL: a column of side, or an operator that is NULL when an operand is.
func nullIfSideNull(e logical.Expr, side, other *logical.Schema) bool {
	switch e := e.(type) {
	case *logical.Column:
		return side.Has(e.Qualifier, e.Name) && !other.Has(e.Qualifier, e.Name)
	case *logical.Binary:
		if e.Op.IsComparison() || e.Op.IsArithmetic() || e.Op == logical.OpConcat {
			return nullIfSideNull(e.Left, side, other) || nullIfSideNull(e.Right, side, other)
		}
	case *logical.Cast:
		return nullIfSideNull(e.Expr, side, other)
	case *logical.Negative:
		return nullIfSideNull(e.Expr, side, other)
	case *logical.Not:
		return nullIfSideNull(e.Expr, side, other)
	case *logical.Alias:
		return nullIfSideNull(e.Expr, side, other)
	}
	return false
}
