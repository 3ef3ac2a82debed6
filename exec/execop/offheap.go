package execop

import (
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// offHeapMin is the smallest buffer worth its own mapping; smaller ones
// stay on the Go heap (a mapping costs a page and a system call).
const offHeapMin = 64 << 10

// OffHeapAllocator allocates large buffers outside the Go heap (anonymous
// memory maps) for data that lives long, such as tables loaded into
// memory. The collector neither scans such memory nor counts it toward
// its next cycle, so holding a gigabyte of tables does not make every
// collection wait for another gigabyte of garbage. Smaller buffers, and
// every buffer on platforms without maps, come from the Go allocator.
//
// Contract: Free receives exactly the slice Allocate or Reallocate
// returned, once, and nothing touches it afterwards (arrow-go's reference
// counting guarantees this when every Retain has its Release); touching
// freed mapped memory faults. Safe for concurrent use.
type OffHeapAllocator struct {
	mapped atomic.Int64 // bytes currently mapped
}

// NewOffHeapAllocator returns an allocator as described on the type.
func NewOffHeapAllocator() *OffHeapAllocator { return &OffHeapAllocator{} }

// Mapped is the number of bytes currently held in maps.
func (a *OffHeapAllocator) Mapped() int64 { return a.mapped.Load() }

// Allocate implements memory.Allocator.
func (a *OffHeapAllocator) Allocate(size int) []byte {
	if size >= offHeapMin {
		if b := mapAnon(size); b != nil {
			a.mapped.Add(int64(cap(b)))
			return b[:size]
		}
	}
	return memory.DefaultAllocator.Allocate(size)
}

// Reallocate implements memory.Allocator.
func (a *OffHeapAllocator) Reallocate(size int, b []byte) []byte {
	if size <= cap(b) && a.isMapped(b) {
		old := len(b)
		b = b[:size]
		clear(b[min(old, size):])
		return b
	}
	nb := a.Allocate(size)
	copy(nb, b)
	a.Free(b)
	return nb
}

// Free implements memory.Allocator.
func (a *OffHeapAllocator) Free(b []byte) {
	if a.isMapped(b) {
		a.mapped.Add(-int64(cap(b)))
		unmapAnon(b[:cap(b)])
	}
	// Go heap buffers go to the collector.
}

// isMapped tells a mapped buffer from a Go heap one by its capacity: a
// mapped buffer's capacity is at least offHeapMin, while the Go allocator
// only serves requests below it.
func (a *OffHeapAllocator) isMapped(b []byte) bool {
	return offHeapSupported && cap(b) >= offHeapMin
}

// CopyBatch returns a deep copy of b whose buffers come from mem. The
// caller owns the copy (one reference) and still owns b.
func CopyBatch(mem memory.Allocator, b arrow.RecordBatch) arrow.RecordBatch {
	cols := make([]arrow.Array, b.NumCols())
	for i, c := range b.Columns() {
		d := copyData(mem, c.Data())
		cols[i] = array.MakeFromData(d)
		d.Release()
	}
	out := array.NewRecordBatch(b.Schema(), cols, b.NumRows())
	for _, c := range cols {
		c.Release()
	}
	return out
}

// copyData deep-copies an ArrayData's buffers, children and dictionary into mem.
func copyData(mem memory.Allocator, d arrow.ArrayData) arrow.ArrayData {
	bufs := make([]*memory.Buffer, len(d.Buffers()))
	for i, src := range d.Buffers() {
		if src == nil {
			continue
		}
		nb := memory.NewResizableBuffer(mem)
		nb.Resize(src.Len())
		copy(nb.Bytes(), src.Bytes())
		bufs[i] = nb
	}
	children := make([]arrow.ArrayData, len(d.Children()))
	for i, c := range d.Children() {
		children[i] = copyData(mem, c)
	}
	out := array.NewData(d.DataType(), d.Len(), bufs, children, d.NullN(), d.Offset())
	for _, nb := range bufs {
		if nb != nil {
			nb.Release()
		}
	}
	for _, c := range children {
		c.Release()
	}
	// Dictionary returns a typed nil when there is none.
	if dict, ok := d.Dictionary().(*array.Data); ok && dict != nil {
		nd := copyData(mem, dict)
		out.SetDictionary(nd)
		nd.Release()
	}
	return out
}
