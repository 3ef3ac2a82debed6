package eval

import (
	"strings"

	"github.com/quiverdb/quiver/temporal"
)

// Timestamp formats of to_char/to_timestamp (PostgreSQL's patterns) and
// strftime/strptime (C's % codes), compiled into one list of pieces that
// both formatting and parsing walk.

type fmtField int

const (
	fLit       fmtField = iota
	fYear4              // YYYY, %Y
	fYear2              // YY, %y
	fMonth              // MM, %m
	fDay                // DD, %d
	fDoy                // DDD, %j
	fHour24             // HH24, %H
	fHour12             // HH12, HH, %I
	fMinute             // MI, %M
	fSecond             // SS, %S
	fMilli              // MS
	fMicro              // US, %f
	fAmPm               // AM/PM, am/pm, %p
	fMonthName          // Month, %B
	fMonthAbbr          // Mon, %b
	fDayName            // Day, %A
	fDayAbbr            // Dy, %a
	fDow1               // D (Sunday 1)
	fDow0               // %w (Sunday 0)
	fIsoDow             // ID, %u (Monday 1)
	fQuarter            // Q
	fIsoWeek            // IW, %V
)

// Letter case of names and AM/PM.
const (
	caseTitle = iota
	caseUpper
	caseLower
)

type fmtPiece struct {
	field fmtField
	lit   string
	fill  bool // pad to the field's width (zeros, or names to 9 letters as PostgreSQL)
	cas   int
}

var monthNames = [...]string{"January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"}
var dayNames = [...]string{"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"}

// pgTokens are PostgreSQL's patterns, longer ones first; numeric ones
// match in any letter case.
var pgTokens = []struct {
	pat   string
	field fmtField
	cas   int
	exact bool // letter case matters (it selects the case of the output)
}{
	{"HH24", fHour24, 0, false}, {"HH12", fHour12, 0, false}, {"YYYY", fYear4, 0, false},
	{"MONTH", fMonthName, caseUpper, true}, {"Month", fMonthName, caseTitle, true}, {"month", fMonthName, caseLower, true},
	{"DAY", fDayName, caseUpper, true}, {"Day", fDayName, caseTitle, true}, {"day", fDayName, caseLower, true},
	{"MON", fMonthAbbr, caseUpper, true}, {"Mon", fMonthAbbr, caseTitle, true}, {"mon", fMonthAbbr, caseLower, true},
	{"DDD", fDoy, 0, false}, {"DY", fDayAbbr, caseUpper, true}, {"Dy", fDayAbbr, caseTitle, true}, {"dy", fDayAbbr, caseLower, true},
	{"AM", fAmPm, caseUpper, true}, {"PM", fAmPm, caseUpper, true}, {"am", fAmPm, caseLower, true}, {"pm", fAmPm, caseLower, true},
	{"YY", fYear2, 0, false}, {"MM", fMonth, 0, false}, {"DD", fDay, 0, false}, {"HH", fHour12, 0, false},
	{"MI", fMinute, 0, false}, {"SS", fSecond, 0, false}, {"MS", fMilli, 0, false}, {"US", fMicro, 0, false},
	{"IW", fIsoWeek, 0, false}, {"ID", fIsoDow, 0, false}, {"D", fDow1, 0, false}, {"Q", fQuarter, 0, false},
}

// compilePGFormat compiles a PostgreSQL pattern: FM before a field drops
// its padding, text in double quotes is literal.
func compilePGFormat(f string) []fmtPiece {
	out := []fmtPiece{}
	lit := func(s string) {
		if n := len(out); n > 0 && out[n-1].field == fLit {
			out[n-1].lit += s
			return
		}
		out = append(out, fmtPiece{field: fLit, lit: s})
	}
	for i := 0; i < len(f); {
		if f[i] == '"' {
			j := strings.IndexByte(f[i+1:], '"')
			if j < 0 {
				lit(f[i+1:])
				break
			}
			lit(f[i+1 : i+1+j])
			i += j + 2
			continue
		}
		fill := true
		k := i
		if strings.HasPrefix(strings.ToUpper(f[k:]), "FM") {
			fill = false
			k += 2
		}
		matched := false
		for _, t := range pgTokens {
			if len(f)-k < len(t.pat) {
				continue
			}
			s := f[k : k+len(t.pat)]
			if (t.exact && s == t.pat) || (!t.exact && strings.EqualFold(s, t.pat)) {
				out = append(out, fmtPiece{field: t.field, fill: fill, cas: t.cas})
				i = k + len(t.pat)
				matched = true
				break
			}
		}
		if !matched {
			lit(f[i : i+1])
			i++
		}
	}
	return out
}

// compileStrftime compiles C's % codes; an unknown code is kept as text.
func compileStrftime(f string) []fmtPiece {
	out := []fmtPiece{}
	lit := func(s string) {
		if n := len(out); n > 0 && out[n-1].field == fLit {
			out[n-1].lit += s
			return
		}
		out = append(out, fmtPiece{field: fLit, lit: s})
	}
	field := func(x fmtField) { out = append(out, fmtPiece{field: x, fill: true}) }
	for i := 0; i < len(f); i++ {
		if f[i] != '%' || i+1 == len(f) {
			lit(f[i : i+1])
			continue
		}
		i++
		switch f[i] {
		case 'Y':
			field(fYear4)
		case 'y':
			field(fYear2)
		case 'm':
			field(fMonth)
		case 'd':
			field(fDay)
		case 'j':
			field(fDoy)
		case 'H':
			field(fHour24)
		case 'I':
			field(fHour12)
		case 'M':
			field(fMinute)
		case 'S':
			field(fSecond)
		case 'f':
			field(fMicro)
		case 'p':
			out = append(out, fmtPiece{field: fAmPm, cas: caseUpper})
		case 'B':
			out = append(out, fmtPiece{field: fMonthName})
		case 'b', 'h':
			out = append(out, fmtPiece{field: fMonthAbbr})
		case 'A':
			out = append(out, fmtPiece{field: fDayName})
		case 'a':
			out = append(out, fmtPiece{field: fDayAbbr})
		case 'w':
			field(fDow0)
		case 'u':
			field(fIsoDow)
		case 'V':
			field(fIsoWeek)
		case 'F':
			out = append(out, compileStrftime("%Y-%m-%d")...)
		case 'T':
			out = append(out, compileStrftime("%H:%M:%S")...)
		case '%':
			lit("%")
		default:
			lit(f[i-1 : i+1])
		}
	}
	return out
}

// fieldWidth is the zero-padded width of a numeric field.
func fieldWidth(x fmtField) int {
	switch x {
	case fYear4:
		return 4
	case fDoy, fMilli:
		return 3
	case fMicro:
		return 6
	case fDow1, fDow0, fIsoDow, fQuarter:
		return 1
	}
	return 2
}

func appendCased(dst []byte, s string, cas int) []byte {
	switch cas {
	case caseUpper:
		return append(dst, strings.ToUpper(s)...)
	case caseLower:
		return append(dst, strings.ToLower(s)...)
	}
	return append(dst, s...)
}

// appendFormatted renders timestamp us by pieces.
func appendFormatted(dst []byte, pieces []fmtPiece, us int64) []byte {
	days, tod := temporal.SplitTimestamp(us)
	y, m, d := temporal.Civil(int32(days))
	h := int(tod / temporal.MicrosPerHour)
	for _, p := range pieces {
		var v int64
		switch p.field {
		case fLit:
			dst = append(dst, p.lit...)
			continue
		case fMonthName, fMonthAbbr, fDayName, fDayAbbr:
			var name string
			switch p.field {
			case fMonthName, fMonthAbbr:
				name = monthNames[m-1]
			default:
				name = dayNames[datePartOf("dow", int32(days))]
			}
			if p.field == fMonthAbbr || p.field == fDayAbbr {
				name = name[:3]
			}
			dst = appendCased(dst, name, p.cas)
			if p.fill && (p.field == fMonthName || p.field == fDayName) {
				for k := len(name); k < 9; k++ {
					dst = append(dst, ' ')
				}
			}
			continue
		case fAmPm:
			s := "AM"
			if h >= 12 {
				s = "PM"
			}
			dst = appendCased(dst, s, p.cas)
			continue
		case fYear4:
			v = int64(y)
		case fYear2:
			v = int64(y) % 100
		case fMonth:
			v = int64(m)
		case fDay:
			v = int64(d)
		case fDoy:
			v = datePartOf("doy", int32(days))
		case fHour24:
			v = int64(h)
		case fHour12:
			v = int64((h+11)%12 + 1)
		case fMinute:
			v = todPart("minute", tod)
		case fSecond:
			v = todPart("second", tod)
		case fMilli:
			v = tod % temporal.MicrosPerSecond / temporal.MicrosPerMilli
		case fMicro:
			v = tod % temporal.MicrosPerSecond
		case fDow1:
			v = datePartOf("dow", int32(days)) + 1
		case fDow0:
			v = datePartOf("dow", int32(days))
		case fIsoDow:
			v = datePartOf("isodow", int32(days))
		case fQuarter:
			v = datePartOf("quarter", int32(days))
		case fIsoWeek:
			v = datePartOf("week", int32(days))
		}
		dst = appendPadded(dst, v, fieldWidth(p.field), p.fill)
	}
	return dst
}

func appendPadded(dst []byte, v int64, width int, fill bool) []byte {
	if v < 0 {
		dst = append(dst, '-')
		v = -v
	}
	var tmp [20]byte
	i := len(tmp)
	for v > 0 || i == len(tmp) {
		i--
		tmp[i] = byte('0' + v%10)
		v /= 10
	}
	if fill {
		for k := len(tmp) - i; k < width; k++ {
			dst = append(dst, '0')
		}
	}
	return append(dst, tmp[i:]...)
}

// parseFormatted reads a timestamp by pieces. Text pieces match loosely as
// PostgreSQL's do: a separator in the format matches any one separator in
// the text, and spaces before a number are skipped. Missing fields default
// to 1970-01-01 00:00:00.
func parseFormatted(s []byte, pieces []fmtPiece) (int64, bool) {
	y, m, d, doy := 1970, 1, 1, 0
	h, mi, sec, frac := 0, 0, 0, int64(0)
	pm, ampm, h12 := false, false, false
	pos := 0
	isAlnum := func(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
	num := func(maxDigits int) (int, int, bool) {
		for pos < len(s) && s[pos] == ' ' {
			pos++
		}
		neg := false
		if pos < len(s) && s[pos] == '-' && maxDigits == 4 {
			neg = true
			pos++
		}
		start, v := pos, 0
		for pos < len(s) && pos-start < maxDigits && s[pos] >= '0' && s[pos] <= '9' {
			v = v*10 + int(s[pos]-'0')
			pos++
		}
		if neg {
			v = -v
		}
		return v, pos - start, pos > start
	}
	name := func(list []string, abbr bool) (int, bool) {
		for k, n := range list {
			if abbr {
				n = n[:3]
			}
			if len(s)-pos >= len(n) && asciiEqualFold(s[pos:pos+len(n)], n) {
				pos += len(n)
				return k, true
			}
		}
		return 0, false
	}
	for _, p := range pieces {
		var ok bool
		switch p.field {
		case fLit:
			for k := 0; k < len(p.lit); k++ {
				c := p.lit[k]
				switch {
				case pos < len(s) && s[pos] == c:
					pos++
				case c == ' ':
				case !isAlnum(c) && pos < len(s) && !isAlnum(s[pos]):
					pos++
				default:
					return 0, false
				}
			}
			continue
		case fYear4:
			y, _, ok = num(4)
		case fYear2:
			y, _, ok = num(2)
			if ok {
				// PostgreSQL: 00-69 are 2000s, 70-99 1900s.
				if y < 70 {
					y += 2000
				} else {
					y += 1900
				}
			}
		case fMonth:
			m, _, ok = num(2)
		case fDay:
			d, _, ok = num(2)
		case fDoy:
			doy, _, ok = num(3)
		case fHour24:
			h, _, ok = num(2)
		case fHour12:
			h, _, ok = num(2)
			h12 = true
		case fMinute:
			mi, _, ok = num(2)
		case fSecond:
			sec, _, ok = num(2)
		case fMilli, fMicro:
			var v, n int
			width := 3
			if p.field == fMicro {
				width = 6
			}
			v, n, ok = num(width)
			frac = int64(v)
			for ; n < 6; n++ {
				frac *= 10
			}
		case fAmPm:
			for pos < len(s) && s[pos] == ' ' {
				pos++
			}
			if len(s)-pos >= 2 {
				switch c0, c1 := s[pos]|0x20, s[pos+1]|0x20; {
				case c0 == 'a' && c1 == 'm':
					ok = true
				case c0 == 'p' && c1 == 'm':
					ok, pm = true, true
				}
				pos += 2
			}
			ampm = true
		case fMonthName, fMonthAbbr:
			var k int
			if k, ok = name(monthNames[:], p.field == fMonthAbbr); ok {
				m = k + 1
			}
		case fDayName, fDayAbbr:
			_, ok = name(dayNames[:], p.field == fDayAbbr)
		default:
			_, _, ok = num(fieldWidth(p.field))
		}
		if !ok {
			return 0, false
		}
	}
	for pos < len(s) && s[pos] == ' ' {
		pos++
	}
	if pos != len(s) {
		return 0, false
	}
	if h12 || ampm {
		if h < 1 || h > 12 {
			return 0, false
		}
		h %= 12
		if pm {
			h += 12
		}
	}
	if m < 1 || m > 12 || d < 1 || d > temporal.DaysIn(y, m) || h > 23 || mi > 59 || sec > 59 {
		return 0, false
	}
	days := temporal.DaysFromCivil(y, m, d)
	if doy > 0 {
		if doy > 365 && !(doy == 366 && temporal.IsLeap(y)) {
			return 0, false
		}
		days = temporal.DaysFromCivil(y, 1, 1) + int64(doy) - 1
	}
	return days*temporal.MicrosPerDay + int64(h)*temporal.MicrosPerHour + int64(mi)*temporal.MicrosPerMinute + int64(sec)*temporal.MicrosPerSecond + frac, true
}

// asciiEqualFold compares b and s ignoring ASCII letter case (month and day
// names), without converting b.
func asciiEqualFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range b {
		x, y := b[i], s[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}
