package physical

import "slices"

// DisjointColumns returns the output columns of p (positions in its schema)
// whose values never occur in two of its output partitions: every row
// holding a given value of such a column, NULL included, comes out of one
// partition. An aggregate grouped by one of them needs no exchange, and a
// DISTINCT over one of them is exact within each partition.
//
// The property starts at scans whose partitions' value ranges are disjoint
// (Scan.Disjoint), at cache reads of entries built with it
// (CacheReader.Disjoint) and at hash repartitions on one column; it passes through
// nodes that keep rows in their partition: filters, projections of plain
// columns, partition-preserving sorts and limits, aggregates (their group
// columns), and the probe side of a collect-left inner join, where an
// equi-key of the build side equals the probe's disjoint key row by row.
func DisjointColumns(p Plan) []int {
	if p.OutputPartitions() <= 1 {
		return nil // nothing to share a value with
	}
	switch n := p.(type) {
	case *Scan:
		return n.Disjoint
	case *CacheReader:
		return n.Disjoint
	case *Filter:
		return DisjointColumns(n.Input)
	case *SharedCTE:
		return DisjointColumns(n.Input) // its stage's writer keeps partitions
	case *LocalLimit:
		return DisjointColumns(n.Input)
	case *Sort:
		return DisjointColumns(n.Input) // OutputPartitions > 1: preserves them
	case *Window:
		return DisjointColumns(n.Input)
	case *Projection:
		return plainColumnsOf(n.Exprs, DisjointColumns(n.Input))
	case *HashAggregate:
		return plainColumnsOf(n.GroupBy, DisjointColumns(n.Input))
	case *Repartition:
		if len(n.Keys) == 1 {
			if c, ok := n.Keys[0].(*Column); ok {
				return []int{c.Index}
			}
		}
		return nil
	case *HashJoin:
		if n.Type == RightSemiJoin || n.Type == RightAntiJoin {
			// Each output partition is a subset of its probe partition.
			return DisjointColumns(n.Right)
		}
		if n.Mode != CollectLeft || n.Type != InnerJoin {
			return nil
		}
		in := DisjointColumns(n.Right)
		width := n.Left.Schema().NumFields()
		var out []int
		for _, c := range in {
			out = append(out, width+c)
		}
		for _, on := range n.On {
			l, lok := on.Left.(*Column)
			r, rok := on.Right.(*Column)
			if lok && rok && slices.Contains(in, r.Index) && !slices.Contains(out, l.Index) {
				out = append(out, l.Index)
			}
		}
		slices.Sort(out)
		return out
	}
	return nil
}

// plainColumnsOf returns the positions of exprs that are plain references
// to input columns listed in in.
func plainColumnsOf(exprs []Expr, in []int) []int {
	var out []int
	for i, e := range exprs {
		if c, ok := e.(*Column); ok && slices.Contains(in, c.Index) {
			out = append(out, i)
		}
	}
	return out
}
