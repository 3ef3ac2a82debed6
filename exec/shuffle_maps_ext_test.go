package exec_test

import (
	"path/filepath"
	"runtime"
	"testing"

	"github.com/quiverdb/quiver/exec/exectest"
	"github.com/quiverdb/quiver/exec/filemap"
	"github.com/quiverdb/quiver/physical"
)

// A CacheReader reading through TaskContext.Maps keeps its files mapped
// for the next reader and reads the same rows each time; a ShuffleReader
// never registers its files.
func TestCacheReaderKeepsFilesMapped(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("files are mapped only on linux")
	}
	mem := exectest.Allocator(t)
	maps := filemap.NewFileMaps()
	defer maps.Close()
	for _, comp := range []physical.Compression{physical.CompressNone, physical.CompressLZ4} {
		t.Run(string(comp), func(t *testing.T) {
			tables := shuffleInput(t, mem, 2, 500, 64)
			defer tables.Release()
			dir := t.TempDir()
			w := &physical.ShuffleWriter{Input: exectest.MemoryScan("t", shuffleSchema, 2), JobID: "cache-1", StageID: 2, Compression: comp, Pinned: true}
			locs := runStage(t, mem, tables, dir, "e1", w)
			files := 0
			for _, l := range locs {
				files += len(l)
			}
			shuffle := &physical.ShuffleReader{StageID: 2, OutSchema: shuffleSchema, Locations: locs}
			cache := &physical.CacheReader{Key: physical.CacheKey{SessionID: "s", CacheID: "c"}, OutSchema: shuffleSchema, Locations: locs}
			tc := taskContext(mem, nil, dir, "e1")
			tc.Maps = maps
			if _, err := readPartition(t, tc, shuffle, 0); err != nil {
				t.Fatal(err)
			}
			if maps.Len() != 0 {
				t.Fatalf("a shuffle reader registered %d files", maps.Len())
			}
			for round := range 2 {
				var all []string
				for p := range len(locs) {
					got, err := readPartition(t, tc, cache, p)
					if err != nil {
						t.Fatal(err)
					}
					all = append(all, got...)
				}
				exectest.Compare(t, all, tableRows(tables, -1), exectest.Unordered)
				if maps.Len() != files {
					t.Errorf("round %d: %d files mapped, want %d", round, maps.Len(), files)
				}
			}
			maps.Forget(filepath.Join(dir, "cache-1", "2"))
			if maps.Len() != 0 {
				t.Errorf("%d files still mapped after Forget of the stage", maps.Len())
			}
		})
	}
}
