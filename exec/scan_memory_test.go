package exec_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver/exec"
	"github.com/quiverdb/quiver/exec/execop"
	"github.com/quiverdb/quiver/exec/exectest"
)

// TestMemoryScanOutlivesDrop: a memory table whose buffers live outside
// the Go heap is released by its owner (a DROP) after a scan opened it;
// the scan still reads every row, because MemoryTables hands it its own
// references. Were the scan borrowing, it would read unmapped memory.
func TestMemoryScanOutlivesDrop(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	off := execop.NewOffHeapAllocator()
	schema := arrow.NewSchema([]arrow.Field{{Name: "v", Type: arrow.PrimitiveTypes.Int64}}, nil)
	var parts [][]arrow.RecordBatch
	var want int64
	for p := range 2 {
		var bs []arrow.RecordBatch
		for range 3 {
			b := array.NewInt64Builder(mem)
			for i := range 20_000 {
				b.Append(int64(p*1_000_000 + i))
				want += int64(p*1_000_000 + i)
			}
			a := b.NewArray()
			b.Release()
			rb := array.NewRecordBatch(schema, []arrow.Array{a}, int64(a.Len()))
			a.Release()
			bs = append(bs, execop.CopyBatch(off, rb)) // 160 kB columns: mapped
			rb.Release()
		}
		parts = append(parts, bs)
	}
	tables := exectest.Tables{"t": parts}
	scan := exectest.MemoryScan("t", schema, 2)
	ctx := context.Background()
	tc := exec.NewTaskContext(mem, 0)
	tc.MemoryTables = tables.Lookup
	var ops []execop.Operator
	for p := range 2 {
		op, err := exec.Build(tc, scan, p)
		if err != nil {
			t.Fatal(err)
		}
		if err := op.Open(ctx); err != nil {
			t.Fatal(err)
		}
		ops = append(ops, op)
	}
	tables.Release() // the owner drops the table
	var got int64
	for _, op := range ops {
		for {
			b, err := op.Next(ctx)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range b.Column(0).(*array.Int64).Int64Values() {
				got += v
			}
			b.Release()
		}
		if err := op.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if got != want {
		t.Fatalf("sum %d, want %d", got, want)
	}
	if m := off.Mapped(); m != 0 {
		t.Fatalf("%d bytes still mapped after the scans closed", m)
	}
}

// TestMemoryScanDroppedBeforeOpen: a table dropped after the scan was built
// but before it opened fails the scan with a clear error; it must never
// read as an empty partition (a silently short result).
func TestMemoryScanDroppedBeforeOpen(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	schema := arrow.NewSchema([]arrow.Field{{Name: "v", Type: arrow.PrimitiveTypes.Int64}}, nil)
	b := array.NewInt64Builder(mem)
	b.AppendValues([]int64{1, 2, 3}, nil)
	a := b.NewArray()
	b.Release()
	rb := array.NewRecordBatch(schema, []arrow.Array{a}, 3)
	a.Release()
	tables := exectest.Tables{"t": {{rb}}}
	dropped := false
	tc := exec.NewTaskContext(mem, 0)
	tc.MemoryTables = func(name string) ([][]arrow.RecordBatch, bool) {
		if dropped {
			return nil, false
		}
		return tables.Lookup(name)
	}
	op, err := exec.Build(tc, exectest.MemoryScan("t", schema, 1), 0)
	if err != nil {
		t.Fatal(err)
	}
	dropped = true
	tables.Release()
	err = op.Open(context.Background())
	if err == nil || !strings.Contains(err.Error(), `memory table "t" not found`) {
		t.Fatalf("Open after the drop: %v, want a memory table not found error", err)
	}
	if err := op.Close(); err != nil {
		t.Fatal(err)
	}
}
