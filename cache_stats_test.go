package quiver_test

// A cache's statistics reach the planner: the pinned writer records what
// it wrote (rows, NULLs, integer bounds, distinct counts, string lengths)
// and a GROUP BY over the cache chooses its hash table's layout from them,
// as over a Parquet scan, where the same rows from a file without
// statistics leave the choice to the key types.

import (
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver"
)

// csSession is a standalone session of the given target partitions and
// batch size.
func csSession(t *testing.T, partitions, batch int, opts ...quiver.Option) *quiver.Session {
	t.Helper()
	s, err := quiver.NewSession(t.Context(), append([]quiver.Option{quiver.WithTargetPartitions(partitions)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	sqlRows(t, s, sprintf("SET quiver.batch_size = %d", batch))
	return s
}

func sprintf(f string, a ...any) string { return fmt.Sprintf(f, a...) }

// csRows registers table u (an Arrow IPC file: no statistics) of n rows
// (i, v, k): v NULL every 11th row, k 300 values in a row.
func csRows(t *testing.T, s *quiver.Session, n int) [][]any {
	t.Helper()
	i64 := arrow.PrimitiveTypes.Int64
	cols := []fpCol{{"i", i64}, {"v", i64}, {"k", i64}}
	rows := make([][]any, n)
	for i := range rows {
		var v any = int64(i%13 - 6)
		if i%11 == 0 {
			v = nil
		}
		rows[i] = []any{int64(i), v, int64(1_000_000 + i*7%300)}
	}
	fpRegisterNoStats(t, s, "u", cols, rows, 500)
	return rows
}

// TestCacheStatsChooseLayout: a GROUP BY over a cache of rows without
// statistics chooses the direct layout by the cache's statistics (one
// table, unchanged), while the same query over the source does not, and
// both answer alike.
func TestCacheStatsChooseLayout(t *testing.T) {
	for _, parts := range []int{1, 3} {
		t.Run(sprintf("partitions=%d", parts), func(t *testing.T) {
			s := csSession(t, parts, 128)
			rows := csRows(t, s, 3000)
			q := "SELECT k, count(*), count(v), sum(v), min(i), max(i) FROM %s GROUP BY k"
			want := fpGroupCount(rows, []int{2}, 1, 0)
			fpSame(t, "source", sqlRows(t, s, sprintf(q, "u")), want)
			if f := fpTables(t, s, sprintf(q, "u"), "HashAggregateExec"); f["by_stats"] != 0 {
				t.Fatalf("the source has no statistics, yet its tables were chosen by them: %v", f)
			}
			sqlRows(t, s, "CACHE TABLE c AS SELECT * FROM u")
			fpSame(t, "cache", sqlRows(t, s, sprintf(q, "c")), want)
			f := fpTables(t, s, sprintf(q, "c"), "HashAggregateExec")
			if f["by_stats"] < 1 || f["layout_changes"] != 0 || f["direct"] < 1 {
				t.Errorf("GROUP BY over the cache: hash tables %v, want direct tables chosen by statistics, unchanged", f)
			}
		})
	}
}

// TestCacheStatsEmptyAndNulls: a cache whose partitions are partly or all
// empty, and whose key column holds NULLs, still answers like its source.
func TestCacheStatsEmptyAndNulls(t *testing.T) {
	s := csSession(t, 4, 64)
	csRows(t, s, 300)
	for _, q := range []string{
		"SELECT v, count(*), min(k), max(k) FROM %s GROUP BY v",
		"SELECT count(*), count(v), min(v), max(v) FROM %s",
	} {
		for _, src := range []string{
			"SELECT * FROM u WHERE i < 3",              // most partitions empty
			"SELECT * FROM u WHERE i < 0",              // every partition empty
			"SELECT * FROM u WHERE v IS NULL OR v > 2", // NULL keys
		} {
			sqlRows(t, s, "CACHE TABLE e AS "+src)
			got := sqlRows(t, s, sprintf(q, "e"))
			want := sqlRows(t, s, sprintf(q, "("+src+") w"))
			fpSame(t, src+": "+q, got, want)
			sqlRows(t, s, "UNCACHE TABLE e")
		}
	}
}
