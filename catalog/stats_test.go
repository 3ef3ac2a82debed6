package catalog

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// TestParquetDistinct writes a two-row-group file and checks the bounds
// read from its footer: integer ranges (over both row groups), capped by
// the row count, and unknown for strings; and the value bounds, which
// ignore NULLs.
func TestParquetDistinct(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "k", Type: arrow.PrimitiveTypes.Int64},
		{Name: "g", Type: arrow.PrimitiveTypes.Int32},
		{Name: "wide", Type: arrow.PrimitiveTypes.Int64},
		{Name: "s", Type: arrow.BinaryTypes.String},
		{Name: "n", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	for i := range 10 {
		b.Field(0).(*array.Int64Builder).Append(int64(100 + i))
		b.Field(1).(*array.Int32Builder).Append(3)
		b.Field(2).(*array.Int64Builder).Append(int64(i) * 1_000_000)
		b.Field(3).(*array.StringBuilder).Append("x")
		if i%3 == 0 {
			b.Field(4).AppendNull()
		} else {
			b.Field(4).(*array.Int32Builder).Append(int32(i * 2))
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	path := filepath.Join(t.TempDir(), "t.parquet")
	writeParquet(t, mem, path, rec, 5)
	tbl, err := OpenTable("t", Parquet, path, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(tbl.RowGroupRows[0]); got != 2 {
		t.Fatalf("the file has %d row groups, want 2", got)
	}
	want := []int64{10, 1, 10, 0, 10}
	if !slices.Equal(tbl.Distinct, want) {
		t.Errorf("Distinct = %v, want %v", tbl.Distinct, want)
	}
	wantBounds := []KeyRange{{Lo: 100, Hi: 109, Known: true}, {Lo: 3, Hi: 3, Known: true},
		{Lo: 0, Hi: 9_000_000, Known: true}, {}, {Lo: 2, Hi: 16, Known: true}}
	if !slices.Equal(tbl.Bounds, wantBounds) {
		t.Errorf("Bounds = %v, want %v", tbl.Bounds, wantBounds)
	}
}

// writeParquet writes rec to path in row groups of at most groupRows rows.
func writeParquet(t *testing.T, mem memory.Allocator, path string, rec arrow.RecordBatch, groupRows int64) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := pqarrow.NewFileWriter(rec.Schema(), f, parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(groupRows), parquet.WithAllocator(mem)), pqarrow.NewArrowWriterProperties(pqarrow.WithAllocator(mem)))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// A table without recorded row groups (as decoded from a shipped plan)
// reads each footer once per file version: a second call is served from
// the cache, a rewritten file is read afresh.
func TestParquetRowGroupsCachesFooters(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	schema := arrow.NewSchema([]arrow.Field{{Name: "k", Type: arrow.PrimitiveTypes.Int64}}, nil)
	b := array.NewInt64Builder(mem)
	defer b.Release()
	for i := range 12 {
		b.Append(int64(i))
	}
	col := b.NewArray()
	defer col.Release()
	rec := array.NewRecordBatch(schema, []arrow.Array{col}, 12)
	defer rec.Release()
	path := filepath.Join(t.TempDir(), "t.parquet")
	writeParquet(t, mem, path, rec, 4)
	shipped := &Table{Name: "t", Schema: schema, Format: Parquet, Files: []string{path}, Rows: -1}
	readsNow := func() int {
		footers.mu.Lock()
		defer footers.mu.Unlock()
		return footers.reads
	}
	before := readsNow()
	rows, ranges, err := ParquetRowGroups(shipped)
	if err != nil || !slices.Equal(rows[0], []int64{4, 4, 4}) || len(ranges[0]) != 3 || ranges[0][2][0].Hi != 11 {
		t.Fatalf("first read: rows %v, ranges %v, %v", rows, ranges, err)
	}
	if rows, _, err := ParquetRowGroups(shipped); err != nil || !slices.Equal(rows[0], []int64{4, 4, 4}) {
		t.Fatalf("second read: rows %v, %v", rows, err)
	}
	if n := readsNow() - before; n != 1 {
		t.Errorf("two calls read %d footers, want 1", n)
	}
	writeParquet(t, mem, path, rec, 6)
	later := time.Now().Add(time.Minute) // a new version even within the clock's resolution
	if err := os.Chtimes(path, later, later); err != nil {
		t.Fatal(err)
	}
	if rows, _, err := ParquetRowGroups(shipped); err != nil || !slices.Equal(rows[0], []int64{6, 6}) {
		t.Fatalf("after rewriting: rows %v, %v", rows, err)
	}
	if n := readsNow() - before; n != 2 {
		t.Errorf("after a rewrite %d footers read in all, want 2", n)
	}
}
