package scan

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"testing"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver/exec/execop"
	"github.com/quiverdb/quiver/exec/memcheck"
	"github.com/quiverdb/quiver/exec/scan/parquet/parquettest"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
)

// TestParquetScan reads a file through the scan operator (the parquet
// room's reader on the path it chooses, then the scan's conforming and
// slicing) at several batch sizes, with projections that repeat and reorder
// columns and with row-group ranges, and compares with the data written;
// exec/scan/parquet checks each of its read paths on its own.
func TestParquetScan(t *testing.T) {
	mem := memcheck.New(t)
	path := filepath.Join(t.TempDir(), "fix.parquet")
	const rows, rgRows = 3000, 1100
	want := parquettest.WriteFixFile(t, mem, path, rows, rgRows)
	defer want.Release()
	for _, bs := range []int{1, 7, 1024, 8192} {
		for _, proj := range [][]int{{0, 1, 2, 3, 4, 5, 6}, {6, 4, 1, 4, 0}, {3}} {
			for _, rg := range [][]physical.RowGroupRange{nil, {{Start: 1, End: 3}}} {
				t.Run(fmt.Sprintf("bs%d/proj%v/rg%v", bs, proj, rg), func(t *testing.T) {
					checkScan(t, mem, path, want, bs, proj, rg)
				})
			}
		}
	}
}

func checkScan(t *testing.T, mem memory.Allocator, path string, want arrow.RecordBatch, bs int, proj []int, rg []physical.RowGroupRange) {
	n := &physical.Scan{Table: "t", Format: physical.FormatParquet, FileSchema: parquettest.FixSchema, Projection: proj,
		Partitions: [][]string{{path}}, Fetch: -1}
	lo, hi := int64(0), want.NumRows()
	if rg != nil {
		n.RowGroups = [][]physical.RowGroupRange{rg}
		lo, hi = int64(rg[0].Start)*1100, min(int64(rg[0].End)*1100, want.NumRows())
	}
	tc := newTestContext(mem, bs)
	op, err := buildScan(tc, n, 0)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := op.Open(ctx); err != nil {
		t.Fatal(err)
	}
	defer op.Close()
	var got []arrow.RecordBatch
	defer func() {
		for _, b := range got {
			b.Release()
		}
	}()
	for {
		b, err := op.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if !b.Schema().Equal(n.Schema()) {
			t.Fatalf("batch schema %s, want %s", b.Schema(), n.Schema())
		}
		got = append(got, b)
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

// TestParquetScanReleasesUnderQueryAllocator checks that the scan's
// recycled buffers are all returned to the query's allocator when batches
// outlive the scan (a join build side keeps them) and when they do not.
func TestParquetScanKeepsBatchesAfterClose(t *testing.T) {
	mem := memcheck.New(t)
	path := filepath.Join(t.TempDir(), "fix.parquet")
	want := parquettest.WriteFixFile(t, mem, path, 5000, 5000)
	defer want.Release()
	n := &physical.Scan{Table: "t", Format: physical.FormatParquet, FileSchema: parquettest.FixSchema,
		Partitions: [][]string{{path}}, Fetch: -1}
	tc := newTestContext(mem, 0)
	op, err := buildScan(tc, n, 0)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := op.Open(ctx); err != nil {
		t.Fatal(err)
	}
	var kept []arrow.RecordBatch
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
	op.Close()
	var rows int64
	for _, b := range kept {
		rows += b.NumRows()
		if b.Column(1).(*array.Decimal128).Len() != int(b.NumRows()) {
			t.Fatal("bad column")
		}
		b.Release()
	}
	if rows != 5000 {
		t.Fatalf("%d rows, want 5000", rows)
	}
}

// TestParquetScanZeroesNullSlots: the recycler reuses buffers without
// zeroing them, so the scan clears the values under NULL rows itself; a
// batch read after earlier ones were released (their buffers reused) must
// hold zero under every NULL of a fixed-width column.
func TestParquetScanZeroesNullSlots(t *testing.T) {
	mem := memcheck.New(t)
	path := filepath.Join(t.TempDir(), "fix.parquet")
	want := parquettest.WriteFixFile(t, mem, path, 60000, 20000)
	want.Release()
	n := &physical.Scan{Table: "t", Format: physical.FormatParquet, FileSchema: parquettest.FixSchema,
		Partitions: [][]string{{path}}, Fetch: -1}
	op, err := buildScan(newTestContext(mem, 8192), n, 0)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := op.Open(ctx); err != nil {
		t.Fatal(err)
	}
	defer op.Close()
	nulls := 0
	for {
		b, err := op.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		for c, col := range b.Columns() {
			fw, ok := col.DataType().(arrow.FixedWidthDataType)
			if !ok || fw.BitWidth() < 8 {
				continue
			}
			w := fw.BitWidth() / 8
			vals := col.Data().Buffers()[1].Bytes()
			off := col.Data().Offset()
			for r := range col.Len() {
				if col.IsValid(r) {
					continue
				}
				nulls++
				for _, x := range vals[(off+r)*w : (off+r+1)*w] {
					if x != 0 {
						t.Fatalf("column %d row %d: NULL slot holds %x", c, r, vals[(off+r)*w:(off+r+1)*w])
					}
				}
			}
		}
		b.Release() // frees the buffers for the next batches to reuse
	}
	if nulls == 0 {
		t.Fatal("no NULL slot was checked")
	}
}

// TestRecyclerZeroes: a task's recycler hands out reused memory zeroed
// through Allocate (arrow-go relies on it) and as it is through
// AllocateDirty; the accounting allocator passes AllocateDirty down.
func TestRecyclerZeroes(t *testing.T) {
	parent := memcheck.New(t)
	r := execop.NewRecycler(parent, 1<<20)
	defer r.Close()
	a := r.Allocate(20000)
	for i := range a {
		a[i] = 7
	}
	r.Free(a)
	b := r.Allocate(20000)
	if unsafe.SliceData(b) != unsafe.SliceData(a) {
		t.Fatal("the freed buffer was not reused")
	}
	for i, v := range b {
		if v != 0 {
			t.Fatalf("reused byte %d is %d, want 0", i, v)
		}
	}
	// Growing within the class zeroes the grown part only.
	b[0] = 9
	b = b[:10000]
	b = r.Reallocate(20000, b)
	if b[0] != 9 || b[15000] != 0 {
		t.Fatalf("reallocate kept %d and grew to %d, want 9 and 0", b[0], b[15000])
	}
	for i := range b {
		b[i] = 7
	}
	r.Free(b)
	acct := execop.NewAccountingAllocator(r, 0)
	buf := execop.NewDirtyBuffer(acct, 20000)
	if buf.Len() != 20000 || unsafe.SliceData(buf.Bytes()) != unsafe.SliceData(a) || buf.Bytes()[0] != 7 {
		t.Fatal("a dirty buffer did not reuse the freed buffer as it was")
	}
	if acct.Current() < 20000 {
		t.Fatalf("accounting holds %d bytes for a dirty buffer of 20000", acct.Current())
	}
	buf.Release()
	if acct.Current() != 0 {
		t.Fatalf("accounting holds %d bytes after release", acct.Current())
	}
	// Over an allocator without AllocateDirty, a dirty buffer is an ordinary one.
	plain := execop.NewDirtyBuffer(parent, 100)
	if plain.Len() != 100 {
		t.Fatalf("len %d", plain.Len())
	}
	plain.Release()
}

// TestParquetScanMemoryLimit runs scans whose task memory limit is hit
// part-way through decoding: each must fail with the Resources error and
// leave nothing allocated (checked allocator, goleak).
func TestParquetScanMemoryLimit(t *testing.T) {
	mem := memcheck.New(t)
	path := filepath.Join(t.TempDir(), "fix.parquet")
	want := parquettest.WriteFixFile(t, mem, path, 3000, 1100)
	defer want.Release()
	for _, limit := range []int64{4 << 10, 60 << 10} {
		t.Run(fmt.Sprintf("limit=%d", limit), func(t *testing.T) {
			acct := execop.NewAccountingAllocator(mem, limit)
			n := &physical.Scan{Table: "t", Format: physical.FormatParquet, FileSchema: parquettest.FixSchema,
				Partitions: [][]string{{path}}, Fetch: -1}
			bs, err := execop.CollectAll(context.Background(), newTestContext(acct, 1024), n)
			for _, b := range bs {
				b.Release()
			}
			if !qerr.Is(err, qerr.Resources) {
				t.Fatalf("want a Resources error, got %v", err)
			}
			if acct.Current() != 0 {
				t.Errorf("%d bytes still accounted after the failure", acct.Current())
			}
		})
	}
}

// newTestContext is a task context whose only operators are scans: these
// tests build scans alone, and the scan package cannot use exec.Build.
func newTestContext(mem memory.Allocator, batchSize int) *execop.TaskContext {
	return execop.NewTaskContext(mem, batchSize, buildScan)
}

// buildScan is the BuildFunc of newTestContext.
func buildScan(tc *execop.TaskContext, p physical.Plan, partition int) (execop.Operator, error) {
	n, ok := p.(*physical.Scan)
	if !ok {
		return nil, fmt.Errorf("the scan package's tests build only scans, not %T", p)
	}
	return NewScan(tc, n, partition)
}
