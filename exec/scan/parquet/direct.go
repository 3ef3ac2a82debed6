package parquet

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	pq "github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/schema"
	"github.com/quiverdb/quiver/exec/execop"
	"github.com/quiverdb/quiver/qerr"
)

// The direct Parquet path decodes flat columns (no repetition, at most one
// optional level) page by page straight into the Arrow arrays the scan
// returns, instead of going through arrow-go's record reader. arrow-go
// still reads, decrypts and decompresses the pages (file.PageReader); what
// is done here is the value decoding: dictionary indices are unpacked and
// gathered from a dictionary already converted to the output type (so a
// DECIMAL stored as INT64 is widened once per dictionary entry, not once
// per row), and strings are copied once, into exactly the output buffers.
//
// A file takes this path only when every column the scan reads is flat, of
// a supported physical/Arrow type pair, and written with PLAIN or
// dictionary encodings (by the footer, for every row group to read); any
// other file is read through the record reader as before.

// directEnabled turns the direct path on; tests turn it off to exercise
// the record reader on the same files. The direct decoder reinterprets
// PLAIN values and bit-packed runs in place (Parquet stores them little
// endian), so it is on only where the host is little-endian too.
var directEnabled = littleEndian

// helpEnabled lets a single-partition scan decode on a helper goroutine;
// tests turn it off to exercise both.
var helpEnabled = true

// valueDecoder decodes one column's values for one batch at a time. Call order
// per batch: begin, then any number of dict/plain segments (each followed
// by spread when the segment has NULLs), then finish.
type valueDecoder interface {
	// setDict decodes a PLAIN dictionary page of n entries.
	setDict(data []byte, n int) error
	// begin prepares output for n rows.
	begin(n int)
	// dict writes the entries of the dictionary at idx densely from row at.
	dict(idx []uint32, at int) error
	// plain decodes m PLAIN values from data densely from row at and
	// returns the bytes after them.
	plain(data []byte, at, m int) ([]byte, error)
	// spread moves the m dense values written from row at to the rows of
	// [at, at+k) whose validity bit is set, and empties the others.
	spread(valid []byte, at, k, m int)
	// finish returns the batch's array (validity may be nil, and passes
	// to the array); the caller releases it.
	finish(n int, validity *memory.Buffer, nulls int) arrow.Array
	// abort releases the batch's buffers instead of finishing it; after
	// begin, or after a panic inside it.
	abort()
	// release frees what the decoder holds across batches.
	release()
}

// columnReader reads one leaf column chunk of a row group.
type columnReader struct {
	pr       file.PageReader
	optional bool
	vals     valueDecoder
	mem      memory.Allocator

	left    int // rows left in the current data page
	def     rleReader
	dictEnc bool
	idx     rleReader
	data    []byte // PLAIN values left in the current page
	hasDict bool
	scratch []uint32
}

// newValueDecoder reports whether leaf column descr, read as Arrow type typ,
// can be decoded directly, and the decoder for it.
func newValueDecoder(descr *schema.Column, typ arrow.DataType, mem memory.Allocator) (valueDecoder, bool) {
	if descr.MaxRepetitionLevel() != 0 || descr.MaxDefinitionLevel() > 1 {
		return nil, false
	}
	phys := descr.PhysicalType()
	switch t := typ.(type) {
	case *arrow.Int32Type, *arrow.Date32Type:
		if phys == pq.Types.Int32 {
			return &fixedWidth[int32]{mem: mem, typ: t, width: 4, decode: plainCopy[int32]}, true
		}
	case *arrow.Int64Type:
		if phys == pq.Types.Int64 {
			return &fixedWidth[int64]{mem: mem, typ: t, width: 8, decode: plainCopy[int64]}, true
		}
	case *arrow.TimestampType, *arrow.Time64Type:
		// SQL's TIMESTAMP, TIMESTAMPTZ and TIME are microseconds: other
		// units are converted as the values are decoded.
		if phys == pq.Types.Int64 {
			out, scale := temporalTarget(t)
			return &fixedWidth[int64]{mem: mem, typ: out, width: 8, decode: plainScaled(scale)}, true
		}
	case *arrow.Float32Type:
		if phys == pq.Types.Float {
			return &fixedWidth[float32]{mem: mem, typ: t, width: 4, decode: plainCopy[float32]}, true
		}
	case *arrow.Float64Type:
		if phys == pq.Types.Double {
			return &fixedWidth[float64]{mem: mem, typ: t, width: 8, decode: plainCopy[float64]}, true
		}
	case *arrow.Decimal128Type:
		switch phys {
		case pq.Types.Int32:
			return &fixedWidth[decimal128.Num]{mem: mem, typ: t, width: 4, decode: plainWiden32}, true
		case pq.Types.Int64:
			return &fixedWidth[decimal128.Num]{mem: mem, typ: t, width: 8, decode: plainWiden64}, true
		}
	case *arrow.StringType, *arrow.BinaryType:
		if phys == pq.Types.ByteArray {
			return &byteArray{mem: mem, typ: t}, true
		}
	}
	return nil, false
}

// directEncodings reports whether a column chunk's encodings are all
// ones the direct path decodes (RLE is the level encoding).
func directEncodings(encs []pq.Encoding) bool {
	for _, e := range encs {
		switch e {
		case pq.Encodings.Plain, pq.Encodings.PlainDict, pq.Encodings.RLEDict, pq.Encodings.RLE:
		default:
			return false
		}
	}
	return true
}

// read decodes the next n rows of the column.
//
// An allocation over the task's memory limit panics (AccountingAllocator);
// the buffers of the unfinished batch are released on the way out.
func (c *columnReader) read(n int) (arr arrow.Array, err error) {
	var validity *memory.Buffer
	done := false
	defer func() {
		if !done {
			if validity != nil {
				validity.Release()
			}
			c.vals.abort()
		}
	}()
	c.vals.begin(n)
	var valid []byte
	if c.optional {
		validity = execop.NewDirtyBuffer(c.mem, int((n+7)/8))
		valid = validity.Bytes()
		if len(valid) > 0 {
			valid[len(valid)-1] = 0 // the bits past n
		}
	}
	nulls := 0
	for at := 0; at < n; {
		if c.left == 0 {
			if err := c.nextPage(); err != nil {
				return nil, err
			}
			continue
		}
		k := min(c.left, n-at)
		m := k
		if c.optional {
			var err error
			if m, err = c.def.readBits(valid, at, k); err != nil {
				return nil, fmt.Errorf("definition levels: %w", err)
			}
		}
		if err := c.values(at, m); err != nil {
			return nil, err
		}
		if m < k {
			c.vals.spread(valid, at, k, m)
			nulls += k - m
		}
		c.left -= k
		at += k
	}
	if nulls == 0 && validity != nil {
		validity.Release()
		validity = nil
	}
	done = true
	return c.vals.finish(n, validity, nulls), nil
}

// values decodes m present values of the current page from row at.
func (c *columnReader) values(at, m int) error {
	if m == 0 {
		return nil
	}
	if !c.dictEnc {
		rest, err := c.vals.plain(c.data, at, m)
		c.data = rest
		return err
	}
	if rf, ok := c.vals.(runFiller); ok {
		if err := c.dictRuns(rf, at, m); err != nil {
			return fmt.Errorf("dictionary indices: %w", err)
		}
		return nil
	}
	c.scratch = reuse(c.scratch, m)
	idx := c.scratch[:m]
	if err := c.idx.read(idx); err != nil {
		return fmt.Errorf("dictionary indices: %w", err)
	}
	return c.vals.dict(idx, at)
}

// runFiller is a valueDecoder that writes a repeated run of one dictionary
// entry directly, without a run of indices to gather from.
type runFiller interface {
	valueDecoder
	// fill writes dictionary entry k to the n rows from row at.
	fill(k uint32, at, n int) error
}

// dictRuns decodes m dictionary-encoded values from row at run by run:
// repeated runs are filled, bit-packed ones unpacked and gathered.
func (c *columnReader) dictRuns(rf runFiller, at, m int) error {
	r := &c.idx
	for m > 0 {
		switch {
		case r.rleLeft > 0:
			n := min(r.rleLeft, m)
			if err := rf.fill(r.rleVal, at, n); err != nil {
				return err
			}
			r.rleLeft -= n
			at += n
			m -= n
		case r.bpLeft > 0:
			n := min(r.bpLeft, m)
			c.scratch = reuse(c.scratch, n)
			idx := c.scratch[:n]
			r.unpack(idx)
			r.bpLeft -= n
			if err := rf.dict(idx, at); err != nil {
				return err
			}
			at += n
			m -= n
		default:
			if r.pos >= len(r.data) {
				return errRLETruncated
			}
			if err := r.nextRun(); err != nil {
				return err
			}
		}
	}
	return nil
}

// nextPage moves to the next data page, decoding a dictionary page met on
// the way.
func (c *columnReader) nextPage() error {
	for {
		if !c.pr.Next() {
			if err := c.pr.Err(); err != nil {
				return err
			}
			return errors.New("column chunk ends before the row group's last row")
		}
		var data []byte
		var n int
		switch pg := c.pr.Page().(type) {
		case *file.DictionaryPage:
			if e := pq.Encoding(pg.Encoding()); e != pq.Encodings.Plain && e != pq.Encodings.PlainDict {
				return fmt.Errorf("dictionary page encoded %s", e)
			}
			if err := c.vals.setDict(pg.Data(), int(pg.NumValues())); err != nil {
				return fmt.Errorf("dictionary page: %w", err)
			}
			c.hasDict = true
			continue
		case *file.DataPageV1:
			data, n = pg.Data(), int(pg.NumValues())
			if c.optional {
				if pg.DefinitionLevelEncoding() != pq.Encodings.RLE {
					return fmt.Errorf("definition levels encoded %s", pg.DefinitionLevelEncoding())
				}
				if len(data) < 4 {
					return errRLETruncated
				}
				l := int(binary.LittleEndian.Uint32(data))
				if l > len(data)-4 {
					return fmt.Errorf("definition levels of %d bytes in a page of %d", l, len(data))
				}
				if err := c.def.reset(data[4:4+l], 1); err != nil {
					return err
				}
				data = data[4+l:]
			}
		case *file.DataPageV2:
			data, n = pg.Data(), int(pg.NumValues())
			rl, dl := int(pg.RepetitionLevelByteLen()), int(pg.DefinitionLevelByteLen())
			if rl+dl > len(data) {
				return fmt.Errorf("levels of %d bytes in a page of %d", rl+dl, len(data))
			}
			if c.optional {
				if err := c.def.reset(data[rl:rl+dl], 1); err != nil {
					return err
				}
			}
			data = data[rl+dl:]
		default:
			continue
		}
		switch e := pq.Encoding(c.pr.Page().Encoding()); e {
		case pq.Encodings.Plain:
			c.dictEnc, c.data = false, data
		case pq.Encodings.RLEDict, pq.Encodings.PlainDict:
			if !c.hasDict {
				return errors.New("dictionary-encoded page without a dictionary page")
			}
			if n > 0 {
				if len(data) < 1 {
					return errRLETruncated
				}
				if err := c.idx.reset(data[1:], uint(data[0])); err != nil {
					return err
				}
			}
			c.dictEnc = true
		default:
			return fmt.Errorf("data page encoded %s", e)
		}
		c.left = n
		if n > 0 {
			return nil
		}
	}
}

func (c *columnReader) close() {
	if c.pr != nil {
		c.pr.Close()
		c.pr = nil
	}
}

// fixedWidth decodes a fixed-width column whose Arrow values are T, stored as
// PLAIN values of width bytes that decode converts.
type fixedWidth[T int32 | int64 | float32 | float64 | decimal128.Num] struct {
	mem    memory.Allocator
	typ    arrow.DataType
	width  int
	decode func(dst []T, src []byte)
	dicts  []T
	buf    *memory.Buffer
	out    []T
}

func (f *fixedWidth[T]) setDict(data []byte, n int) error {
	if n < 0 || n*f.width > len(data) {
		return fmt.Errorf("%d entries of %d bytes in %d bytes", n, f.width, len(data))
	}
	f.dicts = reuse(f.dicts, n) // dict copies entries out: no array points in here
	f.decode(f.dicts, data)
	return nil
}

func (f *fixedWidth[T]) begin(n int) {
	var zero T
	f.buf = execop.NewDirtyBuffer(f.mem, n*int(unsafe.Sizeof(zero)))
	if n > 0 {
		f.out = unsafe.Slice((*T)(unsafe.Pointer(&f.buf.Bytes()[0])), n)
	} else {
		f.out = nil
	}
}

func (f *fixedWidth[T]) dict(idx []uint32, at int) error {
	d, out := f.dicts, f.out[at:at+len(idx)]
	for i, k := range idx {
		if int(k) >= len(d) {
			return errDictIndex(int32(k), uint32(len(d)))
		}
		out[i] = d[k]
	}
	return nil
}

func (f *fixedWidth[T]) fill(k uint32, at, n int) error {
	if int(k) >= len(f.dicts) {
		return errDictIndex(int32(k), uint32(len(f.dicts)))
	}
	v, out := f.dicts[k], f.out[at:at+n]
	for i := range out {
		out[i] = v
	}
	return nil
}

func (f *fixedWidth[T]) plain(data []byte, at, m int) ([]byte, error) {
	if m*f.width > len(data) {
		return nil, fmt.Errorf("%d PLAIN values of %d bytes in %d bytes", m, f.width, len(data))
	}
	f.decode(f.out[at:at+m], data)
	return data[m*f.width:], nil
}

func (f *fixedWidth[T]) spread(valid []byte, at, k, m int) {
	out := f.out[at : at+k]
	var zero T
	// Back to front, values move up (never onto one not yet moved); with
	// few NULLs most validity bytes are all set and move as a block. Once
	// the rows left equal the values left, they are in place.
	bytewise := 8*(k-m) <= k
	for r, j := k, m; r > j; {
		if p := at + r; bytewise && p&7 == 0 && r >= 8 {
			switch valid[p>>3-1] {
			case 0xFF:
				copy(out[r-8:r], out[j-8:j])
				r, j = r-8, j-8
				continue
			case 0:
				clear(out[r-8 : r])
				r -= 8
				continue
			}
		}
		r--
		if valid[(at+r)>>3]>>((at+r)&7)&1 != 0 {
			j--
			out[r] = out[j]
		} else {
			out[r] = zero
		}
	}
}

func (f *fixedWidth[T]) finish(n int, validity *memory.Buffer, nulls int) arrow.Array {
	buf := f.buf
	f.buf, f.out = nil, nil
	defer buf.Release()
	d := array.NewData(f.typ, n, []*memory.Buffer{validity, buf}, nil, nulls, 0)
	defer d.Release()
	if validity != nil {
		validity.Release() // d holds it now
	}
	return array.MakeFromData(d)
}

func (f *fixedWidth[T]) abort() {
	if f.buf != nil {
		f.buf.Release()
	}
	f.buf, f.out = nil, nil
}

func (f *fixedWidth[T]) release() { f.dicts = nil }

// plainCopy decodes little-endian values of T's own width.
func plainCopy[T int32 | int64 | float32 | float64](dst []T, src []byte) {
	if len(dst) == 0 {
		return
	}
	copy(unsafe.Slice((*byte)(unsafe.Pointer(&dst[0])), len(dst)*int(unsafe.Sizeof(dst[0]))), src)
}

// plainScaled decodes INT64 values multiplied by scale (> 0) or divided by
// -scale rounding toward negative infinity (< 0); 1 copies.
func plainScaled(scale int64) func(dst []int64, src []byte) {
	if scale == 1 {
		return plainCopy[int64]
	}
	return func(dst []int64, src []byte) {
		plainCopy(dst, src)
		scaleInts(dst, scale)
	}
}

func plainWiden32(dst []decimal128.Num, src []byte) {
	for i := range dst {
		dst[i] = decimal128.FromI64(int64(int32(binary.LittleEndian.Uint32(src[4*i:]))))
	}
}

func plainWiden64(dst []decimal128.Num, src []byte) {
	for i := range dst {
		dst[i] = decimal128.FromI64(int64(binary.LittleEndian.Uint64(src[8*i:])))
	}
}

// byteArray decodes a BYTE_ARRAY column into a string or binary array.
type byteArray struct {
	mem memory.Allocator
	typ arrow.DataType
	// the dictionary: offsets into data, lengths, the longest entry, and
	// when every entry has at most 32 bytes, each entry zero-padded to a
	// slot of slotWords words (1, 2 or 4)
	dOffs     []int32
	dData     []byte
	dLens     []int32
	dMax      int
	slots     []uint64
	slotWords int

	offBuf *memory.Buffer
	offs   []int32
	valBuf *memory.Buffer
	used   int
}

// bytesSlack is how far past its last value a string batch's buffer
// reaches, for the word stores of short dictionary entries.
const bytesSlack = 32

func (b *byteArray) setDict(data []byte, n int) error {
	if n < 0 || n > len(data)/4 {
		return fmt.Errorf("%d entries in %d bytes", n, len(data))
	}
	// The previous dictionary's memory is reused (dict and plain copy the
	// bytes out); a bad page leaves no dictionary rather than a torn one.
	offs := reuse(b.dOffs, n+1)
	lens := reuse(b.dLens, n)
	vals := reuse(b.dData, len(data)-4*n)[:0]
	slots := b.slots
	b.dOffs, b.dData, b.dLens, b.dMax, b.slots, b.slotWords = nil, nil, nil, 0, nil, 0
	offs[0] = 0
	longest := 0
	for i := range n {
		if len(data) < 4 {
			return errors.New("entry length past the page end")
		}
		l := int(binary.LittleEndian.Uint32(data))
		if l > len(data)-4 {
			return fmt.Errorf("entry of %d bytes past the page end", l)
		}
		vals = append(vals, data[4:4+l]...)
		data = data[4+l:]
		offs[i+1] = int32(len(vals))
		lens[i] = int32(l)
		longest = max(longest, l)
	}
	b.dOffs, b.dData, b.dLens, b.dMax = offs, vals, lens, longest
	switch {
	case longest <= 8:
		b.slotWords = 1
	case longest <= 16:
		b.slotWords = 2
	case longest <= 32:
		b.slotWords = 4
	}
	if b.slotWords > 0 {
		b.slots = reuse(slots, n*b.slotWords)
		clear(b.slots) // entries are zero-padded to their slots
		sb := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(b.slots))), len(b.slots)*8)
		for k := range n {
			copy(sb[k*8*b.slotWords:], vals[offs[k]:offs[k+1]])
		}
	}
	return nil
}

func (b *byteArray) begin(n int) {
	b.offBuf = execop.NewDirtyBuffer(b.mem, 4*(n+1))
	b.offs = arrow.Int32Traits.CastFromBytes(b.offBuf.Bytes())[:n+1]
	b.offs[0] = 0
	b.valBuf = memory.NewResizableBuffer(b.mem)
	b.used = 0
}

// reserve makes room for extra more value bytes and the slack.
func (b *byteArray) reserve(extra int) []byte {
	need := b.used + extra + bytesSlack
	if need > b.valBuf.Cap() {
		b.valBuf.Reserve(max(need, 2*b.valBuf.Cap()))
	}
	return b.valBuf.Buf()
}

func (b *byteArray) dict(idx []uint32, at int) error {
	if b.used+len(idx)*b.dMax > math.MaxInt32 {
		return errors.New("string column batch over 2 GiB")
	}
	out := b.reserve(len(idx) * b.dMax)
	ends := b.offs[at+1 : at+1+len(idx)]
	var used int
	var ok bool
	switch b.slotWords {
	case 1:
		used, ok = storeSlots[[1]uint64](out, b.used, b.slots, b.dLens, idx, ends)
	case 2:
		used, ok = storeSlots[[2]uint64](out, b.used, b.slots, b.dLens, idx, ends)
	case 4:
		used, ok = storeSlots[[4]uint64](out, b.used, b.slots, b.dLens, idx, ends)
	default:
		used, ok = b.used, true
		doffs, dictLen := b.dOffs, uint32(len(b.dLens))
		for i, k := range idx {
			if k >= dictLen {
				ok = false
				break
			}
			used += copy(out[used:], b.dData[doffs[k]:doffs[k+1]])
			ends[i] = int32(used)
		}
	}
	if !ok {
		return fmt.Errorf("dictionary index out of range (%d entries)", len(b.dLens))
	}
	b.used = used
	return nil
}

// storeSlots writes the dictionary entries at idx from out[used:] as whole
// slots (the bytes past an entry are overwritten by the next, the last
// land in the slack), records each row's end offset and returns the new
// end, or false on an index out of range.
func storeSlots[S [1]uint64 | [2]uint64 | [4]uint64](out []byte, used int, slots []uint64, lens []int32, idx []uint32, ends []int32) (int, bool) {
	var zero S
	w := int(unsafe.Sizeof(zero))
	sl := unsafe.Slice((*S)(unsafe.Pointer(unsafe.SliceData(slots))), len(lens))
	dictLen := uint32(len(lens))
	ends = ends[:len(idx)]
	for i, k := range idx {
		if k >= dictLen {
			return used, false
		}
		_ = out[used+w-1] // the slack covers the last store; this guards the unsafe write
		*(*S)(unsafe.Pointer(&out[used])) = sl[k]
		used += int(lens[k])
		ends[i] = int32(used)
	}
	return used, true
}

func (b *byteArray) plain(data []byte, at, m int) ([]byte, error) {
	ends := b.offs[at+1 : at+1+m]
	for i := range m {
		if len(data) < 4 {
			return nil, errors.New("PLAIN value length past the page end")
		}
		l := int(binary.LittleEndian.Uint32(data))
		if l > len(data)-4 {
			return nil, fmt.Errorf("PLAIN value of %d bytes past the page end", l)
		}
		if b.used+l > math.MaxInt32 {
			return nil, errors.New("string column batch over 2 GiB")
		}
		out := b.reserve(l)
		b.used += copy(out[b.used:], data[4:4+l])
		ends[i] = int32(b.used)
		data = data[4+l:]
	}
	return data, nil
}

func (b *byteArray) spread(valid []byte, at, k, m int) {
	// offs[r] ends row at+r; a NULL row ends where the value before it
	// does: offs[j-1] with j values before it, b.offs[at] with none.
	// The walk is fixedWidth.spread's.
	offs := b.offs[at : at+1+k]
	bytewise := 8*(k-m) <= k
	for r, j := k, m; r > j; {
		if p := at + r; bytewise && p&7 == 0 && r >= 8 {
			switch valid[p>>3-1] {
			case 0xFF:
				copy(offs[r-7:r+1], offs[j-7:j+1])
				r, j = r-8, j-8
				continue
			case 0:
				end := offs[j]
				for i := r - 7; i <= r; i++ {
					offs[i] = end
				}
				r -= 8
				continue
			}
		}
		r--
		offs[r+1] = offs[j]
		j -= int(valid[(at+r)>>3] >> ((at + r) & 7) & 1)
	}
}

func (b *byteArray) finish(n int, validity *memory.Buffer, nulls int) arrow.Array {
	offBuf, valBuf := b.offBuf, b.valBuf
	b.offBuf, b.valBuf, b.offs = nil, nil, nil
	defer offBuf.Release()
	defer valBuf.Release()
	offBuf.ResizeNoShrink(4 * (n + 1))
	valBuf.ResizeNoShrink(b.used)
	d := array.NewData(b.typ, n, []*memory.Buffer{validity, offBuf, valBuf}, nil, nulls, 0)
	defer d.Release()
	if validity != nil {
		validity.Release()
	}
	return array.MakeFromData(d)
}

func (b *byteArray) abort() {
	if b.offBuf != nil {
		b.offBuf.Release()
	}
	if b.valBuf != nil {
		b.valBuf.Release()
	}
	b.offBuf, b.valBuf, b.offs = nil, nil, nil
}

func (b *byteArray) release() { b.dOffs, b.dData, b.dLens, b.slots = nil, nil, nil, nil }

// directReader is the state of the direct path over one Reader: the
// row group being read and its columns (one per distinct field read).
type directReader struct {
	vals     []valueDecoder // per distinct field its decoder (the dictionary is replaced per row group)
	leaf     []int          // per distinct field, its leaf column
	optional []bool
	names    []string
	cols     []*columnReader // of the current row group
	readers  []*columnReader // per distinct field, reused for each row group
	left     int64           // rows left in the current row group

	// A scan that is the only partition of its table (a file of one row
	// group) would decode on one core while the others wait for it; such
	// a scan decodes the columns marked in helped on a helper goroutine,
	// batch by batch, beside the ones it decodes itself.
	table, path string // for messages
	helped      []bool
	helper      *decodeHelper
	ready       []arrow.RecordBatch // decoded batches not yet returned
	schema      *arrow.Schema       // of the last batch, for the next (batchSchema)
}

// decodeHelper decodes the helped columns of a run of batches on its own
// goroutine. The scan sends the batches' row counts on req and reads the
// outcome from done before touching out; both channels hold one message,
// so neither side blocks on a send. stop closes req and waits for the
// goroutine to end.
type decodeHelper struct {
	req  chan []int
	done chan error
	out  [][]arrow.Array // per batch of the request, per distinct field (nil where not helped)
	exit chan struct{}
}

// helpBatches is how many batches a helped scan decodes per exchange
// with its helper: each exchange may wake a parked goroutine, which is
// costly on virtual machines.
const helpBatches = 8

func startHelper(d *directReader) *decodeHelper {
	h := &decodeHelper{req: make(chan []int, 1), done: make(chan error, 1), exit: make(chan struct{})}
	go func() {
		defer close(h.exit)
		for sizes := range h.req {
			h.done <- h.decode(d, sizes)
		}
	}()
	return h
}

// decode reads the helped columns of batches of the given sizes into
// h.out; on error it releases what it read.
func (h *decodeHelper) decode(d *directReader, sizes []int) (err error) {
	h.out = h.out[:0]
	defer func() {
		if r := recover(); r != nil {
			// A memory limit hit becomes its Resources error (panicError).
			err = execop.PanicError(r, "parquet decode helper")
		}
		if err != nil {
			releaseRows(h.out)
			h.out = h.out[:0]
		}
	}()
	for _, n := range sizes {
		row := make([]arrow.Array, len(d.cols))
		h.out = append(h.out, row)
		for i, c := range d.cols {
			if !d.helped[i] {
				continue
			}
			a, err := c.read(n)
			if err != nil {
				return d.decodeError(i, err)
			}
			row[i] = a
		}
	}
	return nil
}

func (h *decodeHelper) stop() {
	close(h.req)
	<-h.exit
	// A request the scan did not collect (it panicked while the helper
	// decoded): drop its outcome.
	select {
	case <-h.done:
	default:
	}
	releaseRows(h.out)
	h.out = nil
}

// decodeError reports that column i could not be decoded.
func (d *directReader) decodeError(i int, err error) error {
	return qerr.Execf("exec: scan of %s: cannot decode column %q of %s: %w", d.table, d.names[i], d.path, err)
}

// releaseRows releases every non-nil array of rows.
func releaseRows(rows [][]arrow.Array) {
	for _, row := range rows {
		for _, a := range row {
			if a != nil {
				a.Release()
			}
		}
	}
}

// planHelp marks about half of the columns' decoding work (by their
// uncompressed bytes in the row groups to read) for a helper, when the
// scan is its table's only partition and reads at least two columns.
func (p *Reader) planHelp(d *directReader) {
	if !helpEnabled || !p.opts.OnlyPartition || len(d.leaf) < 2 || runtime.GOMAXPROCS(0) < 2 {
		return
	}
	md := p.f.MetaData()
	cost := make([]int64, len(d.leaf))
	for i, leaf := range d.leaf {
		for _, rg := range p.rgs {
			if cc, err := md.RowGroup(rg).ColumnChunk(leaf); err == nil {
				cost[i] += cc.TotalUncompressedSize()
			}
		}
	}
	order := make([]int, len(cost))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(cost[b], cost[a]) })
	d.helped = make([]bool, len(cost))
	var mine, helpers int64
	for _, i := range order {
		if helpers < mine {
			d.helped[i] = true
			helpers += cost[i]
		} else {
			mine += cost[i]
		}
	}
}

// planDirect decides whether p can take the direct path and prepares it.
// Call it after the row groups to read are known and before planFixes.
func (p *Reader) planDirect() {
	if !directEnabled || len(p.rgs) == 0 || len(p.uniq) == 0 {
		return
	}
	md := p.f.MetaData()
	fs, err := p.fr.Schema()
	if err != nil {
		return
	}
	d := &directReader{table: p.opts.Table, path: p.path}
	for _, f := range p.uniq {
		sf := &p.fr.Manifest.Fields[f]
		if !sf.IsLeaf() || sf.Field == nil {
			return
		}
		descr := md.Schema.Column(sf.ColIndex)
		typ := sf.Field.Type
		vals, ok := newValueDecoder(descr, typ, p.mem)
		if !ok {
			return
		}
		for _, rg := range p.rgs {
			cc, err := md.RowGroup(rg).ColumnChunk(sf.ColIndex)
			if err != nil || !directEncodings(cc.Encodings()) {
				return
			}
		}
		d.vals = append(d.vals, vals)
		d.names = append(d.names, fs.Field(f).Name)
		d.leaf = append(d.leaf, sf.ColIndex)
		d.optional = append(d.optional, descr.MaxDefinitionLevel() == 1)
	}
	p.planHelp(d)
	p.direct = d
}

// nextDirect returns the next batch of the direct path (io.EOF at the end).
func (p *Reader) nextDirect(ctx context.Context) (arrow.RecordBatch, error) {
	d := p.direct
	if len(d.ready) > 0 {
		b := d.ready[0]
		d.ready[0] = nil
		d.ready = d.ready[1:]
		return b, nil
	}
	for d.left == 0 {
		p.closeDirectGroup()
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if len(p.rgs) == 0 {
			return nil, io.EOF
		}
		rg := p.rgs[0]
		p.rgs = p.rgs[1:]
		p.rowGroupsRead++
		rgr := p.f.RowGroup(rg)
		d.left = rgr.NumRows()
		for i, leaf := range d.leaf {
			pr, err := rgr.GetColumnPageReader(leaf)
			if err != nil {
				p.closeDirectGroup()
				return nil, qerr.Execf("exec: scan of %s: cannot read row group %d of %s: %w", p.opts.Table, rg, p.path, err)
			}
			// The readers are reused row group to row group for their
			// index scratch.
			if len(d.readers) <= i {
				d.readers = append(d.readers, &columnReader{})
			}
			c := d.readers[i]
			*c = columnReader{pr: pr, optional: d.optional[i], vals: d.vals[i], mem: p.mem, scratch: c.scratch}
			d.cols = append(d.cols, c)
		}
	}
	// The batches to decode now: one, or a run of them with a helper.
	k := 1
	if d.helped != nil {
		k = helpBatches
	}
	var sizes []int
	for left := d.left; len(sizes) < k && left > 0; {
		n := int(min(left, int64(p.opts.BatchRows)))
		sizes = append(sizes, n)
		left -= int64(n)
	}
	if d.helped != nil && d.helper == nil {
		d.helper = startHelper(d)
	}
	if d.helper != nil {
		d.helper.req <- sizes
	}
	rows := make([][]arrow.Array, len(sizes))
	handedOff := false
	defer func() {
		// On an error, or a panic (a memory limit hit), drop what was read.
		if !handedOff {
			releaseRows(rows)
		}
	}()
	var err error
decode:
	for b, n := range sizes {
		rows[b] = make([]arrow.Array, len(d.cols))
		for i, c := range d.cols {
			if d.helped != nil && d.helped[i] {
				continue
			}
			a, rerr := c.read(n)
			if rerr != nil {
				err = d.decodeError(i, rerr)
				break decode
			}
			rows[b][i] = a
		}
	}
	if d.helper != nil {
		herr := <-d.helper.done
		for b, row := range d.helper.out {
			for i, a := range row {
				if a != nil {
					rows[b][i] = a
				}
			}
		}
		d.helper.out = d.helper.out[:0]
		if herr != nil && err == nil {
			err = herr
		}
	}
	if err != nil {
		return nil, err
	}
	for b, n := range sizes {
		d.left -= int64(n)
		cols := make([]arrow.Array, len(p.outPos))
		for i, pos := range p.outPos {
			cols[i] = rows[b][pos]
		}
		d.ready = append(d.ready, array.NewRecordBatch(d.batchSchema(p.outPos, cols), cols, int64(n)))
	}
	releaseRows(rows) // the batches hold their own references
	handedOff = true
	return p.nextDirect(ctx)
}

// batchSchema returns the schema of a batch of cols (the fields at outPos),
// the previous batch's when the types are the same: a schema is immutable,
// and building one per batch costs a map and its fields.
func (d *directReader) batchSchema(outPos []int, cols []arrow.Array) *arrow.Schema {
	if sc := d.schema; sc != nil && sc.NumFields() == len(cols) {
		same := true
		for i, c := range cols {
			if !arrow.TypeEqual(sc.Field(i).Type, c.DataType()) {
				same = false
				break
			}
		}
		if same {
			return sc
		}
	}
	fields := make([]arrow.Field, len(cols))
	for i, pos := range outPos {
		fields[i] = arrow.Field{Name: d.names[pos], Type: cols[i].DataType(), Nullable: true}
	}
	d.schema = arrow.NewSchema(fields, nil)
	return d.schema
}

// closeDirectGroup closes the columns of the current row group.
func (p *Reader) closeDirectGroup() {
	d := p.direct
	for _, c := range d.cols {
		c.close()
	}
	d.cols = d.cols[:0]
	d.left = 0
}

// closeDirect stops the helper, closes the current row group and drops
// the dictionaries.
func (p *Reader) closeDirect() {
	if h := p.direct.helper; h != nil {
		h.stop()
		p.direct.helper = nil
	}
	for _, b := range p.direct.ready {
		b.Release()
	}
	p.direct.ready = nil
	p.closeDirectGroup()
	for _, v := range p.direct.vals {
		v.release()
	}
	p.direct.readers = nil
}

// reuse returns s resized to n when its capacity allows, else a new slice
// of n; the contents are garbage.
func reuse[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}
