package kernel

import (
	"encoding/binary"
	"math/bits"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver/exec/execop"
)

// Gather returns arr's rows idx (in that order, every index in range) as a
// new array allocated from mem, in one pass per buffer: the output buffers
// are sized exactly up front. It handles fixed-width types by byte width,
// Boolean, 32/64-bit-offset strings and binaries, and lists of what it
// handles (DISTINCT set states); ok is false for any other type (the
// caller falls back to compute.Take).
func Gather(mem memory.Allocator, arr arrow.Array, idx []int32) (out arrow.Array, ok bool) {
	dt := arr.DataType()
	n := len(idx)
	if n == 0 {
		return nil, false
	}
	var bufs []*memory.Buffer
	// A memory limit crossed in a later allocation panics up to the
	// operator boundary: the buffers made before it are released on the way.
	built := false
	defer func() {
		if !built {
			releaseBuffers(bufs)
		}
	}()
	switch dt.ID() {
	case arrow.BOOL:
		b := execop.NewDirtyBuffer(mem, int(bitutil.BytesForBits(int64(n))))
		gatherBits(b.Bytes(), arr.Data().Buffers()[1].Bytes(), arr.Data().Offset(), idx)
		bufs = []*memory.Buffer{nil, b}
	case arrow.STRING, arrow.BINARY:
		bufs = gatherBytes[int32](mem, arr, idx)
	case arrow.LARGE_STRING, arrow.LARGE_BINARY:
		bufs = gatherBytes[int64](mem, arr, idx)
	case arrow.LIST:
		return gatherList(mem, arr.(*array.List), idx)
	case arrow.STRUCT:
		return gatherStruct(mem, arr.(*array.Struct), idx)
	case arrow.DICTIONARY, arrow.EXTENSION, arrow.NULL:
		return nil, false
	default:
		fw, isFixed := dt.(arrow.FixedWidthDataType)
		if !isFixed {
			return nil, false
		}
		var b *memory.Buffer
		switch fw.BitWidth() {
		case 8:
			b = gatherFixed[uint8](mem, arr, idx)
		case 16:
			b = gatherFixed[uint16](mem, arr, idx)
		case 32:
			b = gatherFixed[uint32](mem, arr, idx)
		case 64:
			b = gatherFixed[uint64](mem, arr, idx)
		case 128:
			b = gatherFixed[decimal128.Num](mem, arr, idx)
		default:
			return nil, false
		}
		bufs = []*memory.Buffer{nil, b}
	}
	nulls := 0
	if arr.NullN() > 0 {
		bufs[0], nulls = gatherValidity(mem, arr, idx)
	}
	data := array.NewData(dt, n, bufs, nil, nulls, 0)
	defer data.Release()
	built = true
	releaseBuffers(bufs)
	return array.MakeFromData(data), true
}

// gatherList gathers a list array: new offsets, and the child's rows of
// every gathered list, in order, gathered in turn.
func gatherList(mem memory.Allocator, arr *array.List, idx []int32) (arrow.Array, bool) {
	n := len(idx)
	ob := execop.NewDirtyBuffer(mem, (n+1)*4)
	defer func() {
		if r := recover(); r != nil { // a memory limit in the child's gather
			ob.Release()
			panic(r)
		}
	}()
	offs := arrow.Int32Traits.CastFromBytes(ob.Bytes())[:n+1]
	var childIdx []int32
	offs[0] = 0
	for i, r := range idx {
		lo, hi := arr.ValueOffsets(int(r))
		for c := lo; c < hi; c++ {
			childIdx = append(childIdx, int32(c))
		}
		offs[i+1] = int32(len(childIdx))
	}
	var child arrow.Array
	if len(childIdx) == 0 {
		child = array.NewSlice(arr.ListValues(), 0, 0)
	} else {
		var ok bool
		if child, ok = Gather(mem, arr.ListValues(), childIdx); !ok {
			ob.Release()
			return nil, false
		}
	}
	defer child.Release()
	bufs := []*memory.Buffer{nil, ob}
	nulls := 0
	if arr.NullN() > 0 {
		bufs[0], nulls = gatherValidity(mem, arr, idx)
	}
	data := array.NewData(arr.DataType(), n, bufs, []arrow.ArrayData{child.Data()}, nulls, 0)
	defer data.Release()
	for _, b := range bufs {
		if b != nil {
			b.Release()
		}
	}
	return array.MakeFromData(data), true
}

// gatherStruct gathers a struct array: each field's rows in turn (the
// collected rows of array_agg and string_agg).
func gatherStruct(mem memory.Allocator, arr *array.Struct, idx []int32) (arrow.Array, bool) {
	kids := make([]arrow.ArrayData, 0, arr.NumField())
	defer func() {
		for _, k := range kids {
			k.Release()
		}
	}()
	for i := range arr.NumField() {
		f, ok := Gather(mem, arr.Field(i), idx)
		if !ok {
			return nil, false
		}
		kids = append(kids, f.Data())
		f.Data().Retain()
		f.Release()
	}
	bufs := []*memory.Buffer{nil}
	nulls := 0
	if arr.NullN() > 0 {
		bufs[0], nulls = gatherValidity(mem, arr, idx)
	}
	data := array.NewData(arr.DataType(), len(idx), bufs, kids, nulls, 0)
	defer data.Release()
	releaseBuffers(bufs)
	return array.MakeFromData(data), true
}

// newBuf returns a zeroed buffer of n bytes from mem.
func newBuf(mem memory.Allocator, n int) *memory.Buffer {
	b := execop.NewDirtyBuffer(mem, n)
	clear(b.Bytes())
	return b
}

func gatherFixed[T any](mem memory.Allocator, arr arrow.Array, idx []int32) *memory.Buffer {
	var z T
	d := arr.Data()
	raw := d.Buffers()[1].Bytes()
	src := unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(raw))), len(raw)/int(unsafe.Sizeof(z)))[d.Offset():]
	b := execop.NewDirtyBuffer(mem, len(idx)*int(unsafe.Sizeof(z)))
	dst := unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b.Bytes()))), len(idx))
	for i, r := range idx {
		dst[i] = src[r]
	}
	return b
}

// gatherBytes returns the offsets and data buffers of arr's rows idx (NULL
// rows keep whatever bytes they span, which is what Arrow allows).
func gatherBytes[O int32 | int64](mem memory.Allocator, arr arrow.Array, idx []int32) []*memory.Buffer {
	d := arr.Data()
	offs := arrow.GetValues[O](d, 1)
	offs = offs[:d.Len()+1]
	var data []byte
	if bb := d.Buffers()[2]; bb != nil {
		data = bb.Bytes()
	}
	var total O
	for _, r := range idx {
		total += offs[r+1] - offs[r]
	}
	var z O
	ob := execop.NewDirtyBuffer(mem, (len(idx)+1)*int(unsafe.Sizeof(z)))
	done := false
	defer func() {
		if !done {
			ob.Release() // the values' buffer hit the memory limit
		}
	}()
	oDst := unsafe.Slice((*O)(unsafe.Pointer(unsafe.SliceData(ob.Bytes()))), len(idx)+1)
	// 16 bytes of slack: a value of at most 16 bytes is moved as two
	// whole words (no copy call), whatever lies past it being overwritten
	// by the next value or left in the slack.
	db := execop.NewDirtyBuffer(mem, int(total)+16)
	db.ResizeNoShrink(int(total))
	dDst := db.Buf()
	fast := O(len(data) - 16) // values starting at or before fast: read whole words
	var pos O
	oDst[0] = 0
	for i, r := range idx {
		lo, hi := offs[r], offs[r+1]
		if hi-lo <= 16 && lo <= fast {
			s := data[lo : lo+16 : lo+16]
			d := dDst[pos : pos+16 : pos+16]
			binary.LittleEndian.PutUint64(d[0:8], binary.LittleEndian.Uint64(s[0:8]))
			binary.LittleEndian.PutUint64(d[8:16], binary.LittleEndian.Uint64(s[8:16]))
		} else {
			copy(dDst[pos:], data[lo:hi])
		}
		pos += hi - lo
		oDst[i+1] = pos
	}
	done = true
	return []*memory.Buffer{nil, ob, db}
}

// gatherValidity returns the validity bitmap of arr's rows idx and its null count.
func gatherValidity(mem memory.Allocator, arr arrow.Array, idx []int32) (*memory.Buffer, int) {
	b := execop.NewDirtyBuffer(mem, int(bitutil.BytesForBits(int64(len(idx)))))
	set := gatherBits(b.Bytes(), arr.NullBitmapBytes(), arr.Data().Offset(), idx)
	return b, len(idx) - set
}

// gatherBits sets bit i of dst to bit off+idx[i] of src, writing every
// byte of dst[:ceil(len(idx)/8)] whole (the bits past len(idx) clear), and
// returns how many bits it set. Bytes are assembled without branches: the
// bits gathered are as unpredictable as the rows.
func gatherBits(dst, src []byte, off int, idx []int32) int {
	set, i := 0, 0
	for ; i+8 <= len(idx); i += 8 {
		g := idx[i : i+8 : i+8]
		var v byte
		for k, r := range g {
			p := off + int(r)
			v |= (src[p>>3] >> (p & 7) & 1) << k
		}
		dst[i>>3] = v
		set += bits.OnesCount8(v)
	}
	if i < len(idx) {
		var v byte
		for k, r := range idx[i:] {
			p := off + int(r)
			v |= (src[p>>3] >> (p & 7) & 1) << k
		}
		dst[i>>3] = v
		set += bits.OnesCount8(v)
	}
	return set
}

func releaseBuffers(bufs []*memory.Buffer) {
	for _, b := range bufs {
		if b != nil {
			b.Release()
		}
	}
}
