package optimizer

// simplify_outer_join turns a left (right) join into an inner join when a
// filter right above it rejects every row whose right (left) side is NULL
// (TPC-DS q49: ws LEFT JOIN wr ... WHERE wr.wr_return_amt > 10000):
//
//	Filter: b.y > 5                 Filter: b.y > 5
//	  Left Join: a.x = b.x    →       Inner Join: a.x = b.x
//
// The rows the outer join adds carry NULL in every column of the other
// side, and a conjunct that is NULL or false whenever its columns are NULL
// drops them all, so only the inner join's rows remain. Only conjuncts
// strict in a column of that side count: comparisons, LIKE and IS NOT NULL
// over such a column, possibly under casts, negation and arithmetic. It
// must NOT fire on full, semi, anti, mark or null-aware joins.

import (
	"context"

	"github.com/quiverdb/quiver/logical"
)

// SimplifyOuterJoin is the outer-to-inner join rule.
type SimplifyOuterJoin struct{}

// Name implements Rule.
func (SimplifyOuterJoin) Name() string { return "simplify_outer_join" }

// Rewrite implements Rule.
func (SimplifyOuterJoin) Rewrite(ctx context.Context, p logical.Plan) (logical.Plan, bool, error) {
	return transformUp(ctx, p, func(n logical.Plan) (logical.Plan, bool, error) {
		f, ok := n.(*logical.Filter)
		if !ok {
			return n, false, nil
		}
		j, ok := f.Input.(*logical.Join)
		if !ok || j.NullAware || j.MarkName != "" {
			return n, false, nil
		}
		var nulled, kept *logical.Schema
		switch j.Type {
		case logical.LeftJoin:
			nulled, kept = j.Right.Schema(), j.Left.Schema()
		case logical.RightJoin:
			nulled, kept = j.Left.Schema(), j.Right.Schema()
		default:
			return n, false, nil
		}
		rejects := false
		for _, c := range logical.SplitAnd(f.Predicate) {
			if rejectsNull(c, nulled, kept) {
				rejects = true
				break
			}
		}
		if !rejects {
			return n, false, nil
		}
		nj, err := logical.NewJoin(j.Left, j.Right, logical.InnerJoin, j.On, j.Filter, false, "")
		if err != nil {
			return nil, false, err
		}
		nf, err := logical.NewFilter(nj, f.Predicate)
		return nf, err == nil, err
	})
}

// rejectsNull reports a conjunct that is NULL or false when the columns of
// s it reads are NULL (a column that might name one of other's does not
// count).
func rejectsNull(e logical.Expr, s, other *logical.Schema) bool {
	switch e := e.(type) {
	case *logical.Binary:
		if !e.Op.IsComparison() {
			return false
		}
		return strictIn(e.Left, s, other) || strictIn(e.Right, s, other)
	case *logical.IsNull:
		return e.Negated && strictIn(e.Expr, s, other)
	case *logical.Like:
		return strictIn(e.Expr, s, other)
	}
	return false
}

// strictIn reports an expression that is NULL whenever a column of s it
// reads is NULL, reading at least one.
func strictIn(e logical.Expr, s, other *logical.Schema) bool {
	switch e := e.(type) {
	case *logical.Column:
		return s.Has(e.Qualifier, e.Name) && !mayName(other, e)
	case *logical.Cast:
		return strictIn(e.Expr, s, other)
	case *logical.Negative:
		return strictIn(e.Expr, s, other)
	case *logical.Binary:
		return e.Op.IsArithmetic() && (strictIn(e.Left, s, other) || strictIn(e.Right, s, other))
	}
	return false
}
