package optimizer

// eliminate_outer_join turns an outer join under a filter that rejects the
// NULL-padded rows into a join that does not make them:
//
//	Filter: d.m = __sq_1.m              Filter: d.m = __sq_1.m
//	  Left Join:                  →       Inner Join:
//	    <d ...>, __sq_1                     <d ...>, __sq_1
//
// An inner or semi join above the outer join rejects padding as such a
// filter does, through its keys (a NULL key meets nothing) and its filter
// (TPC-DS q93: `store_sales LEFT JOIN store_returns ..., reason WHERE
// sr_reason_sk = r_reason_sk`).
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
		switch n := p.(type) {
		case *logical.Filter:
			j, ok := n.Input.(*logical.Join)
			if !ok {
				return p, false, nil
			}
			nj, changed, err := withoutPadding(j, logical.SplitAnd(n.Predicate), nil)
			if err != nil || !changed {
				return p, false, err
			}
			nf, err := logical.NewFilter(nj, n.Predicate)
			if err != nil {
				return nil, false, err
			}
			return nf, true, nil
		case *logical.Join:
			// An inner or semi join's keys (NULL never matches) and filter
			// reject its input's padded rows as a filter above would.
			if n.Type != logical.InnerJoin && n.Type != logical.SemiJoin || n.NullAware {
				return p, false, nil
			}
			var preds []logical.Expr
			if n.Filter != nil {
				preds = logical.SplitAnd(n.Filter)
			}
			l, r := n.Left, n.Right
			changed := false
			for i, child := range []*logical.Plan{&l, &r} {
				cj, ok := (*child).(*logical.Join)
				if !ok || (i == 1 && n.Type == logical.SemiJoin) {
					continue
				}
				keys := append([]logical.Expr{}, preds...)
				other := n.Right.Schema()
				for _, k := range n.On {
					key := k.Left
					if i == 1 {
						key = k.Right
					}
					keys = append(keys, &logical.IsNull{Expr: key, Negated: true})
				}
				if i == 1 {
					other = n.Left.Schema()
				}
				nj, ch, err := withoutPadding(cj, keys, other)
				if err != nil {
					return nil, false, err
				}
				if ch {
					*child, changed = nj, true
				}
			}
			if !changed {
				return p, false, nil
			}
			nj, err := logical.NewJoin(l, r, n.Type, n.On, n.Filter, n.NullAware, n.MarkName)
			if err != nil {
				return nil, false, err
			}
			return nj, true, nil
		}
		return p, false, nil
	})
}

// withoutPadding returns outer join j as the join that makes none of the
// padded rows preds reject, and whether that changed it. preds hold on
// every row kept above j (a filter's conjuncts, or an inner join's keys,
// each of which must not be NULL, and its filter); columns of other (the
// schema of the other input of a join above, or nil) are not j's.
func withoutPadding(j *logical.Join, preds []logical.Expr, other *logical.Schema) (logical.Plan, bool, error) {
	if j.NullAware {
		return j, false, nil
	}
	ls, rs := j.Left.Schema(), j.Right.Schema()
	rejL := func() bool { return rejectsPadding(preds, ls, rs, other) }
	rejR := func() bool { return rejectsPadding(preds, rs, ls, other) }
	var typ logical.JoinType
	switch j.Type {
	case logical.LeftJoin:
		if !rejR() {
			return j, false, nil
		}
		typ = logical.InnerJoin
	case logical.RightJoin:
		if !rejL() {
			return j, false, nil
		}
		typ = logical.InnerJoin
	case logical.FullJoin:
		l, r := rejL(), rejR()
		switch {
		case l && r:
			typ = logical.InnerJoin
		case r:
			typ = logical.RightJoin // the left-only rows, padded on the right, go
		case l:
			typ = logical.LeftJoin
		default:
			return j, false, nil
		}
	default:
		return j, false, nil
	}
	nj, err := logical.NewJoin(j.Left, j.Right, typ, j.On, j.Filter, j.NullAware, j.MarkName)
	if err != nil {
		return nil, false, err
	}
	return nj, true, nil
}

// rejectsPadding reports whether some conjunct of preds cannot be TRUE for
// a row whose columns from side (the padded side's schema) are all NULL;
// columns of others never count as the padded side's.
func rejectsPadding(preds []logical.Expr, side *logical.Schema, others ...*logical.Schema) bool {
	for _, c := range preds {
		if nullRejects(c, side, others) {
			return true
		}
	}
	return false
}

// nullRejects reports whether e is FALSE or NULL whenever every column of
// side is NULL.
func nullRejects(e logical.Expr, side *logical.Schema, other []*logical.Schema) bool {
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
func nullIfSideNull(e logical.Expr, side *logical.Schema, other []*logical.Schema) bool {
	switch e := e.(type) {
	case *logical.Column:
		if !side.Has(e.Qualifier, e.Name) {
			return false
		}
		for _, o := range other {
			if o != nil && o.Has(e.Qualifier, e.Name) {
				return false
			}
		}
		return true
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
