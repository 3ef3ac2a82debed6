package sql

import (
	"slices"

	"github.com/quiverdb/quiver/logical"
)

// cteDef is a planned WITH query: its plan and the id its references share.
type cteDef struct {
	id   int
	name string
	plan logical.Plan
}

// newCTEID returns the next CTE id of the statement; a view's child
// builder shares the counter, so ids stay unique in the whole plan.
func (b *builder) newCTEID() int {
	*b.cteCounter()++
	return *b.cteSeq
}

func (b *builder) cteCounter() *int {
	if b.cteSeq == nil {
		b.cteSeq = new(int)
	}
	return b.cteSeq
}

// shareCTEs decides, once the query that a WITH clause belongs to is
// planned, which of its queries (ids) the engine computes once: those read
// more than once, that cost more than a filtered scan, that refer to no
// outer query and that no recursive query reads. Every other reference is
// replaced by its plan, as if the WITH query had been written in its place.
func shareCTEs(lp logical.Plan, ids []int) (logical.Plan, error) {
	// Later queries may read earlier ones, so they are decided first:
	// unfolding one copies its references to the earlier ones.
	for _, id := range slices.Backward(ids) {
		n, inRecursive, input := countRefs(lp, id)
		if n >= 2 && !inRecursive && !cheapCTE(input) && !correlated(input) {
			continue
		}
		var err error
		if lp, err = unfoldCTE(lp, id); err != nil {
			return nil, err
		}
	}
	return lp, nil
}

// countRefs counts the references to CTE id in p as the engine would
// compute them (the references inside another shared CTE's plan count
// once), and reports whether a recursive query reads it.
func countRefs(p logical.Plan, id int) (n int, inRecursive bool, input logical.Plan) {
	seen := map[int]bool{}
	var walk func(logical.Plan, bool)
	walk = func(p logical.Plan, rec bool) {
		switch x := p.(type) {
		case *logical.RecursiveQuery:
			rec = true
		case *logical.CTERef:
			if x.ID == id {
				n++
				inRecursive = inRecursive || rec
				input = x.Input
				return
			}
			if seen[x.ID] && !rec {
				return
			}
			seen[x.ID] = true
		}
		for _, c := range planChildren(p) {
			walk(c, rec)
		}
	}
	walk(p, false)
	return n, inRecursive, input
}

// cheapCTE reports whether computing p again costs about as much as reading
// a stored copy of its result: a scan or literal rows under filters,
// projections and aliases.
func cheapCTE(p logical.Plan) bool {
	for {
		switch x := p.(type) {
		case *logical.Filter:
			p = x.Input
		case *logical.Projection:
			p = x.Input
		case *logical.SubqueryAlias:
			p = x.Input
		case *logical.Scan, *logical.Values, *logical.EmptyRelation, *logical.CTERef:
			return true
		default:
			return false
		}
	}
}

// correlated reports whether p refers to a column of an enclosing query:
// such a WITH query has one result per outer row and is not shared.
func correlated(p logical.Plan) bool {
	found := false
	logical.Inspect(p, func(n logical.Plan) bool {
		for _, e := range n.Exprs() {
			logical.InspectExpr(e, func(x logical.Expr) bool {
				if _, ok := x.(*logical.OuterRef); ok {
					found = true
				}
				return !found
			})
		}
		return !found
	})
	return found
}

// planChildren is p's children and the plans of the subqueries in its
// expressions, which hold references to WITH queries too.
func planChildren(p logical.Plan) []logical.Plan {
	out := p.Children()
	for _, e := range p.Exprs() {
		logical.InspectExpr(e, func(x logical.Expr) bool {
			if q := subqueryPlan(x); q != nil {
				out = append(out, q)
			}
			return true
		})
	}
	return out
}

func subqueryPlan(e logical.Expr) logical.Plan {
	switch x := e.(type) {
	case *logical.ScalarSubquery:
		return x.Plan
	case *logical.Exists:
		return x.Plan
	case *logical.InSubquery:
		return x.Plan
	}
	return nil
}

// unfoldCTE replaces every reference to CTE id in p, subqueries included,
// by the CTE's plan.
func unfoldCTE(p logical.Plan, id int) (logical.Plan, error) {
	if r, ok := p.(*logical.CTERef); ok && r.ID == id {
		return r.Input, nil
	}
	out := p
	if ch := p.Children(); len(ch) > 0 {
		nc := make([]logical.Plan, len(ch))
		changed := false
		for i, c := range ch {
			n, err := unfoldCTE(c, id)
			if err != nil {
				return nil, err
			}
			nc[i], changed = n, changed || n != c
		}
		if changed {
			var err error
			if out, err = p.WithChildren(nc); err != nil {
				return nil, err
			}
		}
	}
	es := out.Exprs()
	if len(es) == 0 {
		return out, nil
	}
	nes := make([]logical.Expr, len(es))
	changed := false
	for i, e := range es {
		ne, ch, err := logical.TransformExprUp(e, func(x logical.Expr) (logical.Expr, bool, error) {
			q := subqueryPlan(x)
			if q == nil {
				return x, false, nil
			}
			nq, err := unfoldCTE(q, id)
			if err != nil || nq == q {
				return x, false, err
			}
			switch x := x.(type) {
			case *logical.ScalarSubquery:
				return &logical.ScalarSubquery{Plan: nq}, true, nil
			case *logical.Exists:
				return &logical.Exists{Plan: nq, Negated: x.Negated}, true, nil
			case *logical.InSubquery:
				n := *x
				n.Plan = nq
				return &n, true, nil
			}
			return x, false, nil
		})
		if err != nil {
			return nil, err
		}
		nes[i], changed = ne, changed || ch
	}
	if !changed {
		return out, nil
	}
	return out.WithExprs(nes)
}
