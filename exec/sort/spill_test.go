package sort_test

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/quiverdb/quiver/exec"
	"github.com/quiverdb/quiver/exec/execop"
	"github.com/quiverdb/quiver/exec/exectest"
	"github.com/quiverdb/quiver/exec/spill"
	"github.com/quiverdb/quiver/physical"
)

var spillSchema = arrow.NewSchema([]arrow.Field{
	{Name: "k", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "i", Type: arrow.PrimitiveTypes.Int64},
	{Name: "s", Type: arrow.BinaryTypes.String},
}, nil)

type spillRow struct {
	k    int64
	null bool
	i    int64
	s    string
}

// spillData returns n rows with many ties on k, some NULL keys, and their
// JSON; i is the input position, so a stable sort by k orders ties by i.
func spillData(n int, seed uint64) ([]spillRow, string) {
	r := rand.New(rand.NewPCG(seed, 7))
	rows := make([]spillRow, n)
	var b strings.Builder
	b.WriteByte('[')
	for i := range rows {
		row := spillRow{k: int64(r.IntN(40)), null: r.IntN(23) == 0, i: int64(i), s: fmt.Sprintf("payload-%d-%s", r.IntN(1000), strings.Repeat("x", r.IntN(30)))}
		rows[i] = row
		if i > 0 {
			b.WriteByte(',')
		}
		k := fmt.Sprint(row.k)
		if row.null {
			k = "null"
		}
		fmt.Fprintf(&b, `{"k":%s,"i":%d,"s":%q}`, k, row.i, row.s)
	}
	b.WriteByte(']')
	return rows, b.String()
}

// sortedJSON is the reference: rows stably sorted by k descending, NULLs
// first, as JSON.
func sortedJSON(rows []spillRow) string {
	rows = slices.Clone(rows)
	slices.SortStableFunc(rows, func(a, b spillRow) int {
		switch {
		case a.null && b.null:
			return 0
		case a.null:
			return -1
		case b.null:
			return 1
		}
		return cmp.Compare(b.k, a.k)
	})
	var b strings.Builder
	b.WriteByte('[')
	for i, row := range rows {
		if i > 0 {
			b.WriteByte(',')
		}
		k := fmt.Sprint(row.k)
		if row.null {
			k = "null"
		}
		fmt.Fprintf(&b, `{"k":%s,"i":%d,"s":%q}`, k, row.i, row.s)
	}
	b.WriteByte(']')
	return b.String()
}

func sortByK(in physical.Plan) *physical.Sort {
	return &physical.Sort{Input: in, Fetch: -1, Keys: []physical.SortKey{
		{Expr: &physical.Column{Index: 0, Name: "k", Type: arrow.PrimitiveTypes.Int64}, Asc: false, NullsFirst: true}}}
}

// TestSortSpills: under a memory limit far below its input, a full sort
// writes sorted runs to disk and merges them, giving the same stable order
// as sorting in memory, at every batch size, with early close and
// cancellation, leaving no file behind.
func TestSortSpills(t *testing.T) {
	rows, js := spillData(16000, 1)
	exectest.Run(t, exectest.Case{
		Name:        "spill",
		Inputs:      []exectest.Input{{Name: "t", Schema: spillSchema, Rows: js, Partitions: 1}},
		Plan:        func(s []physical.Plan) physical.Plan { return sortByK(s[0]) },
		Want:        sortedJSON(rows),
		Order:       exectest.Ordered,
		MemoryLimit: 1 << 20,
	})
}

// TestSortSpillsCounted: the spill really happens at that limit — EXPLAIN
// ANALYZE's spilled bytes move, and several runs were merged — and not
// without a limit.
func TestSortSpillsCounted(t *testing.T) {
	rows, js := spillData(20000, 2)
	for _, limit := range []int64{0, 1 << 20} {
		t.Run(fmt.Sprintf("limit=%d", limit), func(t *testing.T) {
			mem := exectest.Allocator(t)
			rec, _, err := array.RecordFromJSON(mem, spillSchema, strings.NewReader(js))
			if err != nil {
				t.Fatal(err)
			}
			tables := exectest.Tables{"t": {exectest.Split(rec, []int{1000, 2000, 3000, 7000, 12000})}}
			rec.Release()
			defer tables.Release()
			acct := execop.NewAccountingAllocator(mem, limit)
			tc := exec.NewTaskContext(acct, 4096)
			tc.MemoryTables = tables.Lookup
			tc.WorkDir = t.TempDir()
			tc.EnableMetrics()
			plan := sortByK(exectest.MemoryScan("t", spillSchema, 1))
			got := exectest.Collect(t, context.Background(), tc, plan)
			exectest.Compare(t, got, exectest.RowsFromJSON(t, mem, spillSchema, sortedJSON(rows)), exectest.Ordered)
			spilled := tc.NodeMetrics(plan).SpilledBytes.Load()
			if limit == 0 && spilled != 0 {
				t.Errorf("spilled %d bytes without a limit", spilled)
			}
			if limit > 0 && spilled == 0 {
				t.Errorf("no spill under a %d-byte limit", limit)
			}
			if limit > 0 && acct.Peak() > limit {
				t.Errorf("peak %d over the limit %d", acct.Peak(), limit)
			}
			if !strings.Contains(tc.FormatAnalyze(plan), "spilled=") == (limit > 0) {
				t.Errorf("EXPLAIN ANALYZE does not show the spill:\n%s", tc.FormatAnalyze(plan))
			}
			left, _ := filepath.Glob(filepath.Join(tc.WorkDir, spill.DirName, "*"))
			if len(left) > 0 {
				t.Errorf("spill files left: %v", left)
			}
		})
	}
}
