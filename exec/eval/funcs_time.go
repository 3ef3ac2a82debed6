package eval

import (
	"context"
	"math"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
	"github.com/quiverdb/quiver/temporal"
)

// The kernels of the timestamp, time and interval functions. Fields and
// truncation follow PostgreSQL (ISO weeks start on Monday; dow is Sunday 0);
// date_part returns whole numbers (bigint) as DuckDB does.

// timeFieldUnit is the canonical name of a field of a time of day.
func timeFieldUnit(u string) (string, bool) {
	switch strings.ToLower(strings.TrimSpace(u)) {
	case "hour", "hours", "h", "hr", "hrs":
		return "hour", true
	case "minute", "minutes", "min", "mins", "m":
		return "minute", true
	case "second", "seconds", "sec", "secs", "s":
		return "second", true
	case "millisecond", "milliseconds", "ms", "msec", "msecs":
		return "millisecond", true
	case "microsecond", "microseconds", "us", "usec", "usecs":
		return "microsecond", true
	}
	return "", false
}

// todPart is a field of a time of day (microseconds since midnight);
// second-based fields count within the minute, as in PostgreSQL.
func todPart(unit string, tod int64) int64 {
	switch unit {
	case "hour":
		return tod / temporal.MicrosPerHour
	case "minute":
		return tod / temporal.MicrosPerMinute % 60
	case "second":
		return tod / temporal.MicrosPerSecond % 60
	case "millisecond":
		return tod % temporal.MicrosPerMinute / temporal.MicrosPerMilli
	case "microsecond":
		return tod % temporal.MicrosPerMinute
	}
	return 0
}

// timestampPart is a field of a timestamp.
func timestampPart(unit string, us int64) int64 {
	days, tod := temporal.SplitTimestamp(us)
	switch unit {
	case "hour", "minute", "second", "millisecond", "microsecond":
		return todPart(unit, tod)
	case "epoch":
		return temporal.FloorDiv(us, temporal.MicrosPerSecond)
	}
	return datePartOf(unit, int32(days))
}

// intervalPart is a field of an interval (PostgreSQL: years and months
// from the months, days as given, time fields from the time part).
func intervalPart(unit string, iv arrow.MonthDayNanoInterval) int64 {
	us := iv.Nanoseconds / temporal.NanosPerMicro
	years := int64(iv.Months / 12)
	switch unit {
	case "year":
		return years
	case "month":
		return int64(iv.Months % 12)
	case "quarter":
		return int64(iv.Months%12/3 + 1)
	case "day":
		return int64(iv.Days)
	case "decade":
		return years / 10
	case "century":
		return years / 100
	case "millennium":
		return years / 1000
	case "hour":
		return us / temporal.MicrosPerHour
	case "minute":
		return us / temporal.MicrosPerMinute % 60
	case "second":
		return us / temporal.MicrosPerSecond % 60
	case "millisecond":
		return us % temporal.MicrosPerMinute / temporal.MicrosPerMilli
	case "microsecond":
		return us % temporal.MicrosPerMinute
	case "epoch":
		return int64(math.Floor(temporal.IntervalEpoch(iv)))
	}
	return 0
}

// compileTemporalPart is date_part over a timestamp, time or interval.
func compileTemporalPart(f *physical.ScalarFunc, unitText string) (node, error) {
	t := f.Args[1].DataType()
	if n, ok, err := compileZonePart(f, unitText); ok {
		return n, err
	}
	u, isTime := timeFieldUnit(unitText)
	if !isTime {
		var ok bool
		if u, ok = datePartUnit(unitText); !ok || u == "zero" {
			return nil, qerr.Execf("date_part: unit '%s' is not a field of a %s", unitText, typeName(t))
		}
	}
	switch t.ID() {
	case arrow.TIMESTAMP:
		if u == "epoch" {
			f = asInstant(f, 1)
		}
		return i64Body(tInt64, func(a []rowArg, i int) (int64, bool, error) { return timestampPart(u, a[1].int(i)), true, nil }, tUtf8, tTimestamp)(f)
	case arrow.TIME64:
		if !isTime && u != "epoch" {
			return nil, qerr.Execf("date_part: unit '%s' is not a field of a time", unitText)
		}
		return i64Body(tInt64, func(a []rowArg, i int) (int64, bool, error) {
			if u == "epoch" {
				return a[1].int(i) / temporal.MicrosPerSecond, true, nil
			}
			return todPart(u, a[1].int(i)), true, nil
		}, tUtf8, tTime)(f)
	case arrow.INTERVAL_MONTH_DAY_NANO:
		switch u {
		case "dow", "isodow", "doy", "week", "isoyear":
			return nil, qerr.Execf("date_part: unit '%s' is not a field of an interval", unitText)
		}
		arg, err := compileOperand(f.Args[1], nil)
		if err != nil {
			return nil, err
		}
		return castResult(&intervalMapNode{arg: arg, typ: tInt64, i64: func(iv arrow.MonthDayNanoInterval) int64 { return intervalPart(u, iv) }}, tInt64, f.Type)
	}
	return nil, qerr.NotImplementedf("eval: date_part of %s is not supported", t)
}

// intervalMapNode maps each interval of its argument to an Int64 or a
// Float64.
type intervalMapNode struct {
	arg operand
	typ arrow.DataType
	i64 func(arrow.MonthDayNanoInterval) int64
	f64 func(arrow.MonthDayNanoInterval) float64
}

func (g *intervalMapNode) eval(ctx context.Context, mem memory.Allocator, in *input) (arrow.Array, error) {
	n := in.n
	a, err := g.arg.eval(ctx, mem, in)
	if err != nil {
		return nil, err
	}
	defer a.Release()
	if anyAllNull(a) {
		return array.MakeArrayOfNull(mem, g.typ, n), nil
	}
	valid := andValidity(mem, n, a)
	if valid != nil {
		defer valid.Release()
	}
	v := values[arrow.MonthDayNanoInterval](a)
	if g.f64 != nil {
		buf, out := newFixed[float64](mem, n)
		defer buf.Release()
		for i, x := range v {
			out[i] = g.f64(x)
		}
		return makeArray(g.typ, n, valid, buf), nil
	}
	buf, out := newFixed[int64](mem, n)
	defer buf.Release()
	for i, x := range v {
		out[i] = g.i64(x)
	}
	return makeArray(g.typ, n, valid, buf), nil
}

// truncTimestamp truncates a timestamp to the start of its unit (a unit
// of truncUnit or a time field).
func truncTimestamp(unit string, us int64) int64 {
	var step int64
	switch unit {
	case "microsecond":
		return us
	case "millisecond":
		step = temporal.MicrosPerMilli
	case "second":
		step = temporal.MicrosPerSecond
	case "minute":
		step = temporal.MicrosPerMinute
	case "hour":
		step = temporal.MicrosPerHour
	default:
		days, _ := temporal.SplitTimestamp(us)
		return dateTrunc(unit, int32(days)) * temporal.MicrosPerDay
	}
	return temporal.FloorDiv(us, step) * step
}

func compileTruncTimestamp(f *physical.ScalarFunc, unitText string) (node, error) {
	u, ok := timeFieldUnit(unitText)
	if !ok {
		if u, ok = truncUnit(unitText); !ok {
			return nil, qerr.Execf("date_trunc: unit '%s' is not supported (millennium, century, decade, year, quarter, month, week, day, hour, minute, second, millisecond, microsecond)", unitText)
		}
	}
	return i64Body(tTimestamp, func(a []rowArg, i int) (int64, bool, error) { return truncTimestamp(u, a[1].int(i)), true, nil }, tUtf8, tTimestamp)(f)
}

// dateDiff counts the unit boundaries crossed from a to b (DuckDB's
// date_diff): the difference of the two timestamps truncated to the unit,
// in units.
func dateDiff(unit string, a, b int64) int64 {
	switch unit {
	case "year", "quarter", "month", "decade", "century", "millennium":
		da, _ := temporal.SplitTimestamp(a)
		db, _ := temporal.SplitTimestamp(b)
		ya, ma, _ := temporal.Civil(int32(da))
		yb, mb, _ := temporal.Civil(int32(db))
		months := int64(yb-ya)*12 + int64(mb-ma)
		switch unit {
		case "quarter":
			return int64(yb-ya)*4 + int64((mb-1)/3-(ma-1)/3)
		case "month":
			return months
		case "decade":
			return temporal.FloorDiv(int64(yb), 10) - temporal.FloorDiv(int64(ya), 10)
		case "century":
			return datePartOf("century", int32(db)) - datePartOf("century", int32(da))
		case "millennium":
			return datePartOf("millennium", int32(db)) - datePartOf("millennium", int32(da))
		}
		return int64(yb - ya)
	case "week":
		return (truncTimestamp("week", b) - truncTimestamp("week", a)) / (7 * temporal.MicrosPerDay)
	case "day":
		return (truncTimestamp("day", b) - truncTimestamp("day", a)) / temporal.MicrosPerDay
	}
	step := map[string]int64{"hour": temporal.MicrosPerHour, "minute": temporal.MicrosPerMinute,
		"second": temporal.MicrosPerSecond, "millisecond": temporal.MicrosPerMilli, "microsecond": 1}[unit]
	return temporal.FloorDiv(b, step) - temporal.FloorDiv(a, step)
}

func diffUnit(u string) (string, bool) {
	if t, ok := timeFieldUnit(u); ok {
		return t, true
	}
	c, ok := datePartUnit(u)
	switch c {
	case "year", "quarter", "month", "week", "day", "decade", "century", "millennium":
		return c, ok
	}
	return "", false
}

// constUnit reads a function's constant unit argument.
func constUnit(f *physical.ScalarFunc, name string) (string, error) {
	unit, err := compileOperand(f.Args[0], nil)
	if err != nil {
		return "", err
	}
	if unit.lit == nil || unit.lit.null || unit.typ.ID() != arrow.STRING {
		return "", qerr.NotImplementedf("eval: %s needs a constant unit, got %s", name, f.Args[0])
	}
	return unit.lit.s, nil
}

// formatBody is the kernel of to_char and strftime: the format (argument 2)
// is compiled once per distinct text, the last one kept per call.
func formatBody(f *physical.ScalarFunc, compileFmt func(string) []fmtPiece) (node, error) {
	r, err := newRowFunc(f, tUtf8, tTimestamp, tUtf8)
	if err != nil {
		return nil, err
	}
	r.makeStr = func() func(a []rowArg, i int, dst []byte) ([]byte, bool, error) {
		var last string
		var pieces []fmtPiece
		return func(a []rowArg, i int, dst []byte) ([]byte, bool, error) {
			if s := a[1].str(i); pieces == nil || string(s) != last {
				last = string(s)
				pieces = compileFmt(last)
			}
			return appendFormatted(dst, pieces, a[0].int(i)), true, nil
		}
	}
	return r.finish(f)
}

// parseBody is the kernel of to_timestamp(text, fmt) and strptime; the
// format is compiled once per distinct text, as in formatBody.
func parseBody(f *physical.ScalarFunc, compileFmt func(string) []fmtPiece) (node, error) {
	r, err := newRowFunc(f, tTimestamp, tUtf8, tUtf8)
	if err != nil {
		return nil, err
	}
	r.makeI64 = func() func(a []rowArg, i int) (int64, bool, error) {
		var last string
		var pieces []fmtPiece
		return func(a []rowArg, i int) (int64, bool, error) {
			if fm := a[1].str(i); pieces == nil || string(fm) != last {
				last = string(fm)
				pieces = compileFmt(last)
			}
			v, ok := parseFormatted(a[0].str(i), pieces)
			if !ok {
				return 0, false, qerr.Execf("%s: '%s' does not match the format '%s'", f.Name, a[0].str(i), last)
			}
			return v, true, nil
		}
	}
	return r.finish(f)
}

var timeKernels = kernelMap{
	"age": func(f *physical.ScalarFunc) (node, error) {
		r, err := newRowFunc(f, tInterval, tTimestamp, tTimestamp)
		if err != nil {
			return nil, err
		}
		r.iv = func(a []rowArg, i int) (arrow.MonthDayNanoInterval, bool, error) {
			return temporal.Age(a[0].int(i), a[1].int(i)), true, nil
		}
		return r.finish(f)
	},
	"make_interval": func(f *physical.ScalarFunc) (node, error) {
		r, err := newRowFunc(f, tInterval, tInt64, tInt64, tInt64, tInt64, tInt64, tInt64, tFloat64)
		if err != nil {
			return nil, err
		}
		r.iv = func(a []rowArg, i int) (arrow.MonthDayNanoInterval, bool, error) {
			// Arguments left out are 0.
			part := func(k int) int64 {
				if k < len(a) {
					return a[k].int(i)
				}
				return 0
			}
			secs := 0.0
			if len(a) > 6 {
				secs = a[6].float(i)
			}
			months, days := part(0)*12+part(1), part(2)*7+part(3)
			us := float64(part(4))*temporal.MicrosPerHour + float64(part(5))*temporal.MicrosPerMinute + math.Round(secs*temporal.MicrosPerSecond)
			if months != int64(int32(months)) || days != int64(int32(days)) || math.IsNaN(us) || math.Abs(us) > math.MaxInt64/temporal.NanosPerMicro {
				return arrow.MonthDayNanoInterval{}, false, qerr.Execf("make_interval: interval out of range")
			}
			return arrow.MonthDayNanoInterval{Months: int32(months), Days: int32(days), Nanoseconds: int64(us) * temporal.NanosPerMicro}, true, nil
		}
		return r.finish(f)
	},
	"make_timestamp": i64Body(tTimestamp, func(a []rowArg, i int) (int64, bool, error) {
		y, m, d, h, mi, s := a[0].int(i), a[1].int(i), a[2].int(i), a[3].int(i), a[4].int(i), a[5].float(i)
		if y < 1 || y > 290000 || m < 1 || m > 12 || d < 1 || d > int64(temporal.DaysIn(int(y), int(m))) ||
			h < 0 || h > 23 || mi < 0 || mi > 59 || !(s >= 0 && s < 60) {
			return 0, false, qerr.Execf("make_timestamp(%d, %d, %d, %d, %d, %v) is not a valid timestamp", y, m, d, h, mi, s)
		}
		us := temporal.DaysFromCivil(int(y), int(m), int(d))*temporal.MicrosPerDay + h*temporal.MicrosPerHour + mi*temporal.MicrosPerMinute
		return us + int64(math.Round(s*temporal.MicrosPerSecond)), true, nil
	}, tInt64, tInt64, tInt64, tInt64, tInt64, tFloat64),
	"epoch": func(f *physical.ScalarFunc) (node, error) {
		switch f.Args[0].DataType().ID() {
		case arrow.INTERVAL_MONTH_DAY_NANO:
			arg, err := compileOperand(f.Args[0], nil)
			if err != nil {
				return nil, err
			}
			return &intervalMapNode{arg: arg, typ: tFloat64, f64: temporal.IntervalEpoch}, nil
		case arrow.TIME64:
			return f64Body(func(a []rowArg, i int) (float64, bool, error) { return epochSeconds(a[0].int(i)), true, nil }, tTime)(f)
		case arrow.DATE32:
			return f64Body(func(a []rowArg, i int) (float64, bool, error) {
				return float64(a[0].date(i)) * 86400, true, nil
			}, tDate32)(f)
		}
		return f64Body(func(a []rowArg, i int) (float64, bool, error) { return epochSeconds(a[0].int(i)), true, nil }, tTimestamp)(asInstant(f, 0))
	},
	"epoch_ms": func(f *physical.ScalarFunc) (node, error) {
		return i64Body(tInt64, func(a []rowArg, i int) (int64, bool, error) {
			return temporal.FloorDiv(a[0].int(i), temporal.MicrosPerMilli), true, nil
		}, tTimestamp)(asInstant(f, 0))
	},
	"to_timestamp": func(f *physical.ScalarFunc) (node, error) {
		if len(f.Args) == 2 {
			return parseBody(f, compilePGFormat)
		}
		return i64Body(tTimestamp, func(a []rowArg, i int) (int64, bool, error) {
			us, ok := timestampFromSeconds(a[0].float(i))
			if !ok {
				return 0, false, qerr.Execf("to_timestamp: %v seconds is out of the timestamp range", a[0].float(i))
			}
			return us, true, nil
		}, tFloat64)(f)
	},
	"strptime": func(f *physical.ScalarFunc) (node, error) { return parseBody(f, compileStrftime) },
	"to_char":  func(f *physical.ScalarFunc) (node, error) { return formatBody(f, compilePGFormat) },
	"strftime": func(f *physical.ScalarFunc) (node, error) { return formatBody(f, compileStrftime) },
	"date_diff": func(f *physical.ScalarFunc) (node, error) {
		unitText, err := constUnit(f, "date_diff")
		if err != nil {
			return nil, err
		}
		u, ok := diffUnit(unitText)
		if !ok {
			return nil, qerr.Execf("date_diff: unit '%s' is not supported (year, quarter, month, week, day, hour, minute, second, millisecond, microsecond)", unitText)
		}
		return i64Body(tInt64, func(a []rowArg, i int) (int64, bool, error) {
			return dateDiff(u, a[1].int(i), a[2].int(i)), true, nil
		}, tUtf8, tTimestamp, tTimestamp)(f)
	},
}
