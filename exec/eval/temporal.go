package eval

import (
	"math"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
	"github.com/quiverdb/quiver/temporal"
)

// Kernels of timestamps (int64 microseconds since the epoch, no time zone),
// times (int64 microseconds since midnight) and intervals (Arrow's
// MonthDayNano): comparison, arithmetic and casts. Timestamps and times
// share the Int64 kernels wherever only their order matters.

var (
	tTimestamp = &arrow.TimestampType{Unit: arrow.Microsecond}
	tTime      = arrow.FixedWidthTypes.Time64us
	tInterval  = arrow.FixedWidthTypes.MonthDayNanoInterval
)

// cmpIntervals compares intervals by length (temporal.CompareIntervals).
func cmpIntervals(op physical.BinaryOp, la, ra arrow.Array, lit *litVal, bm []byte) {
	x := values[arrow.MonthDayNanoInterval](la)
	var y []arrow.MonthDayNanoInterval
	ym := -1
	if ra == nil {
		y, ym = []arrow.MonthDayNanoInterval{lit.iv}, 0
	} else {
		y = values[arrow.MonthDayNanoInterval](ra)
	}
	for i := range x {
		c := temporal.CompareIntervals(x[i], y[i&ym])
		var v bool
		switch op {
		case physical.OpEq:
			v = c == 0
		case physical.OpLt:
			v = c < 0
		case physical.OpLtEq:
			v = c <= 0
		case physical.OpGt:
			v = c > 0
		case physical.OpGtEq:
			v = c >= 0
		}
		setBit(bm, i, v)
	}
}

// Kinds of temporal arithmetic (arithNode.kind values after arAllNull).
const (
	arTsIvl    arithKind = iota + 100 // timestamp ± interval
	arTsDiff                          // timestamp - timestamp → interval
	arTimeIvl                         // time ± interval (wraps around midnight)
	arTimeDiff                        // time - time → interval
	arDateTime                        // date + time → timestamp
	arIvlIvl                          // interval ± interval
	arIvlMul                          // interval * double
	arIvlDiv                          // interval / double
)

// compileTemporalArith sets up the node for arithmetic on timestamps,
// times and intervals; ok is false when the operands are not such.
func compileTemporalArith(an *arithNode, e *physical.Binary, operands func(lw, rw arrow.DataType) error) (bool, error) {
	lt, rt := e.Left.DataType().ID(), e.Right.DataType().ID()
	const (
		ts, tm, iv, dt = arrow.TIMESTAMP, arrow.TIME64, arrow.INTERVAL_MONTH_DAY_NANO, arrow.DATE32
	)
	swap := false
	switch {
	case lt == ts && rt == iv:
		an.kind = arTsIvl
	case lt == iv && rt == ts:
		an.kind, swap = arTsIvl, true
	case lt == ts && rt == ts:
		an.kind = arTsDiff
	case lt == tm && rt == iv:
		an.kind = arTimeIvl
	case lt == iv && rt == tm:
		an.kind, swap = arTimeIvl, true
	case lt == tm && rt == tm:
		an.kind = arTimeDiff
	case lt == dt && rt == tm:
		an.kind = arDateTime
	case lt == tm && rt == dt:
		an.kind, swap = arDateTime, true
	case lt == iv && rt == iv:
		an.kind = arIvlIvl
	case lt == iv && rt == arrow.FLOAT64 && e.Op == physical.OpMul:
		an.kind = arIvlMul
	case lt == arrow.FLOAT64 && rt == iv && e.Op == physical.OpMul:
		an.kind, swap = arIvlMul, true
	case lt == iv && rt == arrow.FLOAT64 && e.Op == physical.OpDiv:
		an.kind = arIvlDiv
	default:
		return false, nil
	}
	if err := operands(nil, nil); err != nil {
		return true, err
	}
	if swap {
		an.l, an.r = an.r, an.l
	}
	return true, nil
}

// i64Vals returns an int64-laid-out operand's values and index mask.
func i64Vals(arr arrow.Array, o operand) ([]int64, int) {
	if arr == nil {
		return []int64{o.lit.i64}, 0
	}
	return values[int64](arr), -1
}

func ivlVals(arr arrow.Array, o operand) ([]arrow.MonthDayNanoInterval, int) {
	if arr == nil {
		return []arrow.MonthDayNanoInterval{o.lit.iv}, 0
	}
	return values[arrow.MonthDayNanoInterval](arr), -1
}

func f64Vals(arr arrow.Array, o operand) ([]float64, int) {
	if arr == nil {
		return []float64{o.lit.f64}, 0
	}
	return values[float64](arr), -1
}

// temporalArith runs the kernels of compileTemporalArith's kinds. The
// left operand is materialised unless it is constant and the right is not.
func (a *arithNode) temporalArith(mem memory.Allocator, la, ra arrow.Array, n int, valid *memory.Buffer) (arrow.Array, error) {
	sign := 1
	if a.op == physical.OpSub {
		sign = -1
	}
	valid1 := func(i int) bool { return valid == nil || bitutil.BitIsSet(valid.Bytes(), i) }
	switch a.kind {
	case arTsIvl, arTimeIvl:
		x, xm := i64Vals(la, a.l)
		y, ym := ivlVals(ra, a.r)
		loc, err := zoneOf(a.typ)
		if err != nil {
			return nil, err
		}
		buf, out := newFixed[int64](mem, n)
		defer buf.Release()
		for i := range out {
			if a.kind == arTsIvl && loc != nil {
				out[i] = temporal.AddToTimestampTZ(x[i&xm], y[i&ym], sign, loc)
			} else if a.kind == arTsIvl {
				out[i] = temporal.AddToTimestamp(x[i&xm], y[i&ym], sign)
			} else {
				// A time of day wraps: only the time part of the interval counts.
				d := x[i&xm] + int64(sign)*(y[i&ym].Nanoseconds/temporal.NanosPerMicro)
				out[i] = d - temporal.FloorDiv(d, temporal.MicrosPerDay)*temporal.MicrosPerDay
			}
		}
		return makeArray(a.typ, n, valid, buf), nil
	case arTsDiff, arTimeDiff:
		x, xm := i64Vals(la, a.l)
		y, ym := i64Vals(ra, a.r)
		buf, out := newFixed[arrow.MonthDayNanoInterval](mem, n)
		defer buf.Release()
		for i := range out {
			out[i] = temporal.SubTimestamps(x[i&xm], y[i&ym])
			if a.kind == arTimeDiff {
				// time - time is all time, no days (PostgreSQL).
				d := x[i&xm] - y[i&ym]
				out[i] = arrow.MonthDayNanoInterval{Nanoseconds: d * temporal.NanosPerMicro}
			}
		}
		return makeArray(a.typ, n, valid, buf), nil
	case arDateTime:
		x, xm := dateVals(la, a.l)
		y, ym := i64Vals(ra, a.r)
		buf, out := newFixed[int64](mem, n)
		defer buf.Release()
		for i := range out {
			out[i] = int64(x[i&xm])*temporal.MicrosPerDay + y[i&ym]
		}
		return makeArray(a.typ, n, valid, buf), nil
	case arIvlIvl:
		x, xm := ivlVals(la, a.l)
		y, ym := ivlVals(ra, a.r)
		buf, out := newFixed[arrow.MonthDayNanoInterval](mem, n)
		defer buf.Release()
		for i := range out {
			v, ok := temporal.AddIntervals(x[i&xm], y[i&ym], sign)
			if !ok && valid1(i) {
				return nil, qerr.Execf("interval out of range in %s", a.expr)
			}
			out[i] = v
		}
		return makeArray(a.typ, n, valid, buf), nil
	case arIvlMul, arIvlDiv:
		x, xm := ivlVals(la, a.l)
		y, ym := f64Vals(ra, a.r)
		buf, out := newFixed[arrow.MonthDayNanoInterval](mem, n)
		defer buf.Release()
		for i := range out {
			if !valid1(i) {
				continue
			}
			f := y[i&ym]
			var v arrow.MonthDayNanoInterval
			var ok bool
			if a.kind == arIvlDiv {
				if f == 0 {
					return nil, qerr.Execf("division by zero in %s", a.expr)
				}
				v, ok = temporal.DivInterval(x[i&xm], f)
			} else {
				v, ok = temporal.MulInterval(x[i&xm], f)
			}
			if !ok {
				return nil, qerr.Execf("interval out of range in %s", a.expr)
			}
			out[i] = v
		}
		return makeArray(a.typ, n, valid, buf), nil
	}
	return nil, qerr.Internalf("eval: %s: unknown temporal kernel", a.expr)
}

// negInterval negates every part of each interval.
func negInterval(mem memory.Allocator, arr arrow.Array, typ arrow.DataType, n int, valid *memory.Buffer) arrow.Array {
	buf, out := newFixed[arrow.MonthDayNanoInterval](mem, n)
	defer buf.Release()
	for i, x := range values[arrow.MonthDayNanoInterval](arr) {
		out[i] = arrow.MonthDayNanoInterval{Months: -x.Months, Days: -x.Days, Nanoseconds: -x.Nanoseconds}
	}
	return makeArray(typ, n, valid, buf)
}

// temporalCastSupported lists the casts among temporal types and from and
// to text this file implements.
func temporalCastSupported(f, t arrow.Type) bool {
	switch {
	case (f == arrow.STRING || f == arrow.LARGE_STRING) && (t == arrow.TIMESTAMP || t == arrow.TIME64 || t == arrow.INTERVAL_MONTH_DAY_NANO):
		return true
	case f == arrow.DATE32 && t == arrow.TIMESTAMP, f == arrow.TIMESTAMP && (t == arrow.DATE32 || t == arrow.TIME64):
		return true
	}
	return false
}

// castTemporal converts a (not all NULL) for temporalCastSupported pairs
// other than to text; ok is false for other pairs.
func castTemporal(mem memory.Allocator, a arrow.Array, to arrow.DataType, valid *memory.Buffer) (arrow.Array, bool, error) {
	from, n := a.DataType(), a.Len()
	switch {
	case from.ID() == arrow.TIMESTAMP && !arrow.TypeEqual(from, tTimestamp) && to.ID() == arrow.TIMESTAMP:
		// A timestamp of another unit (from a file) becomes microseconds.
		buf, out := newFixed[int64](mem, n)
		defer buf.Release()
		unit := from.(*arrow.TimestampType).Unit
		for i, x := range values[int64](a) {
			out[i] = temporal.ToMicros(x, unit)
		}
		return makeArray(to, n, valid, buf), true, nil
	case from.ID() == arrow.DATE32 && to.ID() == arrow.TIMESTAMP:
		buf, out := newFixed[int64](mem, n)
		defer buf.Release()
		for i, x := range values[int32](a) {
			out[i] = int64(x) * temporal.MicrosPerDay
		}
		return makeArray(to, n, valid, buf), true, nil
	case from.ID() == arrow.TIMESTAMP && to.ID() == arrow.DATE32:
		buf, out := newFixed[int32](mem, n)
		defer buf.Release()
		for i, x := range values[int64](a) {
			d, _ := temporal.SplitTimestamp(x)
			out[i] = int32(d)
		}
		return makeArray(to, n, valid, buf), true, nil
	case from.ID() == arrow.TIMESTAMP && to.ID() == arrow.TIME64:
		buf, out := newFixed[int64](mem, n)
		defer buf.Release()
		for i, x := range values[int64](a) {
			_, out[i] = temporal.SplitTimestamp(x)
		}
		return makeArray(to, n, valid, buf), true, nil
	case from.ID() == arrow.STRING || from.ID() == arrow.LARGE_STRING:
		sv := stringView(a)
		bad := func(s string) error { return qerr.Execf("cannot cast '%s' to %s", s, typeName(to)) }
		switch to.ID() {
		case arrow.TIMESTAMP, arrow.TIME64:
			buf, out := newFixed[int64](mem, n)
			defer buf.Release()
			for i, s := range sv {
				if !a.IsValid(i) {
					continue
				}
				var ok bool
				if to.ID() == arrow.TIMESTAMP {
					out[i], ok = temporal.ParseTimestamp(s)
				} else {
					out[i], ok = temporal.ParseTime(s)
					ok = ok && out[i] < temporal.MicrosPerDay
				}
				if !ok {
					return nil, true, bad(s)
				}
			}
			return makeArray(to, n, valid, buf), true, nil
		case arrow.INTERVAL_MONTH_DAY_NANO:
			buf, out := newFixed[arrow.MonthDayNanoInterval](mem, n)
			defer buf.Release()
			for i, s := range sv {
				if !a.IsValid(i) {
					continue
				}
				var ok bool
				if out[i], ok = temporal.ParseInterval(s); !ok {
					return nil, true, bad(s)
				}
			}
			return makeArray(to, n, valid, buf), true, nil
		}
	}
	return nil, false, nil
}

// appendTemporal renders row i of a timestamp, time or interval array as
// text; ok is false for other types.
func appendTemporal(dst []byte, a arrow.Array, i int) ([]byte, bool) {
	switch a := a.(type) {
	case *array.Timestamp:
		t := a.DataType().(*arrow.TimestampType)
		us := temporal.ToMicros(int64(a.Value(i)), t.Unit)
		if t.TimeZone != "" {
			// A zone the database does not know was refused where the type
			// was made; UTC is the fallback.
			loc, ok := temporal.LoadZone(t.TimeZone)
			if !ok {
				loc = time.UTC
			}
			return temporal.AppendTimestampTZ(dst, us, loc), true
		}
		return temporal.AppendTimestamp(dst, us), true
	case *array.Time64:
		return temporal.AppendTime(dst, temporal.ToMicros(int64(a.Value(i)), a.DataType().(*arrow.Time64Type).Unit)), true
	case *array.MonthDayNanoInterval:
		return temporal.AppendInterval(dst, a.Value(i)), true
	}
	return dst, false
}

// epochSeconds is a timestamp's seconds since the epoch with the fraction.
func epochSeconds(us int64) float64 { return float64(us) / temporal.MicrosPerSecond }

// timestampFromSeconds converts seconds since the epoch to a timestamp;
// ok is false for NaN and values out of range.
func timestampFromSeconds(s float64) (int64, bool) {
	us := math.Round(s * temporal.MicrosPerSecond)
	if math.IsNaN(us) || us < math.MinInt64/2 || us > math.MaxInt64/2 {
		return 0, false
	}
	return int64(us), true
}

// takeIntervals gathers rows idx of an interval array.
func takeIntervals(mem memory.Allocator, a arrow.Array, idx []int32) arrow.Array {
	n := len(idx)
	src := values[arrow.MonthDayNanoInterval](a)
	buf, out := newFixed[arrow.MonthDayNanoInterval](mem, n)
	defer buf.Release()
	var valid *memory.Buffer
	if a.NullN() > 0 {
		valid = newBitmap(mem, n, false)
		defer valid.Release()
	}
	for i, j := range idx {
		out[i] = src[j]
		if valid != nil && a.IsValid(int(j)) {
			setBit(valid.Bytes(), i, true)
		}
	}
	return makeArray(a.DataType(), n, valid, buf)
}
