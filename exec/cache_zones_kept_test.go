package exec_test

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/quiverdb/quiver/exec/execop"
	"github.com/quiverdb/quiver/exec/exectest"
	"github.com/quiverdb/quiver/exec/filemap"
	"github.com/quiverdb/quiver/exec/shuffle"
	"github.com/quiverdb/quiver/physical"
)

// A pruned CacheReader reading a decoded (mapped) cache file reads the
// file's zones once and keeps them with it: with the sidecars deleted
// after the first read, the next read still skips the same batches.
// Without the file registry each read reads the sidecar again, so none
// is skipped once it is gone.
func TestCacheReaderKeepsZones(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("files are mapped only on linux")
	}
	mem := exectest.Allocator(t)
	// k ascends through the batches (full ones: a pinned writer coalesces
	// smaller), so its zones rule out all but the first.
	const rows = execop.DefaultBatchSize
	b := array.NewRecordBuilder(mem, shuffleSchema)
	var batches []arrow.RecordBatch
	for lo := 0; lo < 4*rows; lo += rows {
		for i := lo; i < lo+rows; i++ {
			b.Field(0).(*array.Int64Builder).Append(int64(i))
			b.Field(1).(*array.StringBuilder).Append("x")
			b.Field(2).(*array.Float64Builder).Append(1)
		}
		batches = append(batches, b.NewRecordBatch())
	}
	b.Release()
	tables := exectest.Tables{"t": {batches}}
	defer tables.Release()
	dir := t.TempDir()
	w := &physical.ShuffleWriter{Input: exectest.MemoryScan("t", shuffleSchema, 1), JobID: "cache-z", StageID: 1, Pinned: true}
	locs := runStage(t, mem, tables, dir, "e1", w)
	k := &physical.Column{Index: 0, Name: "k", Type: arrow.PrimitiveTypes.Int64}
	pred := &physical.Binary{Op: physical.OpLt, Left: k, Right: &physical.Literal{Type: arrow.PrimitiveTypes.Int64, Value: int64(100)}, Type: arrow.FixedWidthTypes.Boolean}
	for _, mapped := range []bool{true, false} {
		var maps *filemap.FileMaps
		if mapped {
			maps = filemap.NewFileMaps()
		}
		// read reads the cache once and returns how many batches its zones
		// skipped.
		read := func() int64 {
			t.Helper()
			cache := &physical.CacheReader{Key: physical.CacheKey{SessionID: "s", CacheID: "c"}, OutSchema: shuffleSchema, Locations: locs, Predicate: pred}
			tc := taskContext(mem, nil, dir, "e1")
			tc.Maps = maps
			tc.EnableMetrics()
			if _, err := readPartition(t, tc, cache, 0); err != nil {
				t.Fatal(err)
			}
			return tc.NodeMetrics(cache).BatchesSkipped.Load()
		}
		first := read()
		if first == 0 {
			t.Fatalf("mapped=%v: the zones skipped no batch", mapped)
		}
		sidecars, _ := filepath.Glob(filepath.Join(dir, "cache-z", "*", "*", "*"+shuffle.ZonesSuffix))
		if len(sidecars) == 0 {
			t.Fatal("the pinned writer left no zones sidecar")
		}
		saved := map[string][]byte{}
		for _, p := range sidecars {
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			saved[p] = data
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
		}
		second := read()
		if mapped && second != first || !mapped && second != 0 {
			t.Errorf("mapped=%v: %d batches skipped without the sidecars, %d with them", mapped, second, first)
		}
		for p, data := range saved {
			if err := os.WriteFile(p, data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if maps != nil {
			maps.Close()
		}
	}
}
