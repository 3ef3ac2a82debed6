package hashtable

import (
	"encoding/binary"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/quiverdb/quiver/exec/kernel"
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

// encode writes the records of rows of cols into dst (record r at words
// r*words..; dst holds every row's place, rows need not be all). It
// reports false when a string is longer than a record holds: that row's
// record then has bit 63 of word 0 set, which no stored record has, so it
// matches none (the rest of the record is unspecified).
func (r *keyRecords) encode(cols []arrow.Array, rows []int32, dst []uint64) bool {
	w := r.words
	for _, row := range rows {
		dst[int(row)*w] = 0
	}
	ok := true
	for i, c := range r.cols {
		arr := cols[i]
		if !encodeColumn(arr, c, w, rows, dst) {
			ok = false
		}
		if arr.NullN() > 0 {
			r.encodeNulls(arr, i, c, rows, dst)
		}
	}
	return ok
}

// unmatchable marks word 0 of a record that holds a key too long.
const unmatchable = 1 << 63

// encodeNulls rewrites the NULL rows (of rows) of column i: its bit set,
// its words and length zero, whatever encodeColumn read under them.
func (r *keyRecords) encodeNulls(arr arrow.Array, i int, c recordCol, rows []int32, dst []uint64) {
	w := r.words
	bits, off := kernel.ValidBits(arr)
	span := 1
	switch {
	case c.str:
		span = 3
	case arr.DataType().ID() == arrow.DECIMAL128:
		span = 2
	}
	for _, row := range rows {
		if bitutil.BitIsSet(bits, off+int(row)) {
			continue
		}
		rec := dst[int(row)*w : (int(row)+1)*w]
		clear(rec[c.word : c.word+span])
		if c.str {
			rec[0] &^= 31 << c.lenBit
		}
		rec[0] |= 1 << uint(i)
	}
}

// encodeColumn writes the value of arr (NULL or not) at c's words for
// each of rows: one type switch, then a typed loop.
func encodeColumn(arr arrow.Array, c recordCol, w int, rows []int32, dst []uint64) bool {
	switch a := arr.(type) {
	case *array.Int8:
		encodeInts(a.Int8Values(), c.word, w, rows, dst)
	case *array.Int16:
		encodeInts(a.Int16Values(), c.word, w, rows, dst)
	case *array.Int32:
		encodeInts(a.Int32Values(), c.word, w, rows, dst)
	case *array.Int64:
		encodeInts(a.Int64Values(), c.word, w, rows, dst)
	case *array.Uint8:
		encodeInts(a.Uint8Values(), c.word, w, rows, dst)
	case *array.Uint16:
		encodeInts(a.Uint16Values(), c.word, w, rows, dst)
	case *array.Uint32:
		encodeInts(a.Uint32Values(), c.word, w, rows, dst)
	case *array.Uint64:
		encodeInts(a.Uint64Values(), c.word, w, rows, dst)
	case *array.Date32:
		encodeInts(a.Date32Values(), c.word, w, rows, dst)
	case *array.Date64:
		encodeInts(a.Date64Values(), c.word, w, rows, dst)
	case *array.Timestamp:
		encodeInts(a.TimestampValues(), c.word, w, rows, dst)
	case *array.Time64:
		encodeInts(a.Time64Values(), c.word, w, rows, dst)
	case *array.Boolean:
		for _, row := range rows {
			dst[int(row)*w+c.word] = uint64(b2i(a.Value(int(row))))
		}
	case *array.Decimal128:
		vals := a.Values()
		for _, row := range rows {
			v := vals[row]
			dst[int(row)*w+c.word] = v.LowBits()
			dst[int(row)*w+c.word+1] = uint64(v.HighBits())
		}
	case *array.String:
		return encodeStrings(a.ValueOffsets(), a.ValueBytes(), c, w, rows, dst)
	case *array.LargeString:
		return encodeStrings(a.ValueOffsets(), a.ValueBytes(), c, w, rows, dst)
	case *array.Binary:
		return encodeStrings(a.ValueOffsets(), a.ValueBytes(), c, w, rows, dst)
	default:
		return false
	}
	return true
}

func encodeInts[T intLike](vals []T, word, w int, rows []int32, dst []uint64) {
	for _, row := range rows {
		dst[int(row)*w+word] = uint64(int64(vals[row]))
	}
}

// encodeStrings writes each value's length into word 0 and its bytes,
// zero-padded, into three words; false if one is longer than 24 bytes.
func encodeStrings[O int32 | int64](offs []O, data []byte, c recordCol, w int, rows []int32, dst []uint64) bool {
	base := int(offs[0])
	fast := len(data) - recordStringBytes // values starting at or before fast: read whole words
	lenBit, word := c.lenBit, c.word
	ok := true
	for _, row := range rows {
		hdr := int(row) * w
		a := int(offs[row]) - base
		l := int(offs[row+1]) - base - a
		if l > recordStringBytes {
			dst[hdr] |= unmatchable
			ok = false
			continue
		}
		dst[hdr] |= uint64(l) << lenBit
		out := dst[hdr+word : hdr+word+3 : hdr+word+3]
		out[0], out[1], out[2] = stringWords(data, a, l, fast)
	}
	return ok
}

// stringWords returns the l <= 24 bytes at data[a:] as three little-endian
// words, zero past the value; fast is len(data) - 24.
func stringWords(data []byte, a, l, fast int) (uint64, uint64, uint64) {
	if a > fast {
		return stringWordsCopy(data[a : a+l])
	}
	// Whole words, masked past the value: no copy, no branch on l.
	v := data[a : a+recordStringBytes : a+recordStringBytes]
	m := &stringMasks[l]
	return binary.LittleEndian.Uint64(v[0:8]) & m[0],
		binary.LittleEndian.Uint64(v[8:16]) & m[1],
		binary.LittleEndian.Uint64(v[16:24]) & m[2]
}

// stringWordsCopy is stringWords for a value too near the end of its data
// to read whole words.
func stringWordsCopy(v []byte) (uint64, uint64, uint64) {
	var buf [recordStringBytes]byte
	copy(buf[:], v)
	return binary.LittleEndian.Uint64(buf[0:8]), binary.LittleEndian.Uint64(buf[8:16]), binary.LittleEndian.Uint64(buf[16:24])
}

// stringMasks[l] keeps the first l bytes of three words: a table, because
// computing the masks per row costs more than the load.
var stringMasks = func() (m [recordStringBytes + 1][3]uint64) {
	for l := range m {
		for k := range m[l] {
			m[l][k] = byteMask(l - 8*k)
		}
	}
	return m
}()

// byteMask keeps the low k bytes of a word (all for k >= 8, none for k <= 0).
func byteMask(k int) uint64 {
	if k >= 8 {
		return ^uint64(0)
	}
	if k <= 0 {
		return 0
	}
	return 1<<(8*uint(k)) - 1
}

// differs sets diff[r], r in [0, n), non-zero when row r's key may differ
// from row r-1's, zero only when they are equal (NULL equal to NULL is
// not looked for: a NULL next to anything counts as differing, as does a
// string too long for a record); diff[0] is non-zero. It reads the key
// columns directly, so that rows repeating the row before (line items of
// one order) need no record.
func (r *keyRecords) differs(cols []arrow.Array, n int, diff []uint64) {
	if n == 0 {
		return
	}
	diff = diff[:n]
	clear(diff)
	diff[0] = 1
	for i := range r.cols {
		arr := cols[i]
		differsColumn(arr, n, diff)
		if arr.NullN() > 0 {
			bits, off := kernel.ValidBits(arr)
			prev := bitutil.BitIsSet(bits, off)
			for row := 1; row < n; row++ {
				v := bitutil.BitIsSet(bits, off+row)
				diff[row] |= uint64(1 - b2i(v && prev))
				prev = v
			}
		}
	}
}

// differsColumn ORs into diff[r] a non-zero value where row r of arr
// differs from row r-1 (values under NULLs included).
func differsColumn(arr arrow.Array, n int, diff []uint64) {
	switch a := arr.(type) {
	case *array.Int8:
		differsInts(a.Int8Values(), n, diff)
	case *array.Int16:
		differsInts(a.Int16Values(), n, diff)
	case *array.Int32:
		differsInts(a.Int32Values(), n, diff)
	case *array.Int64:
		differsInts(a.Int64Values(), n, diff)
	case *array.Uint8:
		differsInts(a.Uint8Values(), n, diff)
	case *array.Uint16:
		differsInts(a.Uint16Values(), n, diff)
	case *array.Uint32:
		differsInts(a.Uint32Values(), n, diff)
	case *array.Uint64:
		differsInts(a.Uint64Values(), n, diff)
	case *array.Date32:
		differsInts(a.Date32Values(), n, diff)
	case *array.Date64:
		differsInts(a.Date64Values(), n, diff)
	case *array.Timestamp:
		differsInts(a.TimestampValues(), n, diff)
	case *array.Time64:
		differsInts(a.Time64Values(), n, diff)
	case *array.Boolean:
		for row := 1; row < n; row++ {
			diff[row] |= uint64(b2i(a.Value(row) != a.Value(row-1)))
		}
	case *array.Decimal128:
		vals := a.Values()[:n]
		for row := 1; row < n; row++ {
			diff[row] |= vals[row].LowBits() ^ vals[row-1].LowBits() | uint64(vals[row].HighBits()^vals[row-1].HighBits())
		}
	case *array.String:
		differsStrings(a.ValueOffsets(), a.ValueBytes(), n, diff)
	case *array.LargeString:
		differsStrings(a.ValueOffsets(), a.ValueBytes(), n, diff)
	case *array.Binary:
		differsStrings(a.ValueOffsets(), a.ValueBytes(), n, diff)
	default:
		for row := 1; row < n; row++ {
			diff[row] = 1
		}
	}
}

func differsInts[T intLike](vals []T, n int, diff []uint64) {
	vals = vals[:n]
	for row := 1; row < n; row++ {
		diff[row] |= uint64(int64(vals[row]) ^ int64(vals[row-1]))
	}
}

// differsStrings compares each value's length and three masked words with
// the row before's, kept in locals; a value longer than 24 bytes always
// differs (its words do not hold all of it).
func differsStrings[O int32 | int64](offs []O, data []byte, n int, diff []uint64) {
	offs = offs[:n+1]
	diff = diff[:n]
	base := int(offs[0])
	fast := len(data) - recordStringBytes
	var pl, p0, p1, p2 uint64
	end := int(offs[0]) - base
	for row := 0; row < n; row++ {
		a := end
		end = int(offs[row+1]) - base
		l := end - a
		long := uint64(b2i(l > recordStringBytes))
		l = min(l, recordStringBytes)
		var x0, x1, x2 uint64
		if a <= fast {
			// stringWords, inlined: whole words masked past the value.
			v := data[a : a+recordStringBytes : a+recordStringBytes]
			m := &stringMasks[l]
			x0 = binary.LittleEndian.Uint64(v[0:8]) & m[0]
			x1 = binary.LittleEndian.Uint64(v[8:16]) & m[1]
			x2 = binary.LittleEndian.Uint64(v[16:24]) & m[2]
		} else {
			x0, x1, x2 = stringWordsCopy(data[a : a+l])
		}
		diff[row] |= ((uint64(l) ^ pl) | (x0 ^ p0) | (x1 ^ p1) | (x2 ^ p2) | long) & -uint64(b2i(row > 0))
		pl, p0, p1, p2 = uint64(l)|long<<8, x0, x1, x2
	}
}

// pendingRows appends to pending the rows r with diff[r] != 0, in order,
// and sets rep[r] to diff[r] == 0; branch-free per row (runs are short
// and of varying length).
func pendingRows(diff []uint64, rep []bool, pending []int32) []int32 {
	n := len(diff)
	rep = rep[:n]
	k := len(pending)
	pending = slices.Grow(pending, n)[:k+n]
	for row, d := range diff {
		same := d == 0
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
		h := kernel.HashSeed
		for _, x := range recs[int(row)*w : (int(row)+1)*w] {
			h = kernel.HashCombine(h, x)
		}
		hashes[row] = kernel.HashFinish(h)
	}
}

// equal clears eq[k] where the record of row rows[k] in recs differs from
// the stored record of ids[k].
//
// It returns a value of the prefetching loads for the caller to keep (in
// its own probe state: the table is shared by concurrent finds).
func (r *keyRecords) equal(recs []uint64, rows []int32, ids []uint32, eq []bool) uint64 {
	w := r.words
	var sink uint64
	for k, row := range rows {
		if k%ProbeChunk == 0 {
			// Touch the stored records of the next candidates first, so
			// that their cache misses overlap (see lookup's home slots).
			for _, id := range ids[k:min(k+ProbeChunk, len(ids))] {
				sink |= r.data[int(id)*w]
			}
		}
		id := int(ids[k])
		eq[k] = sameRecord(recs[int(row)*w:(int(row)+1)*w], r.data[id*w:(id+1)*w])
	}
	return sink
}

// appendRows stores the records of rows (the keys of new ids, in id order).
func (r *keyRecords) appendRows(recs []uint64, rows []int32) {
	w := r.words
	r.data = growDouble(r.data, len(rows)*w)
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
