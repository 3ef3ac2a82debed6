package execop

import (
	"math/bits"
	"sync"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Recycler is an allocator that serves large requests from buffers given
// back to it, so that steady-state work (a Parquet scan decoding batch
// after batch, a task's operators gathering and computing batch after
// batch) does not pay the Go heap's zeroing of fresh large allocations, and
// the collector's work on them, for every batch.
//
// Two uses:
//   - A Parquet scan hands one that does not zero (newScanRecycler) to the
//     Parquet decoder, whose record readers overwrite or clear what they
//     use. The bytes under a NULL slot of a decoded column are therefore
//     unspecified, as Arrow's format allows (the scan clears them).
//   - A task's allocator sits over one that zeroes what it reuses
//     (NewRecycler), because arrow-go's own code (MakeArrayOfNull, builders)
//     relies on fresh memory being zero. Kernels that write every byte of a
//     buffer ask for unzeroed memory with AllocateDirty (newDirtyBuffer).
//
// Contract:
//   - A buffer is reused only after Free was called on it, that is after
//     the last reference to the Arrow buffer holding it was released
//     (memory.Buffer calls Free exactly then). Batches that operators keep
//     (join build sides, sorts) simply are not recycled until released.
//   - Requests below recycleMin, and above the largest size class, go to
//     the parent unchanged.
//   - Every buffer in the free list is still allocated from the parent and
//     the free list is bounded by maxFree bytes. Close returns the free list
//     to the parent; buffers freed after Close go to the parent directly.
//
// Safe for concurrent use: batches are released on whichever goroutine
// consumes them.
type Recycler struct {
	parent memory.Allocator

	mu        sync.Mutex
	owned     map[uintptr][]byte // pooled buffers handed out: data pointer → the parent's slice (full class size)
	free      [numRecycleClasses][][]byte
	freeBytes int
	maxFree   int
	closed    bool
	zero      bool // clear a reused buffer on Allocate (not on AllocateDirty)

	// counters for tests and tuning
	reused, fresh int
}

const (
	recycleMin         = 16 << 10 // below this the Go heap's small-object path is cheap
	recycleMinShift    = 14       // log2(recycleMin)
	recycleMaxShift    = 27       // classes up to 128 MiB
	numRecycleClasses  = (recycleMaxShift - recycleMinShift + 1) * 4
	DefaultRecycleFree = 16 << 20
)

// DefaultTaskRecycleFree is the free-list bound of a task's recycler.
const DefaultTaskRecycleFree = 32 << 20

// NewRecycler returns a recycler over parent (DefaultAllocator if nil)
// keeping at most maxFree bytes of free buffers; Allocate returns zeroed
// memory, as Go's allocator does. The caller calls Close when done.
func NewRecycler(parent memory.Allocator, maxFree int) *Recycler {
	r := NewScanRecycler(parent, maxFree)
	r.zero = true
	return r
}

// NewScanRecycler returns a recycler whose Allocate does not zero reused
// buffers, for the Parquet decoder.
func NewScanRecycler(parent memory.Allocator, maxFree int) *Recycler {
	if parent == nil {
		parent = memory.DefaultAllocator
	}
	return &Recycler{parent: parent, owned: make(map[uintptr][]byte), maxFree: maxFree}
}

// recycleClass returns the size class of a request of size bytes and the
// class's byte size: four classes per power of two (so at most 25 % of a
// buffer is slack), or -1 if size is not recycled.
func recycleClass(size int) (int, int) {
	if size < recycleMin {
		return -1, 0
	}
	// shift so that size>>shift lies in [4, 8).
	shift := bits.Len(uint(size)) - 3
	m := (size + 1<<shift - 1) >> shift
	if m == 8 {
		m, shift = 4, shift+1
	}
	idx := (shift+2-recycleMinShift)*4 + (m - 4)
	if idx < 0 || idx >= numRecycleClasses {
		return -1, 0
	}
	return idx, m << shift
}

func dataPtr(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }

// Allocate implements memory.Allocator.
func (r *Recycler) Allocate(size int) []byte {
	b, reused := r.allocate(size)
	if reused && r.zero {
		clear(b)
	}
	return b
}

// AllocateDirty is Allocate without zeroing: the caller writes every byte
// it will read.
func (r *Recycler) AllocateDirty(size int) []byte {
	b, _ := r.allocate(size)
	return b
}

// allocate returns a buffer of size bytes and whether it was reused (and
// so holds old bytes). Its capacity is its length, as Go's allocator gives:
// arrow-go's kernels size their writes by the capacity of the slice an
// allocator returns, so a larger capacity than the length (the class size
// behind it) makes them write past the buffer's end.
func (r *Recycler) allocate(size int) ([]byte, bool) {
	c, csize := recycleClass(size)
	if c < 0 {
		return r.parent.Allocate(size), false
	}
	r.mu.Lock()
	if n := len(r.free[c]); n > 0 {
		b := r.free[c][n-1]
		r.free[c][n-1] = nil
		r.free[c] = r.free[c][:n-1]
		r.freeBytes -= len(b)
		r.owned[dataPtr(b)] = b
		r.reused++
		r.mu.Unlock()
		return b[:size:size], true
	}
	r.fresh++
	r.mu.Unlock()
	// Allocate outside the lock: the parent may be slow or panic (limits).
	b := r.parent.Allocate(csize)
	r.mu.Lock()
	r.owned[dataPtr(b)] = b
	r.mu.Unlock()
	return b[:size:size], false
}

// Reallocate implements memory.Allocator: the first min(len(b), size)
// bytes are preserved; b must not be used afterwards.
func (r *Recycler) Reallocate(size int, b []byte) []byte {
	if len(b) == 0 {
		if b != nil {
			r.Free(b)
		}
		return r.Allocate(size)
	}
	r.mu.Lock()
	orig, ok := r.owned[dataPtr(b)]
	r.mu.Unlock()
	if !ok {
		if c, _ := recycleClass(size); c < 0 {
			return r.parent.Reallocate(size, b)
		}
	} else if size <= len(orig) {
		if c, _ := recycleClass(size); c >= 0 {
			if r.zero && size > len(b) {
				clear(orig[len(b):size]) // the grown part must read as fresh memory
			}
			return orig[:size:size]
		}
	}
	nb := r.Allocate(size)
	copy(nb, b)
	r.Free(b)
	return nb
}

// Free implements memory.Allocator.
func (r *Recycler) Free(b []byte) {
	if cap(b) == 0 {
		r.parent.Free(b)
		return
	}
	p := dataPtr(b)
	r.mu.Lock()
	orig, ok := r.owned[p]
	if !ok {
		r.mu.Unlock()
		r.parent.Free(b)
		return
	}
	delete(r.owned, p)
	if !r.closed && r.freeBytes+len(orig) <= r.maxFree {
		c, _ := recycleClass(len(orig))
		r.free[c] = append(r.free[c], orig)
		r.freeBytes += len(orig)
		r.mu.Unlock()
		return
	}
	r.mu.Unlock()
	r.parent.Free(orig)
}

// Close hands the free list back to the parent; later frees go straight
// to the parent. Buffers still in use stay valid. Idempotent.
func (r *Recycler) Close() {
	r.mu.Lock()
	r.closed = true
	var drop [][]byte
	for c := range r.free {
		drop = append(drop, r.free[c]...)
		r.free[c] = nil
	}
	r.freeBytes = 0
	r.mu.Unlock()
	for _, b := range drop {
		r.parent.Free(b)
	}
}
