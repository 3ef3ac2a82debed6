package execop

import (
	"context"
	"strings"
	"testing"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver/exec/memcheck"
)

func TestRecycler(t *testing.T) {
	parent := memcheck.New(t)
	r := NewScanRecycler(parent, 1<<20)

	// Small requests go to the parent untracked.
	small := r.Allocate(100)
	if len(small) != 100 {
		t.Fatalf("len %d", len(small))
	}
	r.Free(small)

	a := r.Allocate(40000)
	if len(a) != 40000 || cap(a) != 40000 {
		t.Fatalf("len %d cap %d, want 40000 for both (arrow-go writes up to the capacity)", len(a), cap(a))
	}
	a[0], a[39999] = 1, 2
	// Growing within the class keeps the buffer and its bytes.
	a2 := r.Reallocate(40960, a)
	if unsafe.SliceData(a2) != unsafe.SliceData(a) || a2[0] != 1 || a2[39999] != 2 {
		t.Fatal("reallocate within the class moved or lost the bytes")
	}
	// Growing beyond it copies.
	a3 := r.Reallocate(100000, a2)
	if len(a3) != 100000 || a3[0] != 1 || a3[39999] != 2 {
		t.Fatal("reallocate beyond the class lost the bytes")
	}
	// a2's buffer went to the free list and is handed out again.
	b := r.Allocate(33000)
	if unsafe.SliceData(b) != unsafe.SliceData(a) {
		t.Error("a freed buffer of the same class was not reused")
	}
	if r.reused != 1 {
		t.Errorf("reused %d, want 1", r.reused)
	}
	// A buffer held by an Arrow buffer is recycled only after the last Release.
	buf := memory.NewResizableBuffer(r)
	buf.Resize(50000)
	buf.Retain()
	buf.Release()
	c := r.Allocate(50000)
	if unsafe.SliceData(c) == unsafe.SliceData(buf.Bytes()) {
		t.Fatal("a buffer still referenced was reused")
	}
	held := unsafe.SliceData(buf.Bytes())
	buf.Release()
	d := r.Allocate(50000)
	if unsafe.SliceData(d) != held {
		t.Error("a released buffer was not reused")
	}
	// The free list is bounded.
	big := r.Allocate(900 << 10)
	big2 := r.Allocate(900 << 10)
	r.Free(big)
	r.Free(big2) // over maxFree: back to the parent
	if r.freeBytes > r.maxFree {
		t.Errorf("free list holds %d bytes, limit %d", r.freeBytes, r.maxFree)
	}
	r.Free(a3)
	r.Free(b)
	r.Close()
	// Frees after close go to the parent.
	r.Free(c)
	r.Free(d)
	if len(r.owned) != 0 {
		t.Errorf("%d buffers still tracked", len(r.owned))
	}
}

func TestRecycleClass(t *testing.T) {
	prev := 0
	for _, size := range []int{recycleMin, recycleMin + 1, 40960, 40961, 65535, 65536, 1 << 20, 3<<20 + 5, 7 << 24, 1 << 27, 7 << 25} {
		c, cs := recycleClass(size)
		if c < 0 || cs < size || cs > size+size/4+1 || c < prev {
			t.Errorf("size %d: class %d of %d bytes", size, c, cs)
		}
		prev = c
	}
	if c, _ := recycleClass(recycleMin - 1); c >= 0 {
		t.Error("a small size is recycled")
	}
	if c, _ := recycleClass(1 << 28); c >= 0 {
		t.Error("a huge size is recycled")
	}
}

// TestRecyclerUnderArrowTake: arrow-go's string take presizes its data
// buffer from the mean value length and then trusts the capacity of the
// slice the allocator returned; a recycled buffer whose capacity exceeded
// its length (its size class) made it write past the end and panic in a
// goroutine of arrow's compute package, which killed the process. Taking
// only the long values of a column of short and long strings crosses the
// presized estimate.
func TestRecyclerUnderArrowTake(t *testing.T) {
	parent := memcheck.New(t)
	r := NewRecycler(parent, 1<<20)
	defer r.Close()
	bld := array.NewStringBuilder(memory.DefaultAllocator)
	long := strings.Repeat("x", 300)
	for i := range 100 {
		if i%2 == 0 {
			bld.Append("y")
		} else {
			bld.Append(long)
		}
	}
	vals := bld.NewStringArray()
	defer vals.Release()
	bld.Release()
	ib := array.NewInt32Builder(memory.DefaultAllocator)
	for i := range 200 {
		ib.Append(int32(2*(i%50) + 1))
	}
	idx := ib.NewInt32Array()
	defer idx.Release()
	ib.Release()
	got, err := compute.TakeArray(compute.WithAllocator(context.Background(), r), vals, idx)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Release()
	s := got.(*array.String)
	if s.Len() != 200 {
		t.Fatalf("%d values, want 200", s.Len())
	}
	for i := range s.Len() {
		if s.Value(i) != long {
			t.Fatalf("value %d is %q..., want the long string", i, s.Value(i)[:min(10, len(s.Value(i)))])
		}
	}
}
