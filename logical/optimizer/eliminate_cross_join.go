package optimizer

// eliminate_cross_join turns equalities between the inputs of a tree of
// inner and cross joins into join keys, choosing an order of the inputs in
// which each next input is connected to the ones before (FROM a, b, c):
//
//	Filter: a.x = c.x AND b.y = c.y AND a.v > 1
//	  CrossJoin:                        Projection: a.*, b.*, c.* (the old column order)
//	    CrossJoin:              →         Filter: a.v > 1
//	      TableScan: a                      Inner Join: on=[c.y = b.y]
//	      TableScan: b                        Inner Join: on=[a.x = c.x]
//	    TableScan: c                            TableScan: a
//	                                            TableScan: c
//	                                          TableScan: b
//
// The remaining conjuncts stay in a Filter above (push_down_filter moves them
// down). It must NOT look through outer, semi, anti or mark joins (they are
// inputs of the tree, not part of it), nor move conjuncts with subqueries into
// keys; it reports no change unless the tree gains join keys.

import (
	"context"

	"github.com/quiverdb/quiver/logical"
)

// EliminateCrossJoin is the cross-join-to-inner-join rule.
type EliminateCrossJoin struct{}

// Name implements Rule.
func (EliminateCrossJoin) Name() string { return "eliminate_cross_join" }

// Rewrite implements Rule.
func (EliminateCrossJoin) Rewrite(_ context.Context, p logical.Plan) (logical.Plan, bool, error) {
	changed := false
	var walk func(p logical.Plan, preds []logical.Expr) (logical.Plan, error)
	walk = func(p logical.Plan, preds []logical.Expr) (logical.Plan, error) {
		if f, ok := p.(*logical.Filter); ok {
			if j, ok := f.Input.(*logical.Join); ok && j.Type == logical.InnerJoin {
				return walk(j, append(logical.SplitAnd(f.Predicate), preds...))
			}
		}
		j, ok := p.(*logical.Join)
		if !ok || j.Type != logical.InnerJoin {
			return mapChildren(p, func(c logical.Plan) (logical.Plan, error) { return walk(c, nil) })
		}
		leaves, conds := flattenInner(j)
		for i, l := range leaves {
			n, err := walk(l, nil)
			if err != nil {
				return nil, err
			}
			leaves[i] = n
		}
		before := countKeys(j)
		conds = append(conds, preds...)
		tree, rest, err := connectLeaves(leaves, conds)
		if err != nil {
			return nil, err
		}
		if countKeys(tree) <= before {
			// Nothing gained: keep the old tree (with its rewritten leaves).
			old, err := rebuildInner(j, leaves)
			if err != nil {
				return nil, err
			}
			return withFilter(old, preds)
		}
		changed = true
		out, err := withFilter(tree, rest)
		if err != nil {
			return nil, err
		}
		want := logical.Plan(j)
		if len(preds) > 0 {
			return restoreSchema(out, j.Schema())
		}
		return restoreSchema(out, want.Schema())
	}
	np, err := walk(p, nil)
	if err != nil || !changed {
		return p, false, err
	}
	return np, true, nil
}

// flattenInner lists the inputs of a tree of inner joins, left to right, and
// its conditions (keys as equalities, then filters).
func flattenInner(p logical.Plan) ([]logical.Plan, []logical.Expr) {
	j, ok := p.(*logical.Join)
	if !ok || j.Type != logical.InnerJoin {
		return []logical.Plan{p}, nil
	}
	ll, lc := flattenInner(j.Left)
	rl, rc := flattenInner(j.Right)
	conds := append(lc, rc...)
	for _, pr := range j.On {
		conds = append(conds, &logical.Binary{Op: logical.OpEq, Left: pr.Left, Right: pr.Right})
	}
	conds = append(conds, logical.SplitAnd(j.Filter)...)
	return append(ll, rl...), conds
}

// rebuildInner rebuilds a flattened inner-join tree with new leaves, in order.
func rebuildInner(p logical.Plan, leaves []logical.Plan) (logical.Plan, error) {
	k := 0
	var rb func(logical.Plan) (logical.Plan, error)
	rb = func(p logical.Plan) (logical.Plan, error) {
		j, ok := p.(*logical.Join)
		if !ok || j.Type != logical.InnerJoin {
			l := leaves[k]
			k++
			return l, nil
		}
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

func countKeys(p logical.Plan) int {
	j, ok := p.(*logical.Join)
	if !ok || j.Type != logical.InnerJoin {
		return 0
	}
	return len(j.On) + countKeys(j.Left) + countKeys(j.Right)
}

// connectLeaves joins leaves greedily: next is the first remaining leaf with
// an equality to the joined ones (else the first remaining, as a cross join).
// It returns the conditions it did not use as keys.
func connectLeaves(leaves []logical.Plan, conds []logical.Expr) (logical.Plan, []logical.Expr, error) {
	used := make([]bool, len(conds))
	cur := leaves[0]
	rest := append([]logical.Plan(nil), leaves[1:]...)
	for len(rest) > 0 {
		pick := 0
	search:
		for i, l := range rest {
			for k, c := range conds {
				if used[k] || !pushable(c) {
					continue
				}
				if _, ok := equiPair(c, cur.Schema(), l.Schema()); ok {
					pick = i
					break search
				}
			}
		}
		next := rest[pick]
		rest = append(rest[:pick:pick], rest[pick+1:]...)
		var on []logical.EquiPair
		for k, c := range conds {
			if used[k] || !pushable(c) {
				continue
			}
			if pair, ok := equiPair(c, cur.Schema(), next.Schema()); ok {
				on = append(on, pair)
				used[k] = true
			}
		}
		j, err := logical.NewJoin(cur, next, logical.InnerJoin, on, nil, false, "")
		if err != nil {
			return nil, nil, err
		}
		cur = j
	}
	var left []logical.Expr
	for k, c := range conds {
		if !used[k] {
			left = append(left, c)
		}
	}
	return cur, left, nil
}
