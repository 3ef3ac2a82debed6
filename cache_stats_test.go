package quiver_test

// A cache's statistics reach the planner: the pinned writer records what
// it wrote (rows, NULLs, integer bounds, distinct counts, string lengths)
// and a GROUP BY over the cache chooses its hash table's layout from them,
// as over a Parquet scan, where the same rows from a file without
// statistics leave the choice to the key types.

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
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
// (i, v, k, s, d): v NULL every 11th row, k 300 values in a row, s a name
// in the order of i, NULL every 17th row, d a date rising with i.
func csRows(t *testing.T, s *quiver.Session, n int) [][]any {
	t.Helper()
	i64 := arrow.PrimitiveTypes.Int64
	cols := []fpCol{{"i", i64}, {"v", i64}, {"k", i64}, {"s", arrow.BinaryTypes.String}, {"d", arrow.FixedWidthTypes.Date32}}
	rows := make([][]any, n)
	for i := range rows {
		var v any = int64(i%13 - 6)
		if i%11 == 0 {
			v = nil
		}
		var name any = fmt.Sprintf("customer-name-%06d", i) // longer than a zone keeps
		if i%17 == 0 {
			name = nil
		}
		rows[i] = []any{int64(i), v, int64(1_000_000 + i*7%300), name, arrow.Date32(10_000 + i/10)}
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

// TestCacheZoneMaps: a filter over a cache of clustered rows skips the
// batches whose zone maps rule it out (EXPLAIN ANALYZE counts them) and
// answers like the same filter over the source, NULLs and boundaries
// included, at several batch sizes.
func TestCacheZoneMaps(t *testing.T) {
	filters := []string{
		"i = 1000", "i < 40", "i <= 127", "i > 2950", "i >= 2944", "i BETWEEN 1000 AND 1100",
		"i IN (5, 2999, 1500)", "i >= 100 AND i < 300 AND v > 0", "v IS NULL AND i < 200",
		"s = 'customer-name-001234'", "s >= 'customer-name-002900'", "s < 'customer-name-000050'",
		"s BETWEEN 'customer-name-001000' AND 'customer-name-001010'", "s IS NULL AND i > 2900",
		"i = -5", "i > 1000 OR i < 5", "v = 3",
		"d = DATE '1997-05-20'", "d BETWEEN DATE '1997-06-01' AND DATE '1997-06-03'", "d < DATE '1997-05-20'",
	}
	for _, batch := range []int{64, 128, 500} {
		t.Run(sprintf("batch=%d", batch), func(t *testing.T) {
			s := csSession(t, 1, batch)
			csRows(t, s, 3000)
			sqlRows(t, s, "CACHE TABLE c AS SELECT * FROM u")
			for _, f := range filters {
				q := "SELECT i, v, k, s, d FROM %s WHERE " + f
				fpSame(t, f, sqlRows(t, s, sprintf(q, "c")), sqlRows(t, s, sprintf(q, "u")))
			}
			// A narrow range of i reads few of the about 3000/batch batches
			// (the scan's batches may reach the writer a little out of order).
			skipped := csSkipped(t, s, "SELECT count(*) FROM c WHERE i BETWEEN 1000 AND 1010")
			if total := 3000 / batch; skipped < total*2/3 {
				t.Errorf("i BETWEEN 1000 AND 1010 skipped %d of %d batches", skipped, total)
			}
			if n := csSkipped(t, s, "SELECT count(*) FROM c WHERE d = DATE '1997-06-01'"); n < (3000/batch)*2/3 {
				t.Errorf("d = DATE '1997-06-01' skipped %d batches of about %d", n, 3000/batch)
			}
			if n := csSkipped(t, s, "SELECT count(*) FROM c WHERE i > 1000 OR i < 5"); n != 0 {
				t.Errorf("an OR skipped %d batches", n)
			}
		})
	}
}

var csSkippedRE = regexp.MustCompile(`CacheReaderExec[^\n]*batches_skipped=(\d+)`)

// csSkipped is the batches the cache read of q skipped, by EXPLAIN ANALYZE.
func csSkipped(t *testing.T, s *quiver.Session, q string) int {
	t.Helper()
	var text strings.Builder
	for _, r := range sqlRows(t, s, "EXPLAIN ANALYZE "+q) {
		text.WriteString(strings.Join(r, "\n") + "\n")
	}
	if !strings.Contains(text.String(), "CacheReaderExec") {
		t.Fatalf("%s reads no cache:\n%s", q, text.String())
	}
	n := 0
	for _, m := range csSkippedRE.FindAllStringSubmatch(text.String(), -1) {
		k, _ := strconv.Atoi(m[1])
		n += k
	}
	return n
}

// TestCacheSortBy: OPTIONS ('sort_by' ...) sorts each partition of the
// cache before it is written, so a range filter on a column scattered over
// the source's batches skips most of the cache's batches, where the same
// cache unsorted skips few; answers and an ORDER BY stay right, and an
// unknown column is an error naming it that leaves no cache and no view.
func TestCacheSortBy(t *testing.T) {
	s := csSession(t, 2, 128)
	csRows(t, s, 3000)
	sqlRows(t, s, "CACHE TABLE plain AS SELECT * FROM u")
	sqlRows(t, s, "CACHE TABLE sorted OPTIONS ('sort_by' 'k, i DESC') AS SELECT * FROM u")
	const f = "k BETWEEN 1000100 AND 1000104"
	for _, q := range []string{
		"SELECT i, v, k, s FROM %s WHERE " + f,
		"SELECT i, v, k, s FROM %s WHERE k = 1000299 OR k = 1000000",
		"SELECT k, count(*), sum(v) FROM %s GROUP BY k",
	} {
		want := sqlRows(t, s, sprintf(q, "u"))
		fpSame(t, q+" (sorted)", sqlRows(t, s, sprintf(q, "sorted")), want)
		fpSame(t, q+" (plain)", sqlRows(t, s, sprintf(q, "plain")), want)
	}
	ordered := "SELECT k, i FROM %s WHERE i %% 7 = 0 ORDER BY k DESC, i"
	fpSameOrdered(t, "ORDER BY over the sorted cache", joinRows(sqlRows(t, s, sprintf(ordered, "sorted"))), joinRows(sqlRows(t, s, sprintf(ordered, "u"))))

	q := "SELECT count(*) FROM %s WHERE " + f
	total := 3000 / 128
	plain, sorted := csSkipped(t, s, sprintf(q, "plain")), csSkipped(t, s, sprintf(q, "sorted"))
	if sorted < total-4 || plain > total/4 {
		t.Errorf("%s skipped %d batches of the sorted cache and %d of the plain one (of about %d)", f, sorted, plain, total)
	}

	for _, bad := range []string{"nosuch", "k, nosuch DESC"} {
		_, err := s.SQL(t.Context(), "CACHE TABLE bad OPTIONS ('sort_by' '"+bad+"') AS SELECT * FROM u")
		if err == nil || !strings.Contains(err.Error(), `"nosuch"`) {
			t.Fatalf("sort_by %q: %v, want an error naming the column", bad, err)
		}
	}
	if _, err := s.SQL(t.Context(), "CACHE TABLE bad OPTIONS ('sort_by' 'k SIDEWAYS') AS SELECT * FROM u"); err == nil {
		t.Fatal("sort_by 'k SIDEWAYS' accepted")
	}
	if got := cachesOf(t, s); len(got) != 2 {
		t.Fatalf("caches after the refused ones: %v", got)
	}
	if _, err := s.SQL(t.Context(), "SELECT * FROM bad"); err == nil {
		t.Fatal("a refused CACHE TABLE left its view")
	}
	df, err := s.SQL(t.Context(), "SELECT * FROM u")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := df.CacheWithOptions(map[string]string{"sort_by": "nosuch"}).Count(t.Context()); err == nil || !strings.Contains(err.Error(), `"nosuch"`) {
		t.Fatalf("CacheWithOptions with an unknown sort_by column: %v", err)
	}
}

func joinRows(rows [][]string) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = strings.Join(r, "|")
	}
	return out
}
