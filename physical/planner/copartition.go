package planner

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver/physical"
)

// splitKeys returns the output columns by whose values, in order, p's
// partitions are hash-split (a hash Repartition's plain-column keys, carried
// through filters, projections, aggregates' group columns and Partitioned
// joins' left columns), or nil when
// none are known: rows equal on those columns then share a partition.
func splitKeys(p physical.Plan) []int {
	switch n := p.(type) {
	case *physical.Repartition:
		if len(n.Keys) == 0 {
			return nil
		}
		out := make([]int, len(n.Keys))
		for i, k := range n.Keys {
			c, ok := k.(*physical.Column)
			if !ok {
				return nil
			}
			out[i] = c.Index
		}
		return out
	case *physical.Filter:
		return splitKeys(n.Input)
	case *physical.Projection:
		return remapKeys(splitKeys(n.Input), n.Exprs)
	case *physical.HashAggregate:
		return remapKeys(splitKeys(n.Input), n.GroupBy)
	case *physical.HashJoin:
		// Partition i of a Partitioned join joins the sides' partitions i;
		// its rows that carry left keys (every row of these types) keep
		// them at the left side's positions.
		switch n.Type {
		case physical.InnerJoin, physical.LeftJoin, physical.SemiJoin, physical.AntiJoin:
			if n.Mode == physical.Partitioned {
				return splitKeys(n.Left)
			}
		}
	}
	return nil
}

// remapKeys gives the positions in exprs of plain references to the input
// columns keys, in keys' order; nil when one has none.
func remapKeys(keys []int, exprs []physical.Expr) []int {
	if keys == nil {
		return nil
	}
	out := make([]int, len(keys))
	for i, k := range keys {
		out[i] = -1
		for j, e := range exprs {
			if c, ok := e.(*physical.Column); ok && c.Index == k {
				out[i] = j
				break
			}
		}
		if out[i] < 0 {
			return nil
		}
	}
	return out
}

// coPartitioned reports whether left and right are already hash-split into
// the same n > 1 partitions by the two sides of some of the join pairs on,
// in one order and of one integer-like type each, so that rows with equal
// join keys share a partition index and a Partitioned join needs no
// repartition of either side.
func coPartitioned(left, right physical.Plan, on []physical.JoinOn) bool {
	n := left.OutputPartitions()
	if n <= 1 || right.OutputPartitions() != n {
		return false
	}
	lk, rk := splitKeys(left), splitKeys(right)
	if lk == nil || len(lk) != len(rk) {
		return false
	}
	ls, rs := left.Schema(), right.Schema()
	for i := range lk {
		paired := false
		for _, k := range on {
			l, lok := k.Left.(*physical.Column)
			r, rok := k.Right.(*physical.Column)
			if lok && rok && l.Index == lk[i] && r.Index == rk[i] {
				paired = true
				break
			}
		}
		lt, rt := ls.Field(lk[i]).Type, rs.Field(rk[i]).Type
		if !paired || !arrow.TypeEqual(lt, rt) || !hashStableType(lt) {
			return false
		}
	}
	return true
}

// hashStableType reports whether a key of type dt hashes by its value
// alone, whatever array form carries it (no dictionary or view forms).
func hashStableType(dt arrow.DataType) bool {
	switch dt.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64,
		arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64,
		arrow.DATE32, arrow.DATE64:
		return true
	}
	return false
}
