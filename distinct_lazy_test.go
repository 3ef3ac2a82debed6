package quiver_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/quiverdb/quiver"
	"github.com/quiverdb/quiver/exec/aggregate"
)

// TestLazyDistinctThroughSQL: a Partial DISTINCT by sets whose values come
// out of order records its pairs without probing a set and sorts them
// when they double or its state is read; when a compaction finds the rows
// mostly repeating pairs, it moves them into the set and probes from then
// on. Compactions are made frequent here, so that batches of several
// sizes cross them; rows whose pairs are mostly distinct stay on the lazy
// path, rows repeating a few pairs leave it, and each query's answer must
// be the one computed here.
func TestLazyDistinctThroughSQL(t *testing.T) {
	defer aggregate.SetLazyDistinctPairs(300)()
	// Enough rows for the planner to run DISTINCT by sets.
	const n = 520_000
	rng := rand.New(rand.NewPCG(3, 4))
	type row struct {
		k    int64
		null bool
		g    int32
	}
	spread := make([]row, n)    // most pairs distinct
	repeating := make([]row, n) // 40 pairs, shuffled: the runs are short
	for i := range spread {
		spread[i] = row{k: int64(rng.IntN(2*n)) - n/2, null: i%97 == 0, g: int32(rng.IntN(4))}
		repeating[i] = row{k: int64(rng.IntN(10)) * 1000003, g: int32(rng.IntN(4))}
	}
	for i := 10; i < 20; i++ {
		spread[i] = spread[9] // a run of one pair
	}

	// answer is the query's rows computed here: per g, the distinct non-NULL
	// k and their sum.
	answer := func(rows []row) string {
		perG := map[int32]map[int64]bool{}
		for _, r := range rows {
			if perG[r.g] == nil {
				perG[r.g] = map[int64]bool{}
			}
			if !r.null {
				perG[r.g][r.k] = true
			}
		}
		var out [][]string
		for g := range int32(4) {
			sum := int64(0)
			for k := range perG[g] {
				sum += k
			}
			out = append(out, []string{fmt.Sprint(g), fmt.Sprint(len(perG[g])), fmt.Sprint(sum)})
		}
		sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
		return fmt.Sprint(out)
	}
	// write stores rows as a Parquet file of several row groups: the scan
	// splits it into partitions, and its footer gives the row count.
	write := func(name string, rows []row) string {
		schema := arrow.NewSchema([]arrow.Field{{Name: "g", Type: arrow.PrimitiveTypes.Int32}, {Name: "k", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil)
		gb, kb := array.NewInt32Builder(memory.DefaultAllocator), array.NewInt64Builder(memory.DefaultAllocator)
		defer gb.Release()
		defer kb.Release()
		for _, r := range rows {
			gb.Append(r.g)
			if r.null {
				kb.AppendNull()
			} else {
				kb.Append(r.k)
			}
		}
		gc, kc := gb.NewArray(), kb.NewArray()
		defer gc.Release()
		defer kc.Release()
		b := array.NewRecordBatch(schema, []arrow.Array{gc, kc}, int64(len(rows)))
		defer b.Release()
		path := filepath.Join(t.TempDir(), name+".parquet")
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		w, err := pqarrow.NewFileWriter(schema, f, parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(100_000)), pqarrow.DefaultWriterProps())
		if err != nil {
			t.Fatal(err)
		}
		if err := w.WriteBuffered(b); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return path
	}
	paths := map[string]string{"spread": write("spread", spread), "repeating": write("repeating", repeating)}

	for _, batch := range []int{100, 1000, 8192} {
		for _, tc := range []struct {
			name  string
			rows  []row
			leave bool // some set leaves the lazy path
		}{
			{"spread", spread, false},
			{"repeating", repeating, true},
		} {
			t.Run(fmt.Sprintf("%s/batch=%d", tc.name, batch), func(t *testing.T) {
				ctx := context.Background()
				mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
				s, err := quiver.NewSession(ctx, quiver.WithAllocator(mem), quiver.WithTargetPartitions(2), quiver.WithBatchSize(batch))
				if err != nil {
					t.Fatal(err)
				}
				defer func() {
					s.Close()
					mem.AssertSize(t, 0)
				}()
				if err := s.RegisterParquet(ctx, "t", paths[tc.name]); err != nil {
					t.Fatal(err)
				}
				q := "SELECT g, count(DISTINCT k), sum(DISTINCT k) FROM t GROUP BY g ORDER BY g"
				if plan := fmt.Sprint(sqlRows(t, s, "EXPLAIN "+q)); !strings.Contains(plan, "by sets") {
					t.Fatalf("the plan does not run DISTINCT by sets:\n%s", plan)
				}
				took, left := aggregate.LazyDistinctRows(), aggregate.LazyDistinctLeft()
				if got := fmt.Sprint(sqlRows(t, s, q)); got != answer(tc.rows) {
					t.Errorf("got %s\nwant %s", got, answer(tc.rows))
				}
				took, left = aggregate.LazyDistinctRows()-took, aggregate.LazyDistinctLeft()-left
				if took == 0 || (left > 0) != tc.leave {
					t.Errorf("the lazy path took %d rows and %d sets left it; want some rows, and sets leaving: %v", took, left, tc.leave)
				}
			})
		}
	}
}
