package parquet

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	pq "github.com/apache/arrow-go/v18/parquet"
	"github.com/quiverdb/quiver/exec/execop"
	"github.com/quiverdb/quiver/exec/memcheck"
	"github.com/quiverdb/quiver/exec/scan/parquet/parquettest"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
)

// readPath is one way a Parquet file is read: the direct decoder with or
// without a helper goroutine, or arrow-go's record reader.
type readPath struct{ direct, help bool }

var readPaths = []readPath{{true, true}, {true, false}, {false, false}}

func (m readPath) String() string { return fmt.Sprintf("direct=%v/help=%v", m.direct, m.help) }

// use switches the scan to m until the test ends (tests using it do not
// run in parallel).
func (m readPath) use(t *testing.T) {
	d, h := directEnabled, helpEnabled
	t.Cleanup(func() { directEnabled, helpEnabled = d, h })
	directEnabled, helpEnabled = m.direct, m.help
}

// TestReaderConversions reads a file through every conversion path
// (INT64 and INT32 decimals widened, date32 relabelled, dictionary-only
// strings and binaries gathered, plain-page strings as before) with
// several batch sizes, projections that repeat and reorder columns, and
// row-group ranges, and compares with the data written.
func TestReaderConversions(t *testing.T) {
	mem := memcheck.New(t)
	path := filepath.Join(t.TempDir(), "fix.parquet")
	const rows, rgRows = 3000, 1100
	want := parquettest.WriteFixFile(t, mem, path, rows, rgRows)
	defer want.Release()

	for _, mode := range readPaths {
		direct := mode.direct
		t.Run(mode.String(), func(t *testing.T) {
			mode.use(t)

			// The paths this test means to exercise are the ones chosen.
			ps, err := Open(context.Background(), path, wholeFile, fixOptions(mem, 1024, allColumns))
			if err != nil {
				t.Fatal(err)
			}
			if direct {
				if ps.direct == nil {
					t.Fatal("the direct path was not chosen")
				}
				helped := slices.Contains(ps.direct.helped, true) && slices.Contains(ps.direct.helped, false)
				if helped != mode.help {
					t.Errorf("columns split with a helper: %v, want %v", helped, mode.help)
				}
			} else {
				wantFix := []colFix{fixNone, fixDecimal64, fixDecimal32, fixDate32, fixDict, fixNone, fixDict}
				if fmt.Sprint(ps.fix) != fmt.Sprint(wantFix) {
					t.Errorf("conversions %v, want %v", ps.fix, wantFix)
				}
			}
			ps.Close()

			for _, bs := range []int{1, 7, 100, 1024, 8192} {
				for _, proj := range [][]int{{0, 1, 2, 3, 4, 5, 6}, {6, 4, 1, 4, 0}, {3}} {
					for _, rg := range [][]physical.RowGroupRange{nil, {{Start: 1, End: 3}}} {
						t.Run(fmt.Sprintf("bs%d/proj%v/rg%v", bs, proj, rg), func(t *testing.T) {
							checkRead(t, mem, path, want, bs, proj, rg)
						})
					}
				}
			}
		})
	}
}

// wholeFile is the row-group range of a whole file.
var wholeFile = physical.RowGroupRange{Start: 0, End: -1}

// allColumns reads every column of parquettest.FixSchema in order.
var allColumns = []int{0, 1, 2, 3, 4, 5, 6}

// fixOptions reads the columns proj of parquettest.FixSchema, bs rows a batch, as its
// table's only partition.
func fixOptions(mem memory.Allocator, bs int, proj []int) Options {
	names := make([]string, len(proj))
	for i, c := range proj {
		names[i] = parquettest.FixSchema.Field(c).Name
	}
	return Options{Table: "t", Columns: names, BatchRows: bs, Mem: mem, OnlyPartition: true}
}

// readAll reads the batches of path through a Reader of opts; the error is
// Open's or Next's first.
func readAll(path string, rg physical.RowGroupRange, opts Options) ([]arrow.RecordBatch, error) {
	ctx := context.Background()
	r, err := Open(ctx, path, rg, opts)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var got []arrow.RecordBatch
	for {
		b, err := r.Next(ctx)
		if errors.Is(err, io.EOF) {
			return got, nil
		}
		if err != nil {
			return got, err
		}
		got = append(got, b)
	}
}

// checkRead reads the columns proj of path (the row groups rg[0], or all
// with nil), bs rows a batch, and compares them with the rows of want.
func checkRead(t *testing.T, mem memory.Allocator, path string, want arrow.RecordBatch, bs int, proj []int, rg []physical.RowGroupRange) {
	r := wholeFile
	lo, hi := int64(0), want.NumRows()
	if rg != nil {
		r = rg[0]
		lo, hi = int64(rg[0].Start)*1100, min(int64(rg[0].End)*1100, want.NumRows())
	}
	got, err := readAll(path, r, fixOptions(mem, bs, proj))
	defer func() {
		for _, b := range got {
			b.Release()
		}
	}()
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range got {
		if b.NumRows() > int64(bs) {
			t.Fatalf("a batch of %d rows, batch size %d", b.NumRows(), bs)
		}
		if int(b.NumCols()) != len(proj) {
			t.Fatalf("a batch of %d columns, want %d", b.NumCols(), len(proj))
		}
	}
	for i, c := range proj {
		exp := array.NewSlice(want.Column(c), lo, hi)
		chunks := make([]arrow.Array, len(got))
		for j, b := range got {
			chunks[j] = b.Column(i)
		}
		all, err := array.Concatenate(chunks, mem)
		if err != nil {
			exp.Release()
			t.Fatal(err)
		}
		if !array.Equal(all, exp) {
			t.Errorf("column %s differs from the data written", parquettest.FixSchema.Field(c).Name)
		}
		all.Release()
		exp.Release()
	}
}

// TestGatherDictionary materialises dictionary strings through both copy
// paths (every value at most 8 bytes: one word store per row; a longer
// value: copies), with NULLs and a sliced array, against the values the
// indices name.
func TestGatherDictionary(t *testing.T) {
	mem := memcheck.New(t)
	for _, dictVals := range [][]string{
		{"A", "", "N", "REG AIR", "12345678"},
		{"A", "DELIVER IN PERSON", "", "NONE", "123456789"},
	} {
		db := array.NewStringBuilder(mem)
		db.AppendValues(dictVals, nil)
		dict := db.NewArray()
		db.Release()
		r := rand.New(rand.NewPCG(3, uint64(len(dictVals[1]))))
		ib := array.NewInt32Builder(mem)
		var want []*string
		for i := 0; i < 1000; i++ {
			if r.IntN(6) == 0 {
				ib.AppendNull()
				want = append(want, nil)
				continue
			}
			k := r.IntN(len(dictVals))
			ib.Append(int32(k))
			want = append(want, &dictVals[k])
		}
		idx := ib.NewArray()
		ib.Release()
		full := array.NewDictionaryArray(&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}, idx, dict)
		idx.Release()
		dict.Release()
		for _, off := range []int{0, 13} {
			d := array.NewSlice(full, int64(off), int64(full.Len())).(*array.Dictionary)
			got, err := gatherDictionary(mem, d, arrow.BinaryTypes.String)
			if err != nil {
				t.Fatal(err)
			}
			s := got.(*array.String)
			for i := 0; i < s.Len(); i++ {
				w := want[off+i]
				switch {
				case w == nil && s.IsValid(i):
					t.Fatalf("dict %q offset %d row %d: got %q, want NULL", dictVals, off, i, s.Value(i))
				case w != nil && (s.IsNull(i) || s.Value(i) != *w):
					t.Fatalf("dict %q offset %d row %d: got %q, want %q", dictVals, off, i, s.Value(i), *w)
				}
			}
			got.Release()
			d.Release()
		}
		full.Release()
	}
}

// TestReaderClosedEarly closes scans after their first batch, on
// every read path, so that batches decoded ahead (a helped scan decodes
// several at a time) and open row groups are released; the checked
// allocator fails the test otherwise, and goleak catches a helper left
// running.
func TestReaderClosedEarly(t *testing.T) {
	mem := memcheck.New(t)
	path := filepath.Join(t.TempDir(), "fix.parquet")
	want := parquettest.WriteFixFile(t, mem, path, 3000, 1100)
	defer want.Release()
	for _, mode := range readPaths {
		t.Run(mode.String(), func(t *testing.T) {
			mode.use(t)
			ctx := context.Background()
			op, err := Open(ctx, path, wholeFile, fixOptions(mem, 100, allColumns))
			if err != nil {
				t.Fatal(err)
			}
			b, err := op.Next(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if b.NumRows() != 100 {
				t.Errorf("first batch has %d rows, want 100", b.NumRows())
			}
			b.Release()
			op.Close()
		})
	}
}

// TestReaderMemoryLimit runs scans whose task memory limit is hit
// part-way through decoding (at several limits, so the failing allocation
// falls in different places), on every read path: each must fail with the
// Resources error, and the direct paths must leave nothing allocated
// (checked allocator, goleak). The record reader (arrow-go's, the path for
// files the direct decoder does not take) is not safe against the
// allocator's panic: buffers it held when the limit hit stay accounted to
// the failed task. That is known and only logged here.
func TestReaderMemoryLimit(t *testing.T) {
	mem := memcheck.New(t)
	path := filepath.Join(t.TempDir(), "fix.parquet")
	want := parquettest.WriteFixFile(t, mem, path, 3000, 1100)
	defer want.Release()
	for _, mode := range readPaths {
		for _, limit := range []int64{4 << 10, 20 << 10, 60 << 10, 150 << 10} {
			t.Run(fmt.Sprintf("%s/limit=%d", mode, limit), func(t *testing.T) {
				mode.use(t)
				var parent memory.Allocator = mem
				if !mode.direct {
					parent = memory.NewGoAllocator()
				}
				acct := execop.NewAccountingAllocator(parent, limit)
				bs, err := readAll(path, wholeFile, fixOptions(acct, 1024, allColumns))
				for _, b := range bs {
					b.Release()
				}
				if !qerr.Is(err, qerr.Resources) {
					t.Fatalf("want a Resources error, got %v", err)
				}
				switch {
				case acct.Current() == 0:
				case mode.direct:
					t.Errorf("%d bytes still accounted after the failure", acct.Current())
				default:
					t.Logf("record reader: %d bytes still accounted after the failure (known)", acct.Current())
				}
			})
		}
	}
}

// TestReaderDataPageV2 reads the conversion file written with version 2
// data pages (levels stored apart from the compressed values) through the
// direct path and compares with the data written.
func TestReaderDataPageV2(t *testing.T) {
	mem := memcheck.New(t)
	path := filepath.Join(t.TempDir(), "fix-v2.parquet")
	want := parquettest.WriteFixFile(t, mem, path, 3000, 1100, pq.WithDataPageVersion(pq.DataPageV2))
	defer want.Release()
	r, err := Open(context.Background(), path, wholeFile, fixOptions(mem, 1024, allColumns))
	if err != nil {
		t.Fatal(err)
	}
	if r.direct == nil {
		t.Error("the direct path was not chosen")
	}
	r.Close()
	for _, bs := range []int{7, 1024} {
		t.Run(fmt.Sprintf("bs%d", bs), func(t *testing.T) {
			checkRead(t, mem, path, want, bs, allColumns, nil)
		})
	}
}
