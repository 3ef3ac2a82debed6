package parquet

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	pq "github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/quiverdb/quiver/exec/memcheck"
)

// TestReaderRuns reads, through every path, dictionary columns whose rows
// come in runs of equal keys (repeated index runs), NULLs at several rates
// (validity bytes all set, mixed and all clear), and row groups of
// different dictionary sizes (the decoder's reused memory), and compares
// with the data written.
func TestReaderRuns(t *testing.T) {
	mem := memcheck.New(t)
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "k2", Type: arrow.PrimitiveTypes.Int64, Nullable: true},  // runs, 2% NULL
		{Name: "k30", Type: arrow.PrimitiveTypes.Int64, Nullable: true}, // runs, 30% NULL
		{Name: "d", Type: &arrow.Decimal128Type{Precision: 9, Scale: 2}, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	const rows, rgRows = 5000, 1700
	r := rand.New(rand.NewPCG(11, 12))
	b := array.NewRecordBuilder(mem, sc)
	defer b.Release()
	for i := range rows {
		key := int64(i / (5 + i/rgRows*7)) // runs of 5, 12 and 19 rows
		if r.IntN(50) == 0 {
			b.Field(0).AppendNull()
		} else {
			b.Field(0).(*array.Int64Builder).Append(key)
		}
		if i%400 < 100 || r.IntN(10) < 3 { // a stretch of NULLs, then 30%
			b.Field(1).AppendNull()
		} else {
			b.Field(1).(*array.Int64Builder).Append(key % 17)
		}
		if r.IntN(25) == 0 {
			b.Field(2).AppendNull()
		} else {
			b.Field(2).(*array.Decimal128Builder).Append(decimal128.FromI64(key%40 - 20))
		}
		if r.IntN(25) == 0 {
			b.Field(3).AppendNull()
		} else {
			b.Field(3).(*array.StringBuilder).Append(fmt.Sprintf("v%d", key%(3+int64(i/rgRows)*20)))
		}
	}
	want := b.NewRecordBatch()
	defer want.Release()
	path := filepath.Join(t.TempDir(), "runs.parquet")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	props := pq.NewWriterProperties(pq.WithMaxRowGroupLength(rgRows), pq.WithStoreDecimalAsInteger(true),
		pq.WithCompression(compress.Codecs.Snappy), pq.WithDataPageSize(2048), pq.WithAllocator(mem))
	w, err := pqarrow.NewFileWriter(sc, f, props, pqarrow.NewArrowWriterProperties(pqarrow.WithAllocator(mem)))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(want); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()

	for _, mode := range readPaths {
		t.Run(mode.String(), func(t *testing.T) {
			mode.use(t)
			for _, bs := range []int{13, 1000, 4096} {
				opts := Options{Table: "t", Columns: []string{"k2", "k30", "d", "s"}, BatchRows: bs, Mem: mem, OnlyPartition: true}
				got, err := readAll(path, wholeFile, opts)
				if err != nil {
					t.Fatal(err)
				}
				for c := range sc.NumFields() {
					chunks := make([]arrow.Array, len(got))
					for j, g := range got {
						chunks[j] = g.Column(c)
					}
					all, err := array.Concatenate(chunks, mem)
					if err != nil {
						t.Fatal(err)
					}
					if !array.Equal(all, want.Column(c)) {
						t.Errorf("batch size %d: column %s differs from the data written", bs, sc.Field(c).Name)
					}
					all.Release()
				}
				for _, g := range got {
					g.Release()
				}
			}
		})
	}
}
