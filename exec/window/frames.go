package window

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/quiverdb/quiver/exec/kernel"
	"github.com/quiverdb/quiver/physical"
)

// layout is where the window partitions and peer groups of the buffered
// rows begin.
type layout struct {
	n          int
	parts      []int32 // first row of each partition, then n
	groupOf    []int32 // per row: its peer group
	groupStart []int32 // first row of each peer group, then n
	// The ORDER BY key of a RANGE frame with offsets, as float64 (nil
	// when not needed); keyValid is nil when it has no NULLs.
	key      []float64
	keyValid []bool
	desc     bool
}

// layout finds partitions and peer groups by comparing neighbouring rows.
func (w *windowOp) layout(ctx context.Context, all arrow.RecordBatch) (*layout, error) {
	n := int(all.NumRows())
	l := &layout{n: n, groupOf: make([]int32, n)}
	pArrs, pKeys, err := w.partKeys.Eval(ctx, w.tc.Mem, all)
	if err != nil {
		return nil, err
	}
	defer kernel.ReleaseArrays(pArrs)
	oArrs, oKeys, err := w.orderKeys.Eval(ctx, w.tc.Mem, all)
	if err != nil {
		return nil, err
	}
	defer kernel.ReleaseArrays(oArrs)
	l.parts = append(l.parts, 0)
	for r := 1; r < n; r++ {
		if len(pKeys) > 0 && w.partSpec.Compare(pKeys, r-1, pKeys, r) != 0 {
			l.parts = append(l.parts, int32(r))
		}
	}
	l.parts = append(l.parts, int32(n))
	p := 1
	for r := range n {
		newGroup := r == 0
		if r == int(l.parts[p]) {
			newGroup = true
			p++
		} else if r > 0 && len(oKeys) > 0 && w.orderSpec.Compare(oKeys, r-1, oKeys, r) != 0 {
			newGroup = true
		}
		if newGroup {
			l.groupStart = append(l.groupStart, int32(r))
		}
		l.groupOf[r] = int32(len(l.groupStart) - 1)
	}
	l.groupStart = append(l.groupStart, int32(n))
	if needsRangeKey(w.n.Funcs) {
		l.key, l.keyValid = floatKey(oArrs[0])
		l.desc = !w.n.OrderBy[0].Asc
	}
	return l, nil
}

func needsRangeKey(fs []physical.WindowFuncExpr) bool {
	for _, f := range fs {
		if f.Frame.Unit == physical.FrameRange && (isOffset(f.Frame.Start) || isOffset(f.Frame.End)) {
			return true
		}
	}
	return false
}

// rangeKind reports whether a RANGE offset can be measured on values of dt.
func rangeKind(dt arrow.DataType) (arrow.Type, bool) {
	switch dt.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64,
		arrow.FLOAT32, arrow.FLOAT64, arrow.DECIMAL128, arrow.DATE32:
		return dt.ID(), true
	}
	return 0, false
}

// floatKey converts a RANGE key column to float64 (days for dates, the
// value for decimals) once, so offsets compare in the key's own units.
func floatKey(a arrow.Array) ([]float64, []bool) {
	n := a.Len()
	out := make([]float64, n)
	var valid []bool
	if a.NullN() > 0 {
		valid = make([]bool, n)
		for i := range valid {
			valid[i] = a.IsValid(i)
		}
	}
	d := a.Data()
	switch a.DataType().ID() {
	case arrow.INT8:
		convert(out, arrow.GetValues[int8](d, 1))
	case arrow.INT16:
		convert(out, arrow.GetValues[int16](d, 1))
	case arrow.INT32, arrow.DATE32:
		convert(out, arrow.GetValues[int32](d, 1))
	case arrow.INT64:
		convert(out, arrow.GetValues[int64](d, 1))
	case arrow.UINT8:
		convert(out, arrow.GetValues[uint8](d, 1))
	case arrow.UINT16:
		convert(out, arrow.GetValues[uint16](d, 1))
	case arrow.UINT32:
		convert(out, arrow.GetValues[uint32](d, 1))
	case arrow.UINT64:
		convert(out, arrow.GetValues[uint64](d, 1))
	case arrow.FLOAT32:
		convert(out, arrow.GetValues[float32](d, 1))
	case arrow.FLOAT64:
		copy(out, arrow.GetValues[float64](d, 1))
	case arrow.DECIMAL128:
		scale := a.DataType().(*arrow.Decimal128Type).Scale
		for i, v := range a.(*array.Decimal128).Values() {
			out[i] = v.ToFloat64(scale)
		}
	}
	return out, valid
}

func convert[T int8 | int16 | int32 | int64 | uint8 | uint16 | uint32 | uint64 | float32](dst []float64, src []T) {
	for i, v := range src {
		dst[i] = float64(v)
	}
}

// frame returns, per row, its frame as the half-open rows [start, end),
// clamped to the row's partition and with end ≥ start. Within a partition
// both ends never decrease from one row to the next.
func (l *layout) frame(fr physical.WindowFrame) (start, end []int32) {
	start, end = make([]int32, l.n), make([]int32, l.n)
	for p := 0; p+1 < len(l.parts); p++ {
		ps, pe := l.parts[p], l.parts[p+1]
		switch fr.Unit {
		case physical.FrameRows:
			for r := ps; r < pe; r++ {
				start[r] = clamp(rowsBound(fr.Start, r, ps, pe, false), ps, pe)
				end[r] = clamp(rowsBound(fr.End, r, ps, pe, true), ps, pe)
			}
		case physical.FrameGroups:
			gps, gpe := l.groupOf[ps], l.groupOf[pe-1]+1
			for r := ps; r < pe; r++ {
				start[r] = l.groupsBound(fr.Start, r, ps, pe, gps, gpe, false)
				end[r] = l.groupsBound(fr.End, r, ps, pe, gps, gpe, true)
			}
		case physical.FrameRange:
			a, b := l.nonNull(ps, pe)
			for r := ps; r < pe; r++ {
				start[r] = l.rangeBound(fr.Start, r, ps, pe, a, b, false)
				end[r] = l.rangeBound(fr.End, r, ps, pe, a, b, true)
			}
		}
		for r := ps; r < pe; r++ {
			end[r] = max(end[r], start[r])
		}
	}
	return start, end
}

func clamp(v int64, lo, hi int32) int32 {
	return int32(min(max(v, int64(lo)), int64(hi)))
}

// rowsBound is a ROWS bound of row r: the first row in the frame (isEnd
// false) or one past the last (isEnd true).
func rowsBound(b physical.FrameBound, r, ps, pe int32, isEnd bool) int64 {
	e := int64(0)
	if isEnd {
		e = 1
	}
	switch b.Kind {
	case physical.UnboundedPreceding:
		return int64(ps)
	case physical.Preceding:
		return int64(r) - b.Offset + e
	case physical.CurrentRow:
		return int64(r) + e
	case physical.Following:
		return int64(r) + b.Offset + e
	}
	return int64(pe)
}

// groupsBound is a GROUPS bound of row r, whose partition holds the peer
// groups [gps, gpe).
func (l *layout) groupsBound(b physical.FrameBound, r, ps, pe, gps, gpe int32, isEnd bool) int32 {
	g := int64(l.groupOf[r])
	switch b.Kind {
	case physical.UnboundedPreceding:
		return ps
	case physical.UnboundedFollowing:
		return pe
	case physical.Preceding:
		g -= b.Offset
	case physical.Following:
		g += b.Offset
	}
	if isEnd {
		g++ // one past the last row of group g is the start of g+1
	}
	switch {
	case g < int64(gps):
		return ps
	case g >= int64(gpe):
		return pe
	}
	return l.groupStart[g]
}

// nonNull is the rows [a, b) of partition [ps, pe) whose RANGE key is not
// NULL (the NULLs sort together at one end).
func (l *layout) nonNull(ps, pe int32) (int32, int32) {
	if l.key == nil || l.keyValid == nil {
		return ps, pe
	}
	a, b := ps, pe
	for a < b && !l.keyValid[a] {
		a++
	}
	for b > a && !l.keyValid[b-1] {
		b--
	}
	return a, b
}

// rangeBound is a RANGE bound of row r. Offsets measure the ORDER BY key
// among the partition's non-NULL rows [a, b); a row with a NULL key has
// its NULL peers as the offset bounds' rows.
func (l *layout) rangeBound(bd physical.FrameBound, r, ps, pe, a, b int32, isEnd bool) int32 {
	g := l.groupOf[r]
	switch bd.Kind {
	case physical.UnboundedPreceding:
		return ps
	case physical.UnboundedFollowing:
		return pe
	case physical.CurrentRow:
		if isEnd {
			return l.groupStart[g+1]
		}
		return l.groupStart[g]
	}
	if l.keyValid != nil && !l.keyValid[r] {
		if isEnd {
			return l.groupStart[g+1]
		}
		return l.groupStart[g]
	}
	off := float64(bd.Offset)
	if bd.Kind == physical.Preceding {
		off = -off
	}
	if l.desc {
		off = -off
	}
	v := l.key[r] + off
	// In sort order, the frame starts at the first row not before v and
	// ends before the first row after v.
	before := func(x float64) bool {
		if l.desc {
			return x > v
		}
		return x < v
	}
	notAfter := func(x float64) bool {
		if l.desc {
			return x >= v
		}
		return x <= v
	}
	lo, hi := a, b
	for lo < hi {
		m := int32(uint32(lo+hi) >> 1)
		if (isEnd && notAfter(l.key[m])) || (!isEnd && before(l.key[m])) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// isValid reports whether row i is not NULL under kernel.ValidBits' bitmap
// (nil: no NULLs).
func isValid(bits []byte, off, i int) bool { return bits == nil || bitutil.BitIsSet(bits, off+i) }
