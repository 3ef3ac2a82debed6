package optimizer

// push_down_cte_filter gives a shared CTE the filters its references apply,
// OR-ed together, when every reference filters (DuckDB's choice; DataFusion
// inlines every CTE and so pushes each reference's own filter):
//
//	Filter: y.a = 1                    Filter: y.a = 1
//	  SharedCTE: y id=1          →       SharedCTE: y id=1
//	    <plan>                             Filter: y.a = 1 OR y.a = 2
//	Filter: y.a = 2                          <plan>
//	  CTERef: y id=1                   Filter: y.a = 2
//	                                     CTERef: y id=1 ...
//
// Each reference keeps its own filter above; the OR only drops rows no
// reference reads, and push_down_filter then moves it into the plan. Beside
// the OR go, per column that every filter restricts alone, the OR of those
// restrictions (y.a = 1 OR y.a = 2 above, were the filters y.a = 1 AND
// y.n > 5 and y.a = 2), which can go where the whole OR cannot. It must
// NOT push when a reference does not filter (the OR would keep every row),
// when a filter has a subquery or an outer reference, or into a CTE it has
// pushed into already (logical.CTERef.Filtered), and it gives every
// reference the same new plan, so that they stay one computation.

import (
	"context"

	"github.com/quiverdb/quiver/logical"
)

// PushDownCTEFilter is the shared-CTE filter rule.
type PushDownCTEFilter struct{}

// Name implements Rule.
func (PushDownCTEFilter) Name() string { return "push_down_cte_filter" }

// Rewrite implements Rule.
func (PushDownCTEFilter) Rewrite(_ context.Context, p logical.Plan) (logical.Plan, bool, error) {
	type refs struct {
		n      int
		preds  []logical.Expr
		closed bool // a reference without a pushable filter, or already pushed
	}
	byID := map[int]*refs{}
	get := func(id int) *refs {
		r := byID[id]
		if r == nil {
			r = &refs{}
			byID[id] = r
		}
		return r
	}
	var walk func(p, parent logical.Plan)
	walk = func(p, parent logical.Plan) {
		if r, ok := p.(*logical.CTERef); ok {
			st := get(r.ID)
			st.n++
			f, ok := parent.(*logical.Filter)
			switch {
			case r.Filtered || !ok:
				st.closed = true
			default:
				for _, c := range logical.SplitAnd(f.Predicate) {
					if !pushable(c) {
						st.closed = true
					}
				}
				st.preds = append(st.preds, f.Predicate)
			}
		}
		for _, e := range p.Exprs() {
			if hasSubquery(e) {
				// References inside a subquery's plan are out of sight:
				// close every CTE, since one of them may be read there.
				for _, c := range subqueryCTEs(e) {
					get(c).closed = true
				}
			}
		}
		for _, c := range p.Children() {
			walk(c, p)
		}
	}
	walk(p, nil)
	push := map[int]logical.Expr{}
	for id, st := range byID {
		if st.closed || st.n < 2 {
			continue
		}
		push[id] = orFilters(dedupe(st.preds))
	}
	if len(push) == 0 {
		return p, false, nil
	}
	return logical.TransformUp(p, func(n logical.Plan) (logical.Plan, bool, error) {
		r, ok := n.(*logical.CTERef)
		if !ok || push[r.ID] == nil || r.Filtered {
			return n, false, nil
		}
		f, err := logical.NewFilter(r.Input, push[r.ID])
		if err != nil {
			return nil, false, err
		}
		out := *r
		out.Input, out.Filtered = f, true
		return &out, true, nil
	})
}

// orFilters is the OR of preds and, for each column that every pred
// restricts on its own, the OR of those restrictions: implied by the first,
// but a conjunct over one column, which push_down_filter can take where the
// whole OR cannot go (below an aggregate grouped by that column, say).
func orFilters(preds []logical.Expr) logical.Expr {
	if len(preds) == 1 {
		return preds[0]
	}
	or := func(es []logical.Expr) logical.Expr {
		out := es[0]
		for _, e := range es[1:] {
			out = &logical.Binary{Op: logical.OpOr, Left: out, Right: e}
		}
		return out
	}
	// per[i][column] is the AND of pred i's conjuncts over that column alone.
	per := make([]map[string][]logical.Expr, len(preds))
	var order []string
	for i, p := range preds {
		per[i] = map[string][]logical.Expr{}
		for _, c := range logical.SplitAnd(p) {
			cols := logical.ColumnsOf(c)
			if len(cols) == 0 {
				continue
			}
			k := cols[0].String()
			one := true
			for _, col := range cols[1:] {
				one = one && col.String() == k
			}
			if !one {
				continue
			}
			if i == 0 && per[0][k] == nil {
				order = append(order, k)
			}
			per[i][k] = append(per[i][k], c)
		}
	}
	out := []logical.Expr{or(preds)}
	for _, k := range order {
		var alts []logical.Expr
		for i := range preds {
			cs := per[i][k]
			if cs == nil {
				alts = nil
				break
			}
			alts = append(alts, logical.And(cs...))
		}
		if alts != nil {
			out = append(out, or(dedupe(alts)))
		}
	}
	return logical.And(out...)
}

// subqueryCTEs lists the shared CTEs referenced in e's subqueries.
func subqueryCTEs(e logical.Expr) []int {
	var out []int
	logical.InspectExpr(e, func(x logical.Expr) bool {
		var q logical.Plan
		switch x := x.(type) {
		case *logical.ScalarSubquery:
			q = x.Plan
		case *logical.Exists:
			q = x.Plan
		case *logical.InSubquery:
			q = x.Plan
		}
		if q != nil {
			for id := range logical.CTERefCounts(q) {
				out = append(out, id)
			}
		}
		return true
	})
	return out
}
