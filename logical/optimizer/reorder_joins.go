package optimizer

// reorder_joins chooses the order of a tree of inner joins by estimated
// cardinality (logical.Estimate). Greedily, it starts from the smallest
// input, then adds the input connected to the joined ones by a key equality
// whose join is estimated smallest (a cross product only when nothing is
// connected), and puts the smaller side of each join on the LEFT, because
// the hash join builds its table from the left:
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
		ch := p.Children()
		if len(ch) == 0 {
			return p, nil
		}
		nc := make([]logical.Plan, len(ch))
		for i, c := range ch {
			n, err := reorder(c)
			if err != nil {
				return nil, err
			}
			nc[i] = n
		}
		return p.WithChildren(nc)
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
	key  string // tie-breaker independent of position, so the rule is idempotent
}

func orderLeaves(leaves []logical.Plan, conds []logical.Expr) (logical.Plan, error) {
	rest := make([]sizedPlan, len(leaves))
	for i, l := range leaves {
		rest[i] = sizedPlan{p: l, rows: logical.Estimate(l).Rows, key: planString(l)}
	}
	less := func(a, b sizedPlan) bool {
		if a.rows != b.rows {
			return a.rows < b.rows
		}
		return a.key < b.key
	}
	start := 0
	for i := range rest {
		if less(rest[i], rest[start]) {
			start = i
		}
	}
	cur := rest[start]
	rest = append(rest[:start:start], rest[start+1:]...)
	used := make([]bool, len(conds))
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
				better = rows < pickRows || (rows == pickRows && less(l, rest[pick]))
			}
			if better {
				pick, connected, pickRows = i, c, rows
			}
		}
		next := rest[pick]
		rest = append(rest[:pick:pick], rest[pick+1:]...)
		left, right := cur, next
		if less(next, cur) {
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
			return nil, err
		}
		cur = sizedPlan{p: j, rows: logical.Estimate(j).Rows, key: planString(j)}
	}
	var rem []logical.Expr
	for k, c := range conds {
		if !used[k] {
			rem = append(rem, c)
		}
	}
	return withFilter(cur.p, rem)
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
