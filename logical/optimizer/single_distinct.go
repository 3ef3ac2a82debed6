package optimizer

// single_distinct_to_groupby turns an aggregate whose DISTINCT aggregates all
// share one argument k into two ordinary (two-phase) aggregates, so that no
// input row has to be shuffled whole to the partition owning its group:
//
//	Aggregate: groupBy=[g], aggr=[count(DISTINCT k), sum(x), min(y), max(z), count(w)]
//	→ Projection: g, count(DISTINCT k), sum(x), min(y), max(z), coalesce(count(w), 0) AS count(w)
//	  Aggregate: groupBy=[g], aggr=[count(k) AS count(DISTINCT k), sum(sum(x)) AS sum(x),
//	                                min(min(y)) AS min(y), max(max(z)) AS max(z), sum(count(w)) AS count(w)]
//	    Aggregate: groupBy=[g, k], aggr=[sum(x), min(y), max(z), count(w)]
//
// The inner aggregate makes (g, k) unique, so a DISTINCT aggregate of k
// becomes the plain aggregate of the inner k column; every other aggregate is
// computed per (g, k) and combined per g (count becomes a sum of counts).
//
// NULLs: count(DISTINCT k) ignores NULL k. The inner aggregate keeps a
// (g, NULL) group, which still carries the other aggregates' rows; the outer
// count(k) / sum(k) / min / max / avg of the k column skip it as they skip
// any NULL.
//
// Types and names: the outer aggregates are aliased to the original output
// names; sum of a sum keeps the sum's type (Int64, DECIMAL(38, s), Float64),
// min and max keep theirs. A sum of counts is nullable and NULL for an empty
// input without GROUP BY (the inner aggregate then has no rows), so the
// Projection restores count's contract with coalesce(…, 0): non-null Int64.
// The Projection is added only when there is such a count.
//
// Blockers (the rule leaves the aggregate alone): no DISTINCT aggregate;
// DISTINCT aggregates over different arguments or more than one argument; a
// non-DISTINCT avg (it would need a sum/count pair and a division that rounds
// differently from the avg kernel); k among the group expressions or of the
// Null type; subqueries in any argument; names that would not resolve
// unambiguously.

// Not in the default optimizer: exec's DISTINCT accumulator already skips
// runs of one key and costs less than the (g, k) hash aggregation, run
// twice (partial and final), that the rewrite asks for, so on the cached
// dashboard and TPC-H q16 the rewrite made queries slower or no faster.
// WithSingleDistinct turns it on.

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver/logical"
)

// WithSingleDistinct returns o with single_distinct_to_groupby run as its
// own batch just before the "projection" batch (or last if there is none),
// so that projection push-down prunes the columns of both aggregates.
func WithSingleDistinct(o *Optimizer) *Optimizer {
	b := Batch{Name: "single_distinct", MaxPasses: 1, Rules: []Rule{SingleDistinctToGroupBy{}}}
	out := &Optimizer{Batches: make([]Batch, 0, len(o.Batches)+1)}
	inserted := false
	for _, x := range o.Batches {
		if x.Name == "projection" && !inserted {
			out.Batches, inserted = append(out.Batches, b), true
		}
		out.Batches = append(out.Batches, x)
	}
	if !inserted {
		out.Batches = append(out.Batches, b)
	}
	return out
}

// SingleDistinctToGroupBy is the single_distinct_to_groupby rule.
type SingleDistinctToGroupBy struct{}

// Name implements Rule.
func (SingleDistinctToGroupBy) Name() string { return "single_distinct_to_groupby" }

// Rewrite implements Rule.
func (SingleDistinctToGroupBy) Rewrite(ctx context.Context, p logical.Plan) (logical.Plan, bool, error) {
	return transformUp(ctx, p, func(n logical.Plan) (logical.Plan, bool, error) {
		a, ok := n.(*logical.Aggregate)
		if !ok {
			return n, false, nil
		}
		np, err := splitSingleDistinct(a)
		if err != nil || np == nil {
			return n, false, err
		}
		return np, true, nil
	})
}

// singleDistinctArg returns the one argument every DISTINCT aggregate of a
// shares, or nil if the rule must not fire on a.
func singleDistinctArg(a *logical.Aggregate) logical.Expr {
	var k logical.Expr
	for _, e := range a.Aggs {
		ae, ok := logical.StripAlias(e).(*logical.AggExpr)
		if !ok || len(ae.Args) > 1 {
			return nil
		}
		for _, arg := range ae.Args {
			if hasSubquery(arg) {
				return nil
			}
		}
		if !ae.Distinct {
			switch ae.Func {
			case logical.AggCount, logical.AggSum, logical.AggMin, logical.AggMax:
				continue // re-aggregated over the inner groups' results
			}
			return nil // avg, variances: their results do not combine
		}
		if len(ae.Args) != 1 {
			return nil
		}
		if k == nil {
			k = ae.Args[0]
		} else if k.String() != ae.Args[0].String() {
			return nil
		}
	}
	if k == nil {
		return nil
	}
	if t, _, err := k.DataType(a.Input.Schema()); err != nil || t.ID() == arrow.NULL {
		return nil // count(DISTINCT NULL): nothing to gain, and a Null group key is unusual
	}
	for _, g := range a.GroupBy {
		if hasSubquery(g) || logical.StripAlias(g).String() == k.String() {
			return nil
		}
	}
	return k
}

// splitSingleDistinct builds the rewrite of a, or returns nil when a rule
// blocker applies.
func splitSingleDistinct(a *logical.Aggregate) (logical.Plan, error) {
	k := singleDistinctArg(a)
	if k == nil {
		return nil, nil
	}
	ng := len(a.GroupBy)

	// Inner: group by g and k; one partial aggregate per distinct
	// non-DISTINCT aggregate, named by its own display name.
	innerGroups := append(append(make([]logical.Expr, 0, ng+1), a.GroupBy...), k)
	var innerAggs []logical.Expr
	innerIdx := map[string]int{}
	for _, e := range a.Aggs {
		ae := logical.StripAlias(e).(*logical.AggExpr)
		if ae.Distinct {
			continue
		}
		plain := &logical.AggExpr{Func: ae.Func, Args: ae.Args}
		if _, dup := innerIdx[plain.String()]; !dup {
			innerIdx[plain.String()] = ng + 1 + len(innerAggs)
			innerAggs = append(innerAggs, plain)
		}
	}
	inner, err := logical.NewAggregate(a.Input, innerGroups, innerAggs)
	if err != nil {
		return nil, nil // not expressible (e.g. k of a type that cannot be typed here): leave it
	}
	is := inner.Schema()

	outerGroups := make([]logical.Expr, ng)
	for i := range outerGroups {
		c, ok := columnFor(is, i)
		if !ok {
			return nil, nil
		}
		outerGroups[i] = c
	}
	kcol, ok := columnFor(is, ng)
	if !ok {
		return nil, nil
	}

	os := a.Schema()
	outerAggs := make([]logical.Expr, len(a.Aggs))
	summedCount := make([]bool, len(a.Aggs))
	needProjection := false
	for j, e := range a.Aggs {
		ae := logical.StripAlias(e).(*logical.AggExpr)
		name := os.Field(ng + j).Name
		var oe *logical.AggExpr
		if ae.Distinct {
			oe = &logical.AggExpr{Func: ae.Func, Args: []logical.Expr{kcol}}
		} else {
			c, ok := columnFor(is, innerIdx[(&logical.AggExpr{Func: ae.Func, Args: ae.Args}).String()])
			if !ok {
				return nil, nil
			}
			f := ae.Func
			if f == logical.AggCount {
				f, summedCount[j], needProjection = logical.AggSum, true, true
			}
			oe = &logical.AggExpr{Func: f, Args: []logical.Expr{c}}
		}
		outerAggs[j] = &logical.Alias{Expr: oe, Name: name}
	}
	outer, err := logical.NewAggregate(inner, outerGroups, outerAggs)
	if err != nil {
		return nil, nil
	}
	if !outer.Schema().Equal(os) {
		return nil, nil
	}
	if !needProjection {
		return outer, nil
	}

	ps := outer.Schema()
	list := make([]logical.Expr, ps.Len())
	for i := range list {
		c, ok := columnFor(ps, i)
		if !ok {
			return nil, nil
		}
		list[i] = c
		if i >= ng && summedCount[i-ng] {
			list[i] = &logical.Alias{
				Expr: &logical.ScalarFunc{Name: "coalesce", Args: []logical.Expr{c, logical.Lit(int64(0))}},
				Name: ps.Field(i).Name,
			}
		}
	}
	proj, err := logical.NewProjection(outer, list)
	if err != nil || !proj.Schema().Equal(os) {
		return nil, nil
	}
	return proj, nil
}
