package execop

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestCopyBatchOffHeap copies a batch with large and small buffers, nulls,
// strings and a sliced column, compares it with the original after the
// original is gone, and checks that releasing the copy unmaps everything.
func TestCopyBatchOffHeap(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	off := NewOffHeapAllocator()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "i", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String},
	}, nil)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	const n = 50_000 // 400 kB of int64: mapped; the validity bitmap: Go heap
	for i := range n {
		if i%7 == 0 {
			b.Field(0).(*array.Int64Builder).AppendNull()
		} else {
			b.Field(0).(*array.Int64Builder).Append(int64(i))
		}
		b.Field(1).(*array.StringBuilder).Append(string(rune('a' + i%26)))
	}
	whole := b.NewRecordBatch()
	orig := whole.NewSlice(3, n-5)
	whole.Release()
	want := orig.Column(0).String()[:200] + orig.Column(1).String()[:200]
	wantNulls := orig.Column(0).NullN()

	cp := CopyBatch(off, orig)
	orig.Release()
	if off.Mapped() == 0 && offHeapSupported {
		t.Fatalf("no buffer was mapped")
	}
	if cp.NumRows() != n-8 {
		t.Fatalf("rows = %d, want %d", cp.NumRows(), n-8)
	}
	if got := cp.Column(0).String()[:200] + cp.Column(1).String()[:200]; got != want {
		t.Fatalf("copy differs:\n got %s\nwant %s", got, want)
	}
	if cp.Column(0).NullN() != wantNulls {
		t.Fatalf("null count %d, want %d", cp.Column(0).NullN(), wantNulls)
	}
	cp.Release()
	if m := off.Mapped(); m != 0 {
		t.Fatalf("%d bytes still mapped after release", m)
	}
}

// TestOffHeapReallocate grows and shrinks a mapped buffer and keeps its bytes.
func TestOffHeapReallocate(t *testing.T) {
	off := NewOffHeapAllocator()
	b := off.Allocate(100 << 10)
	for i := range b {
		b[i] = byte(i)
	}
	b = off.Reallocate(300<<10, b)
	for i := range 100 << 10 {
		if b[i] != byte(i) {
			t.Fatalf("byte %d lost on grow", i)
		}
	}
	for _, v := range b[100<<10:] {
		if v != 0 {
			t.Fatal("grown part is not zero")
		}
	}
	b = off.Reallocate(10, b)
	if len(b) != 10 || b[9] != 9 {
		t.Fatalf("shrink kept %d bytes", len(b))
	}
	off.Free(b)
	if m := off.Mapped(); m != 0 {
		t.Fatalf("%d bytes still mapped", m)
	}
}
