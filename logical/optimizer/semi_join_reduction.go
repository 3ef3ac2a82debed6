package optimizer

// semi_join_reduction filters the input of a grouped aggregate by the keys
// the aggregate's join partner can match, before it aggregates. A
// decorrelated subquery joins a grouped aggregate on its group key to the
// outer query (TPC-H Q17: avg(l_quantity) per part, for the parts of one
// brand and container): without the filter every group of the whole table
// is computed and then nearly all are dropped by the join.
//
//	Inner Join: on=[part.p_partkey = __sq_1.l_partkey]
//	  Filter: part.p_brand = 'Brand#23'            (few rows)
//	    TableScan: part
//	  SubqueryAlias: __sq_1
//	    Aggregate: groupBy=[lineitem.l_partkey], aggr=[avg(...)]
//	      Projection: lineitem.*                    ← added
//	        Inner Join: on=[__sjr_1.p_partkey = lineitem.l_partkey]
//	          SubqueryAlias: __sjr_1
//	            Aggregate: groupBy=[part.p_partkey]  (the distinct keys)
//	              Filter: part.p_brand = 'Brand#23'
//	                TableScan: part
//	          TableScan: lineitem
//
// Dropping the rows of groups whose key the partner does not hold leaves
// every other group's aggregates unchanged, and those groups cannot appear
// in the join's output when the aggregate is not a preserved side (inner
// joins, the right of a left, semi, anti or mark join, the left of a right
// join). The reducer is a part of the partner that holds the key column:
// found by following the column down through projections, aliases, filters,
// sorts, limits and joins (each can only narrow a column's values, or add
// NULL, which matches nothing), and across the keys of inner and semi joins
// (a joined row's keys are equal), and chosen as the smallest estimate among
// the join-free subtrees on that path, since it is computed a second time.
// The rule applies only where the reducer is estimated to hold half of
// the aggregate's distinct keys or fewer, and only once per aggregate: an aggregate
// whose input already is a reduction is left alone.

import (
	"context"
	"strings"

	"github.com/quiverdb/quiver/logical"
)

// SemiJoinReduction is the semi-join reduction rule.
type SemiJoinReduction struct{}

// Name implements Rule.
func (SemiJoinReduction) Name() string { return "semi_join_reduction" }

// reductionPrefix names the reducer's alias; an aggregate input under an
// inner join with such an alias is already reduced.
const reductionPrefix = "__sjr"

// reductionRatio: the reducer must be estimated to hold at most
// 1/reductionRatio of the aggregate's distinct values of the key.
const reductionRatio = 2

// Rewrite implements Rule.
func (SemiJoinReduction) Rewrite(ctx context.Context, p logical.Plan) (logical.Plan, bool, error) {
	var names namer
	return transformUp(ctx, p, func(p logical.Plan) (logical.Plan, bool, error) {
		j, ok := p.(*logical.Join)
		if !ok || len(j.On) == 0 {
			return p, false, nil
		}
		left, right := j.Left, j.Right
		changed := false
		for _, pair := range j.On {
			// The right side is never preserved except in right and full joins.
			if j.Type != logical.RightJoin && j.Type != logical.FullJoin {
				r, ok, err := reduceSide(right, pair.Right, left, pair.Left, &names)
				if err != nil {
					return nil, false, err
				}
				if ok {
					right, changed = r, true
					continue
				}
			}
			if j.Type == logical.InnerJoin || j.Type == logical.RightJoin {
				l, ok, err := reduceSide(left, pair.Left, right, pair.Right, &names)
				if err != nil {
					return nil, false, err
				}
				if ok {
					left, changed = l, true
				}
			}
		}
		if !changed {
			return p, false, nil
		}
		nj, err := logical.NewJoin(left, right, j.Type, j.On, j.Filter, j.NullAware, j.MarkName)
		if err != nil {
			return nil, false, err
		}
		return nj, true, nil
	})
}

// reduceSide rewrites side (one input of a join) when it is a grouped
// aggregate — under projections and aliases — whose group key key (over
// side's schema) is joined to partnerKey (over partner's schema).
func reduceSide(side logical.Plan, key logical.Expr, partner logical.Plan, partnerKey logical.Expr, names *namer) (logical.Plan, bool, error) {
	ki, ok := columnIndex(key, side.Schema())
	if !ok {
		return side, false, nil
	}
	pi, ok := columnIndex(partnerKey, partner.Schema())
	if !ok {
		return side, false, nil
	}
	reducer, ri, ok := pickReducer(partner, pi)
	if !ok {
		return side, false, nil
	}
	var done bool
	out, err := rewriteAggregate(side, ki, func(agg *logical.Aggregate, gi int) (logical.Plan, error) {
		if isReduced(agg.Input) {
			return agg, nil
		}
		if distinctOf(reducer, ri)*reductionRatio > distinctOf(agg, gi) {
			return agg, nil
		}
		gcol, ok := logical.StripAlias(agg.GroupBy[gi]).(*logical.Column)
		if !ok {
			return agg, nil
		}
		in, err := reduceInput(agg.Input, gcol, reducer, ri, names)
		if err != nil || in == nil {
			return agg, err
		}
		done = true
		return agg.WithChildren([]logical.Plan{in})
	})
	if err != nil || !done {
		return side, false, err
	}
	return out, true, nil
}

// rewriteAggregate follows column i of p down through projections and
// aliases to a grouped aggregate whose i-th output is a group key, calls f
// with the aggregate and the key's index, and rebuilds the path above it.
func rewriteAggregate(p logical.Plan, i int, f func(*logical.Aggregate, int) (logical.Plan, error)) (logical.Plan, error) {
	switch n := p.(type) {
	case *logical.Aggregate:
		if i >= len(n.GroupBy) {
			return p, nil
		}
		return f(n, i)
	case *logical.SubqueryAlias:
		in, err := rewriteAggregate(n.Input, i, f)
		if err != nil || in == n.Input {
			return p, err
		}
		return logical.NewSubqueryAlias(in, n.Alias), nil
	case *logical.Projection:
		ci, ok := columnIndex(n.List[i], n.Input.Schema())
		if !ok {
			return p, nil
		}
		in, err := rewriteAggregate(n.Input, ci, f)
		if err != nil || in == n.Input {
			return p, err
		}
		return n.WithChildren([]logical.Plan{in})
	}
	return p, nil
}

// pickReducer follows column i of p down to the smallest join-free subtree
// holding a superset of its non-NULL values; ri is the column there.
func pickReducer(p logical.Plan, i int) (best logical.Plan, bi int, ok bool) {
	bestRows := 0.0
	var walk func(p logical.Plan, i int)
	walk = func(p logical.Plan, i int) {
		if !hasJoin(p) {
			if rows := logical.Estimate(p).Rows; !ok || rows < bestRows {
				best, bi, bestRows, ok = p, i, rows, true
			}
		}
		for _, s := range valueSources(p, i) {
			walk(s.plan, s.col)
		}
	}
	walk(p, i)
	return best, bi, ok
}

// source is a column of a plan.
type source struct {
	plan logical.Plan
	col  int
}

// valueSources returns the columns of p's children whose values include
// every non-NULL value of column i of p: the column it passes through, and
// for a key of an inner or semi join the key it equals on the other side.
func valueSources(p logical.Plan, i int) []source {
	switch n := p.(type) {
	case *logical.Filter:
		return []source{{n.Input, i}}
	case *logical.Sort:
		return []source{{n.Input, i}}
	case *logical.Limit:
		return []source{{n.Input, i}}
	case *logical.SubqueryAlias:
		return []source{{n.Input, i}}
	case *logical.Projection:
		if ci, ok := columnIndex(n.List[i], n.Input.Schema()); ok {
			return []source{{n.Input, ci}}
		}
	case *logical.Join:
		ls, rs := n.Left.Schema(), n.Right.Schema()
		nl := ls.Len()
		var out []source
		switch {
		case i < nl:
			out = append(out, source{n.Left, i})
		case n.Type == logical.InnerJoin || n.Type == logical.LeftJoin || n.Type == logical.RightJoin || n.Type == logical.FullJoin:
			out = append(out, source{n.Right, i - nl})
		}
		if n.Type != logical.InnerJoin && n.Type != logical.SemiJoin {
			return out
		}
		// A row of an inner or semi join has equal keys on both sides.
		for _, pair := range n.On {
			li, lok := columnIndex(pair.Left, ls)
			ri, rok := columnIndex(pair.Right, rs)
			if !lok || !rok {
				continue
			}
			if li == i {
				out = append(out, source{n.Right, ri})
			} else if n.Type == logical.InnerJoin && ri == i-nl {
				out = append(out, source{n.Left, li})
			}
		}
		return out
	}
	return nil
}

// reduceInput returns input restricted to the rows whose key column (of
// input) equals a value of column ri of reducer, as an inner join with the
// reducer's distinct values projected back to input's schema; nil when a
// column cannot be named.
func reduceInput(input logical.Plan, key *logical.Column, reducer logical.Plan, ri int, names *namer) (logical.Plan, error) {
	rcol, ok := columnFor(reducer.Schema(), ri)
	if !ok {
		return nil, nil
	}
	keep, ok := identityExprs(input.Schema())
	if !ok {
		return nil, nil
	}
	distinct, err := logical.NewAggregate(reducer, []logical.Expr{rcol}, nil)
	if err != nil {
		return nil, err
	}
	alias := logical.NewSubqueryAlias(distinct, names.next(reductionPrefix))
	acol, ok := columnFor(alias.Schema(), 0)
	if !ok {
		return nil, nil
	}
	j, err := logical.NewJoin(alias, input, logical.InnerJoin, []logical.EquiPair{{Left: acol, Right: key}}, nil, false, "")
	if err != nil {
		return nil, err
	}
	return logical.NewProjection(j, keep)
}

// isReduced reports whether an aggregate's input is already a reduction.
func isReduced(in logical.Plan) bool {
	pr, ok := in.(*logical.Projection)
	if !ok {
		return false
	}
	j, ok := pr.Input.(*logical.Join)
	if !ok {
		return false
	}
	a, ok := j.Left.(*logical.SubqueryAlias)
	return ok && strings.HasPrefix(a.Alias, reductionPrefix+"_")
}

// hasJoin reports whether p's subtree holds a join.
func hasJoin(p logical.Plan) bool {
	found := false
	logical.Inspect(p, func(n logical.Plan) bool {
		if _, ok := n.(*logical.Join); ok {
			found = true
		}
		return !found
	})
	return found
}

// distinctOf estimates the distinct values of column i of p (its rows when
// unknown).
func distinctOf(p logical.Plan, i int) float64 {
	st := logical.Estimate(p)
	if i < len(st.Distinct) && st.Distinct[i] > 0 {
		return min(st.Distinct[i], st.Rows)
	}
	return st.Rows
}

// columnIndex resolves e, a column reference (possibly aliased), in s.
func columnIndex(e logical.Expr, s *logical.Schema) (int, bool) {
	c, ok := logical.StripAlias(e).(*logical.Column)
	if !ok {
		return 0, false
	}
	i, err := s.IndexOf(c.Qualifier, c.Name)
	return i, err == nil
}
