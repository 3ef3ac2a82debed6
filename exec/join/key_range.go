package join

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/quiverdb/quiver/exec/execop"
	"github.com/quiverdb/quiver/exec/kernel"
	"github.com/quiverdb/quiver/physical"
)

// keyRangeTarget is where a join publishes its build keys' range: the
// Parquet scan that produces its probe key, that column of the scan, and
// the build column holding the key.
type keyRangeTarget struct {
	ranges   *execop.KeyRanges
	scanCol  int
	buildCol int
}

// findKeyRangeTarget returns the scan a CollectLeft hash join's build keys
// can prune, or nil. Only a join that drops the probe rows meeting no build
// row qualifies (inner, left, semi, right semi; not null-aware), with one
// integer key that is a plain column on both sides.
func findKeyRangeTarget(tc *execop.TaskContext, n *physical.HashJoin) *keyRangeTarget {
	if n.Mode != physical.CollectLeft || n.NullAware || len(n.On) != 1 {
		return nil
	}
	switch n.Type {
	case physical.InnerJoin, physical.LeftJoin, physical.SemiJoin, physical.RightSemiJoin:
	default:
		return nil
	}
	lc, ok1 := n.On[0].Left.(*physical.Column)
	rc, ok2 := n.On[0].Right.(*physical.Column)
	if !ok1 || !ok2 || !rangeType(lc.Type) {
		return nil
	}
	scan, col := probeScanColumn(n.Right, rc.Index)
	if scan == nil {
		return nil
	}
	return &keyRangeTarget{ranges: tc.ScanKeyRanges(scan), scanCol: col, buildCol: lc.Index}
}

// rangeType reports whether values of t are published as integer ranges.
func rangeType(t arrow.DataType) bool {
	if t == nil {
		return false
	}
	switch t.ID() {
	case arrow.INT32, arrow.INT64, arrow.DATE32:
		return true
	}
	return false
}

// probeScanColumn follows output column col of p down to the Parquet scan
// producing it, through operators that pass rows on unchanged or drop some
// (a dropped row meets nothing above either): projections of plain columns,
// filters, exchanges and the probe side of inner hash joins. It returns nil
// when the column comes from anything else.
func probeScanColumn(p physical.Plan, col int) (*physical.Scan, int) {
	for {
		switch n := p.(type) {
		case *physical.Projection:
			if col < 0 || col >= len(n.Exprs) {
				return nil, 0
			}
			c, ok := n.Exprs[col].(*physical.Column)
			if !ok {
				return nil, 0
			}
			p, col = n.Input, c.Index
		case *physical.Filter:
			p = n.Input
		case *physical.Repartition:
			p = n.Input
		case *physical.Coalesce:
			p = n.Input
		case *physical.HashJoin:
			nl := n.Left.Schema().NumFields()
			if n.Type != physical.InnerJoin || col < nl {
				return nil, 0
			}
			p, col = n.Right, col-nl
		case *physical.Scan:
			if n.Format != physical.FormatParquet || n.Fetch >= 0 || col < 0 || col >= n.Schema().NumFields() ||
				!rangeType(n.Schema().Field(col).Type) {
				return nil, 0
			}
			return n, col
		default:
			return nil, 0
		}
	}
}

// publish tells the target scan the range of jb's keys (nothing for a
// build that went to disk, whose rows are not held).
func (t *keyRangeTarget) publish(jb *joinBuild) {
	if t == nil || jb == nil || jb.grace != nil || t.buildCol >= len(jb.cols) {
		return
	}
	r := execop.KeyRange{Col: t.scanCol}
	var ok bool
	col := jb.cols[t.buildCol]
	var bits []byte
	off := 0
	if col.NullN() > 0 {
		bits, off = kernel.ValidBits(col)
	}
	switch a := col.(type) {
	case *array.Int64:
		r.Min, r.Max, ok = minMax(a.Int64Values(), bits, off)
	case *array.Int32:
		r.Min, r.Max, ok = minMax(a.Int32Values(), bits, off)
	case *array.Date32:
		r.Min, r.Max, ok = minMax(a.Date32Values(), bits, off)
	default:
		return
	}
	r.Empty = !ok
	t.ranges.Publish(r)
}

// minMax returns the least and greatest value of vs whose validity bit
// (bits from bit off; nil: all valid) is set; false when there is none.
func minMax[T ~int32 | ~int64](vs []T, bits []byte, off int) (lo, hi int64, ok bool) {
	first := true
	var mn, mx T
	for i, v := range vs {
		if bits != nil && !bitutil.BitIsSet(bits, off+i) {
			continue
		}
		if first {
			mn, mx, first = v, v, false
			continue
		}
		mn, mx = min(mn, v), max(mx, v)
	}
	return int64(mn), int64(mx), !first
}
