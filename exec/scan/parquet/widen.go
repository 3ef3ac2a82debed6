package parquet

import (
	"encoding/binary"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	pq "github.com/apache/arrow-go/v18/parquet"
	"github.com/quiverdb/quiver/qerr"
)

// Some Arrow types the Parquet decoder produces by copying every value
// into a fresh Go-heap slice (not through the scan's allocator): decimals
// stored as INT32/INT64 (widened to decimal128) and date32 stored as INT32
// (copied value by value). The scan instead asks the decoder for the
// physical integers, which it hands over without copying, and converts
// them itself: date32 is the same bits as int32 (a relabel, no copy), and
// decimals are widened in one columnar pass into a buffer of the scan's
// (recycling) allocator.

type colFix uint8

const (
	fixNone      colFix = iota
	fixDate32           // read as int32, relabel as date32
	fixDecimal32        // read as int32, widen to decimal128
	fixDecimal64        // read as int64, widen to decimal128
	fixDict             // string/binary read as dictionary indices, gathered here
	fixTemporal         // a timestamp or time of another unit (or zone), to microseconds
)

// planFixes decides, per distinct field the reader returns (uniq, file
// field indices ascending), how to read it, and rewrites the reader's
// manifest so that the decoder returns the physical integers.
//
// Call it after the row groups to read are known (p.rgs).
func (p *Reader) planFixes(uniq []int) {
	p.fix = make([]colFix, len(uniq))
	p.fixType = make([]arrow.DataType, len(uniq))
	sch := p.f.MetaData().Schema
	for i, f := range uniq {
		sf := &p.fr.Manifest.Fields[f]
		if !sf.IsLeaf() || sf.Field == nil {
			continue
		}
		phys := sch.Column(sf.ColIndex).PhysicalType()
		var fix colFix
		var as arrow.DataType
		switch sf.Field.Type.(type) {
		case *arrow.Date32Type:
			if phys == pq.Types.Int32 {
				fix, as = fixDate32, arrow.PrimitiveTypes.Int32
			}
		case *arrow.StringType, *arrow.BinaryType:
			if phys == pq.Types.ByteArray && p.dictOnly(sf.ColIndex) {
				fix, as = fixDict, &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: sf.Field.Type}
			}
		case *arrow.Decimal128Type:
			switch phys {
			case pq.Types.Int32:
				fix, as = fixDecimal32, arrow.PrimitiveTypes.Int32
			case pq.Types.Int64:
				fix, as = fixDecimal64, arrow.PrimitiveTypes.Int64
			}
		case *arrow.TimestampType, *arrow.Time32Type, *arrow.Time64Type:
			if out, _ := temporalTarget(sf.Field.Type); !arrow.TypeEqual(out, sf.Field.Type) {
				p.fix[i], p.fixType[i] = fixTemporal, sf.Field.Type
			}
			continue
		}
		if fix == fixNone {
			continue
		}
		p.fix[i], p.fixType[i] = fix, sf.Field.Type
		// A new field, not an edit of the old: the manifest's fields may be
		// shared with the schema the reader reported.
		nf := *sf.Field
		nf.Type = as
		sf.Field = &nf
	}
}

// finish turns a batch of the reader (the distinct fields in file order,
// borrowed) into the projected columns in output order with their Arrow
// types; the result holds its own references.
func (p *Reader) finish(b arrow.RecordBatch) (arrow.RecordBatch, error) {
	conv := make([]arrow.Array, b.NumCols())
	defer func() {
		for _, c := range conv {
			if c != nil {
				c.Release()
			}
		}
	}()
	for i := range conv {
		col := b.Column(i)
		if i >= len(p.fix) || p.fix[i] == fixNone {
			col.Retain()
			conv[i] = col
			continue
		}
		c, err := p.convert(col, p.fix[i], p.fixType[i])
		if err != nil {
			return nil, qerr.Execf("exec: scan of %s: cannot decode column %q of %s: %w", p.opts.Table, b.Schema().Field(i).Name, p.path, err)
		}
		conv[i] = c
	}
	for _, c := range conv {
		zeroNullSlots(c)
	}
	cols := make([]arrow.Array, len(p.outPos))
	fields := make([]arrow.Field, len(p.outPos))
	for i, pos := range p.outPos {
		cols[i] = conv[pos]
		fields[i] = arrow.Field{Name: b.Schema().Field(pos).Name, Type: conv[pos].DataType(), Nullable: true}
	}
	return array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, b.NumRows()), nil
}

// convert returns col (int32 or int64) as typ; the caller releases it.
func (p *Reader) convert(col arrow.Array, fix colFix, typ arrow.DataType) (arrow.Array, error) {
	d := col.Data()
	switch fix {
	case fixDate32:
		relabelled := array.NewData(typ, d.Len(), d.Buffers(), nil, d.NullN(), d.Offset())
		defer relabelled.Release()
		return array.MakeFromData(relabelled), nil
	case fixDict:
		return gatherDictionary(p.alloc(), col.(*array.Dictionary), typ)
	case fixDecimal32:
		return widenDecimal(p.alloc(), d, typ, col.(*array.Int32).Int32Values()), nil
	case fixDecimal64:
		return widenDecimal(p.alloc(), d, typ, col.(*array.Int64).Int64Values()), nil
	case fixTemporal:
		return toMicros(p.alloc(), col), nil
	}
	col.Retain()
	return col, nil
}

func (p *Reader) alloc() memory.Allocator { return p.mem }

// widenDecimal builds a decimal128 array of typ from vals (the values of
// d, offset applied), keeping d's validity bitmap and offset.
func widenDecimal[T int32 | int64](mem memory.Allocator, d arrow.ArrayData, typ arrow.DataType, vals []T) arrow.Array {
	off := d.Offset()
	buf := memory.NewResizableBuffer(mem)
	defer buf.Release()
	buf.Resize(arrow.Decimal128Traits.BytesRequired(off + len(vals)))
	out := arrow.Decimal128Traits.CastFromBytes(buf.Bytes())[off : off+len(vals)]
	for i, v := range vals {
		out[i] = decimal128.FromI64(int64(v))
	}
	widened := array.NewData(typ, d.Len(), []*memory.Buffer{d.Buffers()[0], buf}, nil, d.NullN(), off)
	defer widened.Release()
	return array.MakeFromData(widened)
}

// dictionaryPage is the Thrift PageType of a dictionary page (the
// generated enum lives in an internal package of arrow-go).
const dictionaryPage = 2

// dictOnly reports whether every data page of leaf column col, in every
// row group the scan reads, is dictionary-encoded (by the footer's page
// encoding statistics). Only then does reading dictionary indices pay:
// the decoder turns plain pages into dictionary entries value by value.
func (p *Reader) dictOnly(col int) bool {
	if len(p.rgs) == 0 {
		return false
	}
	md := p.f.MetaData()
	for _, rg := range p.rgs {
		cc, err := md.RowGroup(rg).ColumnChunk(col)
		if err != nil || !cc.HasDictionaryPage() {
			return false
		}
		st := cc.EncodingStats()
		if len(st) == 0 {
			return false
		}
		for _, e := range st {
			if e.PageType == dictionaryPage {
				continue
			}
			if e.Encoding != pq.Encodings.RLEDict && e.Encoding != pq.Encodings.PlainDict {
				return false
			}
		}
	}
	return true
}

// gatherDictionary materialises a dictionary array of string or binary
// values as a plain array of typ: one pass sums the lengths into the
// offsets, a second copies the bytes, both into exactly sized buffers.
// NULL rows (their indices are unspecified) get no bytes.
func gatherDictionary(mem memory.Allocator, d *array.Dictionary, typ arrow.DataType) (arrow.Array, error) {
	dict := d.Dictionary()
	var doffs []int32
	switch v := dict.(type) {
	case *array.String:
		doffs = v.ValueOffsets()
	case *array.Binary:
		doffs = v.ValueOffsets()
	}
	var dbytes []byte
	if b := dict.Data().Buffers()[2]; b != nil {
		dbytes = b.Bytes()
	}
	idx := d.Indices().(*array.Int32).Int32Values()
	n := len(idx)
	dictLen := uint32(len(doffs) - 1)
	if len(doffs) == 0 {
		dictLen = 0
	}
	data := d.Data()
	var valid []byte
	if d.NullN() > 0 && data.Buffers()[0] != nil { // d.NullN counts a slice's NULLs (data.NullN may be unknown, -1)
		valid = data.Buffers()[0].Bytes()
	}
	voff := data.Offset()

	offBuf := memory.NewResizableBuffer(mem)
	defer offBuf.Release()
	offBuf.Resize(arrow.Int32Traits.BytesRequired(n + 1))
	offs := arrow.Int32Traits.CastFromBytes(offBuf.Bytes())[:n+1]
	var total int32
	if valid == nil {
		for i, k := range idx {
			offs[i] = total
			if uint32(k) >= dictLen {
				return nil, errDictIndex(k, dictLen)
			}
			total += doffs[k+1] - doffs[k]
		}
	} else {
		for i, k := range idx {
			offs[i] = total
			if !bitutil.BitIsSet(valid, voff+i) {
				continue
			}
			if uint32(k) >= dictLen {
				return nil, errDictIndex(k, dictLen)
			}
			total += doffs[k+1] - doffs[k]
		}
	}
	offs[n] = total

	valBuf := memory.NewResizableBuffer(mem)
	defer valBuf.Release()
	if words := shortDictWords(doffs, dbytes); words != nil {
		// Values of at most 8 bytes (flags, modes, priorities): one 8-byte
		// store per row instead of a copy call; a store's bytes past its
		// value are overwritten by the next row's, and the last spills into
		// the 8 bytes of slack reserved past the end.
		valBuf.Resize(int(total) + 8)
		valBuf.ResizeNoShrink(int(total))
		out := valBuf.Buf()
		for i, k := range idx {
			if o := offs[i]; offs[i+1] != o {
				binary.LittleEndian.PutUint64(out[o:], words[k])
			}
		}
	} else {
		valBuf.Resize(int(total))
		out := valBuf.Bytes()
		for i, k := range idx {
			o := offs[i]
			if offs[i+1] == o {
				continue
			}
			copy(out[o:offs[i+1]], dbytes[doffs[k]:doffs[k+1]])
		}
	}

	var bitmap *memory.Buffer
	if valid != nil {
		if voff == 0 {
			bitmap = data.Buffers()[0]
			bitmap.Retain()
		} else {
			bitmap = memory.NewResizableBuffer(mem)
			bitmap.Resize(int(bitutil.BytesForBits(int64(n))))
			bitutil.CopyBitmap(valid, voff, n, bitmap.Bytes(), 0)
		}
		defer bitmap.Release()
	}
	od := array.NewData(typ, n, []*memory.Buffer{bitmap, offBuf, valBuf}, nil, d.NullN(), 0)
	defer od.Release()
	return array.MakeFromData(od), nil
}

// shortDictWords returns each dictionary value packed little-endian into a
// word, or nil when some value is longer than 8 bytes.
func shortDictWords(doffs []int32, dbytes []byte) []uint64 {
	if len(doffs) < 2 {
		return nil
	}
	words := make([]uint64, len(doffs)-1)
	for k := range words {
		v := dbytes[doffs[k]:doffs[k+1]]
		if len(v) > 8 {
			return nil
		}
		var w [8]byte
		copy(w[:], v)
		words[k] = binary.LittleEndian.Uint64(w[:])
	}
	return words
}

func errDictIndex(k int32, n uint32) error {
	return fmt.Errorf("dictionary index %d out of range (%d entries)", k, n)
}

// zeroNullSlots clears the values under the NULL rows of a fixed-width
// column. The recycler hands out buffers without zeroing them, so a slot
// under NULL may hold a stale value; kernels that compute over every slot
// and consult validity afterwards (decimal overflow checks, hashing) must
// see zero there, as they would from a fresh buffer. Only columns with
// NULLs pay for the pass. The column's buffers belong to this batch alone.
func zeroNullSlots(col arrow.Array) {
	if col.NullN() == 0 {
		return
	}
	fw, ok := col.DataType().(arrow.FixedWidthDataType)
	if !ok || fw.BitWidth() < 8 {
		return
	}
	d := col.Data()
	bufs := d.Buffers()
	if len(bufs) < 2 || bufs[1] == nil || bufs[0] == nil {
		return
	}
	w := fw.BitWidth() / 8
	vals := bufs[1].Bytes()
	valid := bufs[0].Bytes()
	off := d.Offset()
	for r := range d.Len() {
		if !bitutil.BitIsSet(valid, off+r) {
			clear(vals[(off+r)*w : (off+r+1)*w])
		}
	}
}
