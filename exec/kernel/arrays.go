package kernel

import (
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Builders of Arrow arrays from the flat Go slices that hash tables and
// aggregate states keep. Each copies whole slices into Arrow buffers in one
// go (no per-value builder calls).

// ArrayMaker carries the allocator output arrays are built from.
type ArrayMaker struct{ Mem memory.Allocator }

func SizeOf[T any](z T) int { return int(unsafe.Sizeof(z)) }

// NewBuffer returns a buffer of mem holding a copy of b.
func (m *ArrayMaker) NewBuffer(b []byte) *memory.Buffer {
	buf := memory.NewResizableBuffer(m.Mem)
	buf.Resize(len(b))
	copy(buf.Bytes(), b)
	return buf
}

// validity returns a validity bitmap for valid (nil if all are valid) and
// the null count. valid == nil means all valid.
func (m *ArrayMaker) validity(valid []bool) (*memory.Buffer, int) {
	nulls := 0
	for _, v := range valid {
		if !v {
			nulls++
		}
	}
	if nulls == 0 {
		return nil, 0
	}
	buf := memory.NewResizableBuffer(m.Mem)
	buf.Resize(int(bitutil.BytesForBits(int64(len(valid)))))
	bits := buf.Bytes()
	for i := range bits {
		bits[i] = 0
	}
	for i, v := range valid {
		if v {
			bitutil.SetBit(bits, i)
		}
	}
	return buf, nulls
}

// finish wraps buffers into an array of dt and releases the local references.
func finish(dt arrow.DataType, n int, bufs []*memory.Buffer, nulls int) arrow.Array {
	data := array.NewData(dt, n, bufs, nil, nulls, 0)
	defer data.Release()
	for _, b := range bufs {
		if b != nil {
			b.Release()
		}
	}
	return array.MakeFromData(data)
}

// MakeFixed builds a fixed-width array of dt from vals and valid (nil: all valid).
func MakeFixed[T any](m *ArrayMaker, dt arrow.DataType, vals []T, valid []bool) arrow.Array {
	var z T
	raw := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(vals))), len(vals)*SizeOf(z))
	nb, nulls := m.validity(valid)
	return finish(dt, len(vals), []*memory.Buffer{nb, m.NewBuffer(raw)}, nulls)
}

// MakeBool builds a Boolean array from vals and valid (nil: all valid).
func MakeBool(m *ArrayMaker, vals, valid []bool) arrow.Array {
	buf := memory.NewResizableBuffer(m.Mem)
	buf.Resize(int(bitutil.BytesForBits(int64(len(vals)))))
	bits := buf.Bytes()
	for i := range bits {
		bits[i] = 0
	}
	for i, v := range vals {
		if v {
			bitutil.SetBit(bits, i)
		}
	}
	nb, nulls := m.validity(valid)
	return finish(arrow.FixedWidthTypes.Boolean, len(vals), []*memory.Buffer{nb, buf}, nulls)
}

// MakeBytes builds a string-like array of dt from an arena: row i is
// data[offs[i]:offs[i+1]] (offs has one more entry than valid).
func MakeBytes(m *ArrayMaker, dt arrow.DataType, data []byte, offs []int, valid []bool) arrow.Array {
	n := len(offs) - 1
	lo, hi := offs[0], offs[n]
	var ob *memory.Buffer
	if dt.ID() == arrow.LARGE_STRING || dt.ID() == arrow.LARGE_BINARY {
		o := make([]int64, n+1)
		for i, v := range offs {
			o[i] = int64(v - lo)
		}
		ob = m.NewBuffer(arrow.GetBytes(o))
	} else {
		o := make([]int32, n+1)
		for i, v := range offs {
			o[i] = int32(v - lo)
		}
		ob = m.NewBuffer(arrow.GetBytes(o))
	}
	nb, nulls := m.validity(valid)
	return finish(dt, n, []*memory.Buffer{nb, ob, m.NewBuffer(data[lo:hi])}, nulls)
}
