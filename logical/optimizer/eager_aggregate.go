package optimizer

// eager_aggregate pre-aggregates one side of an inner join below it when
// every aggregate reads only that side and the pre-aggregation is
// estimated to shrink that side at least minEagerReduction times:
//
//	Aggregate: groupBy=[c.name, d.year], aggr=[sum(s.x)]
//	  Join: s.ck = c.ck
//	    Join: d.dk = s.dk          (the sales side: S)
//	      ...
//	    Scan: c                    (the other side: O)
//	→
//	Aggregate: groupBy=[c.name, d.year], aggr=[sum(s.x) := sum(sum_eager0)]
//	  Join: s.ck = c.ck
//	    Aggregate: groupBy=[s.ck, d.year], aggr=[sum(s.x) AS sum_eager0]
//	      Join: d.dk = s.dk ...
//	    Scan: c
//
// The pre-aggregate groups by S's join keys and the S columns the group
// keys read, so each of its groups meets exactly the O rows its rows met:
// an inner join repeats a group's partial result once per matching O row
// as it repeated each of the group's rows, which SUM, MIN and MAX merge to
// the same answer (and NULL keys, which never match, stay unmatched). It
// fires only for SUM, MIN and MAX without DISTINCT, ORDER BY or FILTER,
// on an inner equi-join without a residual filter whose S keys are
// columns, and never over a side that is itself an Aggregate (so a second
// pass does not stack them). At least one group key must come from O: a
// join that contributes no group keys is a filter (a semi-join reduction,
// a dimension restricted by a predicate), which is cheaper to apply to S's
// rows before grouping them than after. A projection of plain columns between the
// aggregate and the join (reorder_joins leaves one) is dropped. The join then carries one row per group
// instead of one per S row, and the upper aggregate hashes O's (often
// wide, string) group keys that many times instead.

import (
	"context"
	"fmt"
	"math"

	"github.com/quiverdb/quiver/logical"
)

// minEagerReduction is how many times fewer rows than S the pre-aggregate
// must be estimated to produce: below it the extra hash aggregate (and, on
// a cluster, its repartition) costs about what it saves.
const minEagerReduction = 4

// EagerAggregate is the aggregate-below-join rule.
type EagerAggregate struct{}

// Name implements Rule.
func (EagerAggregate) Name() string { return "eager_aggregate" }

// Rewrite implements Rule.
func (EagerAggregate) Rewrite(ctx context.Context, p logical.Plan) (logical.Plan, bool, error) {
	return transformUp(ctx, p, func(n logical.Plan) (logical.Plan, bool, error) {
		a, ok := n.(*logical.Aggregate)
		if !ok {
			return n, false, nil
		}
		np, err := eagerAggregate(a)
		if err != nil || np == nil {
			return n, false, err
		}
		return np, true, nil
	})
}

// eagerAggregate returns a rewritten, or nil when the rule does not apply.
func eagerAggregate(a *logical.Aggregate) (logical.Plan, error) {
	in := a.Input
	if pr, ok := in.(*logical.Projection); ok && onlyColumns(pr.List) {
		// reorder_joins restores the column order above a join it turned.
		in = pr.Input
	}
	j, ok := in.(*logical.Join)
	if !ok || j.Type != logical.InnerJoin || len(j.On) == 0 || j.Filter != nil || len(a.Aggs) == 0 {
		return nil, nil
	}
	calls := make([]*logical.AggExpr, len(a.Aggs))
	for i, e := range a.Aggs {
		c, ok := logical.StripAlias(e).(*logical.AggExpr)
		if !ok || c.Distinct || c.Filter || len(c.Order) > 0 || c.NumArgs() != 1 || hasSubquery(c) || hasOuterRef(c) {
			return nil, nil
		}
		switch c.Func {
		case logical.AggSum, logical.AggMin, logical.AggMax:
		default:
			return nil, nil
		}
		calls[i] = c
	}
	// S is the side every aggregate argument reads.
	left := true
	for _, c := range calls {
		if !resolvesIn(c.Args[0], j.Left.Schema()) {
			left = false
			break
		}
	}
	s, o := j.Left, j.Right
	if !left {
		s, o = j.Right, j.Left
		for _, c := range calls {
			if !resolvesIn(c.Args[0], s.Schema()) {
				return nil, nil
			}
		}
	}
	if _, isAgg := s.(*logical.Aggregate); isAgg {
		return nil, nil
	}
	ss, os := s.Schema(), o.Schema()

	// The pre-aggregate's keys: S's join keys, then the S columns the group keys read.
	var keys []logical.Expr
	seen := map[int]bool{}
	addKey := func(c *logical.Column) {
		i, err := ss.IndexOf(c.Qualifier, c.Name)
		if err != nil || seen[i] {
			return
		}
		seen[i] = true
		keys = append(keys, c)
	}
	for _, pair := range j.On {
		k := pair.Left
		if !left {
			k = pair.Right
		}
		c, ok := k.(*logical.Column)
		if !ok || !ss.Has(c.Qualifier, c.Name) {
			return nil, nil
		}
		addKey(c)
	}
	fromO := false
	for _, g := range a.GroupBy {
		if hasSubquery(g) || hasOuterRef(g) || hasAgg(g) {
			return nil, nil
		}
		bad := false
		logical.InspectExpr(g, func(x logical.Expr) bool {
			c, ok := x.(*logical.Column)
			if !ok {
				return !bad
			}
			switch {
			case ss.Has(c.Qualifier, c.Name) && !os.Has(c.Qualifier, c.Name):
				addKey(c)
			case os.Has(c.Qualifier, c.Name) && !ss.Has(c.Qualifier, c.Name):
				fromO = true
			default:
				bad = true
			}
			return !bad
		})
		if bad {
			return nil, nil
		}
	}
	if !fromO || !worthPreAggregating(s, keys) {
		return nil, nil
	}

	// Partial names unique in both sides' schemas.
	partial := make([]string, len(calls))
	pre := make([]logical.Expr, len(calls))
	for i, c := range calls {
		name := ""
		for k := 0; ; k++ {
			name = fmt.Sprintf("%s_eager%d", c.Func, i+k*len(calls))
			if !ss.Has("", name) && !os.Has("", name) {
				break
			}
		}
		partial[i] = name
		pre[i] = &logical.Alias{Expr: c, Name: name}
	}
	preAgg, err := logical.NewAggregate(s, keys, pre)
	if err != nil {
		return nil, err
	}
	l, r := logical.Plan(preAgg), o
	if !left {
		l, r = o, preAgg
	}
	nj, err := logical.NewJoin(l, r, j.Type, j.On, nil, j.NullAware, j.MarkName)
	if err != nil {
		return nil, err
	}
	final := make([]logical.Expr, len(calls))
	for i, c := range calls {
		name := a.Schema().Field(len(a.GroupBy) + i).Name
		final[i] = &logical.Alias{Expr: &logical.AggExpr{Func: c.Func, Args: []logical.Expr{&logical.Column{Name: partial[i]}}}, Name: name}
	}
	na, err := logical.NewAggregate(nj, a.GroupBy, final)
	if err != nil {
		return nil, err
	}
	if !na.Schema().Equal(a.Schema()) {
		// A merge whose type differs from the original's (not expected for
		// SUM, MIN and MAX): keep the plan as it was.
		return nil, nil
	}
	return na, nil
}

// worthPreAggregating bounds the groups of keys over s by the product of
// their distinct counts in the tables they come from (each further bounded
// by an IN list or OR of equalities a filter inside s holds it to) and
// compares it with the largest table s reads. It does not use s's
// estimated rows: the cardinality model is coarse below a join of a
// filtered dimension, and a pre-aggregate over an s smaller than its
// largest table costs no more than the join already did. An unknown
// distinct count makes it decline.
func worthPreAggregating(s logical.Plan, keys []logical.Expr) bool {
	rows := 0.0
	logical.Inspect(s, func(n logical.Plan) bool {
		if sc, ok := n.(*logical.Scan); ok {
			rows = math.Max(rows, logical.Estimate(sc).Rows)
		}
		return true
	})
	groups := 1.0
	for _, k := range keys {
		c := k.(*logical.Column)
		d := scanDistinct(s, c)
		if d < 1 {
			return false
		}
		if n := listBound(s, c); n > 0 {
			d = math.Min(d, float64(n))
		}
		groups *= d
	}
	return groups*minEagerReduction <= rows
}

// scanDistinct is the distinct count the catalog gives for column c of the
// scan in p that outputs it, or 0 when none does or it is unknown.
func scanDistinct(p logical.Plan, c *logical.Column) float64 {
	d := 0.0
	logical.Inspect(p, func(n logical.Plan) bool {
		sc, ok := n.(*logical.Scan)
		if !ok || d > 0 {
			return d == 0
		}
		if i, err := sc.Schema().IndexOf(c.Qualifier, c.Name); err == nil {
			if st := logical.Estimate(sc); i < len(st.Distinct) {
				d = st.Distinct[i]
			}
		}
		return true
	})
	return d
}

// listBound is the fewest literals a filter in p holds column c to (an IN
// list or an OR of equalities with literals), or 0 when none does.
func listBound(p logical.Plan, c *logical.Column) int {
	best := 0
	logical.Inspect(p, func(n logical.Plan) bool {
		f, ok := n.(*logical.Filter)
		if !ok {
			return true
		}
		for _, conj := range logical.SplitAnd(f.Predicate) {
			if k := literalChoices(conj, c); k > 0 && (best == 0 || k < best) {
				best = k
			}
		}
		return true
	})
	return best
}

// literalChoices counts the literals e holds column c to, or 0.
func literalChoices(e logical.Expr, c *logical.Column) int {
	same := func(x logical.Expr) bool {
		if cast, ok := x.(*logical.Cast); ok {
			x = cast.Expr
		}
		y, ok := x.(*logical.Column)
		return ok && y.Name == c.Name && (c.Qualifier == "" || y.Qualifier == c.Qualifier)
	}
	isLit := func(x logical.Expr) bool { _, ok := x.(*logical.Literal); return ok }
	switch x := e.(type) {
	case *logical.InList:
		if x.Negated || !same(x.Expr) {
			return 0
		}
		for _, v := range x.List {
			if !isLit(v) {
				return 0
			}
		}
		return len(x.List)
	case *logical.Binary:
		switch x.Op {
		case logical.OpEq:
			if (same(x.Left) && isLit(x.Right)) || (same(x.Right) && isLit(x.Left)) {
				return 1
			}
		case logical.OpOr:
			l, r := literalChoices(x.Left, c), literalChoices(x.Right, c)
			if l > 0 && r > 0 {
				return l + r
			}
		}
	}
	return 0
}
