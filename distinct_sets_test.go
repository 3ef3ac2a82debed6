package quiver_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/quiverdb/quiver"
)

// TestDistinctBySetsSQL runs COUNT and SUM(DISTINCT) over a table large
// enough (600 k rows) for the planner to run them by sets, through the
// standalone session (plans cross the codec) over a Parquet file: the plan says "by sets" and
// the results equal counts taken in Go over the same rows. Rows come in
// runs of five of one (g, k) pair, as an order's line items do.
func TestDistinctBySetsSQL(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	ctx := context.Background()
	s, err := quiver.NewSession(ctx, quiver.WithAllocator(mem), quiver.WithTargetPartitions(2))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.Close()
		mem.AssertSize(t, 0)
	})
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "g", Type: arrow.PrimitiveTypes.Int32},
		{Name: "k", Type: arrow.PrimitiveTypes.Int64},
	}, nil)
	const rows, batch = 600_000, 8192
	sets := map[int32]map[int64]bool{}
	var batches []arrow.RecordBatch
	for start := 0; start < rows; start += batch {
		gb, kb := array.NewInt32Builder(mem), array.NewInt64Builder(mem)
		for i := start; i < min(rows, start+batch); i++ {
			run := int64(i / 5)
			g, k := int32(run%7), (run*7919)%40_000
			gb.Append(g)
			kb.Append(k)
			if sets[g] == nil {
				sets[g] = map[int64]bool{}
			}
			sets[g][k] = true
		}
		gc, kc := gb.NewArray(), kb.NewArray()
		batches = append(batches, array.NewRecordBatch(schema, []arrow.Array{gc, kc}, int64(gc.Len())))
		gb.Release()
		kb.Release()
		gc.Release()
		kc.Release()
	}
	// A Parquet file of six row groups: the scan splits it into two
	// partitions, and its footer gives the planner the row count.
	path := filepath.Join(t.TempDir(), "t.parquet")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := pqarrow.NewFileWriter(schema, f, parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(100_000)), pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range batches {
		if err := w.WriteBuffered(b); err != nil {
			t.Fatal(err)
		}
	}
	release(batches)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.RegisterParquet(ctx, "t", path); err != nil {
		t.Fatal(err)
	}
	q := "SELECT g, count(DISTINCT k) AS c, sum(DISTINCT k) AS sk FROM t GROUP BY g ORDER BY g"
	plan := sqlRows(t, s, "EXPLAIN "+q)
	if text := fmt.Sprint(plan); !strings.Contains(text, "by sets") {
		t.Fatalf("the plan does not run DISTINCT by sets:\n%s", text)
	}
	got := sqlRows(t, s, q)
	if len(got) != len(sets) {
		t.Fatalf("%d groups, want %d: %v", len(got), len(sets), got)
	}
	for g := range int32(len(sets)) {
		var sum int64
		for k := range sets[g] {
			sum += k
		}
		want := []string{fmt.Sprint(g), fmt.Sprint(len(sets[g])), fmt.Sprint(sum)}
		if fmt.Sprint(got[g]) != fmt.Sprint(want) {
			t.Errorf("group %d: got %v, want %v", g, got[g], want)
		}
	}
}
