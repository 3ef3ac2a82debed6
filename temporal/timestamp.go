package temporal

import "github.com/apache/arrow-go/v18/arrow"

// Units of a timestamp or time value (microseconds).
const (
	MicrosPerMilli  = 1000
	MicrosPerSecond = 1000 * MicrosPerMilli
	MicrosPerMinute = 60 * MicrosPerSecond
	MicrosPerHour   = 60 * MicrosPerMinute
	MicrosPerDay    = 24 * MicrosPerHour
	NanosPerMicro   = 1000
)

// FloorDiv is a / b rounded toward negative infinity (b > 0).
func FloorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// SplitTimestamp splits microseconds since the epoch into days since the
// epoch and microseconds since that day's midnight (always >= 0).
func SplitTimestamp(us int64) (days int64, tod int64) {
	days = FloorDiv(us, MicrosPerDay)
	return days, us - days*MicrosPerDay
}

// ParseTimestamp reads 'YYYY-MM-DD', 'YYYY-MM-DD HH:MM[:SS[.fraction]]'
// (or with a T between date and time), optionally followed by Z or a UTC
// offset (+HH[:MM], -HH[:MM]), which is applied to give the UTC time, as
// DuckDB does. Fractions finer than a microsecond are truncated. It
// returns microseconds since 1970-01-01 00:00:00.
func ParseTimestamp(s string) (int64, bool) {
	local, zone, ok := splitTimestamp(s)
	if !ok {
		return 0, false
	}
	off, ok := parseOffset(zone)
	if !ok {
		return 0, false
	}
	return local - off, true
}

// splitTimestamp reads the date and time of a timestamp text as
// microseconds since the epoch and returns the text after them (a zone,
// spaces trimmed), which is "" for a date alone.
func splitTimestamp(s string) (local int64, zone string, ok bool) {
	s = trimSpace(s)
	i, y, ok := digitsAt(s, 0)
	if !ok || i < 4 || i >= len(s) || s[i] != '-' {
		return 0, "", false
	}
	j, m, ok := digitsAt(s, i+1)
	if !ok || j-i-1 > 2 || j >= len(s) || s[j] != '-' {
		return 0, "", false
	}
	k, d, ok := digitsAt(s, j+1)
	if !ok || k-j-1 > 2 || m < 1 || m > 12 || d < 1 || d > DaysIn(y, m) {
		return 0, "", false
	}
	days := DaysFromCivil(y, m, d)
	if k == len(s) {
		return days * MicrosPerDay, "", true
	}
	if s[k] != ' ' && s[k] != 'T' && s[k] != 't' {
		return 0, "", false
	}
	rest := trimSpace(s[k+1:])
	// The time ends where a zone begins.
	end := len(rest)
	for p := 0; p < len(rest); p++ {
		if c := rest[p]; c == 'Z' || c == 'z' || c == '+' || c == '-' || c == ' ' {
			end = p
			break
		}
	}
	tod, ok := ParseTime(rest[:end])
	if !ok {
		return 0, "", false
	}
	return days*MicrosPerDay + tod, trimSpace(rest[end:]), true
}

// parseOffset reads ”, 'Z', 'UTC', '+HH', '+HH:MM', '+HHMM' (or with -)
// as microseconds east of UTC.
func parseOffset(z string) (int64, bool) {
	switch z {
	case "", "Z", "z", "UTC", "utc":
		return 0, true
	}
	if z[0] != '+' && z[0] != '-' {
		return 0, false
	}
	i, h, ok := digitsAt(z, 1)
	if !ok {
		return 0, false
	}
	mins := 0
	switch {
	case i == len(z) && i-1 <= 2:
	case i == len(z) && i-1 == 4:
		h, mins = h/100, h%100
	case i < len(z) && z[i] == ':' && i-1 <= 2:
		var j int
		if j, mins, ok = digitsAt(z, i+1); !ok || j != len(z) || j-i-1 != 2 {
			return 0, false
		}
	default:
		return 0, false
	}
	if h > 15 || mins > 59 {
		return 0, false
	}
	off := int64(h)*MicrosPerHour + int64(mins)*MicrosPerMinute
	if z[0] == '-' {
		off = -off
	}
	return off, true
}

// ParseTime reads 'HH:MM[:SS[.fraction]]' (24:00:00 is allowed, as in
// PostgreSQL) as microseconds since midnight.
func ParseTime(s string) (int64, bool) {
	s = trimSpace(s)
	i, h, ok := digitsAt(s, 0)
	if !ok || i > 2 || i >= len(s) || s[i] != ':' {
		return 0, false
	}
	j, m, ok := digitsAt(s, i+1)
	if !ok || j-i-1 != 2 {
		return 0, false
	}
	sec, frac := 0, int64(0)
	if j < len(s) {
		if s[j] != ':' {
			return 0, false
		}
		k, sv, ok := digitsAt(s, j+1)
		if !ok || k-j-1 != 2 {
			return 0, false
		}
		sec = sv
		if k < len(s) {
			if s[k] != '.' || k+1 == len(s) {
				return 0, false
			}
			digits := 0
			for p := k + 1; p < len(s); p++ {
				c := s[p]
				if c < '0' || c > '9' {
					return 0, false
				}
				if digits < 6 {
					frac = frac*10 + int64(c-'0')
					digits++
				}
			}
			for ; digits < 6; digits++ {
				frac *= 10
			}
		}
	}
	if h > 24 || m > 59 || sec > 59 || (h == 24 && (m != 0 || sec != 0 || frac != 0)) {
		return 0, false
	}
	return int64(h)*MicrosPerHour + int64(m)*MicrosPerMinute + int64(sec)*MicrosPerSecond + frac, true
}

// AppendTimestamp renders microseconds since the epoch as
// 'YYYY-MM-DD HH:MM:SS', with the fraction of a second only when it is not
// zero and without its trailing zeros (PostgreSQL's and DuckDB's form).
func AppendTimestamp(dst []byte, us int64) []byte {
	days, tod := SplitTimestamp(us)
	dst = AppendDate(dst, int32(days))
	dst = append(dst, ' ')
	return AppendTime(dst, tod)
}

// AppendTime renders microseconds since midnight as 'HH:MM:SS[.fraction]'.
func AppendTime(dst []byte, tod int64) []byte {
	h := tod / MicrosPerHour
	m := tod / MicrosPerMinute % 60
	sec := tod / MicrosPerSecond % 60
	frac := tod % MicrosPerSecond
	dst = append2(dst, int(h))
	dst = append(dst, ':')
	dst = append2(dst, int(m))
	dst = append(dst, ':')
	dst = append2(dst, int(sec))
	return appendFraction(dst, frac)
}

// appendFraction writes .ffffff without trailing zeros, nothing for 0.
func appendFraction(dst []byte, frac int64) []byte {
	if frac == 0 {
		return dst
	}
	var b [6]byte
	for p := 5; p >= 0; p-- {
		b[p] = byte('0' + frac%10)
		frac /= 10
	}
	n := 6
	for n > 0 && b[n-1] == '0' {
		n--
	}
	dst = append(dst, '.')
	return append(dst, b[:n]...)
}

func append2(dst []byte, v int) []byte {
	if v >= 100 {
		var tmp [20]byte
		i := len(tmp)
		for v > 0 {
			i--
			tmp[i] = byte('0' + v%10)
			v /= 10
		}
		return append(dst, tmp[i:]...)
	}
	return append(dst, byte('0'+v/10), byte('0'+v%10))
}

// FormatTimestamp is AppendTimestamp as a string.
func FormatTimestamp(us int64) string { return string(AppendTimestamp(nil, us)) }

// FormatTime is AppendTime as a string.
func FormatTime(tod int64) string { return string(AppendTime(nil, tod)) }

// AddMonthsToTimestamp adds k months to a timestamp, clamping the day to
// the end of the resulting month and keeping the time of day.
func AddMonthsToTimestamp(us int64, k int) int64 {
	if k == 0 {
		return us
	}
	days, tod := SplitTimestamp(us)
	return int64(AddMonths(int32(days), k))*MicrosPerDay + tod
}

// UnitScale is the factor from a count of unit to microseconds: a
// multiplier, or, negative, a divisor (nanoseconds: -1000).
func UnitScale(unit arrow.TimeUnit) int64 {
	switch unit {
	case arrow.Second:
		return MicrosPerSecond
	case arrow.Millisecond:
		return MicrosPerMilli
	case arrow.Nanosecond:
		return -NanosPerMicro
	}
	return 1
}

// ToMicros converts v, counted in unit, to microseconds (nanoseconds are
// rounded toward negative infinity, which keeps the order).
func ToMicros(v int64, unit arrow.TimeUnit) int64 {
	k := UnitScale(unit)
	if k < 0 {
		return FloorDiv(v, -k)
	}
	return v * k
}

// FileTimestamp is the type SQL reads a file's timestamp column of type t
// as: microseconds, TIMESTAMPTZ (time zone UTC, the instants) when the
// column has a time zone (Parquet's isAdjustedToUTC), else TIMESTAMP.
func FileTimestamp(t *arrow.TimestampType) *arrow.TimestampType {
	if t.TimeZone != "" {
		return &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
	}
	return &arrow.TimestampType{Unit: arrow.Microsecond}
}
