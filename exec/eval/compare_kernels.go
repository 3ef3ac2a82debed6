package eval

// The kernels below share one eight-lane pattern: each packs eight
// comparison results into a register and stores one bitmap byte, instead of
// a read-modify-write of the byte per row (which chains a store to the next
// row's load, so rows cannot overlap). They are written out per operator so
// that the comparison is inlined; keep them in step when editing.

import (
	"cmp"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

// Comparison kernels over values already resolved to one type. bm must hold
// at least (len(a)+7)/8 bytes; the last byte must be zero on entry when
// len(a) is not a multiple of 8 (the tail ORs bits in).

func cmpEqAS[T cmp.Ordered](a []T, s T, bm []byte) {
	n := len(a) &^ 7
	for i := 0; i < n; i += 8 {
		v := a[i : i+8 : i+8]
		bm[i>>3] = b2u(v[0] == s) |
			b2u(v[1] == s)<<1 |
			b2u(v[2] == s)<<2 |
			b2u(v[3] == s)<<3 |
			b2u(v[4] == s)<<4 |
			b2u(v[5] == s)<<5 |
			b2u(v[6] == s)<<6 |
			b2u(v[7] == s)<<7
	}
	for i := n; i < len(a); i++ {
		bm[i>>3] |= b2u(a[i] == s) << (uint(i) & 7)
	}
}

func cmpLtAS[T cmp.Ordered](a []T, s T, bm []byte) {
	n := len(a) &^ 7
	for i := 0; i < n; i += 8 {
		v := a[i : i+8 : i+8]
		bm[i>>3] = b2u(v[0] < s) |
			b2u(v[1] < s)<<1 |
			b2u(v[2] < s)<<2 |
			b2u(v[3] < s)<<3 |
			b2u(v[4] < s)<<4 |
			b2u(v[5] < s)<<5 |
			b2u(v[6] < s)<<6 |
			b2u(v[7] < s)<<7
	}
	for i := n; i < len(a); i++ {
		bm[i>>3] |= b2u(a[i] < s) << (uint(i) & 7)
	}
}

func cmpLeAS[T cmp.Ordered](a []T, s T, bm []byte) {
	n := len(a) &^ 7
	for i := 0; i < n; i += 8 {
		v := a[i : i+8 : i+8]
		bm[i>>3] = b2u(v[0] <= s) |
			b2u(v[1] <= s)<<1 |
			b2u(v[2] <= s)<<2 |
			b2u(v[3] <= s)<<3 |
			b2u(v[4] <= s)<<4 |
			b2u(v[5] <= s)<<5 |
			b2u(v[6] <= s)<<6 |
			b2u(v[7] <= s)<<7
	}
	for i := n; i < len(a); i++ {
		bm[i>>3] |= b2u(a[i] <= s) << (uint(i) & 7)
	}
}

func cmpGtAS[T cmp.Ordered](a []T, s T, bm []byte) {
	n := len(a) &^ 7
	for i := 0; i < n; i += 8 {
		v := a[i : i+8 : i+8]
		bm[i>>3] = b2u(v[0] > s) |
			b2u(v[1] > s)<<1 |
			b2u(v[2] > s)<<2 |
			b2u(v[3] > s)<<3 |
			b2u(v[4] > s)<<4 |
			b2u(v[5] > s)<<5 |
			b2u(v[6] > s)<<6 |
			b2u(v[7] > s)<<7
	}
	for i := n; i < len(a); i++ {
		bm[i>>3] |= b2u(a[i] > s) << (uint(i) & 7)
	}
}

func cmpGeAS[T cmp.Ordered](a []T, s T, bm []byte) {
	n := len(a) &^ 7
	for i := 0; i < n; i += 8 {
		v := a[i : i+8 : i+8]
		bm[i>>3] = b2u(v[0] >= s) |
			b2u(v[1] >= s)<<1 |
			b2u(v[2] >= s)<<2 |
			b2u(v[3] >= s)<<3 |
			b2u(v[4] >= s)<<4 |
			b2u(v[5] >= s)<<5 |
			b2u(v[6] >= s)<<6 |
			b2u(v[7] >= s)<<7
	}
	for i := n; i < len(a); i++ {
		bm[i>>3] |= b2u(a[i] >= s) << (uint(i) & 7)
	}
}

func cmpEqAA[T cmp.Ordered](a, b []T, bm []byte) {
	b = b[:len(a)]
	n := len(a) &^ 7
	for i := 0; i < n; i += 8 {
		v, w := a[i:i+8:i+8], b[i:i+8:i+8]
		bm[i>>3] = b2u(v[0] == w[0]) |
			b2u(v[1] == w[1])<<1 |
			b2u(v[2] == w[2])<<2 |
			b2u(v[3] == w[3])<<3 |
			b2u(v[4] == w[4])<<4 |
			b2u(v[5] == w[5])<<5 |
			b2u(v[6] == w[6])<<6 |
			b2u(v[7] == w[7])<<7
	}
	for i := n; i < len(a); i++ {
		bm[i>>3] |= b2u(a[i] == b[i]) << (uint(i) & 7)
	}
}

func cmpLtAA[T cmp.Ordered](a, b []T, bm []byte) {
	b = b[:len(a)]
	n := len(a) &^ 7
	for i := 0; i < n; i += 8 {
		v, w := a[i:i+8:i+8], b[i:i+8:i+8]
		bm[i>>3] = b2u(v[0] < w[0]) |
			b2u(v[1] < w[1])<<1 |
			b2u(v[2] < w[2])<<2 |
			b2u(v[3] < w[3])<<3 |
			b2u(v[4] < w[4])<<4 |
			b2u(v[5] < w[5])<<5 |
			b2u(v[6] < w[6])<<6 |
			b2u(v[7] < w[7])<<7
	}
	for i := n; i < len(a); i++ {
		bm[i>>3] |= b2u(a[i] < b[i]) << (uint(i) & 7)
	}
}

func cmpLeAA[T cmp.Ordered](a, b []T, bm []byte) {
	b = b[:len(a)]
	n := len(a) &^ 7
	for i := 0; i < n; i += 8 {
		v, w := a[i:i+8:i+8], b[i:i+8:i+8]
		bm[i>>3] = b2u(v[0] <= w[0]) |
			b2u(v[1] <= w[1])<<1 |
			b2u(v[2] <= w[2])<<2 |
			b2u(v[3] <= w[3])<<3 |
			b2u(v[4] <= w[4])<<4 |
			b2u(v[5] <= w[5])<<5 |
			b2u(v[6] <= w[6])<<6 |
			b2u(v[7] <= w[7])<<7
	}
	for i := n; i < len(a); i++ {
		bm[i>>3] |= b2u(a[i] <= b[i]) << (uint(i) & 7)
	}
}

// cmpDecEqAS64 compares the low words of a (as int64) with s; the result
// is non-zero when some value of a does not fit an int64 (bm is then wrong).
func cmpDecEqAS64(a []decimal128.Num, s int64, bm []byte) int64 {
	var bad int64
	n := len(a) &^ 7
	for i := 0; i < n; i += 8 {
		v := a[i : i+8 : i+8]
		bad |= fit64Bad(v[0]) | fit64Bad(v[1]) | fit64Bad(v[2]) | fit64Bad(v[3]) |
			fit64Bad(v[4]) | fit64Bad(v[5]) | fit64Bad(v[6]) | fit64Bad(v[7])
		bm[i>>3] = b2u(int64(v[0].LowBits()) == s) |
			b2u(int64(v[1].LowBits()) == s)<<1 |
			b2u(int64(v[2].LowBits()) == s)<<2 |
			b2u(int64(v[3].LowBits()) == s)<<3 |
			b2u(int64(v[4].LowBits()) == s)<<4 |
			b2u(int64(v[5].LowBits()) == s)<<5 |
			b2u(int64(v[6].LowBits()) == s)<<6 |
			b2u(int64(v[7].LowBits()) == s)<<7
	}
	for i := n; i < len(a); i++ {
		bad |= fit64Bad(a[i])
		bm[i>>3] |= b2u(int64(a[i].LowBits()) == s) << (uint(i) & 7)
	}
	return bad
}

// cmpDecLtAS64 compares the low words of a (as int64) with s; the result
// is non-zero when some value of a does not fit an int64 (bm is then wrong).
func cmpDecLtAS64(a []decimal128.Num, s int64, bm []byte) int64 {
	var bad int64
	n := len(a) &^ 7
	for i := 0; i < n; i += 8 {
		v := a[i : i+8 : i+8]
		bad |= fit64Bad(v[0]) | fit64Bad(v[1]) | fit64Bad(v[2]) | fit64Bad(v[3]) |
			fit64Bad(v[4]) | fit64Bad(v[5]) | fit64Bad(v[6]) | fit64Bad(v[7])
		bm[i>>3] = b2u(int64(v[0].LowBits()) < s) |
			b2u(int64(v[1].LowBits()) < s)<<1 |
			b2u(int64(v[2].LowBits()) < s)<<2 |
			b2u(int64(v[3].LowBits()) < s)<<3 |
			b2u(int64(v[4].LowBits()) < s)<<4 |
			b2u(int64(v[5].LowBits()) < s)<<5 |
			b2u(int64(v[6].LowBits()) < s)<<6 |
			b2u(int64(v[7].LowBits()) < s)<<7
	}
	for i := n; i < len(a); i++ {
		bad |= fit64Bad(a[i])
		bm[i>>3] |= b2u(int64(a[i].LowBits()) < s) << (uint(i) & 7)
	}
	return bad
}

// cmpDecLeAS64 compares the low words of a (as int64) with s; the result
// is non-zero when some value of a does not fit an int64 (bm is then wrong).
func cmpDecLeAS64(a []decimal128.Num, s int64, bm []byte) int64 {
	var bad int64
	n := len(a) &^ 7
	for i := 0; i < n; i += 8 {
		v := a[i : i+8 : i+8]
		bad |= fit64Bad(v[0]) | fit64Bad(v[1]) | fit64Bad(v[2]) | fit64Bad(v[3]) |
			fit64Bad(v[4]) | fit64Bad(v[5]) | fit64Bad(v[6]) | fit64Bad(v[7])
		bm[i>>3] = b2u(int64(v[0].LowBits()) <= s) |
			b2u(int64(v[1].LowBits()) <= s)<<1 |
			b2u(int64(v[2].LowBits()) <= s)<<2 |
			b2u(int64(v[3].LowBits()) <= s)<<3 |
			b2u(int64(v[4].LowBits()) <= s)<<4 |
			b2u(int64(v[5].LowBits()) <= s)<<5 |
			b2u(int64(v[6].LowBits()) <= s)<<6 |
			b2u(int64(v[7].LowBits()) <= s)<<7
	}
	for i := n; i < len(a); i++ {
		bad |= fit64Bad(a[i])
		bm[i>>3] |= b2u(int64(a[i].LowBits()) <= s) << (uint(i) & 7)
	}
	return bad
}

// cmpDecGtAS64 compares the low words of a (as int64) with s; the result
// is non-zero when some value of a does not fit an int64 (bm is then wrong).
func cmpDecGtAS64(a []decimal128.Num, s int64, bm []byte) int64 {
	var bad int64
	n := len(a) &^ 7
	for i := 0; i < n; i += 8 {
		v := a[i : i+8 : i+8]
		bad |= fit64Bad(v[0]) | fit64Bad(v[1]) | fit64Bad(v[2]) | fit64Bad(v[3]) |
			fit64Bad(v[4]) | fit64Bad(v[5]) | fit64Bad(v[6]) | fit64Bad(v[7])
		bm[i>>3] = b2u(int64(v[0].LowBits()) > s) |
			b2u(int64(v[1].LowBits()) > s)<<1 |
			b2u(int64(v[2].LowBits()) > s)<<2 |
			b2u(int64(v[3].LowBits()) > s)<<3 |
			b2u(int64(v[4].LowBits()) > s)<<4 |
			b2u(int64(v[5].LowBits()) > s)<<5 |
			b2u(int64(v[6].LowBits()) > s)<<6 |
			b2u(int64(v[7].LowBits()) > s)<<7
	}
	for i := n; i < len(a); i++ {
		bad |= fit64Bad(a[i])
		bm[i>>3] |= b2u(int64(a[i].LowBits()) > s) << (uint(i) & 7)
	}
	return bad
}

// cmpDecGeAS64 compares the low words of a (as int64) with s; the result
// is non-zero when some value of a does not fit an int64 (bm is then wrong).
func cmpDecGeAS64(a []decimal128.Num, s int64, bm []byte) int64 {
	var bad int64
	n := len(a) &^ 7
	for i := 0; i < n; i += 8 {
		v := a[i : i+8 : i+8]
		bad |= fit64Bad(v[0]) | fit64Bad(v[1]) | fit64Bad(v[2]) | fit64Bad(v[3]) |
			fit64Bad(v[4]) | fit64Bad(v[5]) | fit64Bad(v[6]) | fit64Bad(v[7])
		bm[i>>3] = b2u(int64(v[0].LowBits()) >= s) |
			b2u(int64(v[1].LowBits()) >= s)<<1 |
			b2u(int64(v[2].LowBits()) >= s)<<2 |
			b2u(int64(v[3].LowBits()) >= s)<<3 |
			b2u(int64(v[4].LowBits()) >= s)<<4 |
			b2u(int64(v[5].LowBits()) >= s)<<5 |
			b2u(int64(v[6].LowBits()) >= s)<<6 |
			b2u(int64(v[7].LowBits()) >= s)<<7
	}
	for i := n; i < len(a); i++ {
		bad |= fit64Bad(a[i])
		bm[i>>3] |= b2u(int64(a[i].LowBits()) >= s) << (uint(i) & 7)
	}
	return bad
}

// cmpDecEqAA64 is cmpDecEqAS64 for two arrays.
func cmpDecEqAA64(a, b []decimal128.Num, bm []byte) int64 {
	b = b[:len(a)]
	var bad int64
	n := len(a) &^ 7
	for i := 0; i < n; i += 8 {
		v, w := a[i:i+8:i+8], b[i:i+8:i+8]
		bad |= fit64Bad(v[0]) | fit64Bad(v[1]) | fit64Bad(v[2]) | fit64Bad(v[3]) |
			fit64Bad(v[4]) | fit64Bad(v[5]) | fit64Bad(v[6]) | fit64Bad(v[7]) |
			fit64Bad(w[0]) | fit64Bad(w[1]) | fit64Bad(w[2]) | fit64Bad(w[3]) |
			fit64Bad(w[4]) | fit64Bad(w[5]) | fit64Bad(w[6]) | fit64Bad(w[7])
		bm[i>>3] = b2u(int64(v[0].LowBits()) == int64(w[0].LowBits())) |
			b2u(int64(v[1].LowBits()) == int64(w[1].LowBits()))<<1 |
			b2u(int64(v[2].LowBits()) == int64(w[2].LowBits()))<<2 |
			b2u(int64(v[3].LowBits()) == int64(w[3].LowBits()))<<3 |
			b2u(int64(v[4].LowBits()) == int64(w[4].LowBits()))<<4 |
			b2u(int64(v[5].LowBits()) == int64(w[5].LowBits()))<<5 |
			b2u(int64(v[6].LowBits()) == int64(w[6].LowBits()))<<6 |
			b2u(int64(v[7].LowBits()) == int64(w[7].LowBits()))<<7
	}
	for i := n; i < len(a); i++ {
		bad |= fit64Bad(a[i]) | fit64Bad(b[i])
		bm[i>>3] |= b2u(int64(a[i].LowBits()) == int64(b[i].LowBits())) << (uint(i) & 7)
	}
	return bad
}

// cmpDecLtAA64 is cmpDecLtAS64 for two arrays.
func cmpDecLtAA64(a, b []decimal128.Num, bm []byte) int64 {
	b = b[:len(a)]
	var bad int64
	n := len(a) &^ 7
	for i := 0; i < n; i += 8 {
		v, w := a[i:i+8:i+8], b[i:i+8:i+8]
		bad |= fit64Bad(v[0]) | fit64Bad(v[1]) | fit64Bad(v[2]) | fit64Bad(v[3]) |
			fit64Bad(v[4]) | fit64Bad(v[5]) | fit64Bad(v[6]) | fit64Bad(v[7]) |
			fit64Bad(w[0]) | fit64Bad(w[1]) | fit64Bad(w[2]) | fit64Bad(w[3]) |
			fit64Bad(w[4]) | fit64Bad(w[5]) | fit64Bad(w[6]) | fit64Bad(w[7])
		bm[i>>3] = b2u(int64(v[0].LowBits()) < int64(w[0].LowBits())) |
			b2u(int64(v[1].LowBits()) < int64(w[1].LowBits()))<<1 |
			b2u(int64(v[2].LowBits()) < int64(w[2].LowBits()))<<2 |
			b2u(int64(v[3].LowBits()) < int64(w[3].LowBits()))<<3 |
			b2u(int64(v[4].LowBits()) < int64(w[4].LowBits()))<<4 |
			b2u(int64(v[5].LowBits()) < int64(w[5].LowBits()))<<5 |
			b2u(int64(v[6].LowBits()) < int64(w[6].LowBits()))<<6 |
			b2u(int64(v[7].LowBits()) < int64(w[7].LowBits()))<<7
	}
	for i := n; i < len(a); i++ {
		bad |= fit64Bad(a[i]) | fit64Bad(b[i])
		bm[i>>3] |= b2u(int64(a[i].LowBits()) < int64(b[i].LowBits())) << (uint(i) & 7)
	}
	return bad
}

// cmpDecLeAA64 is cmpDecLeAS64 for two arrays.
func cmpDecLeAA64(a, b []decimal128.Num, bm []byte) int64 {
	b = b[:len(a)]
	var bad int64
	n := len(a) &^ 7
	for i := 0; i < n; i += 8 {
		v, w := a[i:i+8:i+8], b[i:i+8:i+8]
		bad |= fit64Bad(v[0]) | fit64Bad(v[1]) | fit64Bad(v[2]) | fit64Bad(v[3]) |
			fit64Bad(v[4]) | fit64Bad(v[5]) | fit64Bad(v[6]) | fit64Bad(v[7]) |
			fit64Bad(w[0]) | fit64Bad(w[1]) | fit64Bad(w[2]) | fit64Bad(w[3]) |
			fit64Bad(w[4]) | fit64Bad(w[5]) | fit64Bad(w[6]) | fit64Bad(w[7])
		bm[i>>3] = b2u(int64(v[0].LowBits()) <= int64(w[0].LowBits())) |
			b2u(int64(v[1].LowBits()) <= int64(w[1].LowBits()))<<1 |
			b2u(int64(v[2].LowBits()) <= int64(w[2].LowBits()))<<2 |
			b2u(int64(v[3].LowBits()) <= int64(w[3].LowBits()))<<3 |
			b2u(int64(v[4].LowBits()) <= int64(w[4].LowBits()))<<4 |
			b2u(int64(v[5].LowBits()) <= int64(w[5].LowBits()))<<5 |
			b2u(int64(v[6].LowBits()) <= int64(w[6].LowBits()))<<6 |
			b2u(int64(v[7].LowBits()) <= int64(w[7].LowBits()))<<7
	}
	for i := n; i < len(a); i++ {
		bad |= fit64Bad(a[i]) | fit64Bad(b[i])
		bm[i>>3] |= b2u(int64(a[i].LowBits()) <= int64(b[i].LowBits())) << (uint(i) & 7)
	}
	return bad
}
