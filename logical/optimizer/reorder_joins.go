package optimizer

// reorder_joins chooses the order of a tree of inner joins by estimated
// cardinality (logical.Estimate). Greedily, from each input in turn, it
// adds the input connected to the joined ones by a key equality whose join
// is estimated smallest (a cross product only when nothing is connected),
// and keeps the tree whose joins' estimated outputs and build sides sum
// least. It puts the smaller side of each join on the LEFT, because the
// hash join builds its table from the left:
//
//	Inner Join: on=[l.k = o.k]           Projection: l.*, o.*, c.* (old order)
//	  Inner Join: on=[l.k2 = c.k]    →     Inner Join: on=[o.k = l.k]
//	    TableScan: lineitem (60k)             Inner Join: on=[c.k = o.ck]
//	    TableScan: customer (1.5k)              TableScan: customer
//	  TableScan: orders (15k)                   TableScan: orders
//	                                          TableScan: lineitem
//
// Non-key conditions become the filter of the lowest join that has their
// columns. It must NOT look through outer or mark joins (they are inputs of
// the tree), and it fires only on trees of at least two inputs whose joins
// all have keys or are crosses. A semi or anti join over an inner join tree
// whose left-side columns all come from one input of the tree is first
// moved onto that input, since it only filters that input's rows:
//
//	LeftSemi Join: on=[o.k = sq.k]         Inner Join: on=[c.k = o.ck]
//	  Inner Join: on=[c.k = o.ck]    →       TableScan: customer
//	    TableScan: customer                  LeftSemi Join: on=[o.k = sq.k]
//	    TableScan: orders                      TableScan: orders
//	  SubqueryAlias: sq                        SubqueryAlias: sq

import (
	"context"
	"math"

	"github.com/quiverdb/quiver/logical"
)

// ReorderJoins is the join-ordering rule.
type ReorderJoins struct{}

// Name implements Rule.
func (ReorderJoins) Name() string { return "reorder_joins" }

// Rewrite implements Rule.
func (ReorderJoins) Rewrite(_ context.Context, p logical.Plan) (logical.Plan, bool, error) {
	np, err := reorder(p)
	if err != nil {
		return nil, false, err
	}
	if planString(np) == planString(p) {
		return p, false, nil
	}
	return np, true, nil
}

func reorder(p logical.Plan) (logical.Plan, error) {
	j, ok := p.(*logical.Join)
	if ok && (j.Type == logical.SemiJoin || j.Type == logical.AntiJoin) {
		if np, moved, err := sinkSemi(j, j.Left, logical.Estimate(j.Left).Rows); err != nil || moved {
			if err != nil {
				return nil, err
			}
			return reorder(np)
		}
	}
	if !ok || j.Type != logical.InnerJoin {
		return mapChildren(p, reorder)
	}
	leaves, conds := flattenInner(j)
	for i, l := range leaves {
		n, err := reorder(l)
		if err != nil {
			return nil, err
		}
		leaves[i] = n
	}
	for _, c := range conds {
		if !pushable(c) {
			return rebuildInner(j, leaves)
		}
	}
	tree, err := orderLeaves(leaves, conds)
	if err != nil {
		return nil, err
	}
	return restoreSchema(tree, j.Schema())
}

type sizedPlan struct {
	p    logical.Plan
	rows float64
	key  string // tie-breaker independent of position, so the rule is idempotent; "" until needed
}

// keyOf is s's tie-breaker: the rendering of its plan, made only when two
// estimates tie (rendering every intermediate join was most of the rule's
// cost).
func (s sizedPlan) keyOf() string {
	if s.key == "" {
		return planString(s.p)
	}
	return s.key
}

func orderLeaves(leaves []logical.Plan, conds []logical.Expr) (logical.Plan, error) {
	sized := make([]sizedPlan, len(leaves))
	for i, l := range leaves {
		sized[i] = sizedPlan{p: l, rows: logical.Estimate(l).Rows, key: planString(l)}
	}
	// Greedy from every start; keep the cheapest tree. Ties go to the
	// start whose plan sorts first, so the choice does not depend on the
	// order of the leaves (the rule must be idempotent).
	var best logical.Plan
	var bestCost float64
	var bestKey string
	for start := range sized {
		p, cost, err := greedyOrder(sized, start, conds)
		if err != nil {
			return nil, err
		}
		if best == nil || cost < bestCost || (cost == bestCost && sized[start].key < bestKey) {
			best, bestCost, bestKey = p, cost, sized[start].key
		}
	}
	return best, nil
}

// lessSized orders inputs by estimated rows, then by rendering.
func lessSized(a, b sizedPlan) bool {
	if a.rows != b.rows {
		return a.rows < b.rows
	}
	return a.keyOf() < b.keyOf()
}

// greedyOrder joins the leaves starting from leaves[start], each step adding
// the connected input whose join is estimated smallest, and returns the
// tree with its cost: the estimated rows of every join's output plus its
// build (smaller) side, summed.
func greedyOrder(leaves []sizedPlan, start int, conds []logical.Expr) (logical.Plan, float64, error) {
	cur := leaves[start]
	rest := append(append([]sizedPlan(nil), leaves[:start]...), leaves[start+1:]...)
	used := make([]bool, len(conds))
	cost := 0.0
	for len(rest) > 0 {
		pick, connected, pickRows := -1, false, 0.0
		for i, l := range rest {
			var on []logical.EquiPair
			for k, e := range conds {
				if used[k] {
					continue
				}
				if pair, ok := equiPair(e, cur.p.Schema(), l.p.Schema()); ok {
					on = append(on, pair)
				}
			}
			c := len(on) > 0
			rows := cur.rows * l.rows
			if c {
				rows = joinRows(cur.p, l.p, on)
			}
			better := pick < 0 || (c && !connected)
			if !better && c == connected {
				better = rows < pickRows || (rows == pickRows && lessSized(l, rest[pick]))
			}
			if better {
				pick, connected, pickRows = i, c, rows
			}
		}
		next := rest[pick]
		rest = append(rest[:pick:pick], rest[pick+1:]...)
		left, right := cur, next
		if lessSized(next, cur) {
			left, right = next, cur
		}
		var on []logical.EquiPair
		var filters []logical.Expr
		joined := left.p.Schema().Join(right.p.Schema())
		for k, e := range conds {
			if used[k] {
				continue
			}
			if pair, ok := equiPair(e, left.p.Schema(), right.p.Schema()); ok {
				on = append(on, pair)
				used[k] = true
			} else if resolvesIn(e, joined) && hasColumns(e) &&
				!resolvesIn(e, left.p.Schema()) && !resolvesIn(e, right.p.Schema()) {
				filters = append(filters, e)
				used[k] = true
			}
		}
		j, err := logical.NewJoin(left.p, right.p, logical.InnerJoin, on, logical.And(filters...), false, "")
		if err != nil {
			return nil, 0, err
		}
		cur = sizedPlan{p: j, rows: logical.Estimate(j).Rows}
		cost += cur.rows + left.rows
	}
	var rem []logical.Expr
	for k, c := range conds {
		if !used[k] {
			rem = append(rem, c)
		}
	}
	p, err := withFilter(cur.p, rem)
	return p, cost, err
}

// joinRows estimates the rows of the inner join of l and r on the pairs.
func joinRows(l, r logical.Plan, on []logical.EquiPair) float64 {
	j, err := logical.NewJoin(l, r, logical.InnerJoin, on, nil, false, "")
	if err != nil {
		return math.Inf(1)
	}
	return logical.Estimate(j).Rows
}

// sinkSemi moves the semi or anti join semi down onto the input of the
// inner join tree in that holds every left-side column semi reads, and
// reports whether it moved. The tree's schema is unchanged (a semi or anti
// join has its left input's schema), so nothing above needs rewriting. It
// moves only when that input is estimated no larger than the whole tree
// (treeRows): the hash join builds the semi join's left side, so sinking
// below joins that shrink the rows would build a bigger table.
func sinkSemi(semi *logical.Join, in logical.Plan, treeRows float64) (logical.Plan, bool, error) {
	inner, ok := in.(*logical.Join)
	if !ok || inner.Type != logical.InnerJoin {
		return nil, false, nil
	}
	var refs []logical.Expr
	for _, p := range semi.On {
		refs = append(refs, p.Left)
	}
	if semi.Filter != nil {
		for _, c := range logical.ColumnsOf(semi.Filter) {
			if !semi.Right.Schema().Has(c.Qualifier, c.Name) {
				refs = append(refs, c)
			}
		}
	}
	if len(refs) == 0 {
		return nil, false, nil
	}
	within := func(s *logical.Schema) bool {
		for _, e := range refs {
			if !resolvesIn(e, s) {
				return false
			}
		}
		return true
	}
	var side int
	switch {
	case within(inner.Left.Schema()):
		side = 0
	case within(inner.Right.Schema()):
		side = 1
	default:
		return nil, false, nil
	}
	target := inner.Children()[side]
	sunk, moved, err := sinkSemi(semi, target, treeRows)
	if err != nil {
		return nil, false, err
	}
	if !moved {
		if logical.Estimate(target).Rows > treeRows {
			return nil, false, nil
		}
		sunk, err = logical.NewJoin(target, semi.Right, semi.Type, semi.On, semi.Filter, semi.NullAware, semi.MarkName)
		if err != nil {
			return nil, false, err
		}
	}
	ch := inner.Children()
	ch[side] = sunk
	np, err := inner.WithChildren(ch)
	if err != nil {
		return nil, false, err
	}
	return np, true, nil
}
