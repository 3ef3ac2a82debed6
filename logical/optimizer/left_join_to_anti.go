package optimizer

// left_join_to_anti turns the anti-join idiom `l LEFT JOIN r ON ... WHERE
// r.c IS NULL` into an anti join when c cannot be NULL on a matched row and
// nothing above the filter reads a column of r (TPC-DS q78: sales LEFT JOIN
// returns WHERE sr_ticket_number IS NULL, then an aggregate of sales
// columns):
//
//	Aggregate: groupBy=[l.a] ...          Aggregate: groupBy=[l.a] ...
//	  Filter: r.k IS NULL          →        LeftAnti Join: l.a = r.k
//	    Left Join: l.a = r.k                  TableScan: l
//	      TableScan: l                        TableScan: r
//	      TableScan: r
//
// A left join pads exactly the left rows that meet no right row satisfying
// its keys and filter; c is NULL on every padded row and, when it is a right
// key (NULL keys never match), a column the join filter rejects when NULL, or
// a non-nullable column, on no matched row. So the filter keeps exactly the
// padded rows, which is what an anti join with the same keys and filter
// outputs, without the right side's columns. Those columns must therefore be
// read by nothing above: the rule walks down carrying the columns each node's
// ancestors need and fires only below a projection or aggregate that drops
// them. Other conjuncts of the filter that read only the left side stay in
// a filter above the anti join; `r.x IS NULL` conjuncts of any right column
// are TRUE on padded rows and go; any other conjunct reading the right side
// makes the rule decline.

import (
	"context"

	"github.com/quiverdb/quiver/logical"
)

// LeftJoinToAnti is the left-join-with-IS-NULL-filter to anti-join rule.
type LeftJoinToAnti struct{}

// Name implements Rule.
func (LeftJoinToAnti) Name() string { return "left_join_to_anti" }

// needed is the set of columns the ancestors of a node read from its output;
// all means every column (a root, or a node the rule does not see through).
type needed struct {
	all  bool
	cols []*logical.Column
}

var neededAll = needed{all: true}

// plus returns n with the columns es read added; an expression with a
// subquery or outer reference may read anything.
func (n needed) plus(es []logical.Expr) needed {
	if n.all {
		return n
	}
	out := needed{cols: append([]*logical.Column(nil), n.cols...)}
	for _, e := range es {
		if hasSubquery(e) || hasOuterRef(e) {
			return neededAll
		}
		out.cols = append(out.cols, logical.ColumnsOf(e)...)
	}
	return out
}

// readsSide reports whether n may read a column of s.
func (n needed) readsSide(s *logical.Schema) bool {
	if n.all {
		return true
	}
	for _, c := range n.cols {
		if mayName(s, c) {
			return true
		}
	}
	return false
}

// Rewrite implements Rule.
func (LeftJoinToAnti) Rewrite(ctx context.Context, p logical.Plan) (logical.Plan, bool, error) {
	return antiWalk(ctx, p, neededAll)
}

// antiWalk rewrites the subtree p whose ancestors read need of its output.
func antiWalk(ctx context.Context, p logical.Plan, need needed) (logical.Plan, bool, error) {
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	ch := p.Children()
	if len(ch) == 0 {
		return p, false, nil
	}
	reqs := make([]needed, len(ch))
	switch n := p.(type) {
	case *logical.Projection:
		// Only the entries the ancestors read count (pull_up_left_join's
		// restoring projection lists the right side's columns too).
		var used []logical.Expr
		for i, e := range n.List {
			if need.all || need.readsSide(logical.NewSchema(n.Schema().Field(i))) {
				used = append(used, e)
			}
		}
		reqs[0] = needed{}.plus(used)
	case *logical.Aggregate:
		reqs[0] = needed{}.plus(n.Exprs())
	case *logical.Filter, *logical.Sort, *logical.Limit:
		reqs[0] = need.plus(p.Exprs())
	case *logical.Join:
		reqs[0] = need.plus(n.Exprs())
		reqs[1] = reqs[0]
		if n.Type == logical.SemiJoin || n.Type == logical.AntiJoin || n.Type == logical.MarkJoin {
			// Only the conditions read the right side of these joins.
			reqs[1] = needed{}.plus(n.Exprs())
		}
	default:
		for i := range reqs {
			reqs[i] = neededAll
		}
	}
	changed := false
	nc := make([]logical.Plan, len(ch))
	for i, c := range ch {
		n, ok, err := antiWalk(ctx, c, reqs[i])
		if err != nil {
			return nil, false, err
		}
		nc[i], changed = n, changed || ok
	}
	if changed {
		np, err := withNewChildren(p, nc)
		if err != nil {
			return nil, false, err
		}
		if np == nil {
			return p, false, nil
		}
		p = np
	}
	f, ok := p.(*logical.Filter)
	if !ok {
		return p, changed, nil
	}
	j, ok := f.Input.(*logical.Join)
	if !ok || j.Type != logical.LeftJoin || j.NullAware || j.MarkName != "" || need.readsSide(j.Right.Schema()) {
		return p, changed, nil
	}
	np, ok, err := toAnti(f, j)
	if err != nil || !ok {
		return p, changed, err
	}
	return np, true, nil
}

// toAnti returns filter f over left join j as a filter over an anti join,
// or false if f's conjuncts do not say "no match" or read the right side
// otherwise.
func toAnti(f *logical.Filter, j *logical.Join) (logical.Plan, bool, error) {
	ls, rs := j.Left.Schema(), j.Right.Schema()
	var rest []logical.Expr
	noMatch := false
	for _, c := range logical.SplitAnd(f.Predicate) {
		if in, ok := c.(*logical.IsNull); ok && !in.Negated {
			if col, ok := in.Expr.(*logical.Column); ok && rs.Has(col.Qualifier, col.Name) && !ls.Has(col.Qualifier, col.Name) {
				noMatch = noMatch || nonNullOnMatch(j, col)
				continue
			}
		}
		if readsAny([]logical.Expr{c}, rs) {
			return nil, false, nil
		}
		rest = append(rest, c)
	}
	if !noMatch {
		return nil, false, nil
	}
	var out logical.Plan
	out, err := logical.NewJoin(j.Left, j.Right, logical.AntiJoin, j.On, j.Filter, false, "")
	if err != nil {
		return nil, false, err
	}
	if len(rest) > 0 {
		if out, err = logical.NewFilter(out, logical.And(rest...)); err != nil {
			return nil, false, err
		}
	}
	return out, true, nil
}

// nonNullOnMatch reports whether right column c of left join j is non-NULL
// on every row where a right row matched: it is declared NOT NULL, it is a
// right key (NULL keys never match), or a conjunct of the join filter is
// not TRUE when it is NULL.
func nonNullOnMatch(j *logical.Join, c *logical.Column) bool {
	rs := j.Right.Schema()
	i, err := rs.IndexOf(c.Qualifier, c.Name)
	if err != nil {
		return false
	}
	fd := rs.Field(i)
	if !fd.Nullable {
		return true
	}
	for _, k := range j.On {
		if kc, ok := k.Right.(*logical.Column); ok {
			if ki, err := rs.IndexOf(kc.Qualifier, kc.Name); err == nil && ki == i {
				return true
			}
		}
	}
	if j.Filter != nil {
		only := logical.NewSchema(fd)
		for _, cj := range logical.SplitAnd(j.Filter) {
			if nullRejects(cj, only, []*logical.Schema{j.Left.Schema()}) {
				return true
			}
		}
	}
	return false
}

// withNewChildren rebuilds p over nc, whose schemas may lack right-side
// columns p's ancestors do not read: a projection drops the entries reading
// them. It returns nil when that leaves a projection with no entries.
func withNewChildren(p logical.Plan, nc []logical.Plan) (logical.Plan, error) {
	pr, ok := p.(*logical.Projection)
	if !ok {
		return p.WithChildren(nc)
	}
	in := nc[0].Schema()
	var list []logical.Expr
	for _, e := range pr.List {
		keep := true
		for _, c := range logical.ColumnsOf(e) {
			keep = keep && in.Has(c.Qualifier, c.Name)
		}
		if keep {
			list = append(list, e)
		}
	}
	if len(list) == 0 {
		return nil, nil
	}
	return logical.NewProjection(nc[0], list)
}
