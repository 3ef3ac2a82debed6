package optimizer

import "github.com/quiverdb/quiver/logical"

// pushWindow pushes below a Window the conjuncts of down that read only
// columns every window function partitions by: such a filter removes
// whole window partitions, so the rows that remain see the same
// partitions and values. The others stay above it, with keep.
func pushWindow(n *logical.Window, down, keep []logical.Expr) (logical.Plan, error) {
	in := n.Input.Schema()
	// partCols: input columns that are a plain PARTITION BY key of every
	// window function.
	var partCols map[int]bool
	for _, e := range n.List {
		w := logical.StripAlias(e).(*logical.WindowExpr)
		mine := map[int]bool{}
		for _, p := range w.PartitionBy {
			if c, ok := p.(*logical.Column); ok {
				if i, err := in.IndexOf(c.Qualifier, c.Name); err == nil {
					mine[i] = true
				}
			}
		}
		if partCols == nil {
			partCols = mine
			continue
		}
		for i := range partCols {
			if !mine[i] {
				delete(partCols, i)
			}
		}
	}
	s := n.Schema()
	var sub []logical.Expr
	for _, e := range down {
		ok := len(logical.ColumnsOf(e)) > 0
		for _, c := range logical.ColumnsOf(e) {
			i, err := s.IndexOf(c.Qualifier, c.Name)
			if err != nil || i >= in.Len() || !partCols[i] {
				ok = false
				break
			}
		}
		if ok {
			sub = append(sub, e)
		} else {
			keep = append(keep, e)
		}
	}
	input, err := pushFilters(n.Input, sub)
	if err != nil {
		return nil, err
	}
	nw, err := logical.NewWindow(input, n.List)
	if err != nil {
		return nil, err
	}
	return withFilter(nw, keep)
}
