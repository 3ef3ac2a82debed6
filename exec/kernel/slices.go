package kernel

import "github.com/apache/arrow-go/v18/arrow"

// ValidBits returns arr's validity bitmap and offset, or nil if no value is NULL.
func ValidBits(arr arrow.Array) ([]byte, int) {
	if arr.NullN() == 0 {
		return nil, 0
	}
	return arr.NullBitmapBytes(), arr.Data().Offset()
}

// GrowSlice returns s with length at least n, keeping its contents and
// zeroing the new tail; it doubles the capacity when it must grow.
func GrowSlice[T any](s []T, n int) []T {
	if n <= len(s) {
		return s
	}
	if n <= cap(s) {
		old := len(s)
		s = s[:n]
		clear(s[old:])
		return s
	}
	out := make([]T, n, max(n, 2*cap(s)))
	copy(out, s)
	return out
}

// Scratch returns s resized to n, reusing its array when it is big enough;
// the contents are garbage.
func Scratch(s []int32, n int) []int32 {
	if cap(s) < n {
		return make([]int32, n)
	}
	return s[:n]
}

// Resize returns s with length n, reusing its memory when it is big enough.
func Resize[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	s = s[:n]
	clear(s)
	return s
}
