package exec_test

import (
	"context"
	"errors"
	"io"
	"reflect"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver/exec"
	"github.com/quiverdb/quiver/exec/execop"
	"github.com/quiverdb/quiver/exec/exectest"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
)

// dirFetcher stands in for the Flight client: it serves the files of other
// executors from their own work dirs (one temp dir per executor id).
type dirFetcher struct {
	mem     memory.Allocator
	dirs    map[string]string
	fetches int
	err     error // if set, every Fetch fails with it
}

func (f *dirFetcher) Fetch(ctx context.Context, loc physical.PartitionLocation) (execop.Operator, error) {
	f.fetches++
	if f.err != nil {
		return nil, f.err
	}
	// The remote side is a local read on "its" executor.
	tc := taskContext(f.mem, nil, f.dirs[loc.Executor.ID], loc.Executor.ID)
	schema := arrow.NewSchema([]arrow.Field{{Name: "remote_k", Type: arrow.PrimitiveTypes.Int64, Nullable: true}, {Name: "x", Type: arrow.BinaryTypes.String, Nullable: true}, {Name: "y", Type: arrow.PrimitiveTypes.Float64, Nullable: true}}, nil)
	return exec.Build(tc, &physical.ShuffleReader{OutSchema: schema, Locations: [][]physical.PartitionLocation{{loc}}}, 0)
}

func TestShuffleReaderRemote(t *testing.T) {
	mem := exectest.Allocator(t)
	tables := shuffleInput(t, mem, 2, 300, 40)
	defer tables.Release()
	dirA, dirB := t.TempDir(), t.TempDir()
	w := &physical.ShuffleWriter{Input: exectest.MemoryScan("t", shuffleSchema, 2), JobID: "j", StageID: 2, N: 0}
	locsA := runStage(t, mem, tables, dirA, "a", w)
	locsB := runStage(t, mem, tables, dirB, "b", w)
	// Partition i reads one file held by a and one by b; the reader runs on b.
	locs := [][]physical.PartitionLocation{{locsA[0][0], locsB[0][0]}, {locsB[1][0], locsA[1][0]}}
	f := &dirFetcher{mem: mem, dirs: map[string]string{"a": dirA, "b": dirB}}
	tc := taskContext(mem, nil, dirB, "b")
	tc.Fetcher = f
	rd := &physical.ShuffleReader{StageID: 2, OutSchema: shuffleSchema, Locations: locs}
	for p := range 2 {
		got, err := readPartition(t, tc, rd, p)
		if err != nil {
			t.Fatal(err)
		}
		want := append(tableRows(tables, p), tableRows(tables, p)...)
		exectest.Compare(t, got, want, exectest.Unordered)
	}
	if f.fetches != 2 {
		t.Errorf("%d fetches, want 2 (local files are read directly)", f.fetches)
	}

	// A failing fetch is a FetchError naming the remote location.
	f.err = qerr.IOf("flight: connection refused")
	_, err := readPartition(t, tc, rd, 0)
	var fe *execop.FetchError
	if !errors.As(err, &fe) || !reflect.DeepEqual(fe.Location, locsA[0][0]) || !errors.Is(err, f.err) {
		t.Fatalf("got %v, want a FetchError for %s", err, locsA[0][0])
	}

	// Without a Fetcher every location is read from the local work dir.
	tc = taskContext(mem, nil, dirA, "a")
	rd = &physical.ShuffleReader{StageID: 2, OutSchema: shuffleSchema, Locations: [][]physical.PartitionLocation{{locsB[0][0]}}}
	got, err := readPartition(t, tc, rd, 0)
	if err != nil {
		t.Fatal(err)
	}
	exectest.Compare(t, got, tableRows(tables, 0), exectest.Unordered)
}

func TestShuffleReaderFetchErrors(t *testing.T) {
	mem := exectest.Allocator(t)
	tables := shuffleInput(t, mem, 1, 100, 30)
	defer tables.Release()
	dir := t.TempDir()
	w := &physical.ShuffleWriter{Input: exectest.MemoryScan("t", shuffleSchema, 1), JobID: "j", StageID: 1, N: 1}
	locs := runStage(t, mem, tables, dir, "e", w)
	good := locs[0][0]
	missing := good
	missing.MapPartition = 7
	badJob := good
	badJob.JobID = "../etc"
	otherStage := good
	otherStage.StageID = 9
	wrongSchema := arrow.NewSchema([]arrow.Field{{Name: "k", Type: arrow.BinaryTypes.String}}, nil)
	cases := []struct {
		name   string
		schema *arrow.Schema
		loc    physical.PartitionLocation
	}{
		{"missing map partition", shuffleSchema, missing},
		{"missing stage", shuffleSchema, otherStage},
		{"invalid job id", shuffleSchema, badJob},
		{"schema mismatch", wrongSchema, good},
	}
	tc := taskContext(mem, nil, dir, "e")
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// The good file first: the failure comes after some batches.
			rd := &physical.ShuffleReader{StageID: 1, OutSchema: c.schema, Locations: [][]physical.PartitionLocation{{good, c.loc}}}
			if c.schema != shuffleSchema {
				rd.Locations = [][]physical.PartitionLocation{{c.loc}}
			}
			_, err := readPartition(t, tc, rd, 0)
			var fe *execop.FetchError
			if !errors.As(err, &fe) || !reflect.DeepEqual(fe.Location, c.loc) {
				t.Fatalf("got %v, want a FetchError for %s", err, c.loc)
			}
		})
	}
	// Same for a CacheReader, which shares the reading code.
	cr := &physical.CacheReader{Key: physical.CacheKey{SessionID: "s", CacheID: "c"}, OutSchema: shuffleSchema, Locations: [][]physical.PartitionLocation{{good}, {missing}}}
	got, err := readPartition(t, tc, cr, 0)
	if err != nil {
		t.Fatal(err)
	}
	exectest.Compare(t, got, tableRows(tables, 0), exectest.Unordered)
	if _, err := readPartition(t, tc, cr, 1); !errors.As(err, new(*execop.FetchError)) {
		t.Fatalf("cache reader of a missing file: %v, want a FetchError", err)
	}
	// No locations at all: an empty partition.
	if got, err := readPartition(t, tc, &physical.ShuffleReader{OutSchema: shuffleSchema}, 0); err != nil || len(got) != 0 {
		t.Fatalf("empty reader: %v rows, %v", len(got), err)
	}
}

// cancelAfter cancels a context once its input has handed out n batches.
type cancelAfter struct {
	execop.Operator
	n      int
	cancel context.CancelFunc
}

func (c *cancelAfter) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if c.n == 0 {
		c.cancel()
	}
	c.n--
	return c.Operator.Next(ctx)
}

func TestShuffleWriterFailureLeavesNoFiles(t *testing.T) {
	key := []physical.Expr{&physical.Column{Index: 0, Name: "k", Type: arrow.PrimitiveTypes.Int64}}
	for _, mode := range []string{"cancel", "error", "panic", "complete-then-close", "close-before-next"} {
		t.Run(mode, func(t *testing.T) {
			mem := exectest.Allocator(t)
			tables := shuffleInput(t, mem, 1, 2000, 50)
			defer tables.Release()
			dir := t.TempDir()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			tc := taskContext(mem, tables, dir, "e")
			tc.WrapSource = func(_ *physical.Scan, _ int, op execop.Operator) execop.Operator {
				switch mode {
				case "cancel":
					return &cancelAfter{Operator: op, n: 5, cancel: cancel}
				case "error", "panic":
					// Replace the scan by a source that fails after 5 batches.
					_ = op.Close()
					src := exectest.NewSource(shuffleInput(t, mem, 1, 2000, 50)["t"][0])
					if mode == "error" {
						src.ErrAt = 5
					} else {
						src.PanicAt = 5
					}
					return src
				}
				return op
			}
			w := &physical.ShuffleWriter{Input: exectest.MemoryScan("t", shuffleSchema, 1), JobID: "j", StageID: 4, Keys: key, N: 3}
			op, err := exec.Build(tc, w, 0)
			if err != nil {
				t.Fatal(err)
			}
			if err := op.Open(ctx); err != nil {
				t.Fatal(err)
			}
			switch mode {
			case "close-before-next":
			case "complete-then-close":
				// A completed write's files stay after Close.
				b, err := op.Next(ctx)
				if err != nil {
					t.Fatal(err)
				}
				b.Release()
			default:
				b, err := op.Next(ctx)
				if err == nil {
					b.Release()
					t.Fatal("shuffle write succeeded despite the failure")
				}
				if mode == "cancel" && !errors.Is(err, context.Canceled) {
					t.Fatalf("got %v, want context.Canceled", err)
				}
				if b, err2 := op.Next(ctx); err2 == nil || errors.Is(err2, io.EOF) {
					if b != nil {
						b.Release()
					}
					t.Fatalf("Next after a failure: %v, want the error again", err2)
				}
			}
			if err := op.Close(); err != nil && mode == "complete-then-close" {
				t.Fatal(err)
			}
			files := dataFiles(t, dir)
			if mode == "complete-then-close" {
				if len(files) != 3 {
					t.Fatalf("completed write left %v", files)
				}
				return
			}
			if len(files) != 0 {
				t.Fatalf("failed write left %v", files)
			}
		})
	}
}

func TestShuffleWriterRejects(t *testing.T) {
	mem := exectest.Allocator(t)
	scan := exectest.MemoryScan("t", shuffleSchema, 1)
	cases := []struct {
		name string
		w    *physical.ShuffleWriter
		dir  string
	}{
		{"no work dir", &physical.ShuffleWriter{Input: scan, JobID: "j", StageID: 1}, ""},
		{"bad job id", &physical.ShuffleWriter{Input: scan, JobID: "a/b", StageID: 1}, t.TempDir()},
		{"keys without N", &physical.ShuffleWriter{Input: scan, JobID: "j", StageID: 1, Keys: []physical.Expr{&physical.Column{Index: 0, Type: arrow.PrimitiveTypes.Int64}}}, t.TempDir()},
		{"bad compression", &physical.ShuffleWriter{Input: scan, JobID: "j", StageID: 1, Compression: "gzip"}, t.TempDir()},
	}
	for _, c := range cases {
		tc := taskContext(mem, nil, c.dir, "e")
		if op, err := exec.Build(tc, c.w, 0); err == nil {
			op.Close()
			t.Errorf("%s: built", c.name)
		}
	}
}

func BenchmarkShuffleWrite(b *testing.B) {
	for _, comp := range []physical.Compression{physical.CompressLZ4, physical.CompressNone} {
		b.Run(string(comp), func(b *testing.B) {
			mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
			tables := shuffleInput(b, mem, 1, 100_000, 8192)
			defer tables.Release()
			key := []physical.Expr{&physical.Column{Index: 0, Name: "k", Type: arrow.PrimitiveTypes.Int64}}
			w := &physical.ShuffleWriter{Input: exectest.MemoryScan("t", shuffleSchema, 1), JobID: "bench", StageID: 1, Keys: key, N: 8, Compression: comp}
			dir := b.TempDir()
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				runStage(b, mem, tables, dir, "e", w)
			}
		})
	}
}

func BenchmarkShuffleRead(b *testing.B) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	tables := shuffleInput(b, mem, 1, 100_000, 8192)
	defer tables.Release()
	dir := b.TempDir()
	w := &physical.ShuffleWriter{Input: exectest.MemoryScan("t", shuffleSchema, 1), JobID: "bench", StageID: 1, N: 1}
	locs := runStage(b, mem, tables, dir, "e", w)
	rd := &physical.ShuffleReader{StageID: 1, OutSchema: shuffleSchema, Locations: locs}
	tc := taskContext(mem, nil, dir, "e")
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		op, err := exec.Build(tc, rd, 0)
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
			batch.Release()
		}
		op.Close()
	}
}
