package optimizer

// push_down_projection reads only the columns the plan needs:
//
//	Projection: t.a                     Projection: t.a
//	  Filter: t.b > 1           →         Filter: t.b > 1
//	    TableScan: t                        TableScan: t projection=[a, b]
//
// Walking down from the root it computes which output columns of every node
// are used above, sets Scan.Projection to the table columns needed (in table
// order), drops unused entries of Projections below the root and unused
// aggregates (never group keys) and window functions, and selects above a join's filtered or
// joined input only the columns the join and its parents use. Because columns are referenced by name, a
// node may keep more columns than needed; parents still resolve theirs. The
// root's schema never changes. It must NOT shrink a Union's inputs (they must
// stay aligned), or push requirements into a Cache's or a shared CTE's input
// from outside (the input is pruned as its own tree, keeping all its
// columns); the columns needed of either are selected by a Projection right
// above it instead.

import (
	"context"

	"github.com/quiverdb/quiver/logical"
)

// PushDownProjection is the projection push-down rule.
type PushDownProjection struct{}

// Name implements Rule.
func (PushDownProjection) Name() string { return "push_down_projection" }

// Rewrite implements Rule.
func (PushDownProjection) Rewrite(_ context.Context, p logical.Plan) (logical.Plan, bool, error) {
	np, err := prune(p, allCols(p))
	if err != nil {
		return nil, false, err
	}
	if planString(np) == planString(p) {
		return p, false, nil
	}
	return np, true, nil
}

func allCols(p logical.Plan) []bool {
	out := make([]bool, p.Schema().Len())
	for i := range out {
		out[i] = true
	}
	return out
}

// need marks in a new set the columns of s that exprs reference, plus base.
func need(s *logical.Schema, base []bool, exprs ...logical.Expr) []bool {
	out := make([]bool, s.Len())
	copy(out, base)
	for _, e := range exprs {
		if e == nil {
			continue
		}
		for _, c := range logical.ColumnsOf(e) {
			if i, err := s.IndexOf(c.Qualifier, c.Name); err == nil {
				out[i] = true
			} else {
				// Unresolvable here (ambiguous): keep every column with that name.
				for k, f := range s.Fields {
					if f.Name == c.Name {
						out[k] = true
					}
				}
			}
		}
	}
	return out
}

func allTrue(b []bool) bool {
	for _, v := range b {
		if !v {
			return false
		}
	}
	return true
}

// prune returns p rebuilt so that it outputs at least the needed columns of
// its schema (by name), in the same relative order.
func prune(p logical.Plan, needed []bool) (logical.Plan, error) {
	switch n := p.(type) {
	case *logical.Scan:
		if allTrue(needed) {
			return n, nil
		}
		var cols []int
		for i, ok := range needed {
			if !ok {
				continue
			}
			if n.Projection != nil {
				cols = append(cols, n.Projection[i])
			} else {
				cols = append(cols, i)
			}
		}
		if len(cols) == 0 {
			// Nothing is read by name (COUNT(*)): keep one column for the row count.
			if n.Projection != nil {
				cols = []int{n.Projection[0]}
			} else {
				cols = []int{0}
			}
		}
		return n.WithProjection(cols), nil
	case *logical.Projection:
		var list []logical.Expr
		for i, e := range n.List {
			if needed[i] {
				list = append(list, e)
			}
		}
		if len(list) == 0 {
			list = n.List[:1]
		}
		inNeed := need(n.Input.Schema(), nil, list...)
		if isBarrier(n.Input) && onlyColumns(n.List) {
			// Already the column selection cacheColumns puts above a
			// cache (or one like it): wrapping again would never end.
			inNeed = allCols(n.Input)
		}
		in, err := prune(n.Input, inNeed)
		if err != nil {
			return nil, err
		}
		return logical.NewProjection(in, list)
	case *logical.Filter:
		in, err := prune(n.Input, need(n.Input.Schema(), needed, n.Predicate))
		if err != nil {
			return nil, err
		}
		return logical.NewFilter(in, n.Predicate)
	case *logical.Sort:
		in, err := prune(n.Input, need(n.Input.Schema(), needed, n.Exprs()...))
		if err != nil {
			return nil, err
		}
		return logical.NewSort(in, n.Keys, n.Fetch)
	case *logical.Limit:
		in, err := prune(n.Input, needed)
		if err != nil {
			return nil, err
		}
		return n.WithChildren([]logical.Plan{in})
	case *logical.SubqueryAlias:
		in, err := prune(n.Input, needed)
		if err != nil {
			return nil, err
		}
		return logical.NewSubqueryAlias(in, n.Alias), nil
	case *logical.Aggregate:
		g := len(n.GroupBy)
		var aggs []logical.Expr
		for i, a := range n.Aggs {
			if needed[g+i] {
				aggs = append(aggs, a)
			}
		}
		if len(aggs) == 0 && g == 0 && len(n.Aggs) > 0 {
			aggs = n.Aggs[:1]
		}
		in, err := prune(n.Input, need(n.Input.Schema(), nil, append(append([]logical.Expr(nil), n.GroupBy...), aggs...)...))
		if err != nil {
			return nil, err
		}
		return logical.NewAggregate(in, n.GroupBy, aggs)
	case *logical.Join:
		ls, rs := n.Left.Schema(), n.Right.Schema()
		ln := make([]bool, ls.Len())
		rn := make([]bool, rs.Len())
		switch n.Type {
		case logical.SemiJoin, logical.AntiJoin, logical.MarkJoin:
			copy(ln, needed)
		default:
			copy(ln, needed[:ls.Len()])
			copy(rn, needed[ls.Len():])
		}
		var lx, rx []logical.Expr
		for _, pr := range n.On {
			lx, rx = append(lx, pr.Left), append(rx, pr.Right)
		}
		if n.Filter != nil {
			lx, rx = append(lx, n.Filter), append(rx, n.Filter)
		}
		// A filter column resolves on one side only; need() ignores the other.
		ln = needResolvable(ls, ln, lx)
		rn = needResolvable(rs, rn, rx)
		l, err := prune(n.Left, ln)
		if err != nil {
			return nil, err
		}
		r, err := prune(n.Right, rn)
		if err != nil {
			return nil, err
		}
		if l, err = narrow(l, ls, ln); err != nil {
			return nil, err
		}
		if r, err = narrow(r, rs, rn); err != nil {
			return nil, err
		}
		return n.WithChildren([]logical.Plan{l, r})
	case *logical.Window:
		// Unused window functions go; the input keeps what the used ones
		// and the parents read.
		w := n.Input.Schema().Len()
		var list []logical.Expr
		for i, e := range n.List {
			if needed[w+i] {
				list = append(list, e)
			}
		}
		in, err := prune(n.Input, need(n.Input.Schema(), needed[:w], list...))
		if err != nil {
			return nil, err
		}
		if len(list) == 0 {
			return in, nil
		}
		return logical.NewWindow(in, list)
	case *logical.Expand:
		// The keys are always computed; the input keeps the columns the
		// parents read through and the keys read.
		w := n.Input.Schema().Len()
		in, err := prune(n.Input, need(n.Input.Schema(), needed[:w], n.Keys...))
		if err != nil {
			return nil, err
		}
		return logical.NewExpand(in, n.Keys, n.Sets)
	case *logical.Cache, *logical.CTERef:
		if c, ok := p.(*logical.Cache); ok && c.Sealed {
			return cacheColumns(c, needed) // its input was optimized on its own
		}
		in, err := prune(p.Children()[0], allCols(p.Children()[0]))
		if err != nil {
			return nil, err
		}
		c, err := n.WithChildren([]logical.Plan{in})
		if err != nil {
			return nil, err
		}
		return cacheColumns(c, needed)
	}
	// Union, Values, EmptyRelation: keep every column, prune inside each input on its own.
	return mapChildren(p, func(c logical.Plan) (logical.Plan, error) { return prune(c, allCols(c)) })
}

// narrow selects the needed columns (of was, the schema p had before
// pruning) of a pruned join input that still outputs others — a filter's
// or a join's, whose own conditions used them — so that the join does not
// copy columns nobody above reads. Scans and projections are already
// exact; p is left alone when a name is ambiguous.
func narrow(p logical.Plan, was *logical.Schema, needed []bool) (logical.Plan, error) {
	switch p.(type) {
	case *logical.Filter, *logical.Join:
	default:
		return p, nil
	}
	keep := map[[2]string]bool{}
	for i, ok := range needed {
		if ok {
			f := was.Field(i)
			keep[[2]string{f.Qualifier, f.Name}] = true
		}
	}
	s := p.Schema()
	var list []logical.Expr
	for i, f := range s.Fields {
		if !keep[[2]string{f.Qualifier, f.Name}] {
			continue
		}
		c, ok := columnFor(s, i)
		if !ok {
			return p, nil
		}
		list = append(list, c)
	}
	if len(list) == len(s.Fields) || len(list) == 0 {
		return p, nil
	}
	return logical.NewProjection(p, list)
}

// cacheColumns selects the needed columns of a cache right above it, so
// that the operators between the read-back and their user carry only those
// (a cached dataset is often wide and a query reads a few of its columns).
// The cache's own schema, and so its identity, stays whole. It leaves c
// alone when every column is needed or a name is ambiguous.
func cacheColumns(c logical.Plan, needed []bool) (logical.Plan, error) {
	if allTrue(needed) {
		return c, nil
	}
	s := c.Schema()
	var list []logical.Expr
	for i, ok := range needed {
		if !ok {
			continue
		}
		f := s.Field(i)
		if j, err := s.IndexOf(f.Qualifier, f.Name); err != nil || j != i {
			return c, nil
		}
		list = append(list, &logical.Column{Qualifier: f.Qualifier, Name: f.Name})
	}
	if len(list) == 0 {
		list = append(list, &logical.Column{Qualifier: s.Field(0).Qualifier, Name: s.Field(0).Name})
	}
	return logical.NewProjection(c, list)
}

// isBarrier reports whether p is a node whose input is pruned as its own
// tree: a Cache, or a shared CTE, whose every reference needs the same plan.
func isBarrier(p logical.Plan) bool {
	switch p.(type) {
	case *logical.Cache, *logical.CTERef:
		return true
	}
	return false
}

// onlyColumns reports whether every expression is a plain column reference.
func onlyColumns(es []logical.Expr) bool {
	for _, e := range es {
		if _, ok := e.(*logical.Column); !ok {
			return false
		}
	}
	return true
}

// needResolvable adds the columns of exprs that resolve in s.
func needResolvable(s *logical.Schema, base []bool, exprs []logical.Expr) []bool {
	out := append([]bool(nil), base...)
	for _, e := range exprs {
		for _, c := range logical.ColumnsOf(e) {
			if i, err := s.IndexOf(c.Qualifier, c.Name); err == nil {
				out[i] = true
			}
		}
	}
	return out
}
