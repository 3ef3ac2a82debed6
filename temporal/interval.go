package temporal

import (
	"math"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

// Interval is Arrow's month, day and nanosecond interval. Quiver keeps the
// nanosecond part a whole number of microseconds (the resolution of its
// timestamps); the three parts are independent, as in PostgreSQL: a month
// is not a fixed number of days nor a day a fixed number of hours.
type Interval = arrow.MonthDayNanoInterval

const (
	nanosPerDay    = MicrosPerDay * NanosPerMicro
	daysPerMonth   = 30 // PostgreSQL's rule for fractions of a month and for comparing intervals
	monthsPerYear  = 12
	nanosPerSecond = MicrosPerSecond * NanosPerMicro
)

// unit is what one unit of an interval field adds.
type unit struct {
	months int64
	days   int64
	micros int64
}

func intervalUnit(w string) (unit, bool) {
	switch strings.ToLower(w) {
	case "microsecond", "microseconds", "us", "usec", "usecs":
		return unit{micros: 1}, true
	case "millisecond", "milliseconds", "ms", "msec", "msecs":
		return unit{micros: MicrosPerMilli}, true
	case "second", "seconds", "s", "sec", "secs":
		return unit{micros: MicrosPerSecond}, true
	case "minute", "minutes", "m", "min", "mins":
		return unit{micros: MicrosPerMinute}, true
	case "hour", "hours", "h", "hr", "hrs":
		return unit{micros: MicrosPerHour}, true
	case "day", "days", "d":
		return unit{days: 1}, true
	case "week", "weeks", "w":
		return unit{days: 7}, true
	case "month", "months", "mon", "mons":
		return unit{months: 1}, true
	case "quarter", "quarters":
		return unit{months: 3}, true
	case "year", "years", "y", "yr", "yrs":
		return unit{months: 12}, true
	case "decade", "decades":
		return unit{months: 120}, true
	case "century", "centuries":
		return unit{months: 1200}, true
	case "millennium", "millennia", "millenniums":
		return unit{months: 12000}, true
	}
	return unit{}, false
}

// IsIntervalUnit reports whether w names an interval unit ('day', 'months', ...).
func IsIntervalUnit(w string) bool {
	_, ok := intervalUnit(w)
	return ok
}

// acc sums interval fields with the carries PostgreSQL applies to
// fractions: a fraction of a month becomes days (30 a month), a fraction of
// a day becomes time.
type acc struct {
	months, days, micros float64
}

func (a *acc) add(v float64, u unit) {
	if u.months != 0 {
		m := v * float64(u.months)
		whole := math.Trunc(m)
		a.months += whole
		v, u = (m-whole)*daysPerMonth, unit{days: 1}
	}
	if u.days != 0 {
		d := v * float64(u.days)
		whole := math.Trunc(d)
		a.days += whole
		v, u = (d-whole)*MicrosPerDay, unit{micros: 1}
	}
	a.micros += math.Round(v * float64(u.micros))
}

func (a *acc) interval() (Interval, bool) {
	if math.Abs(a.months) > math.MaxInt32 || math.Abs(a.days) > math.MaxInt32 || math.Abs(a.micros) > math.MaxInt64/NanosPerMicro {
		return Interval{}, false
	}
	return Interval{Months: int32(a.months), Days: int32(a.days), Nanoseconds: int64(a.micros) * NanosPerMicro}, true
}

// ParseInterval reads PostgreSQL's interval text: fields 'n unit' (n may
// be signed and have a fraction; units as in intervalUnit, singular or
// plural), a time '[+-]HH:MM[:SS[.fraction]]', a bare number (seconds), an
// optional leading '@' and a trailing 'ago' (which negates the whole).
// '1 year 2 months 3 days 04:05:06', '-1 day', '1.5 hours', '90 minutes'.
func ParseInterval(s string) (Interval, bool) {
	f := strings.Fields(strings.TrimPrefix(strings.TrimSpace(s), "@"))
	if len(f) == 0 {
		return Interval{}, false
	}
	ago := false
	if strings.EqualFold(f[len(f)-1], "ago") {
		ago, f = true, f[:len(f)-1]
	}
	// Split '3d4h' into '3', 'd', '4', 'h': runs of number characters and
	// of letters.
	numeric := func(c byte) bool { return c == '+' || c == '-' || c == '.' || c == ':' || (c >= '0' && c <= '9') }
	var words []string
	for _, w := range f {
		for start, k := 0, 1; k <= len(w); k++ {
			if k == len(w) || numeric(w[k]) != numeric(w[k-1]) {
				words = append(words, w[start:k])
				start = k
			}
		}
	}
	var a acc
	any := false
	for i := 0; i < len(words); i++ {
		w := words[i]
		if strings.Contains(w, ":") {
			neg := strings.HasPrefix(w, "-")
			t := strings.TrimLeft(w, "+-")
			tod, ok := parseIntervalTime(t)
			if !ok {
				return Interval{}, false
			}
			if neg {
				tod = -tod
			}
			a.micros += float64(tod)
			any = true
			continue
		}
		v, err := strconv.ParseFloat(w, 64)
		if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
			return Interval{}, false
		}
		u := unit{micros: MicrosPerSecond}
		if i+1 < len(words) {
			if uu, ok := intervalUnit(words[i+1]); ok {
				u = uu
				i++
			} else {
				return Interval{}, false
			}
		}
		a.add(v, u)
		any = true
	}
	if !any {
		return Interval{}, false
	}
	if ago {
		a.months, a.days, a.micros = -a.months, -a.days, -a.micros
	}
	return a.interval()
}

// parseIntervalTime reads H:MM[:SS[.f]] where the hours may exceed 24.
func parseIntervalTime(t string) (int64, bool) {
	h, rest, ok := strings.Cut(t, ":")
	if !ok || h == "" {
		return 0, false
	}
	hv, err := strconv.ParseInt(h, 10, 64)
	if err != nil || hv < 0 || hv > math.MaxInt64/MicrosPerHour-1 {
		return 0, false
	}
	if len(strings.SplitN(rest, ":", 2)[0]) != 2 {
		return 0, false
	}
	tod, ok := ParseTime("00:" + rest)
	if !ok {
		return 0, false
	}
	return hv*MicrosPerHour + tod, true
}

// AppendInterval renders an interval as PostgreSQL does:
// '1 year 2 mons 3 days 04:05:06', '-1 days +02:00:00', '00:00:00' for
// zero. A part is plural unless it is exactly 1; after a negative part a
// positive one carries '+'.
func AppendInterval(dst []byte, iv Interval) []byte {
	years, months := iv.Months/monthsPerYear, iv.Months%monthsPerYear
	before, started := false, false
	part := func(v int64, name string) {
		if v == 0 {
			return
		}
		if started {
			dst = append(dst, ' ')
		}
		if before && v > 0 {
			dst = append(dst, '+')
		}
		dst = strconv.AppendInt(dst, v, 10)
		dst = append(dst, ' ')
		dst = append(dst, name...)
		if v != 1 {
			dst = append(dst, 's')
		}
		before = v < 0
		started = true
	}
	part(int64(years), "year")
	part(int64(months), "mon")
	part(int64(iv.Days), "day")
	us := iv.Nanoseconds / NanosPerMicro
	if us != 0 || !started {
		if started {
			dst = append(dst, ' ')
		}
		switch {
		case us < 0:
			dst = append(dst, '-')
			us = -us
		case before:
			dst = append(dst, '+')
		}
		dst = append2(dst, int(us/MicrosPerHour))
		dst = append(dst, ':')
		dst = append2(dst, int(us/MicrosPerMinute%60))
		dst = append(dst, ':')
		dst = append2(dst, int(us/MicrosPerSecond%60))
		dst = appendFraction(dst, us%MicrosPerSecond)
	}
	return dst
}

// FormatInterval is AppendInterval as a string.
func FormatInterval(iv Interval) string { return string(AppendInterval(nil, iv)) }

// AddToTimestamp returns us + sign*iv: the months first (clamping the day
// to the month's end), then the days, then the time.
func AddToTimestamp(us int64, iv Interval, sign int) int64 {
	us = AddMonthsToTimestamp(us, sign*int(iv.Months))
	return us + int64(sign)*(int64(iv.Days)*MicrosPerDay+iv.Nanoseconds/NanosPerMicro)
}

// SubTimestamps is a - b as an interval of days and time (no months), the
// time part carrying the sign of the whole: 26 hours is '1 day 02:00:00',
// -26 hours '-1 days -02:00:00' (PostgreSQL's justified form).
func SubTimestamps(a, b int64) Interval {
	d := a - b
	return Interval{Days: int32(d / MicrosPerDay), Nanoseconds: d % MicrosPerDay * NanosPerMicro}
}

// AddIntervals returns a + sign*b part by part; ok is false on overflow.
func AddIntervals(a, b Interval, sign int) (Interval, bool) {
	m := int64(a.Months) + int64(sign)*int64(b.Months)
	d := int64(a.Days) + int64(sign)*int64(b.Days)
	bn := int64(sign) * b.Nanoseconds
	n := a.Nanoseconds + bn
	if m != int64(int32(m)) || d != int64(int32(d)) || (bn > 0 && n < a.Nanoseconds) || (bn < 0 && n > a.Nanoseconds) {
		return Interval{}, false
	}
	return Interval{Months: int32(m), Days: int32(d), Nanoseconds: n}, true
}

// MulInterval scales an interval by f as PostgreSQL does: each part is
// scaled, the fraction of the months carried into days (30 a month) and the
// fraction of the days into time. ok is false for overflow, NaN or infinity.
func MulInterval(iv Interval, f float64) (Interval, bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return Interval{}, false
	}
	if f == math.Trunc(f) && math.Abs(f) < 1<<31 {
		k := int64(f)
		m, d := int64(iv.Months)*k, int64(iv.Days)*k
		n := iv.Nanoseconds * k
		if m == int64(int32(m)) && d == int64(int32(d)) && (k == 0 || (n/k == iv.Nanoseconds && !(k == -1 && iv.Nanoseconds == math.MinInt64))) {
			return Interval{Months: int32(m), Days: int32(d), Nanoseconds: n}, true
		}
		return Interval{}, false
	}
	return scaleInterval(iv, func(x float64) float64 { return x * f })
}

// DivInterval divides an interval by f as MulInterval multiplies (an
// interval of 1 year / 12 is exactly 1 mon); ok is false for f = 0,
// overflow, NaN or infinity.
func DivInterval(iv Interval, f float64) (Interval, bool) {
	if f == 0 || math.IsNaN(f) || math.IsInf(f, 0) {
		return Interval{}, false
	}
	return scaleInterval(iv, func(x float64) float64 { return x / f })
}

func scaleInterval(iv Interval, scale func(float64) float64) (Interval, bool) {
	var a acc
	a.add(scale(float64(iv.Months)), unit{months: 1})
	a.add(scale(float64(iv.Days)), unit{days: 1})
	a.micros += math.Round(scale(float64(iv.Nanoseconds / NanosPerMicro)))
	return a.interval()
}

// CompareIntervals orders intervals as PostgreSQL does, by their length
// with a month counted as 30 days and a day as 24 hours: -1, 0 or 1.
func CompareIntervals(a, b Interval) int {
	ad, an := normal(a)
	bd, bn := normal(b)
	switch {
	case ad < bd:
		return -1
	case ad > bd:
		return 1
	case an < bn:
		return -1
	case an > bn:
		return 1
	}
	return 0
}

// IntervalLength is an interval's length as CompareIntervals measures it:
// whole days (a month 30 of them) and nanoseconds in [0, one day).
func IntervalLength(iv Interval) (days, nanos int64) { return normal(iv) }

// normal is an interval's length as whole days and nanoseconds in [0, day).
func normal(iv Interval) (int64, int64) {
	days := int64(iv.Months)*daysPerMonth + int64(iv.Days)
	q := FloorDiv(iv.Nanoseconds, nanosPerDay)
	return days + q, iv.Nanoseconds - q*nanosPerDay
}

// IntervalEpoch is an interval's length in seconds, a year counted as
// 365.25 days and a month as 30 (PostgreSQL's EXTRACT(epoch FROM interval)).
func IntervalEpoch(iv Interval) float64 {
	years, months := iv.Months/monthsPerYear, iv.Months%monthsPerYear
	return float64(years)*365.25*86400 + float64(months)*daysPerMonth*86400 + float64(iv.Days)*86400 + float64(iv.Nanoseconds)/nanosPerSecond
}

// Age is a - b in years, months, days and time, as PostgreSQL's age():
// each field's difference, a negative field borrowing from the next larger
// one (days borrow the length of b's month): age('2024-03-01',
// '2024-01-31') is 1 mon 1 day. A negative age is the negated age of b - a.
func Age(a, b int64) Interval {
	if a < b {
		r := Age(b, a)
		return Interval{Months: -r.Months, Days: -r.Days, Nanoseconds: -r.Nanoseconds}
	}
	da, ta := SplitTimestamp(a)
	db, tb := SplitTimestamp(b)
	ya, ma, dda := Civil(int32(da))
	yb, mb, ddb := Civil(int32(db))
	t, d, m, y := ta-tb, dda-ddb, ma-mb, ya-yb
	if t < 0 {
		t += MicrosPerDay
		d--
	}
	if d < 0 {
		d += DaysIn(yb, mb)
		m--
	}
	if m < 0 {
		m += 12
		y--
	}
	return Interval{Months: int32(y*12 + m), Days: int32(d), Nanoseconds: t * NanosPerMicro}
}
