package optimizer

// merge_scalar_aggregates computes the ungrouped aggregates of a cross join's
// inputs in one pass when they read the same input under different filters
// (TPC-DS q28, q88: FROM (SELECT count(*) ... WHERE band 1) s1, (... band 2)
// s2, ...):
//
//	CrossJoin:                                   CrossJoin:
//	  SubqueryAlias: s1                            SubqueryAlias: s1
//	    Aggregate: aggr=[count(*)]                   Projection: m_1_1 AS count(*)
//	      Filter: c AND p1                             CTERef: merged (M)
//	        X                            →         SubqueryAlias: s2
//	  SubqueryAlias: s2                              Projection: m_2_1 AS count(*)
//	    Aggregate: aggr=[sum(y)]                       CTERef: merged (M)
//	      Filter: c AND p2
//	        X                            M = Aggregate: aggr=[count(CASE WHEN p1 THEN 1 END) AS m_1_1,
//	                                                         sum(CASE WHEN p2 THEN y END) AS m_2_1]
//	                                           Filter: c AND (p1 OR p2)
//	                                             X
//
// The conjuncts every input shares (c) stay a filter; each input's others
// guard its aggregates' arguments, which is exact for aggregates that skip
// NULL arguments (the only ones merged). The inputs then read one shared
// result (a CTERef), so the engine must share CTEs for this to pay: a session
// that runs plans locally, without shared CTEs, leaves the rule out.

import (
	"context"
	"fmt"

	"github.com/quiverdb/quiver/functions"
	"github.com/quiverdb/quiver/logical"
)

// MergeScalarAggregates is the rule merging a cross join's ungrouped
// aggregates over one input.
type MergeScalarAggregates struct{}

// Name implements Rule.
func (MergeScalarAggregates) Name() string { return "merge_scalar_aggregates" }

// scalarAgg is one cross-join input of the merged shape: wrappers (outermost
// first) over an ungrouped Aggregate over an optional Filter over in.
type scalarAgg struct {
	leaf     int
	wrappers []logical.Plan
	agg      *logical.Aggregate
	conjs    []logical.Expr
	in       logical.Plan
}

// Rewrite implements Rule.
func (MergeScalarAggregates) Rewrite(ctx context.Context, p logical.Plan) (logical.Plan, bool, error) {
	nextID := maxCTEID(p) + 1
	changed := false
	var walk func(p logical.Plan) (logical.Plan, error)
	walk = func(p logical.Plan) (logical.Plan, error) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if !isCrossJoin(p) {
			return mapChildren(p, walk)
		}
		leaves := crossLeaves(p)
		for i, l := range leaves {
			n, err := walk(l)
			if err != nil {
				return nil, err
			}
			leaves[i] = n
		}
		groups := map[string][]scalarAgg{}
		var order []string
		for i, l := range leaves {
			s, ok := matchScalarAgg(l)
			if !ok {
				continue
			}
			s.leaf = i
			k := planString(s.in)
			if _, seen := groups[k]; !seen {
				order = append(order, k)
			}
			groups[k] = append(groups[k], s)
		}
		for _, k := range order {
			g := groups[k]
			if len(g) < 2 || !sameTables(g) {
				continue
			}
			merged, ok, err := mergeScalarAggs(g, nextID)
			if err != nil {
				return nil, err
			}
			if !ok {
				continue
			}
			nextID++
			changed = true
			for i, s := range g {
				leaves[s.leaf] = merged[i]
			}
		}
		return rebuildCross(p, leaves)
	}
	out, err := walk(p)
	if err != nil {
		return nil, false, err
	}
	if !changed {
		return p, false, nil
	}
	return out, true, nil
}

func isCrossJoin(p logical.Plan) bool {
	j, ok := p.(*logical.Join)
	return ok && j.Type == logical.InnerJoin && len(j.On) == 0 && j.Filter == nil
}

// crossLeaves lists the inputs of a tree of cross joins, left to right.
func crossLeaves(p logical.Plan) []logical.Plan {
	if !isCrossJoin(p) {
		return []logical.Plan{p}
	}
	j := p.(*logical.Join)
	return append(crossLeaves(j.Left), crossLeaves(j.Right)...)
}

// rebuildCross rebuilds a tree of cross joins with new leaves, in order.
func rebuildCross(p logical.Plan, leaves []logical.Plan) (logical.Plan, error) {
	k := 0
	var rb func(logical.Plan) (logical.Plan, error)
	rb = func(p logical.Plan) (logical.Plan, error) {
		if !isCrossJoin(p) {
			l := leaves[k]
			k++
			return l, nil
		}
		j := p.(*logical.Join)
		l, err := rb(j.Left)
		if err != nil {
			return nil, err
		}
		r, err := rb(j.Right)
		if err != nil {
			return nil, err
		}
		return j.WithChildren([]logical.Plan{l, r})
	}
	return rb(p)
}

// matchScalarAgg reports whether p is [SubqueryAlias|Projection]* over an
// ungrouped Aggregate of mergeable aggregates over [Filter] over a plain input.
func matchScalarAgg(p logical.Plan) (scalarAgg, bool) {
	var s scalarAgg
	for {
		switch n := p.(type) {
		case *logical.SubqueryAlias:
			s.wrappers = append(s.wrappers, n)
			p = n.Input
			continue
		case *logical.Projection:
			if !plainExprs(n.List) {
				return s, false
			}
			s.wrappers = append(s.wrappers, n)
			p = n.Input
			continue
		case *logical.Aggregate:
			s.agg = n
		default:
			return s, false
		}
		break
	}
	if len(s.agg.GroupBy) > 0 || len(s.agg.Aggs) == 0 || !plainExprs(s.agg.Aggs) {
		return s, false
	}
	for _, a := range s.agg.Aggs {
		if !mergeableAgg(logical.StripAlias(a).(*logical.AggExpr)) {
			return s, false
		}
	}
	s.in = s.agg.Input
	if f, ok := s.in.(*logical.Filter); ok {
		if !plainExprs([]logical.Expr{f.Predicate}) {
			return s, false
		}
		s.conjs = dedupe(logical.SplitAnd(f.Predicate))
		s.in = f.Input
	}
	if !plainInput(s.in) {
		return s, false
	}
	return s, true
}

// mergeableAgg reports an aggregate that skips the rows whose first argument
// is NULL (count(*) is rewritten to count of a guarded constant).
func mergeableAgg(a *logical.AggExpr) bool {
	if a.Filter || len(a.Order) > 0 {
		return false
	}
	switch a.Func {
	case logical.AggCount, logical.AggSum, logical.AggAvg, logical.AggMin, logical.AggMax,
		logical.AggVarSamp, logical.AggVarPop, logical.AggStddevSamp, logical.AggStddevPop,
		logical.AggBoolAnd, logical.AggBoolOr, logical.AggBitAnd, logical.AggBitOr, logical.AggBitXor,
		logical.AggCovarPop, logical.AggCovarSamp, logical.AggCorr:
		return len(a.Args) > 0 || a.Func == logical.AggCount
	}
	return false
}

// plainExprs reports expressions that are safe to evaluate once for several
// readers: no subqueries, outer references or volatile functions.
func plainExprs(es []logical.Expr) bool {
	for _, e := range es {
		if hasSubquery(e) || hasOuterRef(e) {
			return false
		}
		volatile := false
		logical.InspectExpr(e, func(x logical.Expr) bool {
			if f, ok := x.(*logical.ScalarFunc); ok {
				if fn, ok := functions.Lookup(f.Name); !ok || fn.Volatile {
					volatile = true
				}
			}
			return !volatile
		})
		if volatile {
			return false
		}
	}
	return true
}

// plainInput reports a plan of scans, joins, filters, projections and
// aliases whose display (planString) says all it computes.
func plainInput(p logical.Plan) bool {
	ok := true
	logical.Inspect(p, func(n logical.Plan) bool {
		switch n := n.(type) {
		case *logical.Scan:
			ok = n.Fetch < 0
		case *logical.Join, *logical.Filter, *logical.Projection, *logical.SubqueryAlias:
			ok = plainExprs(n.Exprs())
		default:
			ok = false
		}
		return ok
	})
	return ok
}

// sameTables reports whether the inputs of g, equal in display, also read the
// same catalog tables.
func sameTables(g []scalarAgg) bool {
	tables := func(p logical.Plan) []any {
		var out []any
		logical.Inspect(p, func(n logical.Plan) bool {
			if s, ok := n.(*logical.Scan); ok {
				out = append(out, s.Table)
			}
			return true
		})
		return out
	}
	first := tables(g[0].in)
	for _, s := range g[1:] {
		t := tables(s.in)
		if len(t) != len(first) {
			return false
		}
		for i := range t {
			if t[i] != first[i] {
				return false
			}
		}
	}
	return true
}

// mergeScalarAggs builds the shared aggregate of g and, per member, the plan
// that replaces it; false (no error) when a rebuilt member would not keep its
// schema.
func mergeScalarAggs(g []scalarAgg, id int) ([]logical.Plan, bool, error) {
	// The conjuncts every member shares stay a plain filter.
	count := map[string]int{}
	for _, s := range g {
		for _, c := range s.conjs {
			count[c.String()]++
		}
	}
	var common []logical.Expr
	for _, c := range g[0].conjs {
		if count[c.String()] == len(g) {
			common = append(common, c)
		}
	}
	guards := make([]logical.Expr, len(g))
	anyAll := false
	for i, s := range g {
		var rest []logical.Expr
		for _, c := range s.conjs {
			if count[c.String()] != len(g) {
				rest = append(rest, c)
			}
		}
		guards[i] = logical.And(rest...)
		if guards[i] == nil {
			anyAll = true
		}
	}
	pred := logical.And(common...)
	if !anyAll {
		var or logical.Expr
		for _, gd := range guards {
			if or == nil {
				or = gd
			} else {
				or = &logical.Binary{Op: logical.OpOr, Left: or, Right: gd}
			}
		}
		pred = logical.And(pred, or)
	}
	in := g[0].in
	if pred != nil {
		f, err := logical.NewFilter(in, pred)
		if err != nil {
			return nil, false, err
		}
		in = f
	}
	var aggs []logical.Expr
	names := make([][]string, len(g))
	for i, s := range g {
		for k, a := range s.agg.Aggs {
			name := fmt.Sprintf("__merged_%d_%d_%d", id, i+1, k+1)
			names[i] = append(names[i], name)
			aggs = append(aggs, &logical.Alias{Expr: guardAgg(logical.StripAlias(a).(*logical.AggExpr), guards[i]), Name: name})
		}
	}
	m, err := logical.NewAggregate(in, nil, aggs)
	if err != nil {
		return nil, false, err
	}
	ref, err := logical.NewCTERef(id, fmt.Sprintf("merged_aggregates_%d", id), m)
	if err != nil {
		return nil, false, err
	}
	out := make([]logical.Plan, len(g))
	for i, s := range g {
		fs := s.agg.Schema().Fields
		list := make([]logical.Expr, len(fs))
		for k, f := range fs {
			list[k] = &logical.Alias{Expr: &logical.Column{Name: names[i][k]}, Name: f.Name}
		}
		proj, err := logical.NewProjection(ref, list)
		if err != nil {
			return nil, false, err
		}
		if !proj.Schema().Equal(s.agg.Schema()) {
			return nil, false, nil
		}
		var p logical.Plan = proj
		for w := len(s.wrappers) - 1; w >= 0; w-- {
			if p, err = s.wrappers[w].WithChildren([]logical.Plan{p}); err != nil {
				return nil, false, err
			}
		}
		if !p.Schema().Equal(s.wrappers0Schema()) {
			return nil, false, nil
		}
		out[i] = p
	}
	return out, true, nil
}

// wrappers0Schema is the schema of the member as it was.
func (s scalarAgg) wrappers0Schema() *logical.Schema {
	if len(s.wrappers) == 0 {
		return s.agg.Schema()
	}
	return s.wrappers[0].Schema()
}

// guardAgg makes a aggregate only the rows where guard holds (nil: all rows).
func guardAgg(a *logical.AggExpr, guard logical.Expr) *logical.AggExpr {
	if guard == nil {
		return a
	}
	n := *a
	n.Args = append([]logical.Expr(nil), a.Args...)
	if len(n.Args) == 0 { // count(*)
		n.Args = []logical.Expr{&logical.Case{Whens: []logical.When{{Cond: guard, Then: logical.Lit(int64(1))}}}}
		return &n
	}
	n.Args[0] = &logical.Case{Whens: []logical.When{{Cond: guard, Then: n.Args[0]}}}
	return &n
}

// maxCTEID is the largest shared-CTE id in p, subqueries included.
func maxCTEID(p logical.Plan) int {
	most := 0
	var visit func(logical.Plan)
	visit = func(p logical.Plan) {
		logical.Inspect(p, func(n logical.Plan) bool {
			if r, ok := n.(*logical.CTERef); ok && r.ID > most {
				most = r.ID
			}
			for _, e := range n.Exprs() {
				logical.InspectExpr(e, func(x logical.Expr) bool {
					switch q := x.(type) {
					case *logical.ScalarSubquery:
						visit(q.Plan)
					case *logical.Exists:
						visit(q.Plan)
					case *logical.InSubquery:
						visit(q.Plan)
					}
					return true
				})
			}
			return true
		})
	}
	visit(p)
	return most
}
