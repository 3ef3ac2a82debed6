package planner

import (
	"cmp"
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/quiverdb/quiver/logical"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
)

// window plans a logical Window as a chain of physical Windows, one per
// distinct (PARTITION BY, ORDER BY) of its functions, so that functions
// sharing them share one sort. Each link's input is hash-repartitioned on
// its PARTITION BY keys (one partition without keys) and sorted by the
// keys then the ORDER BY; a link whose PARTITION BY equals the previous
// one's, or includes every key the chain last hash-repartitioned on, is
// only re-sorted (not even that when its sort keys are a prefix of the
// previous sort's). A Projection restores the logical column order
// when the grouping moved columns.
func (pl *Planner) window(ctx context.Context, n *logical.Window) (physical.Plan, error) {
	in, err := pl.Plan(ctx, n.Input)
	if err != nil {
		return nil, err
	}
	is := n.Input.Schema()
	outNames := names(n.Schema())
	width := is.Len()

	type group struct {
		spec *logical.WindowExpr
		idx  []int // positions in n.List
	}
	var groups []*group
	for i, e := range n.List {
		w, ok := logical.StripAlias(e).(*logical.WindowExpr)
		if !ok {
			return nil, qerr.Internalf("planner: %s in a window node is not a window function", e)
		}
		found := false
		for _, g := range groups {
			if g.spec.SameWindow(w) {
				g.idx = append(g.idx, i)
				found = true
				break
			}
		}
		if !found {
			groups = append(groups, &group{spec: w, idx: []int{i}})
		}
	}
	// Groups with the same PARTITION BY next to each other need one
	// exchange between them, fewer PARTITION BY keys first let a group
	// partitioned by more of them reuse the exchange, and the longest ORDER
	// BY first lets a group whose sort keys are a prefix of the previous
	// one's skip its sort.
	// Windows without PARTITION BY gather all rows in one partition, so
	// they come last: the others run in parallel before.
	partKey := func(g *group) string {
		parts := make([]string, len(g.spec.PartitionBy))
		for i, e := range g.spec.PartitionBy {
			parts[i] = e.String()
		}
		return strings.Join(parts, "\x00")
	}
	slices.SortStableFunc(groups, func(a, b *group) int {
		if c := cmp.Compare(min(len(a.spec.PartitionBy), 1), min(len(b.spec.PartitionBy), 1)); c != 0 {
			return -c
		}
		if c := cmp.Compare(len(a.spec.PartitionBy), len(b.spec.PartitionBy)); c != 0 {
			return c
		}
		if c := strings.Compare(partKey(a), partKey(b)); c != 0 {
			return c
		}
		return cmp.Compare(len(b.spec.OrderBy), len(a.spec.OrderBy))
	})

	plan := in
	prevPart := "\x01" // matches no key list
	var prevKeys []physical.SortKey
	// hashedBy: the keys (keyName) the rows are hash-partitioned on, by the
	// input or by the chain's last exchange; a window partitioned by all of
	// them and more finds each of its partitions within one input
	// partition already.
	var hashedBy []string
	for _, c := range hashedColumns(in) {
		hashedBy = append(hashedBy, keyName(&physical.Column{Index: c}))
	}
	var order []int // n.List positions in physical output order
	for _, g := range groups {
		part, err := exprs(g.spec.PartitionBy, is)
		if err != nil {
			return nil, err
		}
		colocated := len(hashedBy) > 0 && len(part) > 0
		for _, h := range hashedBy {
			colocated = colocated && slices.ContainsFunc(part, func(e physical.Expr) bool { return keyName(e) == h })
		}
		keys := make([]physical.SortKey, 0, len(part)+len(g.spec.OrderBy))
		for _, p := range part {
			keys = append(keys, physical.SortKey{Expr: p, Asc: true})
		}
		orderBy := make([]physical.SortKey, len(g.spec.OrderBy))
		for i, k := range g.spec.OrderBy {
			e, err := Expr(k.Expr, is)
			if err != nil {
				return nil, err
			}
			orderBy[i] = physical.SortKey{Expr: e, Asc: k.Asc, NullsFirst: k.NullsFirst}
		}
		keys = append(keys, orderBy...)
		pk := partKey(g)
		lim := partitionLimit(n, len(groups), len(part))
		switch {
		case len(part) == 0:
			// One window partition: all rows in one place, sorted in
			// parallel and merged when there is an ORDER BY.
			switch {
			case plan.OutputPartitions() > 1 && len(keys) == 0:
				plan = &physical.Coalesce{Input: plan}
			case plan.OutputPartitions() > 1:
				local := &physical.Sort{Input: plan, Keys: keys, Fetch: -1, PreservePartitioning: true, PartitionLimit: lim}
				plan = &physical.SortPreservingMerge{Input: local, Keys: keys, Fetch: -1}
			case len(keys) > 0 && !(pk == prevPart && sortPrefix(keys, prevKeys)):
				plan = &physical.Sort{Input: plan, Keys: keys, Fetch: -1, PartitionLimit: lim}
			}
		case (pk == prevPart || colocated) && sortPrefix(keys, prevKeys):
			// The previous link's sort already orders these rows.
		case pk == prevPart || colocated || plan.OutputPartitions() == 1:
			plan = &physical.Sort{Input: plan, Keys: keys, Fetch: -1, PreservePartitioning: true, PartitionLimit: lim}
			prevKeys = keys
		default:
			plan = &physical.Repartition{Input: plan, Keys: hashKeys(part), N: pl.cfg.TargetPartitions}
			plan = &physical.Sort{Input: plan, Keys: keys, Fetch: -1, PreservePartitioning: true, PartitionLimit: lim}
			prevKeys = keys
			hashedBy = hashedBy[:0]
			for _, e := range part {
				hashedBy = append(hashedBy, keyName(e))
			}
		}
		if len(part) == 0 {
			if pk != prevPart || !sortPrefix(keys, prevKeys) {
				prevKeys = keys
			}
			hashedBy = nil
		}
		prevPart = pk
		funcs := make([]physical.WindowFuncExpr, len(g.idx))
		for j, i := range g.idx {
			w := logical.StripAlias(n.List[i]).(*logical.WindowExpr)
			if funcs[j], err = windowFunc(w, is, n.Schema().Field(width+i), outNames[width+i]); err != nil {
				return nil, err
			}
			order = append(order, i)
		}
		plan = &physical.Window{Input: plan, PartitionBy: part, OrderBy: orderBy, Funcs: funcs}
	}
	inOrder := true
	for k, i := range order {
		inOrder = inOrder && k == i
	}
	if inOrder {
		return plan, nil
	}
	ps := plan.Schema()
	cols := make([]physical.Expr, 0, ps.NumFields())
	for i := range width {
		cols = append(cols, &physical.Column{Index: i, Name: ps.Field(i).Name, Type: ps.Field(i).Type})
	}
	for i := range n.List {
		at := width + slices.Index(order, i)
		cols = append(cols, &physical.Column{Index: at, Name: ps.Field(at).Name, Type: ps.Field(at).Type})
	}
	return &physical.Projection{Input: plan, Exprs: cols, Names: outNames}, nil
}

// partitionLimit is the per-partition top-k of the sort under a window
// whose functions share one window and whose filter above bounds one of
// them (logical.WindowTopK), nil otherwise. Local sorts merged afterwards
// may carry it too: the rows a window partition keeps overall are among
// those each input partition keeps of it.
func partitionLimit(n *logical.Window, groups, partKeys int) *physical.PartitionLimit {
	if n.TopK.K <= 0 || groups != 1 {
		return nil
	}
	l := &physical.PartitionLimit{Keys: partKeys, K: n.TopK.K}
	switch n.TopK.Func {
	case logical.WinRowNumber:
		l.Mode = physical.TopKRows
	case logical.WinRank:
		l.Mode = physical.TopKTies
	case logical.WinDenseRank:
		l.Mode = physical.TopKDistinct
	default:
		return nil
	}
	return l
}

// keyName identifies a partitioning key of the window's input: a column
// by its index, another expression by its text.
func keyName(e physical.Expr) string {
	if c, ok := e.(*physical.Column); ok {
		return "#" + strconv.Itoa(c.Index)
	}
	return e.String()
}

// hashedColumns returns the output columns p's partitions are known to be
// hash-partitioned on (each combination of their values in one partition),
// or nil: a hash Repartition on plain columns, carried through filters,
// partition-preserving sorts, windows, projections of those columns and
// aggregates grouped by them.
func hashedColumns(p physical.Plan) []int {
	if p.OutputPartitions() <= 1 {
		return nil
	}
	switch n := p.(type) {
	case *physical.Repartition:
		var out []int
		for _, k := range n.Keys {
			c, ok := k.(*physical.Column)
			if !ok {
				return nil
			}
			out = append(out, c.Index)
		}
		return out
	case *physical.Filter:
		return hashedColumns(n.Input)
	case *physical.Window:
		return hashedColumns(n.Input)
	case *physical.Sort:
		if n.PreservePartitioning {
			return hashedColumns(n.Input)
		}
	case *physical.Projection:
		return mapHashed(hashedColumns(n.Input), n.Exprs)
	case *physical.HashAggregate:
		return mapHashed(hashedColumns(n.Input), n.GroupBy)
	}
	return nil
}

// mapHashed maps input columns to the positions of es that are those
// columns, or returns nil when one is not among es.
func mapHashed(in []int, es []physical.Expr) []int {
	if len(in) == 0 {
		return nil
	}
	out := make([]int, 0, len(in))
	for _, c := range in {
		j := slices.IndexFunc(es, func(e physical.Expr) bool {
			col, ok := e.(*physical.Column)
			return ok && col.Index == c
		})
		if j < 0 {
			return nil
		}
		out = append(out, j)
	}
	return out
}

// sortPrefix reports whether keys are a prefix of prev.
func sortPrefix(keys, prev []physical.SortKey) bool {
	if len(keys) > len(prev) {
		return false
	}
	for i, k := range keys {
		if k.String() != prev[i].String() {
			return false
		}
	}
	return true
}

func windowFunc(w *logical.WindowExpr, is *logical.Schema, f logical.Field, name string) (physical.WindowFuncExpr, error) {
	args, err := exprs(w.Args, is)
	if err != nil {
		return physical.WindowFuncExpr{}, err
	}
	var order []physical.AggOrder
	for _, o := range w.Order {
		order = append(order, physical.AggOrder{Desc: o.Desc, NullsFirst: o.NullsFirst})
	}
	return physical.WindowFuncExpr{
		Func: physical.WindowFunc(w.Func),
		Agg:  physical.AggFunc(w.Agg),
		Args: args,
		Frame: physical.WindowFrame{
			Unit:  physical.FrameUnit(w.Frame.Unit),
			Start: physicalBound(w.Frame.Start),
			End:   physicalBound(w.Frame.End),
		},
		Type: f.Type,
		Name: name,

		IgnoreNulls: w.IgnoreNulls,
		Distinct:    w.Distinct,
		Order:       order,
	}, nil
}

func physicalBound(b logical.FrameBound) physical.FrameBound {
	return physical.FrameBound{Kind: physical.BoundKind(b.Kind), Offset: b.Offset, Scale: b.Scale, IsInterval: b.IsInterval, Interval: b.Interval}
}
