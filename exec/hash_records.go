package exec

import (
	"encoding/binary"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
)

// keyRecords keeps, beside the generic layout's key columns, every stored
// key tuple as one fixed-width record of words, so that checking a
// candidate touches one place in memory (usually one cache line) instead of
// one per key column and two per string (its offset, then its bytes). The
// key columns stay complete: they build the output, and take over for good
// when a key no longer fits a record.
//
// A record is words uint64s: word 0 holds the NULL bit of column i at bit
// i and the byte length of the k-th string column at bits 16+5k; then each
// column's value, NULL values as zero words:
//   - integer-like and Boolean columns: one word (the value as int64);
//   - Decimal128: two words (low, high);
//   - strings and binaries of at most recordStringBytes bytes: three words,
//     the bytes little-endian and zero-padded.
//
// Two keys are equal (NULL equal to NULL, as in the key columns) exactly
// when their records are. Floats are not laid out here (the key columns
// equate NaNs and signed zeros), nor tables with more than 16 columns, 9
// string columns or recordMaxWords words.
type keyRecords struct {
	words int
	cols  []recordCol
	data  []uint64 // words per id, in id order
}

type recordCol struct {
	word   int  // index of its first word
	str    bool // a string or binary column
	lenBit uint // for strings: the shift of its length in word 0
}

const (
	recordStringBytes = 24
	recordMaxWords    = 16
)

// newKeyRecords returns the record layout for keys of types, or nil when
// they do not fit one.
func newKeyRecords(types []arrow.DataType) *keyRecords {
	if len(types) > 16 {
		return nil
	}
	r := &keyRecords{words: 1}
	strs := 0
	for _, dt := range types {
		c := recordCol{word: r.words}
		switch {
		case isIntLike(dt) || dt.ID() == arrow.BOOL:
			r.words++
		case dt.ID() == arrow.DECIMAL128:
			r.words += 2
		case dt.ID() == arrow.STRING || dt.ID() == arrow.LARGE_STRING || dt.ID() == arrow.BINARY:
			if strs == 9 {
				return nil
			}
			c.str, c.lenBit = true, uint(16+5*strs)
			strs++
			r.words += 3
		default:
			return nil
		}
		r.cols = append(r.cols, c)
	}
	if r.words > recordMaxWords {
		return nil
	}
	return r
}

// encode writes the records of rows 0..n-1 of cols into dst (n*words
// words). It reports false when a string is longer than a record holds:
// that row's record then has bit 63 of word 0 set, which no stored record
// has, so it matches none (the rest of the record is unspecified).
func (r *keyRecords) encode(cols []arrow.Array, n int, dst []uint64) bool {
	w := r.words
	dst = dst[:n*w]
	for i := 0; i < len(dst); i += w {
		dst[i] = 0
	}
	ok := true
	for i, c := range r.cols {
		arr := cols[i]
		if !encodeColumn(arr, c, w, n, dst) {
			ok = false
		}
		if arr.NullN() > 0 {
			r.encodeNulls(arr, i, c, n, dst)
		}
	}
	return ok
}

// unmatchable marks word 0 of a record that holds a key too long.
const unmatchable = 1 << 63

// encodeNulls rewrites the NULL rows of column i: its bit set, its words
// and length zero, whatever encodeColumn read under them.
func (r *keyRecords) encodeNulls(arr arrow.Array, i int, c recordCol, n int, dst []uint64) {
	w := r.words
	bits, off := validBits(arr)
	span := 1
	switch {
	case c.str:
		span = 3
	case arr.DataType().ID() == arrow.DECIMAL128:
		span = 2
	}
	for row := 0; row < n; row++ {
		if bitutil.BitIsSet(bits, off+row) {
			continue
		}
		rec := dst[row*w : (row+1)*w]
		clear(rec[c.word : c.word+span])
		if c.str {
			rec[0] &^= 31 << c.lenBit
		}
		rec[0] |= 1 << uint(i)
	}
}

// encodeColumn writes every row's value of arr (NULL or not) at c's words:
// one type switch, then a typed loop.
func encodeColumn(arr arrow.Array, c recordCol, w, n int, dst []uint64) bool {
	switch a := arr.(type) {
	case *array.Int8:
		encodeInts(a.Int8Values(), c.word, w, n, dst)
	case *array.Int16:
		encodeInts(a.Int16Values(), c.word, w, n, dst)
	case *array.Int32:
		encodeInts(a.Int32Values(), c.word, w, n, dst)
	case *array.Int64:
		encodeInts(a.Int64Values(), c.word, w, n, dst)
	case *array.Uint8:
		encodeInts(a.Uint8Values(), c.word, w, n, dst)
	case *array.Uint16:
		encodeInts(a.Uint16Values(), c.word, w, n, dst)
	case *array.Uint32:
		encodeInts(a.Uint32Values(), c.word, w, n, dst)
	case *array.Uint64:
		encodeInts(a.Uint64Values(), c.word, w, n, dst)
	case *array.Date32:
		encodeInts(a.Date32Values(), c.word, w, n, dst)
	case *array.Date64:
		encodeInts(a.Date64Values(), c.word, w, n, dst)
	case *array.Timestamp:
		encodeInts(a.TimestampValues(), c.word, w, n, dst)
	case *array.Boolean:
		for row := 0; row < n; row++ {
			v := uint64(0)
			if a.Value(row) {
				v = 1
			}
			dst[row*w+c.word] = v
		}
	case *array.Decimal128:
		vals := a.Values()[:n]
		for row, v := range vals {
			dst[row*w+c.word] = v.LowBits()
			dst[row*w+c.word+1] = uint64(v.HighBits())
		}
	case *array.String:
		return encodeStrings(a.ValueOffsets(), a.ValueBytes(), c, w, n, dst)
	case *array.LargeString:
		return encodeStrings(a.ValueOffsets(), a.ValueBytes(), c, w, n, dst)
	case *array.Binary:
		return encodeStrings(a.ValueOffsets(), a.ValueBytes(), c, w, n, dst)
	default:
		return false
	}
	return true
}

func encodeInts[T int8 | int16 | int32 | int64 | uint8 | uint16 | uint32 | uint64 | arrow.Date32 | arrow.Date64 | arrow.Timestamp](vals []T, word, w, n int, dst []uint64) {
	vals = vals[:n]
	for row, v := range vals {
		dst[row*w+word] = uint64(int64(v))
	}
}

// encodeStrings writes each value's length into word 0 and its bytes,
// zero-padded, into three words; false if one is longer than 24 bytes.
// The loop keeps to a few locals and one bounds check per slice: it runs
// for every row of every string key column.
func encodeStrings[O int32 | int64](offs []O, data []byte, c recordCol, w, n int, dst []uint64) bool {
	offs = offs[:n+1]
	dst = dst[:n*w]
	base := int(offs[0])
	fast := len(data) - recordStringBytes // values starting at or before fast: read whole words
	lenBit, word := c.lenBit, c.word
	ok := true
	for row, hdr := 0, 0; row < n; row, hdr = row+1, hdr+w {
		a := int(offs[row]) - base
		l := int(offs[row+1]) - base - a
		if l > recordStringBytes {
			dst[hdr] |= unmatchable
			ok = false
			continue
		}
		dst[hdr] |= uint64(l) << lenBit
		out := dst[hdr+word : hdr+word+3 : hdr+word+3]
		if a <= fast {
			v := data[a : a+recordStringBytes : a+recordStringBytes]
			out[0] = binary.LittleEndian.Uint64(v[0:8]) & byteMask(l)
			out[1] = binary.LittleEndian.Uint64(v[8:16]) & byteMask(l-8)
			out[2] = binary.LittleEndian.Uint64(v[16:24]) & byteMask(l-16)
			continue
		}
		var buf [recordStringBytes]byte
		copy(buf[:], data[a:a+l])
		out[0] = binary.LittleEndian.Uint64(buf[0:8])
		out[1] = binary.LittleEndian.Uint64(buf[8:16])
		out[2] = binary.LittleEndian.Uint64(buf[16:24])
	}
	return ok
}

// byteMask keeps the low k bytes of a word (all for k >= 8, none for
// k <= 0). Branch-free: string lengths vary row to row, and a branch on
// them would mispredict often. (A shift by 64 gives 0 in Go.)
func byteMask(k int) uint64 {
	k = min(max(k, 0), 8)
	return ^uint64(0) >> (64 - 8*uint(k))
}

// repeats sets rep[r], r in [1, n), to whether record r equals record
// r-1 (rep[0] is false), and returns pending with the other rows appended,
// in order. Branch-free per row: runs are short and of varying length.
func (r *keyRecords) repeats(recs []uint64, n int, rep []bool, pending []int32) []int32 {
	w := r.words
	rep = rep[:n]
	rep[0] = false
	k := len(pending)
	pending = slices.Grow(pending, n)[:k+n]
	pending[k] = 0
	k++
	for row := 1; row < n; row++ {
		same := sameRecord(recs[row*w:(row+1)*w], recs[(row-1)*w:row*w])
		rep[row] = same
		pending[k] = int32(row)
		k += 1 - b2i(same)
	}
	return pending[:k]
}

// b2i is 1 for true: the compiler makes it a flag move, not a branch.
func b2i(b bool) int {
	i := 0
	if b {
		i = 1
	}
	return i
}

// hash sets hashes[r] for the rows r of rows to the hash of record r: one
// combine per word and one finalising mix. Only tables whose every stored
// hash is a record hash use it.
func (r *keyRecords) hash(recs []uint64, rows []int32, hashes []uint64) {
	w := r.words
	for _, row := range rows {
		h := hashSeed
		for _, x := range recs[int(row)*w : (int(row)+1)*w] {
			h = hashCombine(h, x)
		}
		hashes[row] = hashFinish(h)
	}
}

// equal clears eq[k] where the record of row rows[k] in recs differs from
// the stored record of ids[k].
func (r *keyRecords) equal(recs []uint64, rows []int32, ids []uint32, eq []bool) {
	w := r.words
	for k, row := range rows {
		id := int(ids[k])
		eq[k] = sameRecord(recs[int(row)*w:(int(row)+1)*w], r.data[id*w:(id+1)*w])
	}
}

// appendRows stores the records of rows (the keys of new ids, in id order).
func (r *keyRecords) appendRows(recs []uint64, rows []int32) {
	w := r.words
	for _, row := range rows {
		r.data = append(r.data, recs[int(row)*w:(int(row)+1)*w]...)
	}
}

func sameRecord(a, b []uint64) bool {
	b = b[:len(a)]
	diff := uint64(0)
	for i, x := range a {
		diff |= x ^ b[i]
	}
	return diff == 0
}
