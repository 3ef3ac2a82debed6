package hashtable

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/quiverdb/quiver/exec/kernel"
)

// markRepeats sets rep[r], for r in [1, n), to whether row r's key (its
// values in every column of cols) equals row r-1's, NULL equal to NULL as
// in the hash table; rep[0] is false. Rows of one order or one customer
// often arrive together, and such a row can take the row before's answer
// without hashing or probing. It reports false, with rep unspecified, when
// a column's type is not compared here: floats, whose NaN and signed zeros
// the table's equality treats its own way, and nested types. scratch holds
// one column's verdicts; both slices have at least n entries.
func markRepeats(cols []arrow.Array, n int, rep, scratch []bool) bool {
	if n == 0 {
		return true
	}
	rep[0] = false
	for r := 1; r < n; r++ {
		rep[r] = true
	}
	for _, c := range cols {
		col := scratch[:n]
		for r := range col {
			col[r] = true
		}
		if !repeatsIn(c, n, col) {
			return false
		}
		for r := 1; r < n; r++ {
			rep[r] = rep[r] && col[r]
		}
	}
	return true
}

// repeatsIn clears rep[r] (all true on entry) where column c's row r
// differs from row r-1.
func repeatsIn(c arrow.Array, n int, rep []bool) bool {
	switch a := c.(type) {
	case *array.Null:
		return true
	case *array.Int8:
		repeatsFixed(a.Int8Values(), c, n, rep)
	case *array.Int16:
		repeatsFixed(a.Int16Values(), c, n, rep)
	case *array.Int32:
		repeatsFixed(a.Int32Values(), c, n, rep)
	case *array.Int64:
		repeatsFixed(a.Int64Values(), c, n, rep)
	case *array.Uint8:
		repeatsFixed(a.Uint8Values(), c, n, rep)
	case *array.Uint16:
		repeatsFixed(a.Uint16Values(), c, n, rep)
	case *array.Uint32:
		repeatsFixed(a.Uint32Values(), c, n, rep)
	case *array.Uint64:
		repeatsFixed(a.Uint64Values(), c, n, rep)
	case *array.Date32:
		repeatsFixed(a.Date32Values(), c, n, rep)
	case *array.Date64:
		repeatsFixed(a.Date64Values(), c, n, rep)
	case *array.Timestamp:
		repeatsFixed(a.TimestampValues(), c, n, rep)
	case *array.Time64:
		repeatsFixed(a.Time64Values(), c, n, rep)
	case *array.Decimal128:
		repeatsFixed(a.Values(), c, n, rep)
	case *array.String:
		repeatsBytes(a.ValueOffsets(), a.ValueBytes(), n, rep)
		repeatsNulls(c, n, rep)
	case *array.LargeString:
		repeatsBytes(a.ValueOffsets(), a.ValueBytes(), n, rep)
		repeatsNulls(c, n, rep)
	case *array.Binary:
		repeatsBytes(a.ValueOffsets(), a.ValueBytes(), n, rep)
		repeatsNulls(c, n, rep)
	case *array.Boolean:
		for r := 1; r < n; r++ {
			if rep[r] && a.Value(r) != a.Value(r-1) {
				rep[r] = false
			}
		}
		repeatsNulls(c, n, rep)
	default:
		return false
	}
	return true
}

// repeatsBytes clears rep[r] where the r-th and (r-1)-th of the
// variable-width values (offsets into data, offs[0] at data[0]) differ.
func repeatsBytes[O int32 | int64](offs []O, data []byte, n int, rep []bool) {
	base := offs[0]
	offs = offs[:n+1]
	for r := 1; r < n; r++ {
		a0, a1, b1 := offs[r-1]-base, offs[r]-base, offs[r+1]-base
		if !equalBytes(data[a0:a1], data[a1:b1]) {
			rep[r] = false
		}
	}
}

// equalBytes reports whether a and b hold the same bytes. Keys of 4 to 16
// bytes compare as the two words of load4x2 (the same loads as hashBytes,
// no branch on the length within that range) instead of calling the
// runtime's memequal, which costs more than the comparison itself at
// these lengths.
func equalBytes(a, b []byte) bool {
	n := uint(len(a))
	if n != uint(len(b)) {
		return false
	}
	if n-4 > 12 {
		return string(a) == string(b)
	}
	alo, ahi := kernel.Load4x2(a)
	blo, bhi := kernel.Load4x2(b)
	return (alo^blo)|(ahi^bhi) == 0
}

// repeatsFixed clears rep[r] where fixed-width values differ; the values
// under NULLs are compared too, which repeatsNulls then corrects.
func repeatsFixed[T comparable](vals []T, c arrow.Array, n int, rep []bool) {
	for r := 1; r < n; r++ {
		if vals[r] != vals[r-1] {
			rep[r] = false
		}
	}
	repeatsNulls(c, n, rep)
}

// repeatsNulls makes rows whose validity differs from the row before not
// repeats, and two NULLs in a row repeats (whatever the values under them).
func repeatsNulls(c arrow.Array, n int, rep []bool) {
	bits, off := kernel.ValidBits(c)
	if bits == nil {
		return
	}
	prev := bitutil.BitIsSet(bits, off)
	for r := 1; r < n; r++ {
		cur := bitutil.BitIsSet(bits, off+r)
		switch {
		case cur != prev:
			rep[r] = false
		case !cur:
			rep[r] = true
		}
		prev = cur
	}
}
