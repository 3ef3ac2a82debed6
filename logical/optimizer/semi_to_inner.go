package optimizer

// semi_to_inner_join turns a semi join whose right side is clearly smaller
// than its left into an inner join with the right side's distinct keys, so
// that the hash table is built from the small side. A semi join's hash
// table is always built from its left input (its rows are what it
// outputs), so TPC-H Q18 — 1.5M orders semi-joined to the 57 orders of
// large quantity — would otherwise build a table of every order:
//
//	LeftSemi Join: on=[o.k = s.k]          Projection: o.*
//	  TableScan: orders            →         Inner Join: on=[o.k = __sj_1.k]
//	  SubqueryAlias: s                         TableScan: orders
//	                                           SubqueryAlias: __sj_1
//	                                             Aggregate: groupBy=[s.k]  (distinct keys)
//	                                               SubqueryAlias: s
//
// Joining each left row to the distinct right keys it equals gives it at
// most one partner, and one exactly when the semi join keeps it (NULL keys
// match nothing in both), so the projection of the left columns is the
// semi join's output. Only semi joins without a residual filter qualify
// (a filter may need every right row, not one per key), and only when the
// right side is estimated at under half the left, where the planner will
// build from it.

import (
	"context"

	"github.com/quiverdb/quiver/logical"
)

// SemiToInnerJoin is the semi-to-inner-join rule.
type SemiToInnerJoin struct{}

// Name implements Rule.
func (SemiToInnerJoin) Name() string { return "semi_to_inner_join" }

// Rewrite implements Rule.
func (SemiToInnerJoin) Rewrite(ctx context.Context, p logical.Plan) (logical.Plan, bool, error) {
	var names namer
	return transformUp(ctx, p, func(p logical.Plan) (logical.Plan, bool, error) {
		j, ok := p.(*logical.Join)
		if !ok || j.Type != logical.SemiJoin || j.Filter != nil || len(j.On) == 0 {
			return p, false, nil
		}
		if logical.Estimate(j.Right).Rows*2 >= logical.Estimate(j.Left).Rows {
			return p, false, nil
		}
		keep, ok := identityExprs(j.Left.Schema())
		if !ok {
			return p, false, nil
		}
		keys := make([]logical.Expr, len(j.On))
		for i, pair := range j.On {
			keys[i] = &logical.Alias{Expr: pair.Right, Name: names.next("__sj_key")}
		}
		distinct, err := logical.NewAggregate(j.Right, keys, nil)
		if err != nil {
			return nil, false, err
		}
		alias := logical.NewSubqueryAlias(distinct, names.next("__sj"))
		on := make([]logical.EquiPair, len(j.On))
		for i, pair := range j.On {
			c, ok := columnFor(alias.Schema(), i)
			if !ok {
				return p, false, nil
			}
			on[i] = logical.EquiPair{Left: pair.Left, Right: c}
		}
		inner, err := logical.NewJoin(j.Left, alias, logical.InnerJoin, on, nil, false, "")
		if err != nil {
			return nil, false, err
		}
		// The left columns must still be named unambiguously next to the
		// alias's (they are: its qualifier is new).
		for _, e := range keep {
			c := e.(*logical.Column)
			if i, err := inner.Schema().IndexOf(c.Qualifier, c.Name); err != nil || i >= j.Left.Schema().Len() {
				return p, false, nil
			}
		}
		out, err := logical.NewProjection(inner, keep)
		if err != nil {
			return nil, false, err
		}
		return out, true, nil
	})
}
