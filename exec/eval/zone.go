package eval

import (
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
	"github.com/quiverdb/quiver/temporal"
)

// Kernels of TIMESTAMPTZ: timestamp arrays with a time zone hold UTC
// instants, and the zone is the calendar their wall-clock times are read in.

// zoneOf is the time zone of a timestamp type with one; nil for any other
// type. A zone name the database does not know is an execution error.
func zoneOf(t arrow.DataType) (*time.Location, error) {
	ts, ok := t.(*arrow.TimestampType)
	if !ok || ts.TimeZone == "" {
		return nil, nil
	}
	if ts.TimeZone == "UTC" {
		return time.UTC, nil
	}
	loc, ok := temporal.LoadZone(ts.TimeZone)
	if !ok {
		return nil, qerr.Execf("unknown time zone %q", ts.TimeZone)
	}
	return loc, nil
}

// castZoned converts a (not all NULL) where from or to is a TIMESTAMPTZ:
// between zones the instant stays; a TIMESTAMP, a date's midnight or a
// text without an offset is read as wall-clock time in to's zone; a
// TIMESTAMPTZ becomes a date, time or TIMESTAMP of its wall-clock time in
// its zone. ok is false when neither is a TIMESTAMPTZ, or for casts to text
// (appendTemporal prints those).
func castZoned(mem memory.Allocator, a arrow.Array, to arrow.DataType, valid *memory.Buffer) (arrow.Array, bool, error) {
	from, n := a.DataType(), a.Len()
	fz, err := zoneOf(from)
	if err != nil {
		return nil, true, err
	}
	tz, err := zoneOf(to)
	if err != nil {
		return nil, true, err
	}
	if fz == nil && tz == nil || to.ID() == arrow.STRING || to.ID() == arrow.LARGE_STRING {
		return nil, false, nil
	}
	if fz != nil {
		buf, out := newFixed[int64](mem, n)
		defer buf.Release()
		unit := from.(*arrow.TimestampType).Unit
		for i, x := range values[int64](a) {
			out[i] = temporal.ToMicros(x, unit)
			if tz == nil {
				out[i] = temporal.ToLocal(out[i], fz)
			}
		}
		if tz != nil {
			return makeArray(to, n, valid, buf), true, nil
		}
		local := makeArray(tTimestamp, n, valid, buf)
		if to.ID() == arrow.TIMESTAMP && arrow.TypeEqual(to, tTimestamp) {
			return local, true, nil
		}
		defer local.Release()
		return castTemporal(mem, local, to, valid)
	}
	buf, out := newFixed[int64](mem, n)
	defer buf.Release()
	switch from.ID() {
	case arrow.TIMESTAMP:
		unit := from.(*arrow.TimestampType).Unit
		for i, x := range values[int64](a) {
			out[i] = temporal.FromLocal(temporal.ToMicros(x, unit), tz)
		}
	case arrow.DATE32:
		for i, x := range values[int32](a) {
			out[i] = temporal.FromLocal(int64(x)*temporal.MicrosPerDay, tz)
		}
	case arrow.STRING, arrow.LARGE_STRING:
		for i, s := range stringView(a) {
			if !a.IsValid(i) {
				continue
			}
			var ok bool
			if out[i], ok = temporal.ParseTimestampTZ(s, tz); !ok {
				return nil, true, qerr.Execf("cannot cast '%s' to %s", s, typeName(to))
			}
		}
	default:
		return nil, false, nil
	}
	return makeArray(to, n, valid, buf), true, nil
}

var zoneKernels = kernelMap{
	// timezone(zone, x), x AT TIME ZONE zone: a TIMESTAMPTZ's wall-clock
	// time in zone, or the instant at which zone's clock reads a TIMESTAMP
	// (or a date's midnight). Argument 3, when the planner adds it, only
	// carries the result type.
	"timezone": func(f *physical.ScalarFunc) (node, error) {
		zone, err := compileOperand(f.Args[0], nil)
		if err != nil {
			return nil, err
		}
		if zone.lit == nil || zone.lit.null || zone.typ.ID() != tUtf8.ID() {
			return nil, qerr.NotImplementedf("eval: timezone needs a constant zone, got %s", f.Args[0])
		}
		loc, ok := temporal.LoadZone(zone.lit.s)
		if !ok {
			return nil, qerr.Execf("timezone: unknown time zone %q", zone.lit.s)
		}
		xt := f.Args[1].DataType()
		types := []arrow.DataType{tUtf8, tTimestamp}
		for _, a := range f.Args[2:] {
			types = append(types, a.DataType())
		}
		fromZoned := false
		if fz, err := zoneOf(xt); err != nil {
			return nil, err
		} else if fz != nil {
			types[1], fromZoned = &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: xt.(*arrow.TimestampType).TimeZone}, true
		}
		body := func(a []rowArg, i int) (int64, bool, error) { return temporal.FromLocal(a[1].int(i), loc), true, nil }
		if fromZoned {
			body = func(a []rowArg, i int) (int64, bool, error) { return temporal.ToLocal(a[1].int(i), loc), true, nil }
		}
		return i64Body(f.Type, body, types...)(f)
	},
}

// asInstant is f with argument i, if a TIMESTAMPTZ, in zone UTC, so that a
// kernel reading it as a TIMESTAMP reads the instant (epoch), not the wall
// clock of its zone.
func asInstant(f *physical.ScalarFunc, i int) *physical.ScalarFunc {
	t, ok := f.Args[i].DataType().(*arrow.TimestampType)
	if !ok || t.TimeZone == "" || t.TimeZone == "UTC" {
		return f
	}
	g := *f
	g.Args = append([]physical.Expr(nil), f.Args...)
	g.Args[i] = &physical.Cast{Expr: f.Args[i], Type: &arrow.TimestampType{Unit: t.Unit, TimeZone: "UTC"}}
	return &g
}

// compileZonePart compiles date_part's zone fields of a TIMESTAMPTZ
// (PostgreSQL's): timezone is the UTC offset of its zone at that instant in
// seconds east of UTC, timezone_hour and timezone_minute its parts; ok is
// false for other fields and types.
func compileZonePart(f *physical.ScalarFunc, unit string) (node, bool, error) {
	var div, mod int64
	switch strings.ToLower(strings.TrimSpace(unit)) {
	case "timezone":
		div, mod = 1, 0
	case "timezone_hour":
		div, mod = 3600, 0
	case "timezone_minute":
		div, mod = 60, 60
	default:
		return nil, false, nil
	}
	loc, err := zoneOf(f.Args[1].DataType())
	if err != nil || loc == nil {
		return nil, err != nil, err
	}
	arg := &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: f.Args[1].DataType().(*arrow.TimestampType).TimeZone}
	n, err := i64Body(tInt64, func(a []rowArg, i int) (int64, bool, error) {
		// Truncated toward zero, as PostgreSQL splits a negative offset.
		v := temporal.ZoneOffset(a[1].int(i), loc) / temporal.MicrosPerSecond / div
		if mod != 0 {
			v %= mod
		}
		return v, true, nil
	}, tUtf8, arg)(f)
	return n, true, err
}
