package exec_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver/exec"
	"github.com/quiverdb/quiver/exec/execop"
	"github.com/quiverdb/quiver/exec/exectest"
	"github.com/quiverdb/quiver/exec/shuffle"
	"github.com/quiverdb/quiver/physical"
)

var shuffleSchema = arrow.NewSchema([]arrow.Field{
	{Name: "k", Type: arrow.PrimitiveTypes.Int64},
	{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "f", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
}, nil)

// shuffleInput builds a memory table of parts partitions with rows rows in
// all, cut into batches of at most batch rows (some empty). Keys repeat, and
// s and f have NULLs.
func shuffleInput(t testing.TB, mem memory.Allocator, parts, rows, batch int) exectest.Tables {
	t.Helper()
	b := array.NewRecordBuilder(mem, shuffleSchema)
	defer b.Release()
	tab := make([][]arrow.RecordBatch, parts)
	for p := range parts {
		for lo := p; lo < rows; lo += parts * batch {
			for i := lo; i < min(rows, lo+parts*batch); i += parts {
				b.Field(0).(*array.Int64Builder).Append(int64(i % 37))
				if i%5 == 0 {
					b.Field(1).AppendNull()
				} else {
					b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("s%d", i))
				}
				if i%7 == 0 {
					b.Field(2).AppendNull()
				} else {
					b.Field(2).(*array.Float64Builder).Append(float64(i) / 4)
				}
			}
			tab[p] = append(tab[p], b.NewRecordBatch())
			if lo%3 == 0 {
				tab[p] = append(tab[p], b.NewRecordBatch()) // an empty batch
			}
		}
	}
	return exectest.Tables{"t": tab}
}

// taskContext is a context for one task of executor id over dir.
func taskContext(mem memory.Allocator, tables exectest.Tables, dir, id string) *execop.TaskContext {
	tc := exec.NewTaskContext(mem, 0)
	tc.MemoryTables = tables.Lookup
	tc.WorkDir = dir
	tc.ExecutorID = id
	return tc
}

// runStage runs every map task of w, each with its own TaskContext as on an
// executor, and returns the locations by output partition, checking the
// stats against the files: a file kept inline (its bytes in the stats) must
// not exist, and one within w's inline limit must have been kept.
func runStage(t testing.TB, mem memory.Allocator, tables exectest.Tables, dir, id string, w *physical.ShuffleWriter) [][]physical.PartitionLocation {
	t.Helper()
	ctx := context.Background()
	locs := make([][]physical.PartitionLocation, w.OutputN())
	for p := range w.OutputPartitions() {
		tc := taskContext(mem, tables, dir, id)
		op, err := exec.Build(tc, w, p)
		if err != nil {
			t.Fatal(err)
		}
		if err := op.Open(ctx); err != nil {
			t.Fatal(err)
		}
		st, err := op.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !st.Schema().Equal(physical.ShuffleWriteStatsSchema) {
			t.Fatalf("stats schema %s", st.Schema())
		}
		if _, err := op.Next(ctx); !errors.Is(err, io.EOF) {
			t.Fatalf("after the stats batch: %v, want EOF", err)
		}
		cols := make([]*array.Int64, 4)
		for i := range cols {
			cols[i] = st.Column(i).(*array.Int64)
		}
		inline := st.Column(5).(*array.Binary)
		for r := range int(st.NumRows()) {
			out := int(cols[0].Value(r))
			loc := physical.PartitionLocation{JobID: w.JobID, StageID: w.StageID, OutputPartition: out, MapPartition: p,
				Executor: physical.ExecutorMeta{ID: id}, Rows: cols[1].Value(r), Batches: cols[2].Value(r), Bytes: cols[3].Value(r)}
			path := shuffle.FilePath(dir, w.JobID, w.StageID, out, p)
			mayInline := w.InlineLimit > 0 && (len(w.Keys) == 0 || w.N == 1)
			if inline.IsValid(r) {
				loc.Inline = bytes.Clone(inline.Value(r))
				if !mayInline || int64(len(loc.Inline)) != loc.Bytes || loc.Bytes > w.InlineLimit {
					t.Errorf("%s: %d inline bytes, stats say %d, limit %d", loc, len(loc.Inline), loc.Bytes, w.InlineLimit)
				}
				if _, err := os.Stat(filepath.Dir(path)); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("%s is inline, but its directory was made (%v)", loc, err)
				}
			} else {
				fi, err := os.Stat(path)
				if err != nil {
					t.Fatal(err)
				}
				if fi.Size() != loc.Bytes {
					t.Errorf("%s: stats say %d bytes, file has %d", loc, loc.Bytes, fi.Size())
				}
				if mayInline && loc.Bytes <= w.InlineLimit {
					t.Errorf("%s: %d bytes, within the inline limit %d, went to a file", loc, loc.Bytes, w.InlineLimit)
				}
			}
			locs[out] = append(locs[out], loc)
		}
		st.Release()
		if err := op.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return locs
}

// readPartition drains partition p of a reader node and returns its rows.
func readPartition(t testing.TB, tc *execop.TaskContext, n physical.Plan, p int) ([]string, error) {
	t.Helper()
	ctx := context.Background()
	op, err := exec.Build(tc, n, p)
	if err != nil {
		return nil, err
	}
	defer op.Close()
	if err := op.Open(ctx); err != nil {
		return nil, err
	}
	var rows []string
	for {
		b, err := op.Next(ctx)
		if errors.Is(err, io.EOF) {
			return rows, op.Close()
		}
		if err != nil {
			return nil, err
		}
		if !b.Schema().Equal(n.Schema()) {
			t.Errorf("batch schema %s, want %s", b.Schema(), n.Schema())
		}
		rows = append(rows, exectest.Rows(b)...)
		b.Release()
	}
}

// tableRows renders partition p of the memory table (all partitions if p < 0).
func tableRows(tables exectest.Tables, p int) []string {
	var rows []string
	for i, part := range tables["t"] {
		if p >= 0 && i != p {
			continue
		}
		for _, b := range part {
			rows = append(rows, exectest.Rows(b)...)
		}
	}
	return rows
}

// dataFiles lists the regular files under dir (relative paths).
func dataFiles(t testing.TB, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestShuffleRoundTrip(t *testing.T) {
	key := []physical.Expr{&physical.Column{Index: 0, Name: "k", Type: arrow.PrimitiveTypes.Int64}}
	exprKey := []physical.Expr{&physical.Binary{Op: physical.OpAdd, Left: key[0], Right: &physical.Literal{Type: arrow.PrimitiveTypes.Int64, Value: int64(1)}, Type: arrow.PrimitiveTypes.Int64}}
	parts := []struct {
		name string
		keys []physical.Expr
		n    int
	}{
		{"hash3", key, 3},
		{"hash-expr4", exprKey, 4},
		{"hash1", key, 1},
		{"single", nil, 1},
		{"passthrough", nil, 0},
	}
	for _, comp := range []physical.Compression{physical.CompressLZ4, physical.CompressZstd, physical.CompressNone, ""} {
		for _, pt := range parts {
			// Inline limits: none; one the files of 0 and 1 rows fit but the
			// larger ones pass while written; one every file fits.
			for _, rows := range []int{0, 1, 1000} {
				for _, limit := range []int64{0, 1 << 10, 1 << 20} {
					t.Run(fmt.Sprintf("%s/%s/rows=%d/inline=%d", comp, pt.name, rows, limit), func(t *testing.T) {
						mem := exectest.Allocator(t)
						tables := shuffleInput(t, mem, 2, rows, 64)
						defer tables.Release()
						dir := t.TempDir()
						w := &physical.ShuffleWriter{Input: exectest.MemoryScan("t", shuffleSchema, 2), JobID: "job-1", StageID: 3,
							Keys: pt.keys, N: pt.n, Compression: comp, InlineLimit: limit}
						locs := runStage(t, mem, tables, dir, "e1", w)
						if len(locs) != w.OutputN() {
							t.Fatalf("%d output partitions, want %d", len(locs), w.OutputN())
						}
						nFiles := 0
						for _, ls := range locs {
							nFiles += len(ls)
						}
						if want := w.OutputPartitions() * max(1, pt.n); pt.n == 0 && nFiles != w.OutputPartitions() || pt.n > 0 && nFiles != want {
							t.Errorf("%d files written", nFiles)
						}
						inlined := 0
						for _, ls := range locs {
							for _, l := range ls {
								if l.Inline != nil {
									inlined++
								}
							}
						}
						if got := len(dataFiles(t, dir)); got != nFiles-inlined {
							t.Errorf("%d files on disk, %d reported, %d of them inline", got, nFiles, inlined)
						}
						if single := len(pt.keys) == 0 || pt.n == 1; limit == 1<<20 && single && inlined != nFiles || (limit == 0 || !single) && inlined > 0 {
							t.Errorf("%d of %d files inline at limit %d", inlined, nFiles, limit)
						}
						rd := &physical.ShuffleReader{StageID: 3, OutSchema: shuffleSchema, Locations: locs}
						tc := taskContext(mem, nil, dir, "e1")
						var all []string
						seen := map[string]int{} // key → output partition
						for out := range len(locs) {
							got, err := readPartition(t, tc, rd, out)
							if err != nil {
								t.Fatal(err)
							}
							var reported int64
							for _, l := range locs[out] {
								reported += l.Rows
							}
							if reported != int64(len(got)) {
								t.Errorf("partition %d: %d rows read, %d reported", out, len(got), reported)
							}
							for _, r := range got {
								k := r[:strings.IndexByte(r, '|')]
								if o, ok := seen[k]; ok && o != out && len(pt.keys) > 0 {
									t.Fatalf("key %s in partitions %d and %d", k, o, out)
								}
								seen[k] = out
							}
							if pt.n == 0 {
								exectest.Compare(t, got, tableRows(tables, out), exectest.Ordered)
							}
							all = append(all, got...)
						}
						exectest.Compare(t, all, tableRows(tables, -1), exectest.Unordered)
						used := map[int]bool{}
						for _, o := range seen {
							used[o] = true
						}
						if pt.n == 3 && rows == 1000 && len(used) != 3 {
							t.Errorf("hash used only partitions %v", used)
						}
					})
				}
			}
		}
	}
}

// TestShuffleHashMatchesRepartition checks that the writer sends each key
// to the partition the in-memory hash Repartition sends it to, so a
// partitioned join may mix both.
func TestShuffleHashMatchesRepartition(t *testing.T) {
	mem := exectest.Allocator(t)
	tables := shuffleInput(t, mem, 2, 500, 50)
	defer tables.Release()
	dir := t.TempDir()
	key := []physical.Expr{&physical.Column{Index: 0, Name: "k", Type: arrow.PrimitiveTypes.Int64}}
	scan := exectest.MemoryScan("t", shuffleSchema, 2)
	locs := runStage(t, mem, tables, dir, "e1", &physical.ShuffleWriter{Input: scan, JobID: "j", StageID: 1, Keys: key, N: 3})
	rd := &physical.ShuffleReader{StageID: 1, OutSchema: shuffleSchema, Locations: locs}
	rp := &physical.Repartition{Input: scan, Keys: key, N: 3}
	tc := taskContext(mem, tables, dir, "e1")
	for out := range 3 {
		got, err := readPartition(t, tc, rd, out)
		if err != nil {
			t.Fatal(err)
		}
		wantRows := repartitionRows(t, mem, tables, rp, out)
		exectest.Compare(t, got, wantRows, exectest.Unordered)
	}
}

// repartitionRows runs every output of rp in one TaskContext and returns
// output out's rows.
func repartitionRows(t *testing.T, mem memory.Allocator, tables exectest.Tables, rp *physical.Repartition, out int) []string {
	t.Helper()
	ctx := context.Background()
	tc := taskContext(mem, tables, "", "")
	ops := make([]execop.Operator, rp.N)
	for i := range ops {
		op, err := exec.Build(tc, rp, i)
		if err != nil {
			t.Fatal(err)
		}
		defer op.Close()
		if err := op.Open(ctx); err != nil {
			t.Fatal(err)
		}
		ops[i] = op
	}
	rows := make([][]string, rp.N)
	done := make(chan error, rp.N)
	for i, op := range ops {
		go func() {
			for {
				b, err := op.Next(ctx)
				if errors.Is(err, io.EOF) {
					done <- nil
					return
				}
				if err != nil {
					done <- err
					return
				}
				rows[i] = append(rows[i], exectest.Rows(b)...)
				b.Release()
			}
		}()
	}
	for range ops {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	return rows[out]
}

// TestPinnedShuffleCoalescesBatches: a pinned (cache) shuffle file holds its
// rows in batches of at least the task's batch size (the last may be
// shorter), whatever the size of the batches written to it, while an
// ordinary shuffle file keeps the batches as they come; both read back the
// same rows.
func TestPinnedShuffleCoalescesBatches(t *testing.T) {
	mem := exectest.Allocator(t)
	const rows, batch = 20000, 64
	for _, n := range []int{0, 3} {
		for _, pinned := range []bool{false, true} {
			t.Run(fmt.Sprintf("n=%d/pinned=%v", n, pinned), func(t *testing.T) {
				tables := shuffleInput(t, mem, 2, rows, batch)
				defer tables.Release()
				dir := t.TempDir()
				w := &physical.ShuffleWriter{Input: exectest.MemoryScan("t", shuffleSchema, 2), JobID: "j1", StageID: 1, Pinned: pinned}
				if n > 0 {
					w.Keys, w.N = []physical.Expr{&physical.Column{Index: 0, Name: "k", Type: arrow.PrimitiveTypes.Int64}}, n
				}
				locs := runStage(t, mem, tables, dir, "e1", w)
				bs := exec.NewTaskContext(mem, 0).BatchSize
				var got []string
				for p, ls := range locs {
					for _, l := range ls {
						full := (l.Rows + int64(bs) - 1) / int64(bs)
						if pinned && l.Batches > full {
							t.Errorf("pinned file of %d rows has %d batches, want at most %d", l.Rows, l.Batches, full)
						}
						if !pinned && l.Rows > int64(batch) && l.Batches <= full {
							t.Errorf("ordinary file of %d rows has %d batches: merged", l.Rows, l.Batches)
						}
					}
					r, err := readPartition(t, taskContext(mem, nil, dir, "e1"), &physical.ShuffleReader{StageID: 1, OutSchema: shuffleSchema, Locations: locs}, p)
					if err != nil {
						t.Fatal(err)
					}
					got = append(got, r...)
				}
				exectest.Compare(t, got, tableRows(tables, -1), exectest.Unordered)
			})
		}
	}
}
