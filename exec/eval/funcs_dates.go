package eval

import (
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
	"github.com/quiverdb/quiver/temporal"
)

// datePartUnit is the canonical name of a date_part/EXTRACT field, with
// PostgreSQL's and DuckDB's other spellings.
func datePartUnit(u string) (string, bool) {
	u = strings.ToLower(strings.TrimSpace(u))
	switch u {
	case "year", "years", "y", "yr", "yrs":
		return "year", true
	case "month", "months", "mon", "mons":
		return "month", true
	case "day", "days", "d", "dayofmonth":
		return "day", true
	case "quarter", "quarters":
		return "quarter", true
	case "week", "weeks", "w", "weekofyear":
		return "week", true
	case "dow", "dayofweek", "weekday":
		return "dow", true
	case "isodow":
		return "isodow", true
	case "doy", "dayofyear":
		return "doy", true
	case "isoyear":
		return "isoyear", true
	case "decade", "decades":
		return "decade", true
	case "century", "centuries":
		return "century", true
	case "millennium", "millennia":
		return "millennium", true
	case "epoch":
		return "epoch", true
	case "hour", "hours", "minute", "minutes", "second", "seconds", "millisecond", "milliseconds", "microsecond", "microseconds":
		return "zero", true // a date has no time of day: midnight
	}
	return "", false
}

// datePartOf computes one field of a date (days since 1970-01-01).
func datePartOf(unit string, x int32) int64 {
	switch unit {
	case "year":
		y, _, _ := temporal.Civil(x)
		return int64(y)
	case "month":
		_, m, _ := temporal.Civil(x)
		return int64(m)
	case "day":
		_, _, d := temporal.Civil(x)
		return int64(d)
	case "quarter":
		_, m, _ := temporal.Civil(x)
		return int64((m-1)/3 + 1)
	case "dow": // 1970-01-01 was a Thursday (4); Sunday is 0.
		w := (int64(x) + 4) % 7
		if w < 0 {
			w += 7
		}
		return w
	case "isodow": // Monday 1 .. Sunday 7
		w := (int64(x) + 3) % 7
		if w < 0 {
			w += 7
		}
		return w + 1
	case "doy":
		y, _, _ := temporal.Civil(x)
		return int64(x) - temporal.DaysFromCivil(y, 1, 1) + 1
	case "week":
		return isoWeek(x)
	case "isoyear":
		wd := datePartOf("isodow", x)
		y, _, _ := temporal.Civil(int32(int64(x) - wd + 4)) // the year of the week's Thursday
		return int64(y)
	case "decade":
		y, _, _ := temporal.Civil(x)
		return temporal.FloorDiv(int64(y), 10)
	case "century": // 1901-2000 is the 20th; there is no year 0 century
		y, _, _ := temporal.Civil(x)
		if y > 0 {
			return (int64(y) + 99) / 100
		}
		return -((99 - int64(y)) / 100)
	case "millennium":
		y, _, _ := temporal.Civil(x)
		if y > 0 {
			return (int64(y) + 999) / 1000
		}
		return -((999 - int64(y)) / 1000)
	case "epoch":
		return int64(x) * 86400
	}
	return 0
}

// dateTrunc truncates a date to the first day of its unit.
func dateTrunc(unit string, x int32) int64 {
	y, m, _ := temporal.Civil(x)
	switch unit {
	case "millennium":
		return temporal.DaysFromCivil(int((datePartOf("millennium", x)-1)*1000+1), 1, 1)
	case "century":
		return temporal.DaysFromCivil(int((datePartOf("century", x)-1)*100+1), 1, 1)
	case "decade":
		return temporal.DaysFromCivil(int(temporal.FloorDiv(int64(y), 10)*10), 1, 1)
	case "year":
		return temporal.DaysFromCivil(y, 1, 1)
	case "quarter":
		return temporal.DaysFromCivil(y, (m-1)/3*3+1, 1)
	case "month":
		return temporal.DaysFromCivil(y, m, 1)
	case "week": // ISO weeks start on Monday
		return int64(x) - datePartOf("isodow", x) + 1
	}
	return int64(x) // day and finer
}

func truncUnit(u string) (string, bool) {
	c, ok := datePartUnit(u)
	switch {
	case !ok:
	case c == "zero":
		return "day", true
	case c == "year", c == "month", c == "day", c == "quarter", c == "week", c == "decade", c == "century", c == "millennium":
		return c, true
	}
	return "", false
}

var dateKernels = kernelMap{
	"date_trunc": func(f *physical.ScalarFunc) (node, error) {
		unit, err := compileOperand(f.Args[0], nil)
		if err != nil {
			return nil, err
		}
		if unit.lit == nil || unit.lit.null || unit.typ.ID() != tUtf8.ID() {
			return nil, qerr.NotImplementedf("eval: date_trunc needs a constant unit, got %s", f.Args[0])
		}
		if f.Args[1].DataType().ID() == arrow.TIMESTAMP {
			return compileTruncTimestamp(f, unit.lit.s)
		}
		u, ok := truncUnit(unit.lit.s)
		if !ok {
			return nil, qerr.Execf("date_trunc: unit '%s' is not supported for a date (millennium, century, decade, year, quarter, month, week, day)", unit.lit.s)
		}
		r, err := newRowFunc(f, tDate32, tUtf8, tDate32)
		if err != nil {
			return nil, err
		}
		r.i64 = func(a []rowArg, i int) (int64, bool, error) { return dateTrunc(u, a[1].date(i)), true, nil }
		return r.finish(f)
	},
	"make_date": i64Body(tDate32, func(a []rowArg, i int) (int64, bool, error) {
		y, m, d := a[0].int(i), a[1].int(i), a[2].int(i)
		if y < 1 || y > 290000 || m < 1 || m > 12 || d < 1 || d > int64(temporal.DaysIn(int(y), int(m))) {
			return 0, false, qerr.Execf("make_date: %d-%02d-%02d is not a valid date", y, m, d)
		}
		return temporal.DaysFromCivil(int(y), int(m), int(d)), true, nil
	}, tInt64),
}
