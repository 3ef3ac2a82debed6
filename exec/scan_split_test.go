package exec_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/quiverdb/quiver/exec"
	"github.com/quiverdb/quiver/exec/execop"
	"github.com/quiverdb/quiver/exec/exectest"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
)

// TestScanParquetRowGroupRanges: partitions given row-group ranges of one
// file read exactly those row groups, and together the whole file once.
func TestScanParquetRowGroupRanges(t *testing.T) {
	mem := exectest.Allocator(t)
	bs := exectest.Batches(t, mem, abSchema, `[
		{"a":0,"b":"a"},{"a":1,"b":"b"},{"a":2,"b":"c"},{"a":3,"b":"d"},
		{"a":4,"b":"e"},{"a":5,"b":"f"},{"a":6,"b":"g"},{"a":7,"b":"h"},
		{"a":8,"b":"i"},{"a":9,"b":"j"},{"a":10,"b":"k"},{"a":11,"b":null}]`, 12)
	rec := bs[0]
	defer rec.Release()
	path := filepath.Join(t.TempDir(), "t.parquet")
	writeParquet(t, mem, path, rec, 4) // row groups [0-3] [4-7] [8-11]

	ctx := context.Background()
	tc := exec.NewTaskContext(mem, 3)
	one := func(r physical.RowGroupRange) *physical.Scan {
		return &physical.Scan{Table: "t", Format: physical.FormatParquet, FileSchema: abSchema, Projection: []int{0},
			Partitions: [][]string{{path}}, RowGroups: [][]physical.RowGroupRange{{r}}, Fetch: -1}
	}
	if got := exectest.Collect(t, ctx, tc, one(physical.RowGroupRange{Start: 1, End: 3})); !slices.Equal(got, []string{"4", "5", "6", "7", "8", "9", "10", "11"}) {
		t.Errorf("row groups 1-3: got %v", got)
	}
	if got := exectest.Collect(t, ctx, tc, one(physical.RowGroupRange{Start: 2, End: 2})); len(got) != 0 {
		t.Errorf("empty range: got %v", got)
	}

	split := &physical.Scan{Table: "t", Format: physical.FormatParquet, FileSchema: abSchema, Projection: []int{0},
		Partitions: [][]string{{path}, {path}},
		RowGroups:  [][]physical.RowGroupRange{{{Start: 0, End: 1}}, {{Start: 1, End: 3}}}, Fetch: -1}
	got := exectest.Collect(t, ctx, tc, split)
	slices.Sort(got)
	want := []string{"0", "1", "10", "11", "2", "3", "4", "5", "6", "7", "8", "9"}
	if !slices.Equal(got, want) {
		t.Errorf("two partitions: got %v, want %v", got, want)
	}

	// A range past the file's row groups is an execution error, not a panic.
	_, err := execop.CollectAll(ctx, tc, one(physical.RowGroupRange{Start: 2, End: 5}))
	if !qerr.Is(err, qerr.Execution) {
		t.Errorf("range past the end: want an exec error, got %v", err)
	}
	// Ranges that do not parallel the files are an internal error.
	bad := one(physical.RowGroupRange{Start: 0, End: 1})
	bad.RowGroups = [][]physical.RowGroupRange{{}}
	_, err = execop.CollectAll(ctx, tc, bad)
	if !qerr.Is(err, qerr.Internal) {
		t.Errorf("mismatched ranges: want an internal error, got %v", err)
	}
}
