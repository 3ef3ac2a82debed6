package window

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
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
	// key is the ORDER BY key of RANGE frames with offsets (nil when
	// no frame has one).
	key *rangeKey
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
	if need, micros := needsRangeKey(w.n.Funcs); need {
		if l.key, err = newRangeKey(oArrs[0], !w.n.OrderBy[0].Asc, micros); err != nil {
			return nil, err
		}
	}
	return l, nil
}

// needsRangeKey reports whether a function has a RANGE frame with an
// offset, and whether one of those offsets is an interval.
func needsRangeKey(fs []physical.WindowFuncExpr) (need, micros bool) {
	for _, f := range fs {
		if f.Frame.Unit != physical.FrameRange {
			continue
		}
		for _, b := range []physical.FrameBound{f.Frame.Start, f.Frame.End} {
			if isOffset(b) {
				need = true
				micros = micros || b.IsInterval
			}
		}
	}
	return need, micros
}

// rangeKind reports whether a RANGE offset can be measured on values of dt.
func rangeKind(dt arrow.DataType) (arrow.Type, bool) {
	switch dt.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64,
		arrow.FLOAT32, arrow.FLOAT64, arrow.DECIMAL128, arrow.DATE32, arrow.TIMESTAMP:
		return dt.ID(), true
	}
	return 0, false
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
			l.rangeBounds(fr.Start, ps, pe, a, b, false, start)
			l.rangeBounds(fr.End, ps, pe, a, b, true, end)
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

// isValid reports whether row i is not NULL under kernel.ValidBits' bitmap
// (nil: no NULLs).
func isValid(bits []byte, off, i int) bool { return bits == nil || bitutil.BitIsSet(bits, off+i) }
