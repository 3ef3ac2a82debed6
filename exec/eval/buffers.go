package eval

import (
	"context"
	"math/bits"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver/qerr"
)

// newFixed allocates a value buffer of n T's from mem. The caller owns the
// buffer's reference; the returned slice aliases it.
func newFixed[T arrow.FixedWidthType](mem memory.Allocator, n int) (*memory.Buffer, []T) {
	var zero T
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(n * int(unsafe.Sizeof(zero)))
	if n == 0 {
		return buf, nil
	}
	return buf, arrow.GetData[T](buf.Bytes())[:n]
}

// newFixedDirty is newFixed for kernels that write every one of the n
// values (NULL rows included): over an allocator that can skip zeroing
// (the task's recycler), the memory is handed out as it is.
func newFixedDirty[T arrow.FixedWidthType](mem memory.Allocator, n int) (*memory.Buffer, []T) {
	d, ok := mem.(dirtyAllocator)
	if !ok || n == 0 {
		return newFixed[T](mem, n)
	}
	var zero T
	size := n * int(unsafe.Sizeof(zero))
	buf := memory.NewBufferWithAllocator(d.AllocateDirty((size+63)&^63), mem)
	buf.ResizeNoShrink(size)
	return buf, arrow.GetData[T](buf.Bytes())[:n]
}

// dirtyAllocator is an allocator that can hand out memory without zeroing
// it first (exec's accounting allocator over a recycler).
type dirtyAllocator interface {
	AllocateDirty(size int) []byte
}

// newBitmap allocates a bitmap of n bits, all set to v.
func newBitmap(mem memory.Allocator, n int, v bool) *memory.Buffer {
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(int(bitutil.BytesForBits(int64(n))))
	b := buf.Bytes()
	if !v {
		clear(b) // allocators need not zero (a recycling one does not)
		return buf
	}
	fillOnes(b)
	return buf
}

// fillOnes sets every byte of b to 0xff, by doubling copies rather than a
// byte loop (bitmaps of a batch run to kilobytes).
func fillOnes(b []byte) {
	if len(b) == 0 {
		return
	}
	b[0] = 0xff
	for n := 1; n < len(b); n *= 2 {
		copy(b[n:], b[:n])
	}
}

// makeArray wraps buffers into an array of dt; valid may be nil (no nulls).
// It retains the buffers; the caller still releases its own references.
func makeArray(dt arrow.DataType, n int, valid, values *memory.Buffer) arrow.Array {
	nulls := 0
	if valid != nil {
		nulls = array.UnknownNullCount
	}
	data := array.NewData(dt, n, []*memory.Buffer{valid, values}, nil, nulls, 0)
	defer data.Release()
	return array.MakeFromData(data)
}

// validityBits returns a's validity bitmap and its bit offset, or nil when a
// has no nulls.
func validityBits(a arrow.Array) ([]byte, int) {
	if a.NullN() == 0 {
		return nil, 0
	}
	if a.DataType().ID() == arrow.NULL {
		return nil, 0 // callers handle Null arrays separately
	}
	return a.NullBitmapBytes(), a.Data().Offset()
}

// andValidity returns a fresh validity bitmap (offset 0) that is the AND of
// the arrays' validity, or nil when none of them has nulls.
func andValidity(mem memory.Allocator, n int, arrs ...arrow.Array) *memory.Buffer {
	var out *memory.Buffer
	for _, a := range arrs {
		if a == nil {
			continue
		}
		bm, off := validityBits(a)
		if bm == nil {
			continue
		}
		if out == nil {
			out = memory.NewResizableBuffer(mem)
			out.Resize(int(bitutil.BytesForBits(int64(n))))
			bitutil.CopyBitmap(bm, off, n, out.Bytes(), 0)
			continue
		}
		ob := out.Bytes()
		bitutil.BitmapAnd(ob, bm, 0, int64(off), ob, 0, int64(n))
	}
	return out
}

// anyAllNull reports whether one of the arrays is of the Null type or entirely
// NULL, in which case a null-propagating operator's result is all NULL.
func anyAllNull(arrs ...arrow.Array) bool {
	for _, a := range arrs {
		if a != nil && (a.DataType().ID() == arrow.NULL || (a.Len() > 0 && a.NullN() == a.Len())) {
			return true
		}
	}
	return false
}

// alignedBits returns a copy-free (when possible) view of the n bits of bm
// starting at bit off, realigned to bit 0.
func alignedBits(bm []byte, off, n int) []byte {
	nb := int(bitutil.BytesForBits(int64(n)))
	if off%8 == 0 {
		return bm[off/8 : off/8+nb]
	}
	out := make([]byte, nb)
	bitutil.CopyBitmap(bm, off, n, out, 0)
	return out
}

// boolParts returns a boolean array's values and validity as bitmaps aligned
// at bit 0; valid is nil when there are no nulls.
func boolParts(a arrow.Array) (vals, valid []byte) {
	n := a.Len()
	if n == 0 {
		return nil, nil
	}
	if a.DataType().ID() == arrow.NULL {
		nb := int(bitutil.BytesForBits(int64(n)))
		return make([]byte, nb), make([]byte, nb)
	}
	d := a.Data()
	vals = alignedBits(d.Buffers()[1].Bytes(), d.Offset(), n)
	if a.NullN() > 0 {
		valid = alignedBits(d.Buffers()[0].Bytes(), d.Offset(), n)
	}
	return vals, valid
}

// appendTrue appends the indices where the boolean array a is valid and true.
func appendTrue(sel []int32, a arrow.Array) []int32 {
	n := a.Len()
	if a.DataType().ID() == arrow.NULL || n == 0 {
		return sel
	}
	vals, valid := boolParts(a)
	for i := 0; i < len(vals); i++ {
		w := vals[i]
		if valid != nil {
			w &= valid[i]
		}
		if i == len(vals)-1 && n%8 != 0 {
			w &= byte(1)<<(n%8) - 1
		}
		for w != 0 {
			t := bits.TrailingZeros8(w)
			sel = append(sel, int32(i*8+t))
			w &= w - 1
		}
	}
	return sel
}

// b2u turns a bool into 0 or 1 without a branch.
func b2u(b bool) byte {
	var x byte
	if b {
		x = 1
	}
	return x
}

// packer writes one bit per row into a bitmap, eight rows at a time.
func setBit(bm []byte, i int, v bool) {
	bm[i>>3] |= b2u(v) << (uint(i) & 7)
}

// stringView returns zero-copy Go strings over a string array's values (NULL
// rows are empty strings). The slice is scratch memory for one kernel call.
func stringView(a arrow.Array) []string {
	out := make([]string, a.Len())
	switch s := a.(type) {
	case *array.String:
		for i := range out {
			out[i] = s.Value(i)
		}
	case *array.LargeString:
		for i := range out {
			out[i] = s.Value(i)
		}
	}
	return out
}

// values returns the raw fixed-width values of a (honouring its offset).
func values[T arrow.FixedWidthType](a arrow.Array) []T {
	if a.Len() == 0 {
		return nil
	}
	return arrow.GetValues[T](a.Data(), 1)
}

// takeArray gathers rows idx of a into a new array.
func takeArray(ctx context.Context, mem memory.Allocator, a arrow.Array, idx []int32) (arrow.Array, error) {
	if a.DataType().ID() == arrow.NULL {
		return array.NewNull(len(idx)), nil
	}
	if a.DataType().ID() == arrow.INTERVAL_MONTH_DAY_NANO {
		// arrow's take kernels have no 16-byte values.
		return takeIntervals(mem, a, idx), nil
	}
	ia := int32Array(idx)
	defer ia.Release()
	out, err := compute.TakeArrayOpts(compute.WithAllocator(ctx, mem), a, ia, compute.TakeOptions{BoundsCheck: false})
	if err != nil {
		return nil, qerr.Internalf("eval: take: %w", err)
	}
	return out, nil
}

// int32Array wraps Go-owned indices as an Int32 array without copying.
func int32Array(idx []int32) arrow.Array {
	buf := memory.NewBufferBytes(arrow.GetBytes(idx))
	data := array.NewData(arrow.PrimitiveTypes.Int32, len(idx), []*memory.Buffer{nil, buf}, nil, 0, 0)
	defer data.Release()
	return array.MakeFromData(data)
}

// subInput gathers rows idx of the columns in used into a new input.
// release frees it.
func subInput(ctx context.Context, mem memory.Allocator, in *input, used []int, idx []int32) (*input, error) {
	sub := &input{cols: make([]arrow.Array, len(in.cols)), n: len(idx)}
	for _, c := range used {
		if c >= len(in.cols) || in.cols[c] == nil {
			continue
		}
		t, err := takeArray(ctx, mem, in.cols[c], idx)
		if err != nil {
			releaseInput(sub)
			return nil, err
		}
		sub.cols[c] = t
	}
	return sub, nil
}

func releaseInput(in *input) {
	for _, c := range in.cols {
		if c != nil {
			c.Release()
		}
	}
}

// assemble builds an array of dt whose row i is row pos[i] of the
// concatenation of pieces. It is the type-generic merge used by CASE and
// coalesce.
func assemble(ctx context.Context, mem memory.Allocator, dt arrow.DataType, pieces []arrow.Array, pos []int32) (arrow.Array, error) {
	if dt.ID() == arrow.NULL {
		return array.NewNull(len(pos)), nil
	}
	if len(pieces) == 0 {
		return array.MakeArrayOfNull(mem, dt, len(pos)), nil
	}
	conv := make([]arrow.Array, 0, len(pieces))
	defer func() {
		for _, p := range conv {
			p.Release()
		}
	}()
	for _, p := range pieces {
		if p.DataType().ID() == arrow.NULL && dt.ID() != arrow.NULL {
			conv = append(conv, array.MakeArrayOfNull(mem, dt, p.Len()))
			continue
		}
		p.Retain()
		conv = append(conv, p)
	}
	var all arrow.Array
	if len(conv) == 1 {
		all = conv[0]
		all.Retain()
	} else {
		var err error
		all, err = array.Concatenate(conv, mem)
		if err != nil {
			return nil, qerr.Internalf("eval: concatenate: %w", err)
		}
	}
	defer all.Release()
	return takeArray(ctx, mem, all, pos)
}

// strParts returns a string array's offsets (for its rows, absolute into
// the data buffer) and the whole data buffer, so that row i is
// data[offs[i]:offs[i+1]] even for a sliced array.
func strParts(s *array.String) ([]int32, []byte) {
	offs := s.ValueOffsets()
	var data []byte
	if b := s.Data().Buffers()[2]; b != nil {
		data = b.Bytes()
	}
	return offs, data
}
