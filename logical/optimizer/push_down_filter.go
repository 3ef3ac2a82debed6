package optimizer

// push_down_filter moves each Filter conjunct as far down the plan as it can
// go and still mean the same:
//
//	Filter: t.a > 1 AND u.b = 2 AND t.k = u.k
//	  Inner Join: (no keys)          →  Inner Join: on=[t.k = u.k]
//	    TableScan: t                      Filter: t.a > 1
//	    TableScan: u                        TableScan: t filters=[t.a > 1]
//	                                      Filter: u.b = 2
//	                                        TableScan: u filters=[u.b = 2]
//
// It passes through Projections (substituting the projected expressions),
// SubqueryAliases (re-qualifying), Sorts without a fetch, into the matching
// side of inner joins (cross-side equalities become join keys, other
// cross-side conjuncts the join filter), into the preserved side only of
// outer joins (an ON conjunct over the null-supplying side alone goes into
// that side), into the left of semi, anti and mark joins, below an Aggregate
// when it uses only group columns, below a Window when it uses only columns
// every window function partitions by, and into every Union input. A
// conjunct comparing a join key column with constants is also copied, onto
// the paired key, to the other side where that side's rows only serve to
// meet the first side's (both sides of an inner join; from the preserved
// side of an outer join, or the left of a semi or anti join that is not
// null-aware, to the other). Conjuncts that reach a scan are also copied
// into Scan.Filters as a pruning hint; the Filter stays above the scan.
//
// It must NOT move a conjunct with a subquery or outer reference, anything
// into a Cache's or a shared CTE's input from outside (the input is optimized
// as its own tree; push_down_cte_filter moves what every reference of a CTE
// filters),
// past a Limit or a Sort with a fetch, into the null-supplying side of an
// outer join from above (a key condition's copy is no move: the original
// stays on the preserved side), or change the conditions of a null-aware
// anti join.

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver/logical"
)

// PushDownFilter is the predicate push-down rule.
type PushDownFilter struct{}

// Name implements Rule.
func (PushDownFilter) Name() string { return "push_down_filter" }

// Rewrite implements Rule. Change is detected by comparing the rendered plans:
// conjuncts are rebuilt at every level, so tracking moves would be error-prone.
func (PushDownFilter) Rewrite(_ context.Context, p logical.Plan) (logical.Plan, bool, error) {
	np, err := pushFilters(p, nil)
	if err != nil {
		return nil, false, err
	}
	if planString(np) == planString(p) {
		return p, false, nil
	}
	return np, true, nil
}

// impliedOn derives from a disjunction over both sides of a join the
// predicate it implies on the side with schema s: the OR, over the
// disjuncts, of each one's conjuncts that use only s's columns. Every
// disjunct must have such a conjunct; otherwise (or when e is not an OR)
// it returns nil. The derived predicate is pushed to that side while e
// stays in the join, so (n1 = 'A' AND n2 = 'B') OR (n1 = 'B' AND n2 = 'A')
// lets each nation input keep only 'A' and 'B' rows before the join.
func impliedOn(e logical.Expr, s *logical.Schema) logical.Expr {
	b, ok := e.(*logical.Binary)
	if !ok || b.Op != logical.OpOr {
		return nil
	}
	var out logical.Expr
	for _, d := range splitOr(e) {
		var part []logical.Expr
		for _, c := range logical.SplitAnd(d) {
			if pushable(c) && hasColumns(c) && resolvesIn(c, s) {
				part = append(part, c)
			}
		}
		if len(part) == 0 {
			return nil
		}
		if out == nil {
			out = logical.And(part...)
		} else {
			out = &logical.Binary{Op: logical.OpOr, Left: out, Right: logical.And(part...)}
		}
	}
	return out
}

// splitOr flattens a disjunction into its disjuncts.
func splitOr(e logical.Expr) []logical.Expr {
	if b, ok := e.(*logical.Binary); ok && b.Op == logical.OpOr {
		return append(splitOr(b.Left), splitOr(b.Right)...)
	}
	return []logical.Expr{e}
}

func pushable(e logical.Expr) bool { return !hasSubquery(e) && !hasOuterRef(e) }

// withFilter puts preds in a Filter above p (none: p itself).
func withFilter(p logical.Plan, preds []logical.Expr) (logical.Plan, error) {
	preds = dedupe(preds)
	if len(preds) == 0 {
		return p, nil
	}
	return logical.NewFilter(p, logical.And(preds...))
}

// pushChildren pushes nothing into each child of p and rebuilds it.
func pushChildren(p logical.Plan) (logical.Plan, error) {
	return mapChildren(p, func(c logical.Plan) (logical.Plan, error) { return pushFilters(c, nil) })
}

// pushFilters places preds (conjuncts over p's schema) at or below p.
func pushFilters(p logical.Plan, preds []logical.Expr) (logical.Plan, error) {
	var keep, down []logical.Expr
	for _, e := range preds {
		if pushable(e) {
			down = append(down, e)
		} else {
			keep = append(keep, e)
		}
	}
	switch n := p.(type) {
	case *logical.Filter:
		var own []logical.Expr
		for _, c := range logical.SplitAnd(n.Predicate) {
			if pushable(c) {
				own = append(own, c)
			} else {
				keep = append(keep, c)
			}
		}
		in, err := pushFilters(n.Input, append(own, down...))
		if err != nil {
			return nil, err
		}
		return withFilter(in, keep)
	case *logical.Projection:
		var sub []logical.Expr
		s := n.Schema()
		for _, e := range down {
			ne, ok := mapColumns(e, func(c *logical.Column) (logical.Expr, bool) {
				i, err := s.IndexOf(c.Qualifier, c.Name)
				if err != nil {
					return nil, false
				}
				x := logical.StripAlias(n.List[i])
				return x, pushable(x) && !hasAgg(x)
			})
			if ok {
				sub = append(sub, ne)
			} else {
				keep = append(keep, e)
			}
		}
		in, err := pushFilters(n.Input, sub)
		if err != nil {
			return nil, err
		}
		np, err := logical.NewProjection(in, n.List)
		if err != nil {
			return nil, err
		}
		return withFilter(np, keep)
	case *logical.SubqueryAlias:
		var sub []logical.Expr
		s, is := n.Schema(), n.Input.Schema()
		for _, e := range down {
			ne, ok := mapColumns(e, func(c *logical.Column) (logical.Expr, bool) {
				i, err := s.IndexOf(c.Qualifier, c.Name)
				if err != nil {
					return nil, false
				}
				return columnFor(is, i)
			})
			if ok {
				sub = append(sub, ne)
			} else {
				keep = append(keep, e)
			}
		}
		in, err := pushFilters(n.Input, sub)
		if err != nil {
			return nil, err
		}
		return withFilter(logical.NewSubqueryAlias(in, n.Alias), keep)
	case *logical.Sort:
		if n.Fetch >= 0 {
			break
		}
		in, err := pushFilters(n.Input, down)
		if err != nil {
			return nil, err
		}
		ns, err := logical.NewSort(in, n.Keys, n.Fetch)
		if err != nil {
			return nil, err
		}
		return withFilter(ns, keep)
	case *logical.Join:
		return pushJoin(n, down, keep)
	case *logical.Window:
		return pushWindow(n, down, keep)
	case *logical.Aggregate:
		if len(n.GroupBy) == 0 {
			break
		}
		var sub []logical.Expr
		s := n.Schema()
		for _, e := range down {
			ne, ok := mapColumns(e, func(c *logical.Column) (logical.Expr, bool) {
				i, err := s.IndexOf(c.Qualifier, c.Name)
				if err != nil || i >= len(n.GroupBy) {
					return nil, false
				}
				return logical.StripAlias(n.GroupBy[i]), true
			})
			if ok {
				sub = append(sub, ne)
			} else {
				keep = append(keep, e)
			}
		}
		in, err := pushFilters(n.Input, sub)
		if err != nil {
			return nil, err
		}
		na, err := logical.NewAggregate(in, n.GroupBy, n.Aggs)
		if err != nil {
			return nil, err
		}
		return withFilter(na, keep)
	case *logical.Union:
		s := n.Schema()
		per := make([][]logical.Expr, len(n.Inputs))
		for _, e := range down {
			mapped := make([]logical.Expr, len(n.Inputs))
			ok := true
			for k, in := range n.Inputs {
				is := in.Schema()
				ne, good := mapColumns(e, func(c *logical.Column) (logical.Expr, bool) {
					i, err := s.IndexOf(c.Qualifier, c.Name)
					if err != nil {
						return nil, false
					}
					return columnFor(is, i)
				})
				if !good {
					ok = false
					break
				}
				mapped[k] = ne
			}
			if !ok {
				keep = append(keep, e)
				continue
			}
			for k := range per {
				per[k] = append(per[k], mapped[k])
			}
		}
		ins := make([]logical.Plan, len(n.Inputs))
		for k, in := range n.Inputs {
			ni, err := pushFilters(in, per[k])
			if err != nil {
				return nil, err
			}
			ins[k] = ni
		}
		nu, err := logical.NewUnion(ins)
		if err != nil {
			return nil, err
		}
		return withFilter(nu, keep)
	case *logical.Scan:
		s := n.Schema()
		fs := append([]logical.Expr(nil), n.Filters...)
		for _, e := range down {
			if resolvesIn(e, s) {
				fs = append(fs, e)
			}
		}
		fs = dedupe(fs)
		var np logical.Plan = n
		if len(fs) != len(n.Filters) {
			np = n.WithFilters(fs)
		}
		return withFilter(np, append(down, keep...))
	}
	// Limit, Sort with fetch, global Aggregate, Cache, CTERef, Values, EmptyRelation:
	// nothing passes; children are optimized on their own.
	np, err := pushChildren(p)
	if err != nil {
		return nil, err
	}
	return withFilter(np, append(down, keep...))
}

func pushJoin(n *logical.Join, down, keep []logical.Expr) (logical.Plan, error) {
	ls, rs := n.Left.Schema(), n.Right.Schema()
	var toL, toR, above []logical.Expr
	on := append([]logical.EquiPair(nil), n.On...)
	var jf []logical.Expr
	own := logical.SplitAnd(n.Filter)
	inL := func(e logical.Expr) bool { return resolvesIn(e, ls) }
	inR := func(e logical.Expr) bool { return resolvesIn(e, rs) && hasColumns(e) }
	switch n.Type {
	case logical.InnerJoin:
		for _, e := range append(own, down...) {
			if !pushable(e) {
				jf = append(jf, e)
				continue
			}
			switch {
			case inL(e):
				toL = append(toL, e)
			case inR(e):
				toR = append(toR, e)
			default:
				if pair, ok := equiPair(e, ls, rs); ok {
					on = append(on, pair)
				} else {
					jf = append(jf, e)
					if d := impliedOn(e, ls); d != nil {
						toL = append(toL, d)
					}
					if d := impliedOn(e, rs); d != nil {
						toR = append(toR, d)
					}
				}
			}
		}
	case logical.LeftJoin, logical.RightJoin, logical.FullJoin:
		preserved, supplied := inL, inR
		toP, toS := &toL, &toR
		if n.Type == logical.RightJoin {
			preserved = func(e logical.Expr) bool { return resolvesIn(e, rs) && hasColumns(e) }
			supplied = func(e logical.Expr) bool { return resolvesIn(e, ls) && hasColumns(e) }
			toP, toS = &toR, &toL
		}
		for _, e := range down {
			if n.Type != logical.FullJoin && preserved(e) && hasColumns(e) {
				*toP = append(*toP, e)
			} else {
				above = append(above, e)
			}
		}
		for _, e := range own {
			switch {
			case !pushable(e):
				jf = append(jf, e)
			case n.Type != logical.FullJoin && supplied(e):
				*toS = append(*toS, e)
			default:
				if pair, ok := equiPair(e, ls, rs); ok {
					on = append(on, pair)
				} else {
					jf = append(jf, e)
				}
			}
		}
	case logical.SemiJoin, logical.AntiJoin, logical.MarkJoin:
		for _, e := range down {
			if inL(e) && hasColumns(e) {
				toL = append(toL, e)
			} else {
				above = append(above, e)
			}
		}
		for _, e := range own {
			switch {
			case n.NullAware || !pushable(e):
				jf = append(jf, e)
			case inR(e):
				toR = append(toR, e)
			case n.Type == logical.SemiJoin && inL(e) && hasColumns(e):
				toL = append(toL, e)
			default:
				if pair, ok := equiPair(e, ls, rs); ok {
					on = append(on, pair)
				} else {
					jf = append(jf, e)
				}
			}
		}
	}
	// A constant condition on one side's join key holds on the other's key
	// in every joined row, so it filters the other side too, where that
	// side's rows only serve to meet rows passing it (the preserved side of
	// an outer join and the probe side of a null-aware or mark join keep
	// rows whatever they meet).
	switch {
	case n.Type == logical.InnerJoin:
		fromL, fromR := toL, toR
		toR = append(toR, transferKeyConds(fromL, on, true, ls)...)
		toL = append(toL, transferKeyConds(fromR, on, false, rs)...)
	case n.Type == logical.LeftJoin, (n.Type == logical.SemiJoin || n.Type == logical.AntiJoin) && !n.NullAware:
		toR = append(toR, transferKeyConds(toL, on, true, ls)...)
	case n.Type == logical.RightJoin:
		toL = append(toL, transferKeyConds(toR, on, false, rs)...)
	}
	l, err := pushFilters(n.Left, toL)
	if err != nil {
		return nil, err
	}
	r, err := pushFilters(n.Right, toR)
	if err != nil {
		return nil, err
	}
	nj, err := logical.NewJoin(l, r, n.Type, on, logical.And(dedupe(jf)...), n.NullAware, n.MarkName)
	if err != nil {
		return nil, err
	}
	return withFilter(nj, append(above, keep...))
}

// transferKeyConds returns, for each conjunct of preds that compares a join
// key column of one side (the left side, schema s, when fromLeft) with
// constants, the same comparison on the paired key of the other side. Two
// keys that join are equal and not NULL, so a row of the other side that
// fails the copy meets no row that passes the original. Float keys are
// left out: equal floats (0 and -0) can compare differently.
func transferKeyConds(preds []logical.Expr, on []logical.EquiPair, fromLeft bool, s *logical.Schema) []logical.Expr {
	var out []logical.Expr
	for _, e := range preds {
		c := keyComparison(e)
		if c == nil {
			continue
		}
		ci, err := s.IndexOf(c.Qualifier, c.Name)
		if err != nil {
			continue
		}
		if t := s.Field(ci).Type; t.ID() == arrow.FLOAT32 || t.ID() == arrow.FLOAT64 || t.ID() == arrow.FLOAT16 {
			continue
		}
		for _, pair := range on {
			from, to := pair.Left, pair.Right
			if !fromLeft {
				from, to = to, from
			}
			fc, ok1 := from.(*logical.Column)
			tc, ok2 := to.(*logical.Column)
			if !ok1 || !ok2 {
				continue
			}
			if fi, err := s.IndexOf(fc.Qualifier, fc.Name); err != nil || fi != ci {
				continue
			}
			if ne, ok := mapColumns(e, func(*logical.Column) (logical.Expr, bool) { return tc, true }); ok {
				out = append(out, ne)
			}
		}
	}
	return out
}

// keyComparison returns the column of e when e compares one column with
// literals (c op lit, lit op c, c [NOT] IN (lits)), else nil.
func keyComparison(e logical.Expr) *logical.Column {
	switch x := e.(type) {
	case *logical.Binary:
		if !x.Op.IsComparison() {
			return nil
		}
		c, ok := x.Left.(*logical.Column)
		lit := x.Right
		if !ok {
			c, ok = x.Right.(*logical.Column)
			lit = x.Left
		}
		if _, isLit := lit.(*logical.Literal); !ok || !isLit {
			return nil
		}
		return c
	case *logical.InList:
		c, ok := x.Expr.(*logical.Column)
		if !ok {
			return nil
		}
		for _, v := range x.List {
			if _, isLit := v.(*logical.Literal); !isLit {
				return nil
			}
		}
		return c
	}
	return nil
}
