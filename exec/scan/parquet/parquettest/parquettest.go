// Package parquettest writes the Parquet fixture the tests of the Parquet
// reader and of the scan operator both read: one column per conversion
// path, NULLs everywhere, dictionaries that fit and one that overflows.
package parquettest

import (
	"fmt"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	pq "github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// FixSchema has one column per conversion path of the Parquet reader,
// plus a string column whose dictionary overflows (plain pages: read as
// strings) and a plain int64.
var FixSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "price", Type: &arrow.Decimal128Type{Precision: 15, Scale: 2}, Nullable: true}, // INT64
	{Name: "small", Type: &arrow.Decimal128Type{Precision: 7, Scale: 2}, Nullable: true},  // INT32
	{Name: "day", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
	{Name: "mode", Type: arrow.BinaryTypes.String, Nullable: true},    // few values: dictionary only
	{Name: "comment", Type: arrow.BinaryTypes.String, Nullable: true}, // many: falls back to plain
	{Name: "tag", Type: arrow.BinaryTypes.Binary, Nullable: true},     // binary dictionary
}, nil)

// WriteFixFile writes rows rows of FixSchema with NULLs in every column
// (none in the first row group's "mode", so both bitmap paths run) and
// returns the record written.
func WriteFixFile(t testing.TB, mem memory.Allocator, path string, rows int, rgRows int64, opts ...pq.WriterProperty) arrow.RecordBatch {
	t.Helper()
	r := rand.New(rand.NewPCG(7, 9))
	b := array.NewRecordBuilder(mem, FixSchema)
	defer b.Release()
	modes := []string{"AIR", "MAIL", "SHIP", "", "TRUCK", "REG AIR"}
	for i := range rows {
		null := func(k int) bool { return r.IntN(k) == 0 }
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		if null(17) {
			b.Field(1).AppendNull()
		} else {
			b.Field(1).(*array.Decimal128Builder).Append(decimal128.FromI64(r.Int64N(1e12) - 5e11))
		}
		if null(13) {
			b.Field(2).AppendNull()
		} else {
			b.Field(2).(*array.Decimal128Builder).Append(decimal128.FromI64(r.Int64N(1e7) - 5e6))
		}
		if null(11) {
			b.Field(3).AppendNull()
		} else {
			b.Field(3).(*array.Date32Builder).Append(arrow.Date32(r.IntN(20000)))
		}
		if int64(i) >= rgRows && null(5) {
			b.Field(4).AppendNull()
		} else {
			b.Field(4).(*array.StringBuilder).Append(modes[r.IntN(len(modes))])
		}
		if null(7) {
			b.Field(5).AppendNull()
		} else {
			b.Field(5).(*array.StringBuilder).Append(fmt.Sprintf("comment %d %x", i, r.Uint64()))
		}
		if null(3) {
			b.Field(6).AppendNull()
		} else {
			b.Field(6).(*array.BinaryBuilder).Append([]byte{byte(r.IntN(4)), 0, 1})
		}
	}
	rec := b.NewRecordBatch()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	props := pq.NewWriterProperties(append([]pq.WriterProperty{pq.WithMaxRowGroupLength(rgRows), pq.WithStats(true),
		pq.WithStoreDecimalAsInteger(true), pq.WithCompression(compress.Codecs.Snappy),
		pq.WithDictionaryPageSizeLimit(2048), pq.WithDataPageSize(4096), pq.WithAllocator(mem)}, opts...)...)
	w, err := pqarrow.NewFileWriter(FixSchema, f, props, pqarrow.NewArrowWriterProperties(pqarrow.WithAllocator(mem)))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return rec
}
