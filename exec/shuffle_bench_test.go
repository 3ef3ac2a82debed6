package exec_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver/exec"
	"github.com/quiverdb/quiver/exec/execop"
	"github.com/quiverdb/quiver/exec/exectest"
	"github.com/quiverdb/quiver/physical"
)

// salesSchema has the columns and types of the dashboard's cached view
// (tpch/dashboard/view.sql): line items joined with their order, customer,
// nation and region.
var salesSchema = arrow.NewSchema([]arrow.Field{
	{Name: "o_orderkey", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "o_orderdate", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
	{Name: "o_year", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "o_month", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "o_orderpriority", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "o_orderstatus", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "c_custkey", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "c_name", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "c_mktsegment", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "nation", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "region", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "l_returnflag", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "l_linestatus", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "l_shipmode", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "l_quantity", Type: &arrow.Decimal128Type{Precision: 15, Scale: 2}, Nullable: true},
	{Name: "l_extendedprice", Type: &arrow.Decimal128Type{Precision: 15, Scale: 2}, Nullable: true},
	{Name: "l_discount", Type: &arrow.Decimal128Type{Precision: 15, Scale: 2}, Nullable: true},
	{Name: "revenue", Type: &arrow.Decimal128Type{Precision: 38, Scale: 4}, Nullable: true},
}, nil)

// salesTable makes parts partitions of rows sales-like rows in all, in
// batches of batch rows, with TPC-H-like value distributions (so the codecs
// see realistic redundancy), and returns them with their Arrow bytes.
func salesTable(mem memory.Allocator, parts, rows, batch int) (exectest.Tables, int64) {
	r := rand.New(rand.NewPCG(7, 11))
	priorities := []string{"1-URGENT", "2-HIGH", "3-MEDIUM", "4-NOT SPECIFIED", "5-LOW"}
	segments := []string{"AUTOMOBILE", "BUILDING", "FURNITURE", "HOUSEHOLD", "MACHINERY"}
	nations := []string{"ALGERIA", "ARGENTINA", "BRAZIL", "CANADA", "EGYPT", "ETHIOPIA", "FRANCE", "GERMANY", "INDIA", "INDONESIA",
		"IRAN", "IRAQ", "JAPAN", "JORDAN", "KENYA", "MOROCCO", "MOZAMBIQUE", "PERU", "CHINA", "ROMANIA",
		"SAUDI ARABIA", "VIETNAM", "RUSSIA", "UNITED KINGDOM", "UNITED STATES"}
	regions := []string{"AFRICA", "AMERICA", "ASIA", "EUROPE", "MIDDLE EAST"}
	modes := []string{"AIR", "FOB", "MAIL", "RAIL", "REG AIR", "SHIP", "TRUCK"}
	flags := []string{"A", "N", "R"}
	status := []string{"F", "O", "P"}

	b := array.NewRecordBuilder(mem, salesSchema)
	defer b.Release()
	tab := make([][]arrow.RecordBatch, parts)
	var bytes int64
	order, line := int64(1), 0
	date := int32(8766) // 1994-01-01
	for i := range rows {
		if line == 0 || r.IntN(4) == 0 {
			order += 1 + int64(r.IntN(3))
			date = 8766 + int32(r.IntN(3*365))
			line = 0
		}
		line++
		cust := int64(1 + r.IntN(150000))
		nat := int(cust % 25)
		y := 1994 + int64(date-8766)/365
		b.Field(0).(*array.Int64Builder).Append(order)
		b.Field(1).(*array.Date32Builder).Append(arrow.Date32(date))
		b.Field(2).(*array.Int64Builder).Append(y)
		b.Field(3).(*array.Int64Builder).Append(1 + int64(date-8766)%365/31)
		b.Field(4).(*array.StringBuilder).Append(priorities[order%5])
		b.Field(5).(*array.StringBuilder).Append(status[order%3])
		b.Field(6).(*array.Int64Builder).Append(cust)
		b.Field(7).(*array.StringBuilder).Append(fmt.Sprintf("Customer#%09d", cust))
		b.Field(8).(*array.StringBuilder).Append(segments[cust%5])
		b.Field(9).(*array.StringBuilder).Append(nations[nat])
		b.Field(10).(*array.StringBuilder).Append(regions[nat%5])
		b.Field(11).(*array.StringBuilder).Append(flags[r.IntN(3)])
		b.Field(12).(*array.StringBuilder).Append(status[r.IntN(2)])
		b.Field(13).(*array.StringBuilder).Append(modes[r.IntN(7)])
		qty := int64(1 + r.IntN(50))
		price := qty * int64(90000+r.IntN(10000))
		disc := int64(r.IntN(11))
		b.Field(14).(*array.Decimal128Builder).Append(decimal128.FromI64(qty * 100))
		b.Field(15).(*array.Decimal128Builder).Append(decimal128.FromI64(price))
		b.Field(16).(*array.Decimal128Builder).Append(decimal128.FromI64(disc))
		b.Field(17).(*array.Decimal128Builder).Append(decimal128.FromI64(price * (100 - disc)))
		if (i+1)%batch == 0 || i == rows-1 {
			rec := b.NewRecordBatch()
			bytes += batchBytes(rec)
			p := (i / batch) % parts
			tab[p] = append(tab[p], rec)
		}
	}
	return exectest.Tables{"sales": tab}, bytes
}

// batchBytes is the size of b's Arrow buffers (what read-back decodes).
func batchBytes(b arrow.RecordBatch) int64 {
	var n int64
	var walk func(d arrow.ArrayData)
	walk = func(d arrow.ArrayData) {
		for _, buf := range d.Buffers() {
			if buf != nil {
				n += int64(buf.Len())
			}
		}
		for _, c := range d.Children() {
			walk(c)
		}
	}
	for _, c := range b.Columns() {
		walk(c.Data())
	}
	return n
}

// touch reads a byte of every 256 of b's buffers, as a consumer reading
// every column would: mapped pages are faulted in only when read, so a
// benchmark that only counted rows would not pay for them.
func touch(b arrow.RecordBatch) byte {
	var x byte
	var walk func(d arrow.ArrayData)
	walk = func(d arrow.ArrayData) {
		for _, buf := range d.Buffers() {
			if buf == nil {
				continue
			}
			bs := buf.Bytes()
			for i := 0; i < len(bs); i += 256 {
				x ^= bs[i]
			}
		}
		for _, c := range d.Children() {
			walk(c)
		}
	}
	for _, c := range b.Columns() {
		walk(c.Data())
	}
	return x
}

// BenchmarkCacheReadBack writes a cache-like shuffle output of sales rows
// (one file per partition, as CACHE TABLE does) — pinned as a cache is, and
// unpinned with each codec for comparison — and measures reading it back
// through the CacheReader: MB/s is Arrow data read back per second. Run
// with -cpu 1 for the per-core rate:
//
//	go test ./exec -run '^$' -bench CacheReadBack -cpu 1
func BenchmarkCacheReadBack(b *testing.B) {
	const parts, rows = 2, 200_000
	cases := []struct {
		name   string
		comp   physical.Compression
		pinned bool
	}{
		{"cache", physical.CompressLZ4, true}, // as CACHE TABLE writes it (lz4 is the scheduler's default)
		{"lz4", physical.CompressLZ4, false},
		{"zstd", physical.CompressZstd, false},
		{"none", physical.CompressNone, false},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
			b.Cleanup(func() {
				if n := mem.CurrentAlloc(); n != 0 {
					b.Errorf("%d bytes still allocated", n)
				}
			})
			tables, arrowBytes := salesTable(mem, parts, rows, execop.DefaultBatchSize)
			dir := b.TempDir()
			w := &physical.ShuffleWriter{Input: exectest.MemoryScan("sales", salesSchema, parts), JobID: "cachejob", StageID: 1, N: 0, Compression: c.comp, Pinned: c.pinned}
			locs := runStage(b, mem, tables, dir, "e1", w)
			tables.Release()
			var fileBytes int64
			for _, l := range locs {
				for _, loc := range l {
					fileBytes += loc.Bytes
				}
			}
			reader := &physical.CacheReader{Key: physical.CacheKey{SessionID: "s", CacheID: "c"}, Name: "sales", OutSchema: salesSchema, Locations: locs}
			ctx := context.Background()
			var sink byte
			b.SetBytes(arrowBytes)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				var got int64
				for p := range parts {
					tc := taskContext(mem, nil, dir, "e1")
					op, err := exec.Build(tc, reader, p)
					if err != nil {
						b.Fatal(err)
					}
					if err := op.Open(ctx); err != nil {
						b.Fatal(err)
					}
					for {
						batch, err := op.Next(ctx)
						if errors.Is(err, io.EOF) {
							break
						}
						if err != nil {
							b.Fatal(err)
						}
						got += batch.NumRows()
						sink += touch(batch)
						batch.Release()
					}
					if err := op.Close(); err != nil {
						b.Fatal(err)
					}
				}
				if got != rows {
					b.Fatalf("read back %d rows, wrote %d", got, rows)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(fileBytes)/float64(arrowBytes), "file/arrow")
			if sink == 42 {
				b.Log("") // keeps sink alive
			}
		})
	}
}

// Batches read back from a mapped cache file stay valid after the reader
// is closed (their buffers keep the mapping), and releasing them all
// leaves nothing allocated.
func TestCacheReadBackBatchesOutliveReader(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	for _, comp := range []physical.Compression{physical.CompressLZ4, physical.CompressNone} {
		for _, pinned := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/pinned=%v", comp, pinned), func(t *testing.T) {
				const parts, rows = 2, 5000
				tables, _ := salesTable(mem, parts, rows, 700)
				var want []string
				for _, part := range tables["sales"] {
					for _, b := range part {
						want = append(want, exectest.Rows(b)...)
					}
				}
				dir := t.TempDir()
				w := &physical.ShuffleWriter{Input: exectest.MemoryScan("sales", salesSchema, parts), JobID: "cachejob", StageID: 1, Compression: comp, Pinned: pinned}
				locs := runStage(t, mem, tables, dir, "e1", w)
				tables.Release()
				reader := &physical.CacheReader{Name: "sales", OutSchema: salesSchema, Locations: locs}
				ctx := context.Background()
				var kept []arrow.RecordBatch
				for p := range parts {
					op, err := exec.Build(taskContext(mem, nil, dir, "e1"), reader, p)
					if err != nil {
						t.Fatal(err)
					}
					if err := op.Open(ctx); err != nil {
						t.Fatal(err)
					}
					for {
						b, err := op.Next(ctx)
						if errors.Is(err, io.EOF) {
							break
						}
						if err != nil {
							t.Fatal(err)
						}
						kept = append(kept, b)
					}
					if err := op.Close(); err != nil {
						t.Fatal(err)
					}
				}
				var got []string
				for _, b := range kept {
					got = append(got, exectest.Rows(b)...)
					b.Release()
				}
				exectest.Compare(t, got, want, exectest.Unordered)
			})
		}
	}
}
