package window

import (
	"context"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver/exec/execop"
	"github.com/quiverdb/quiver/exec/kernel"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
)

// function computes f's column over all rows.
func (w *windowOp) function(ctx context.Context, l *layout, f physical.WindowFuncExpr, args []kernel.ExprRunner, all arrow.RecordBatch) (arrow.Array, error) {
	m := &kernel.ArrayMaker{Mem: w.tc.Mem}
	switch f.Func {
	case physical.WinRowNumber, physical.WinRank, physical.WinDenseRank, physical.WinNtile:
		buckets := int64(0)
		if f.Func == physical.WinNtile {
			buckets, _ = constInt(f.Args[0])
		}
		return kernel.MakeFixed(m, arrow.PrimitiveTypes.Int64, l.ranking(f.Func, buckets), nil), nil
	case physical.WinPercentRank, physical.WinCumeDist:
		return kernel.MakeFixed(m, arrow.PrimitiveTypes.Float64, l.distribution(f.Func), nil), nil
	}
	argArrs, err := kernel.EvalAll(ctx, w.tc.Mem, args, all)
	if err != nil {
		return nil, err
	}
	defer kernel.ReleaseArrays(argArrs)
	switch f.Func {
	case physical.WinLag, physical.WinLead:
		off, _ := constInt(f.Args[1])
		if f.Func == physical.WinLag {
			off = -off
		}
		if f.IgnoreNulls {
			return gather(ctx, w.tc.Mem, argArrs[0], argArrs[2], l.shiftedIgnoreNulls(off, argArrs[0]))
		}
		return gather(ctx, w.tc.Mem, argArrs[0], argArrs[2], l.shifted(off))
	case physical.WinFirstValue, physical.WinLastValue, physical.WinNthValue:
		start, end := l.frame(f.Frame)
		nth := int64(1)
		if f.Func == physical.WinNthValue {
			nth, _ = constInt(f.Args[1])
		}
		if f.IgnoreNulls {
			kind := map[physical.WindowFunc]windowFuncKind{physical.WinFirstValue: kindFirst, physical.WinLastValue: kindLast, physical.WinNthValue: kindNth}[f.Func]
			return gatherOrNull(ctx, w.tc.Mem, argArrs[0], l.positionalIgnoreNulls(kind, nth, start, end, argArrs[0]))
		}
		return gatherOrNull(ctx, w.tc.Mem, argArrs[0], l.positional(f.Func, nth, start, end))
	}
	if f.Distinct && len(argArrs) > 0 {
		// The whole partition's frame (the planner allows no other) over
		// each value's first row only.
		d, err := distinctArg(w.tc.Mem, argArrs[0], l)
		if err != nil {
			return nil, err
		}
		argArrs[0].Release()
		argArrs[0] = d
	}
	// Aggregates.
	start, end := l.frame(f.Frame)
	switch f.Agg {
	case physical.AggArrayAgg, physical.AggStringAgg:
		return w.collect(ctx, l, f, argArrs, start, end)
	case physical.AggMin, physical.AggMax:
		idx, err := extremes(argArrs[0], f.Agg == physical.AggMax, l, start, end)
		if err != nil {
			return nil, err
		}
		return gatherOrNull(ctx, w.tc.Mem, argArrs[0], idx)
	case physical.AggCount:
		var arg arrow.Array
		if len(argArrs) > 0 {
			arg = argArrs[0]
		}
		return kernel.MakeFixed(m, arrow.PrimitiveTypes.Int64, counts(arg, l, start, end), nil), nil
	}
	return sums(m, f, argArrs[0], l, start, end)
}

// ranking computes ROW_NUMBER, RANK, DENSE_RANK or NTILE(buckets).
func (l *layout) ranking(fn physical.WindowFunc, buckets int64) []int64 {
	out := make([]int64, l.n)
	for p := 0; p+1 < len(l.parts); p++ {
		ps, pe := l.parts[p], l.parts[p+1]
		rows := int64(pe - ps)
		g0 := l.groupOf[ps]
		// NTILE: the first rows%buckets buckets hold one row more.
		var size, extra int64
		if buckets > 0 {
			size, extra = rows/buckets, rows%buckets
		}
		for r := ps; r < pe; r++ {
			i := int64(r - ps)
			switch fn {
			case physical.WinRowNumber:
				out[r] = i + 1
			case physical.WinRank:
				out[r] = int64(l.groupStart[l.groupOf[r]]-ps) + 1
			case physical.WinDenseRank:
				out[r] = int64(l.groupOf[r]-g0) + 1
			case physical.WinNtile:
				if big := extra * (size + 1); i < big {
					out[r] = i/(size+1) + 1
				} else {
					out[r] = (i-big)/size + extra + 1
				}
			}
		}
	}
	return out
}

// distribution computes PERCENT_RANK ((rank-1)/(rows-1), 0 for one row)
// or CUME_DIST (rows up to the last peer / rows).
func (l *layout) distribution(fn physical.WindowFunc) []float64 {
	out := make([]float64, l.n)
	for p := 0; p+1 < len(l.parts); p++ {
		ps, pe := l.parts[p], l.parts[p+1]
		rows := float64(pe - ps)
		for r := ps; r < pe; r++ {
			g := l.groupOf[r]
			if fn == physical.WinPercentRank {
				if rows > 1 {
					out[r] = float64(l.groupStart[g]-ps) / (rows - 1)
				}
			} else {
				out[r] = float64(l.groupStart[g+1]-ps) / rows
			}
		}
	}
	return out
}

// shifted is, per row, the row off rows away in its partition, or n+row
// (the row's own default) when that falls outside.
func (l *layout) shifted(off int64) []int32 {
	idx := make([]int32, l.n)
	for p := 0; p+1 < len(l.parts); p++ {
		ps, pe := int64(l.parts[p]), int64(l.parts[p+1])
		for r := ps; r < pe; r++ {
			if t := r + off; t >= ps && t < pe {
				idx[r] = int32(t)
			} else {
				idx[r] = int32(int64(l.n) + r)
			}
		}
	}
	return idx
}

// positional is the source row of FIRST_VALUE, LAST_VALUE or NTH_VALUE(nth)
// per row, or -1 when the frame has no such row.
func (l *layout) positional(fn physical.WindowFunc, nth int64, start, end []int32) []int32 {
	idx := make([]int32, l.n)
	for r := range idx {
		s, e := int64(start[r]), int64(end[r])
		t := int64(-1)
		switch fn {
		case physical.WinFirstValue:
			t = s
		case physical.WinLastValue:
			t = e - 1
		case physical.WinNthValue:
			t = s + nth - 1
		}
		if t < s || t >= e {
			t = -1
		}
		idx[r] = int32(t)
	}
	return idx
}

// gather takes rows idx of v, where index n+i means row i of def.
func gather(ctx context.Context, mem memory.Allocator, v, def arrow.Array, idx []int32) (arrow.Array, error) {
	both, err := array.Concatenate([]arrow.Array{v, def}, mem)
	if err != nil {
		return nil, execop.LimitErr(qerr.Execf("exec: window values: %w", err))
	}
	defer both.Release()
	return kernel.TakeArray(ctx, mem, both, idx)
}

// gatherOrNull takes rows idx of v, NULL where idx is -1.
func gatherOrNull(ctx context.Context, mem memory.Allocator, v arrow.Array, idx []int32) (arrow.Array, error) {
	null := array.MakeArrayOfNull(mem, v.DataType(), 1)
	defer null.Release()
	n := int32(v.Len())
	for i, x := range idx {
		if x < 0 {
			idx[i] = n
		}
	}
	return gather(ctx, mem, v, null, idx)
}

// counts is COUNT(arg) (COUNT(*) for a nil arg) over each row's frame.
func counts(arg arrow.Array, l *layout, start, end []int32) []int64 {
	out := make([]int64, l.n)
	var bits []byte
	var boff int
	if arg != nil {
		bits, boff = kernel.ValidBits(arg)
		if arg.DataType().ID() == arrow.NULL {
			return out
		}
	}
	// prefix[i] is the number of counted rows before row i.
	prefix := make([]int64, l.n+1)
	for i := range l.n {
		prefix[i+1] = prefix[i]
		if isValid(bits, boff, i) {
			prefix[i+1]++
		}
	}
	for r := range out {
		out[r] = prefix[end[r]] - prefix[start[r]]
	}
	return out
}

// sums computes SUM or AVG over each row's frame by adding rows entering
// it and removing rows leaving it: ints sum exactly in int64, decimals in
// 128-bit decimals (exact, DECIMAL(38, s)), floats in float64.
func sums(m *kernel.ArrayMaker, f physical.WindowFuncExpr, arg arrow.Array, l *layout, start, end []int32) (arrow.Array, error) {
	bits, boff := kernel.ValidBits(arg)
	valid := make([]bool, l.n)
	cnt := make([]int64, l.n)
	avg := f.Agg == physical.AggAvg
	switch dt := arg.DataType().(type) {
	case *arrow.Decimal128Type:
		vals := arg.(*array.Decimal128).Values()
		acc := make([]decimal128.Num, l.n)
		var run decimal128.Num
		slide(l, start, end, func(i int32, sign int) {
			if !isValid(bits, boff, int(i)) {
				return
			}
			if sign > 0 {
				run = run.Add(vals[i])
			} else {
				run = run.Sub(vals[i])
			}
		}, func(r int32, c int64) {
			acc[r], cnt[r], valid[r] = run, c, c > 0
			if c == 0 {
				acc[r] = decimal128.Num{}
			}
		}, func() { run = decimal128.Num{} }, bits, boff)
		if avg {
			out := make([]float64, l.n)
			for r := range out {
				if valid[r] {
					out[r] = acc[r].ToFloat64(dt.Scale) / float64(cnt[r])
				}
			}
			return kernel.MakeFixed(m, arrow.PrimitiveTypes.Float64, out, valid), nil
		}
		return kernel.MakeFixed(m, f.Type, acc, valid), nil
	}
	if ints, ok := intValues(arg); ok && !avg {
		// The running sum is 128-bit, so a frame's sum is exact whatever
		// order rows enter and leave in; one past int64 is an error, as
		// in the aggregates.
		acc := make([]int64, l.n)
		var run decimal128.Num
		overflow := false
		slide(l, start, end, func(i int32, sign int) {
			if isValid(bits, boff, int(i)) {
				if sign > 0 {
					run = run.Add(decimal128.FromI64(ints[i]))
				} else {
					run = run.Sub(decimal128.FromI64(ints[i]))
				}
			}
		}, func(r int32, c int64) {
			lo := run.LowBits()
			if run.HighBits() != int64(lo)>>63 {
				overflow = true
			}
			acc[r], cnt[r], valid[r] = int64(lo), c, c > 0
		}, func() { run = decimal128.Num{} }, bits, boff)
		if overflow {
			return nil, qerr.Execf("exec: integer overflow in window %s; cast the argument to a DECIMAL", f.Agg)
		}
		return kernel.MakeFixed(m, arrow.PrimitiveTypes.Int64, acc, valid), nil
	}
	fl, ok := floatValues(arg)
	if !ok {
		return nil, qerr.NotImplementedf("exec: window %s over %s is not supported", f.Agg, arg.DataType())
	}
	acc := make([]float64, l.n)
	// NaN and the infinities are counted apart from the finite values. A
	// frame that only grows (a running frame) keeps its finite sum running,
	// one addition per row; once rows leave the frame, each frame's finite
	// sum is read from a tree of partial sums instead, because removing a
	// large value that absorbed small ones would lose them (1e20 + 1 - 1e20
	// is 0).
	var tree sumTree
	var run float64
	var nan, pinf, ninf int64
	shrunk := false
	slide(l, start, end, func(i int32, sign int) {
		if !isValid(bits, boff, int(i)) {
			return
		}
		switch v := fl[i]; {
		case math.IsNaN(v):
			nan += int64(sign)
		case math.IsInf(v, 1):
			pinf += int64(sign)
		case math.IsInf(v, -1):
			ninf += int64(sign)
		case sign > 0:
			run += v
		default:
			shrunk = true
		}
	}, func(r int32, c int64) {
		cnt[r], valid[r] = c, c > 0
		switch {
		case c == 0:
		case nan > 0 || (pinf > 0 && ninf > 0):
			acc[r] = math.NaN()
		case pinf > 0:
			acc[r] = math.Inf(1)
		case ninf > 0:
			acc[r] = math.Inf(-1)
		case !shrunk:
			acc[r] = run
		default:
			if tree.node == nil {
				tree = newSumTree(fl, bits, boff)
			}
			acc[r] = tree.sum(start[r], end[r])
		}
	}, func() { nan, pinf, ninf, run, shrunk = 0, 0, 0, 0, false }, bits, boff)
	if avg {
		for r := range acc {
			if valid[r] {
				acc[r] /= float64(cnt[r])
			}
		}
	}
	return kernel.MakeFixed(m, arrow.PrimitiveTypes.Float64, acc, valid), nil
}

// sumTree holds the finite non-NULL values (0 for the others) at its
// leaves and every node's sum above them, so that the sum of any row range
// adds O(log n) partial sums of disjoint rows.
type sumTree struct {
	m    int
	node []float64
}

func newSumTree(fl []float64, bits []byte, boff int) sumTree {
	m := len(fl)
	t := sumTree{m: m, node: make([]float64, 2*m)}
	for i, v := range fl {
		if isValid(bits, boff, i) && !math.IsNaN(v) && !math.IsInf(v, 0) {
			t.node[m+i] = v
		}
	}
	for i := m - 1; i > 0; i-- {
		t.node[i] = t.node[2*i] + t.node[2*i+1]
	}
	return t
}

// sum is the sum of rows [lo, hi).
func (t sumTree) sum(lo, hi int32) float64 {
	var left, right float64
	for l, r := int(lo)+t.m, int(hi)+t.m; l < r; l, r = l>>1, r>>1 {
		if l&1 == 1 {
			left += t.node[l]
			l++
		}
		if r&1 == 1 {
			r--
			right = t.node[r] + right
		}
	}
	return left + right
}

// slide walks each partition's rows with the frame [cur, end) moving
// forward: add(i, +1) for each row entering, add(i, -1) for each leaving,
// then emit(r, non-NULL rows in the frame). reset runs at each partition.
func slide(l *layout, start, end []int32, add func(i int32, sign int), emit func(r int32, count int64), reset func(), bits []byte, boff int) {
	for p := 0; p+1 < len(l.parts); p++ {
		ps, pe := l.parts[p], l.parts[p+1]
		reset()
		s, e := ps, ps
		var c int64
		for r := ps; r < pe; r++ {
			for ; e < end[r]; e++ {
				add(e, 1)
				if isValid(bits, boff, int(e)) {
					c++
				}
			}
			for ; s < start[r]; s++ {
				add(s, -1)
				if isValid(bits, boff, int(s)) {
					c--
				}
			}
			emit(r, c)
		}
	}
}

// intValues widens an integer column to int64 (once per column).
func intValues(a arrow.Array) ([]int64, bool) {
	d := a.Data()
	switch a.DataType().ID() {
	case arrow.INT8:
		return widen[int8, int64](arrow.GetValues[int8](d, 1)), true
	case arrow.INT16:
		return widen[int16, int64](arrow.GetValues[int16](d, 1)), true
	case arrow.INT32:
		return widen[int32, int64](arrow.GetValues[int32](d, 1)), true
	case arrow.INT64:
		return arrow.GetValues[int64](d, 1), true
	case arrow.UINT8:
		return widen[uint8, int64](arrow.GetValues[uint8](d, 1)), true
	case arrow.UINT16:
		return widen[uint16, int64](arrow.GetValues[uint16](d, 1)), true
	case arrow.UINT32:
		return widen[uint32, int64](arrow.GetValues[uint32](d, 1)), true
	case arrow.UINT64:
		return widen[uint64, int64](arrow.GetValues[uint64](d, 1)), true
	}
	return nil, false
}

// floatValues reads a numeric column as float64 (once per column).
func floatValues(a arrow.Array) ([]float64, bool) {
	d := a.Data()
	switch a.DataType().ID() {
	case arrow.FLOAT64:
		return arrow.GetValues[float64](d, 1), true
	case arrow.FLOAT32:
		return widen[float32, float64](arrow.GetValues[float32](d, 1)), true
	case arrow.UINT64:
		return widen[uint64, float64](arrow.GetValues[uint64](d, 1)), true
	}
	if ints, ok := intValues(a); ok {
		return widen[int64, float64](ints), true
	}
	return nil, false
}

func widen[S int8 | int16 | int32 | int64 | uint8 | uint16 | uint32 | uint64 | float32, D int64 | float64](src []S) []D {
	out := make([]D, len(src))
	for i, v := range src {
		out[i] = D(v)
	}
	return out
}

// extremes is, per row, a row holding the MIN (or MAX) non-NULL value of
// its frame, or -1 for none. A deque keeps the frame's candidate rows in
// row order with values strictly improving from back to front; each row
// enters and leaves it at most once.
func extremes(arg arrow.Array, isMax bool, l *layout, start, end []int32) ([]int32, error) {
	cmpRows, err := rowComparator(arg)
	if err != nil {
		return nil, err
	}
	bits, boff := kernel.ValidBits(arg)
	// worse(i, j): row j's value makes row i useless as a candidate
	// (i entered earlier and is not better than j).
	worse := func(i, j int32) bool {
		c := cmpRows(int(i), int(j))
		if isMax {
			return c <= 0
		}
		return c >= 0
	}
	idx := make([]int32, l.n)
	dq := make([]int32, 0, 64)
	for p := 0; p+1 < len(l.parts); p++ {
		ps, pe := l.parts[p], l.parts[p+1]
		dq = dq[:0]
		head := 0
		e := ps
		for r := ps; r < pe; r++ {
			for ; e < end[r]; e++ {
				if !isValid(bits, boff, int(e)) {
					continue
				}
				for len(dq) > head && worse(dq[len(dq)-1], e) {
					dq = dq[:len(dq)-1]
				}
				dq = append(dq, e)
			}
			for head < len(dq) && dq[head] < start[r] {
				head++
			}
			if head < len(dq) {
				idx[r] = dq[head]
			} else {
				idx[r] = -1
			}
			if head > 1024 && head > len(dq)/2 {
				dq = append(dq[:0], dq[head:]...)
				head = 0
			}
		}
	}
	return idx, nil
}

// rowComparator orders two rows of a by value (neither NULL), typed once.
func rowComparator(a arrow.Array) (func(i, j int) int, error) {
	if c, ok := kernel.RowComparator(a); ok {
		return c, nil
	}
	return nil, qerr.NotImplementedf("exec: window min/max over %s is not supported", a.DataType())
}
