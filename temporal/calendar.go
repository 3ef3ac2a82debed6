package temporal

// Proleptic Gregorian calendar arithmetic on days since 1970-01-01, without
// time.Time (no allocation, no time zones).

// Civil converts days since the epoch to year, month (1-12), day (1-31).
func Civil(days int32) (y, m, d int) {
	z := int64(days) + 719468
	era := z / 146097
	if z < 0 && z%146097 != 0 {
		era = (z - 146096) / 146097
	}
	doe := z - era*146097                                  // [0, 146096]
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365 // [0, 399]
	yy := yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100) // [0, 365]
	mp := (5*doy + 2) / 153                  // [0, 11], March-based
	dd := doy - (153*mp+2)/5 + 1
	mm := mp + 3
	if mm > 12 {
		mm -= 12
	}
	if mm <= 2 {
		yy++
	}
	return int(yy), int(mm), int(dd)
}

// DaysFromCivil is civil's inverse.
func DaysFromCivil(y, m, d int) int64 {
	yy := int64(y)
	if m <= 2 {
		yy--
	}
	era := yy / 400
	if yy < 0 && yy%400 != 0 {
		era = (yy - 399) / 400
	}
	yoe := yy - era*400
	mm := int64(m)
	if mm > 2 {
		mm -= 3
	} else {
		mm += 9
	}
	doy := (153*mm+2)/5 + int64(d) - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

func IsLeap(y int) bool { return y%4 == 0 && (y%100 != 0 || y%400 == 0) }

func DaysIn(y, m int) int {
	switch m {
	case 2:
		if IsLeap(y) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// AddMonths adds k months to a date, clamping the day to the last day of the
// resulting month (2024-01-31 + 1 month = 2024-02-29).
func AddMonths(days int32, k int) int32 {
	if k == 0 {
		return days
	}
	y, m, d := Civil(days)
	t := y*12 + (m - 1) + k
	ny, nm := t/12, t%12
	if nm < 0 {
		nm += 12
		ny--
	}
	nm++
	if dm := DaysIn(ny, nm); d > dm {
		d = dm
	}
	return int32(DaysFromCivil(ny, nm, d))
}

// AppendDate formats YYYY-MM-DD.
func AppendDate(dst []byte, days int32) []byte {
	y, m, d := Civil(days)
	if y < 0 {
		dst = append(dst, '-')
		y = -y
	}
	dst = append4(dst, y)
	dst = append(dst, '-', byte('0'+m/10), byte('0'+m%10), '-', byte('0'+d/10), byte('0'+d%10))
	return dst
}

func append4(dst []byte, y int) []byte {
	if y >= 10000 {
		var tmp [12]byte
		i := len(tmp)
		for y > 0 {
			i--
			tmp[i] = byte('0' + y%10)
			y /= 10
		}
		return append(dst, tmp[i:]...)
	}
	return append(dst, byte('0'+y/1000), byte('0'+y/100%10), byte('0'+y/10%10), byte('0'+y%10))
}

// ParseDate parses YYYY-MM-DD (surrounding spaces allowed).
func ParseDate(s string) (int32, bool) {
	s = trimSpace(s)
	i, y, ok := digitsAt(s, 0)
	if !ok || i >= len(s) || s[i] != '-' || i < 4 {
		return 0, false
	}
	j, m, ok := digitsAt(s, i+1)
	if !ok || j >= len(s) || s[j] != '-' || j-i-1 > 2 {
		return 0, false
	}
	k, d, ok := digitsAt(s, j+1)
	if !ok || k != len(s) || k-j-1 > 2 {
		return 0, false
	}
	if m < 1 || m > 12 || d < 1 || d > DaysIn(y, m) {
		return 0, false
	}
	days := DaysFromCivil(y, m, d)
	if days < -1<<31 || days > 1<<31-1 {
		return 0, false
	}
	return int32(days), true
}

func digitsAt(s string, i int) (int, int, bool) {
	v, start := 0, i
	for i < len(s) && s[i] >= '0' && s[i] <= '9' && i-start < 9 {
		v = v*10 + int(s[i]-'0')
		i++
	}
	return i, v, i > start
}

func trimSpace(s string) string {
	for len(s) > 0 && (s[0] == ' ' || s[0] == '\t' || s[0] == '\n' || s[0] == '\r') {
		s = s[1:]
	}
	for len(s) > 0 && (s[len(s)-1] == ' ' || s[len(s)-1] == '\t' || s[len(s)-1] == '\n' || s[len(s)-1] == '\r') {
		s = s[:len(s)-1]
	}
	return s
}
