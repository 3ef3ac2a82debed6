package optimizer

// reorder_joins chooses the order of a tree of inner joins by estimated
// cardinality. Greedily, it starts from the smallest input, then adds the
// smallest input connected to the joined ones by a key equality (a cross
// product only when nothing is connected), and puts the smaller side of each
// join on the LEFT, because the hash join builds its table from the left:
//
//	Inner Join: on=[l.k = o.k]           Projection: l.*, o.*, c.* (old order)
//	  Inner Join: on=[l.k2 = c.k]    →     Inner Join: on=[o.k = l.k]
//	    TableScan: lineitem (60k)             Inner Join: on=[c.k = o.ck]
//	    TableScan: customer (1.5k)              TableScan: customer
//	  TableScan: orders (15k)                   TableScan: orders
//	                                          TableScan: lineitem
//
// Estimates: Scan rows from the catalog (1e6 when unknown); a Filter keeps
// 0.1 per conjunct (0.01 for an equality of a key-like column with a constant);
// a keyed join yields its larger input; a global aggregate one row, a grouped
// one a tenth of its input. Non-key conditions become the filter of the lowest
// join that has their columns. It must NOT look through outer, semi, anti or
// mark joins (they are inputs of the tree), and it fires only on trees of at
// least two inputs whose joins all have keys or are crosses.

import (
	"context"
	"math"
	"strings"

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
		rest[i] = sizedPlan{p: l, rows: estimateRows(l), key: planString(l)}
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
		pick, connected := -1, false
		for i, l := range rest {
			c := false
			for k, e := range conds {
				if used[k] {
					continue
				}
				if _, ok := equiPair(e, cur.p.Schema(), l.p.Schema()); ok {
					c = true
					break
				}
			}
			if pick < 0 || (c && !connected) || (c == connected && less(l, rest[pick])) {
				pick, connected = i, c
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
		rows := left.rows * right.rows
		if len(on) > 0 {
			rows = math.Max(left.rows, right.rows)
		}
		cur = sizedPlan{p: j, rows: rows, key: planString(j)}
	}
	var rem []logical.Expr
	for k, c := range conds {
		if !used[k] {
			rem = append(rem, c)
		}
	}
	return withFilter(cur.p, rem)
}

// estimateRows is a rough cardinality estimate of p.
func estimateRows(p logical.Plan) float64 {
	switch n := p.(type) {
	case *logical.Scan:
		r := float64(n.Table.Rows)
		if n.Table.Rows < 0 {
			r = 1e6
		}
		if n.Fetch >= 0 {
			r = math.Min(r, float64(n.Fetch))
		}
		return r
	case *logical.Filter:
		r := estimateRows(n.Input)
		for _, c := range logical.SplitAnd(n.Predicate) {
			r *= selectivity(c)
		}
		return math.Max(r, 1)
	case *logical.Join:
		l, r := estimateRows(n.Left), estimateRows(n.Right)
		switch n.Type {
		case logical.SemiJoin, logical.AntiJoin, logical.MarkJoin:
			return l
		case logical.LeftJoin:
			return math.Max(l, r)
		}
		if len(n.On) == 0 {
			return l * r
		}
		return math.Max(l, r)
	case *logical.Aggregate:
		if len(n.GroupBy) == 0 {
			return 1
		}
		return math.Max(1, estimateRows(n.Input)*0.1)
	case *logical.Limit:
		r := estimateRows(n.Input)
		if n.Fetch >= 0 {
			r = math.Min(r, float64(n.Fetch))
		}
		return r
	case *logical.Sort:
		r := estimateRows(n.Input)
		if n.Fetch >= 0 {
			r = math.Min(r, float64(n.Fetch))
		}
		return r
	case *logical.Union:
		s := 0.0
		for _, in := range n.Inputs {
			s += estimateRows(in)
		}
		return s
	case *logical.Values:
		return float64(len(n.Rows))
	case *logical.EmptyRelation:
		if n.ProduceOneRow {
			return 1
		}
		return 0
	}
	ch := p.Children()
	if len(ch) == 1 {
		return estimateRows(ch[0])
	}
	return 1e6
}

// selectivity is the fraction of rows a conjunct is assumed to keep.
func selectivity(c logical.Expr) float64 {
	if b, ok := c.(*logical.Binary); ok && b.Op == logical.OpEq {
		col, lit := b.Left, b.Right
		if _, ok := col.(*logical.Literal); ok {
			col, lit = lit, col
		}
		if cc, ok := col.(*logical.Column); ok {
			if _, ok := lit.(*logical.Literal); ok && strings.HasSuffix(strings.ToLower(cc.Name), "key") {
				return 0.01
			}
		}
	}
	return 0.1
}
