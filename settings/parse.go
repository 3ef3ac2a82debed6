package settings

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// byteUnits are the size units ParseBytes accepts, upper-cased. Every unit
// is a power of 1024, with or without the "i": memory and cache sizes are
// binary in practice, and accepting "GB" as 10^9 beside "GiB" as 2^30 would
// make "2GB" silently 7% smaller than the user meant.
var byteUnits = map[string]int64{
	"": 1, "B": 1,
	"K": 1 << 10, "KB": 1 << 10, "KIB": 1 << 10,
	"M": 1 << 20, "MB": 1 << 20, "MIB": 1 << 20,
	"G": 1 << 30, "GB": 1 << 30, "GIB": 1 << 30,
	"T": 1 << 40, "TB": 1 << 40, "TIB": 1 << 40,
}

// sizeHelp says what a size looks like, for error messages.
const sizeHelp = "want a size such as '4GiB', '512MB', '1.5G' or '1048576' (bytes; K, M, G, T with or without B or iB are powers of 1024)"

// ParseBytes parses a size: a non-negative number, optionally with a
// fraction, then optionally a unit, case-insensitive, with or without a
// space between: B; K, KB, KiB (1024); M, MB, MiB (1024²); G, GB, GiB
// (1024³); T, TB, TiB (1024⁴). A plain number is bytes. Fractions round
// down to whole bytes. "none" and "unlimited" mean 0 (every size setting
// reads 0 as no limit).
func ParseBytes(s string) (int64, error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	if t == "NONE" || t == "UNLIMITED" {
		return 0, nil
	}
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.') {
		i++
	}
	num, unit := t[:i], strings.TrimSpace(t[i:])
	mult, ok := byteUnits[unit]
	whole, frac, _ := strings.Cut(num, ".")
	if !ok || num == "" || num == "." || strings.Count(num, ".") > 1 {
		return 0, fmt.Errorf("%s, got %q", sizeHelp, s)
	}
	var n int64
	if whole != "" {
		w, err := strconv.ParseInt(whole, 10, 64)
		if err != nil || w > math.MaxInt64/mult {
			return 0, fmt.Errorf("size %q is too large: the most is %d bytes", s, int64(math.MaxInt64))
		}
		n = w * mult
	}
	if frac != "" {
		// The fraction is below one unit, so float64 holds it well enough
		// to round down to whole bytes.
		f, err := strconv.ParseFloat("0."+frac, 64)
		if err != nil {
			return 0, fmt.Errorf("%s, got %q", sizeHelp, s)
		}
		add := int64(f * float64(mult))
		if n > math.MaxInt64-add {
			return 0, fmt.Errorf("size %q is too large: the most is %d bytes", s, int64(math.MaxInt64))
		}
		n += add
	}
	return n, nil
}

// exactBytes renders n exactly, in the largest binary unit that divides it
// ("4GiB", "1536KiB"), for SHOW: what the user set, with no rounding.
func exactBytes(n int64) string {
	if n == 0 {
		return "0"
	}
	for _, u := range []struct {
		s string
		m int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n%u.m == 0 {
			return strconv.FormatInt(n/u.m, 10) + u.s
		}
	}
	return strconv.FormatInt(n, 10)
}

// ParseDuration parses a non-negative duration in Go's syntax: a number
// and a unit (ns, us, ms, s, m, h), repeated: "300ms", "10m", "1h30m". A
// plain "0" is zero (settings read zero as never, or no limit).
func ParseDuration(s string) (time.Duration, error) {
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil || d < 0 {
		return 0, fmt.Errorf("want a non-negative duration such as '30s', '10m' or '1h30m', got %q", s)
	}
	return d, nil
}
