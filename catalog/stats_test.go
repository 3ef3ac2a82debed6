package catalog

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// TestParquetDistinct writes a two-row-group file and checks the bounds
// read from its footer: integer ranges (over both row groups), capped by
// the row count, and unknown for strings.
func TestParquetDistinct(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "k", Type: arrow.PrimitiveTypes.Int64},
		{Name: "g", Type: arrow.PrimitiveTypes.Int32},
		{Name: "wide", Type: arrow.PrimitiveTypes.Int64},
		{Name: "s", Type: arrow.BinaryTypes.String},
	}, nil)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	for i := range 10 {
		b.Field(0).(*array.Int64Builder).Append(int64(100 + i))
		b.Field(1).(*array.Int32Builder).Append(3)
		b.Field(2).(*array.Int64Builder).Append(int64(i) * 1_000_000)
		b.Field(3).(*array.StringBuilder).Append("x")
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	dir := t.TempDir()
	path := filepath.Join(dir, "t.parquet")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := pqarrow.NewFileWriter(schema, f, parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(5), parquet.WithAllocator(mem)), pqarrow.NewArrowWriterProperties(pqarrow.WithAllocator(mem)))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	tbl, err := OpenTable("t", Parquet, path, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(tbl.RowGroupRows[0]); got != 2 {
		t.Fatalf("the file has %d row groups, want 2", got)
	}
	want := []int64{10, 1, 10, 0}
	if !slices.Equal(tbl.Distinct, want) {
		t.Errorf("Distinct = %v, want %v", tbl.Distinct, want)
	}
}
