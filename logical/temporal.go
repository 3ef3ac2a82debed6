package logical

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver/functions"
	"github.com/quiverdb/quiver/qerr"
	"github.com/quiverdb/quiver/temporal"
)

// IsTemporal reports whether t is a date, timestamp, time or interval.
func IsTemporal(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.DATE32, arrow.TIMESTAMP, arrow.TIME64, arrow.INTERVAL_MONTH_DAY_NANO:
		return true
	}
	return false
}

// temporalArithmetic is the result type of the operators on timestamps,
// times and intervals (dates with intervals and integers are typed by
// ArithmeticType itself; date ± interval is a timestamp there):
//
//	timestamp ± interval → timestamp     timestamp - timestamp → interval
//	time ± interval → time               time - time → interval
//	date + time → timestamp              interval ± interval → interval
//	interval * double, double * interval, interval / double → interval
func temporalArithmetic(op BinaryOp, l, r arrow.DataType) (arrow.DataType, bool) {
	lid, rid := l.ID(), r.ID()
	const (
		ts, tm, iv, dt = arrow.TIMESTAMP, arrow.TIME64, arrow.INTERVAL_MONTH_DAY_NANO, arrow.DATE32
	)
	addSub := op == OpAdd || op == OpSub
	switch {
	case lid == ts && rid == iv && addSub:
		return zonedOr(l), true
	case lid == iv && rid == ts && op == OpAdd:
		return zonedOr(r), true
	case lid == ts && rid == ts && op == OpSub:
		return Interval, true
	case lid == tm && rid == iv && addSub, lid == iv && rid == tm && op == OpAdd:
		return Time, true
	case lid == tm && rid == tm && op == OpSub:
		return Interval, true
	case (lid == dt && rid == tm || lid == tm && rid == dt) && op == OpAdd:
		return Timestamp, true
	case lid == iv && rid == iv && addSub:
		return Interval, true
	case lid == iv && rid == arrow.FLOAT64 && (op == OpMul || op == OpDiv), lid == arrow.FLOAT64 && rid == iv && op == OpMul:
		return Interval, true
	}
	return nil, false
}

// temporalOperands reports whether l op r is arithmetic on a timestamp, a
// time, or an interval with something other than a date (date ± interval
// keeps its own rule, which reads the date as its midnight).
func temporalOperands(lt, rt arrow.DataType) bool {
	lid, rid := lt.ID(), rt.ID()
	if lid == arrow.TIMESTAMP || rid == arrow.TIMESTAMP || lid == arrow.TIME64 || rid == arrow.TIME64 {
		return true
	}
	if lid == arrow.INTERVAL_MONTH_DAY_NANO && rid != arrow.DATE32 {
		return true
	}
	return rid == arrow.INTERVAL_MONTH_DAY_NANO && lid != arrow.DATE32
}

// coerceTemporalArith casts the operands of arithmetic on timestamps, times
// and intervals to the types temporalArithmetic takes: a date beside a
// timestamp becomes a timestamp, a number beside an interval a double, a
// NULL or a string constant the type that makes the operator valid (a
// string is read as a timestamp, a time or an interval, whichever it
// spells).
func coerceTemporalArith(op BinaryOp, l, r Expr, lt, rt arrow.DataType) (Expr, Expr) {
	lid, rid := lt.ID(), rt.ID()
	// other is what an untyped operand beside t becomes.
	other := func(t arrow.DataType, e Expr, left bool) Expr {
		want := Interval
		switch {
		case t.ID() == arrow.INTERVAL_MONTH_DAY_NANO && (op == OpMul || op == OpDiv):
			want = Float64
		case (t.ID() == arrow.TIMESTAMP || t.ID() == arrow.TIME64) && left && op == OpSub:
			want = t // NULL - ts
		case (t.ID() == arrow.TIMESTAMP || t.ID() == arrow.TIME64) && op == OpSub:
			// ts - 'x': a timestamp when x spells one, else an interval.
			if lit, ok := e.(*Literal); ok {
				if f, ok := foldLiteral(lit, t); ok && lit.Value != nil {
					return f
				}
			}
		}
		return CastTo(e, want)
	}
	untyped := func(id arrow.Type, e Expr) bool {
		if id == arrow.NULL {
			return true
		}
		_, lit := e.(*Literal)
		return lit && (id == arrow.STRING || id == arrow.LARGE_STRING)
	}
	switch {
	case untyped(rid, r) && !untyped(lid, l):
		r = other(lt, r, false)
	case untyped(lid, l) && !untyped(rid, r):
		l = other(rt, l, true)
	case lid == arrow.DATE32 && rid == arrow.TIMESTAMP:
		l = CastTo(l, zonedOr(rt))
	case lid == arrow.TIMESTAMP && rid == arrow.DATE32:
		r = CastTo(r, zonedOr(lt))
	case lid == arrow.TIMESTAMP && rid == arrow.TIMESTAMP && IsTimestampTZ(lt) != IsTimestampTZ(rt):
		// timestamp - timestamptz: the timestamp is read in the zone.
		if IsTimestampTZ(lt) {
			r = CastTo(r, lt)
		} else {
			l = CastTo(l, rt)
		}
	case lid == arrow.INTERVAL_MONTH_DAY_NANO && IsNumeric(rt):
		r = castIf(r, rt, Float64)
	case rid == arrow.INTERVAL_MONTH_DAY_NANO && IsNumeric(lt):
		l = castIf(l, lt, Float64)
	}
	return l, r
}

// temporalSuperType is the common type of a temporal type and another
// for comparisons, CASE, IN and UNION: a date with a timestamp is a
// timestamp; a string with a timestamp, time or interval is that type.
func temporalSuperType(a, b arrow.DataType) (arrow.DataType, bool) {
	for _, p := range [2][2]arrow.DataType{{a, b}, {b, a}} {
		x, y := p[0], p[1]
		switch {
		case x.ID() == arrow.TIMESTAMP && y.ID() == arrow.DATE32:
			return zonedOr(x), true
		case IsTimestampTZ(x) && y.ID() == arrow.TIMESTAMP:
			// With a TIMESTAMP, that is read in the zone (PostgreSQL); two
			// zones compare their instants.
			return x, true
		case (x.ID() == arrow.TIMESTAMP || x.ID() == arrow.TIME64 || x.ID() == arrow.INTERVAL_MONTH_DAY_NANO) && IsString(y):
			return x, true
		}
	}
	return nil, false
}

// canCastTemporal reports the casts between temporal types: date ↔
// timestamp, timestamp → time.
func canCastTemporal(from, to arrow.DataType) bool {
	f, t := from.ID(), to.ID()
	return f == arrow.DATE32 && t == arrow.TIMESTAMP || f == arrow.TIMESTAMP && (t == arrow.DATE32 || t == arrow.TIME64)
}

// foldTemporal converts a constant to a temporal type exactly: strings are
// parsed, a date becomes its midnight, a timestamp its date or time of day.
func foldTemporal(l *Literal, t arrow.DataType) (*Literal, bool) {
	if IsTimestampTZ(t) || IsTimestampTZ(l.Type) {
		return foldZoned(l, t)
	}
	switch v := l.Value.(type) {
	case string:
		switch t.ID() {
		case arrow.TIMESTAMP:
			if us, ok := temporal.ParseTimestamp(v); ok {
				return &Literal{Type: Timestamp, Value: arrow.Timestamp(us)}, true
			}
		case arrow.TIME64:
			if us, ok := temporal.ParseTime(v); ok && us < temporal.MicrosPerDay {
				return &Literal{Type: Time, Value: arrow.Time64(us)}, true
			}
		case arrow.INTERVAL_MONTH_DAY_NANO:
			if iv, ok := temporal.ParseInterval(v); ok {
				return &Literal{Type: Interval, Value: iv}, true
			}
		}
	case arrow.Date32:
		if t.ID() == arrow.TIMESTAMP {
			return &Literal{Type: Timestamp, Value: arrow.Timestamp(int64(v) * temporal.MicrosPerDay)}, true
		}
	case arrow.Timestamp:
		days, tod := temporal.SplitTimestamp(int64(v))
		switch t.ID() {
		case arrow.DATE32:
			return &Literal{Type: Date, Value: arrow.Date32(days)}, true
		case arrow.TIME64:
			return &Literal{Type: Time, Value: arrow.Time64(tod)}, true
		}
	}
	return nil, false
}

// keepsTime reports whether converting constant l to t loses no time of
// day: a timestamp becomes a date exactly only at midnight (CAST truncates,
// but "d IN (TIMESTAMP '2000-01-01 12:00:00')" must not match 2000-01-01).
func keepsTime(l *Literal, t arrow.DataType) bool {
	v, ok := l.Value.(arrow.Timestamp)
	if !ok || t.ID() != arrow.DATE32 {
		return true
	}
	us := int64(v)
	if IsTimestampTZ(l.Type) {
		// A TIMESTAMPTZ is a date at its zone's midnight.
		loc, ok := temporal.LoadZone(l.Type.(*arrow.TimestampType).TimeZone)
		if !ok {
			return false
		}
		us = temporal.ToLocal(us, loc)
	}
	_, tod := temporal.SplitTimestamp(us)
	return tod == 0
}

// TemporalLiteralString renders a timestamp, time or interval constant
// as SQL text (TIMESTAMP '2024-01-02 03:04:05'); ok is false for other values.
func TemporalLiteralString(v any) (string, bool) {
	switch v := v.(type) {
	case arrow.Timestamp:
		return "TIMESTAMP '" + temporal.FormatTimestamp(int64(v)) + "'", true
	case arrow.Time64:
		return "TIME '" + temporal.FormatTime(int64(v)) + "'", true
	case arrow.MonthDayNanoInterval:
		return "INTERVAL '" + temporal.FormatInterval(v) + "'", true
	}
	return "", false
}

// temporalArg coerces argument e (of type t) of function fn to the
// registry's class a (Temporal, Timestamp or IntervalArg); nil means the
// type is not accepted.
func temporalArg(fn string, a functions.Arg, e Expr, t arrow.DataType) (Expr, error) {
	want := Timestamp
	if a == functions.IntervalArg {
		want = Interval
	}
	switch {
	case t.ID() == arrow.NULL:
		return CastTo(e, want), nil
	case IsString(t):
		lit, ok := e.(*Literal)
		if !ok {
			return nil, nil
		}
		f, ok := foldLiteral(lit, want)
		if !ok {
			what := "a date or timestamp"
			if want == Interval {
				what = "an interval"
			}
			return nil, qerr.Planf("function %s: %s is not %s", fn, lit, what)
		}
		return f, nil
	case a == functions.Temporal && IsTemporal(t):
		return e, nil
	case a == functions.Timestamp && IsTimestampTZ(t) && fn == "epoch_ms":
		// The instant's milliseconds, not its wall clock's.
		return e, nil
	case a == functions.Timestamp && (t.ID() == arrow.TIMESTAMP || t.ID() == arrow.DATE32):
		return castIf(e, t, Timestamp), nil
	case a == functions.IntervalArg && t.ID() == arrow.INTERVAL_MONTH_DAY_NANO:
		return e, nil
	}
	return nil, nil
}

// TimestampTZ is TIMESTAMPTZ (TIMESTAMP WITH TIME ZONE) in time zone zone:
// timestamp[us] holding the UTC instant, its time zone the calendar that
// fields, date_trunc, interval arithmetic and casts to and from TIMESTAMP
// read and that output prints in.
func TimestampTZ(zone string) arrow.DataType {
	if zone == "" || zone == "UTC" {
		return TimestampUTC
	}
	return &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: zone}
}

// IsTimestampTZ reports whether t is a timestamp with a time zone.
func IsTimestampTZ(t arrow.DataType) bool {
	ts, ok := t.(*arrow.TimestampType)
	return ok && ts.TimeZone != ""
}

// foldZoned is foldTemporal where t or l's type is a TIMESTAMPTZ: text
// without an offset, dates and timestamps are read in the zone of t, and a
// TIMESTAMPTZ becomes a date, time or timestamp of its wall-clock time in
// its own zone.
func foldZoned(l *Literal, t arrow.DataType) (*Literal, bool) {
	if IsTimestampTZ(l.Type) {
		v, ok := l.Value.(arrow.Timestamp)
		from, zok := temporal.LoadZone(l.Type.(*arrow.TimestampType).TimeZone)
		if !ok || !zok {
			return nil, false
		}
		if IsTimestampTZ(t) { // the same instant, another zone
			return &Literal{Type: t, Value: v}, true
		}
		local := &Literal{Type: Timestamp, Value: arrow.Timestamp(temporal.ToLocal(int64(v), from))}
		switch {
		case arrow.TypeEqual(t, Timestamp):
			return local, true
		case t.ID() == arrow.DATE32 || t.ID() == arrow.TIME64:
			return foldTemporal(local, t)
		}
		return nil, false
	}
	to, ok := temporal.LoadZone(t.(*arrow.TimestampType).TimeZone)
	if !ok {
		return nil, false
	}
	switch v := l.Value.(type) {
	case string:
		if us, ok := temporal.ParseTimestampTZ(v, to); ok {
			return &Literal{Type: t, Value: arrow.Timestamp(us)}, true
		}
	case arrow.Date32:
		return &Literal{Type: t, Value: arrow.Timestamp(temporal.FromLocal(int64(v)*temporal.MicrosPerDay, to))}, true
	case arrow.Timestamp:
		return &Literal{Type: t, Value: arrow.Timestamp(temporal.FromLocal(int64(v), to))}, true
	}
	return nil, false
}

// zonedOr is t if it is a TIMESTAMPTZ, else TIMESTAMP.
func zonedOr(t arrow.DataType) arrow.DataType {
	if IsTimestampTZ(t) {
		return t
	}
	return Timestamp
}
