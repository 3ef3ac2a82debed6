package eval

import (
	"math/big"
	"math/bits"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

// 128-bit helpers for exact decimals. arrow's decimal128.Num rescales and
// divides through math/big (an allocation per value); these stay in
// registers and report overflow instead of wrapping.

// pow10 holds 10^0 .. 10^38 as Num; pow10u holds 10^0 .. 10^19 as uint64.
// They are variable initialisers (not init) so package-level test fixtures
// that parse decimals see them filled.
var pow10u = func() (t [20]uint64) {
	p := uint64(1)
	for i := range t {
		t[i] = p
		p *= 10
	}
	return t
}()

var pow10 = func() (t [39]decimal128.Num) {
	t[0] = decimal128.FromU64(1)
	ten := decimal128.FromU64(10)
	for i := 1; i < len(t); i++ {
		t[i] = t[i-1].Mul(ten)
	}
	return t
}()

type u128 struct{ hi, lo uint64 }

// mag splits n into its sign and magnitude.
func mag(n decimal128.Num) (neg bool, m u128) {
	if n.HighBits() < 0 {
		n = n.Negate()
		return true, u128{uint64(n.HighBits()), n.LowBits()}
	}
	return false, u128{uint64(n.HighBits()), n.LowBits()}
}

// fromMag rebuilds a Num from sign and magnitude; ok is false when the
// magnitude does not fit a signed 128-bit value.
func fromMag(neg bool, m u128) (decimal128.Num, bool) {
	if m.hi>>63 != 0 {
		if neg && m.hi == 1<<63 && m.lo == 0 {
			return decimal128.New(int64(m.hi), m.lo), true
		}
		return decimal128.Num{}, false
	}
	n := decimal128.New(int64(m.hi), m.lo)
	if neg {
		n = n.Negate()
	}
	return n, true
}

// mulU128 multiplies two magnitudes; ok is false on overflow past 128 bits.
func mulU128(a, b u128) (u128, bool) {
	if a.hi != 0 && b.hi != 0 {
		return u128{}, false
	}
	hi, lo := bits.Mul64(a.lo, b.lo)
	h1, l1 := bits.Mul64(a.hi, b.lo)
	h2, l2 := bits.Mul64(a.lo, b.hi)
	if h1 != 0 || h2 != 0 {
		return u128{}, false
	}
	var c uint64
	hi, c = bits.Add64(hi, l1, 0)
	if c != 0 {
		return u128{}, false
	}
	hi, c = bits.Add64(hi, l2, 0)
	if c != 0 {
		return u128{}, false
	}
	return u128{hi, lo}, true
}

// mulDec multiplies two decimals' unscaled values; ok is false on overflow.
func mulDec(a, b decimal128.Num) (decimal128.Num, bool) {
	na, ma := mag(a)
	nb, mb := mag(b)
	m, ok := mulU128(ma, mb)
	if !ok {
		return decimal128.Num{}, false
	}
	return fromMag(na != nb, m)
}

// addDec adds with overflow detection.
func addDec(a, b decimal128.Num) (decimal128.Num, bool) {
	r := a.Add(b)
	sa, sb, sr := a.HighBits() < 0, b.HighBits() < 0, r.HighBits() < 0
	return r, !(sa == sb && sr != sa)
}

// subDec subtracts with overflow detection.
func subDec(a, b decimal128.Num) (decimal128.Num, bool) {
	r := a.Sub(b)
	sa, sb, sr := a.HighBits() < 0, b.HighBits() < 0, r.HighBits() < 0
	return r, !(sa != sb && sr != sa)
}

// scaleUp multiplies by 10^k (0 <= k <= 38); ok is false on overflow.
func scaleUp(n decimal128.Num, k int32) (decimal128.Num, bool) {
	if k == 0 {
		return n, true
	}
	if k > 38 {
		return n, n == decimal128.Num{}
	}
	return mulDec(n, pow10[k])
}

// divU64 divides a magnitude by d, returning quotient and remainder.
func divU64(m u128, d uint64) (u128, uint64) {
	qh := m.hi / d
	r := m.hi % d
	ql, r := bits.Div64(r, m.lo, d)
	return u128{qh, ql}, r
}

// scaleDown divides by 10^k (k >= 0) rounding half away from zero.
func scaleDown(n decimal128.Num, k int32) decimal128.Num {
	if k <= 0 {
		return n
	}
	if k > 38 {
		return decimal128.Num{}
	}
	neg, m := mag(n)
	var roundUp bool
	if k <= 19 {
		q, r := divU64(m, pow10u[k])
		roundUp = r >= 5*pow10u[k-1]
		m = q
	} else {
		q1, _ := divU64(m, pow10u[19])
		q2, r2 := divU64(q1, pow10u[k-19])
		// The remainder is r2*10^19 + r1 with r1 < 10^19 and half is
		// 5*10^(k-20)*10^19, so it reaches half exactly when r2 >= 5*10^(k-20).
		roundUp = r2 >= 5*pow10u[k-20]
		m = q2
	}
	if roundUp {
		var c uint64
		m.lo, c = bits.Add64(m.lo, 1, 0)
		m.hi += c
	}
	out, _ := fromMag(neg, m)
	return out
}

// rescale converts an unscaled value from scale from to scale to, rounding
// half away from zero when reducing; ok is false on overflow.
func rescale(n decimal128.Num, from, to int32) (decimal128.Num, bool) {
	switch {
	case to > from:
		return scaleUp(n, to-from)
	case to < from:
		return scaleDown(n, from-to), true
	}
	return n, true
}

// fitsPrecision reports whether |n| < 10^p.
func fitsPrecision(n decimal128.Num, p int32) bool {
	if p >= 38 {
		p = 38
	}
	_, m := mag(n)
	lim := pow10[p]
	lh, ll := uint64(lim.HighBits()), lim.LowBits()
	return m.hi < lh || (m.hi == lh && m.lo < ll)
}

// remDec is a % b truncating toward zero (b != 0).
func remDec(a, b decimal128.Num) decimal128.Num {
	if fits64(a) && fits64(b) {
		return decimal128.FromI64(int64(a.LowBits()) % int64(b.LowBits()))
	}
	_, r := new(big.Int).QuoRem(a.BigInt(), b.BigInt(), new(big.Int))
	return decimal128.FromBigInt(r)
}

func fits64(n decimal128.Num) bool {
	return (n.HighBits() == 0 && n.LowBits()>>63 == 0) || (n.HighBits() == -1 && n.LowBits()>>63 == 1)
}

// appendDecimal formats an unscaled value at scale, as "-123.45".
func appendDecimal(dst []byte, n decimal128.Num, scale int32) []byte {
	neg, m := mag(n)
	var digits [48]byte
	i := len(digits)
	for m.hi != 0 || m.lo != 0 {
		var r uint64
		m, r = divU64(m, 10)
		i--
		digits[i] = byte('0' + r)
	}
	d := digits[i:]
	if neg {
		dst = append(dst, '-')
	}
	if scale <= 0 {
		if len(d) == 0 {
			return append(dst, '0')
		}
		dst = append(dst, d...)
		for k := int32(0); k < -scale; k++ {
			dst = append(dst, '0')
		}
		return dst
	}
	s := int(scale)
	if len(d) <= s {
		dst = append(dst, '0', '.')
		for k := len(d); k < s; k++ {
			dst = append(dst, '0')
		}
		return append(dst, d...)
	}
	dst = append(dst, d[:len(d)-s]...)
	dst = append(dst, '.')
	return append(dst, d[len(d)-s:]...)
}

// parseDecimal parses "[+-]digits[.digits]" into an unscaled value at scale,
// rounding half away from zero; ok is false for a malformed string or
// overflow of precision.
func parseDecimal(s string, prec, scale int32) (decimal128.Num, bool) {
	s = trimSpace(s)
	neg := false
	if len(s) > 0 && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	if len(s) == 0 {
		return decimal128.Num{}, false
	}
	var m u128
	var frac int32
	seenDot, seenDigit := false, false
	roundDigit := -1
	ten := u128{0, 10}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '.' {
			if seenDot {
				return decimal128.Num{}, false
			}
			seenDot = true
			continue
		}
		if c < '0' || c > '9' {
			return decimal128.Num{}, false
		}
		seenDigit = true
		if seenDot {
			if frac >= scale {
				if roundDigit < 0 {
					roundDigit = int(c - '0')
				}
				continue
			}
			frac++
		}
		var ok bool
		m, ok = mulU128(m, ten)
		if !ok {
			return decimal128.Num{}, false
		}
		var carry uint64
		m.lo, carry = bits.Add64(m.lo, uint64(c-'0'), 0)
		m.hi += carry
	}
	if !seenDigit {
		return decimal128.Num{}, false
	}
	for ; frac < scale; frac++ {
		var ok bool
		if m, ok = mulU128(m, ten); !ok {
			return decimal128.Num{}, false
		}
	}
	if roundDigit >= 5 {
		var carry uint64
		m.lo, carry = bits.Add64(m.lo, 1, 0)
		m.hi += carry
	}
	n, ok := fromMag(neg, m)
	if !ok || !fitsPrecision(n, prec) {
		return decimal128.Num{}, false
	}
	return n, true
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
