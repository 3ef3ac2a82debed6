package quiver_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver"
	"github.com/quiverdb/quiver/exec/scan"
	"github.com/quiverdb/quiver/qerr"
)

const recentSQL = "SELECT l_orderkey, l_quantity, l_extendedprice FROM lineitem WHERE l_shipdate >= DATE '1998-01-01'"

// localAnswer runs q on a session without any cache, for comparison.
func localAnswer(t *testing.T, q string) [][]string {
	t.Helper()
	return sqlRows(t, newTPCHSession(t, quiver.WithLocalExecution()), q)
}

func cacheRow(t *testing.T, s *quiver.Session, name string) quiver.CacheInfo {
	t.Helper()
	infos, err := s.Caches(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range infos {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no cache %q in %+v", name, infos)
	return quiver.CacheInfo{}
}

func TestCacheTableSQL(t *testing.T) {
	s := newTPCHSession(t)
	sqlRows(t, s, "CACHE TABLE recent AS "+recentSQL)
	info := cacheRow(t, s, "recent")
	want := localAnswer(t, "SELECT count(*) FROM ("+recentSQL+") r")
	if info.State != "materialized" || fmt.Sprint(info.Rows) != want[0][0] || info.Partitions < 1 || info.Bytes <= 0 || len(info.Executors) != 1 {
		t.Fatalf("after an eager CACHE TABLE: %+v (want %s rows materialized)", info, want[0][0])
	}

	// Hits read the pinned files: lineitem is not scanned again. (The
	// expected answers come first: computing them scans lineitem.)
	queries := []string{
		"SELECT count(*), sum(l_quantity) FROM recent",
		"SELECT max(l_extendedprice) FROM recent WHERE l_quantity > 10",
		"SELECT recent.l_orderkey, o.o_orderstatus FROM recent JOIN orders o ON recent.l_orderkey = o.o_orderkey ORDER BY 1, 2 LIMIT 5",
	}
	bases := make([][][]string, len(queries))
	for i, q := range queries {
		bases[i] = localAnswer(t, strings.ReplaceAll(q, "FROM recent", "FROM ("+recentSQL+") recent"))
	}
	scans := scan.ScanCount("lineitem")
	for i, q := range queries {
		if got := sqlRows(t, s, q); fmt.Sprint(got) != fmt.Sprint(bases[i]) {
			t.Errorf("%s: got %v, want %v", q, got, bases[i])
		}
	}
	if n := scan.ScanCount("lineitem") - scans; n != 0 {
		t.Errorf("cache hits scanned lineitem %d times", n)
	}
	if info := cacheRow(t, s, "recent"); info.Hits < 3 {
		t.Errorf("hits = %d, want ≥ 3", info.Hits)
	}

	// EXPLAIN marks the cache node and shows the reader; ANALYZE says the input did not run.
	explain := sqlRows(t, s, "EXPLAIN SELECT count(*) FROM recent")
	if !strings.Contains(explain[0][1], "Cache: recent") || !strings.Contains(explain[0][1], "[hit]") || !strings.Contains(explain[1][1], "CacheReaderExec: recent") {
		t.Errorf("EXPLAIN:\n%s\n%s", explain[0][1], explain[1][1])
	}
	analyze := fmt.Sprint(sqlRows(t, s, "EXPLAIN ANALYZE SELECT count(*) FROM recent"))
	if !strings.Contains(analyze, "Cache recent") || !strings.Contains(analyze, "the cached input did not run") || !strings.Contains(analyze, "CacheReaderExec") {
		t.Errorf("EXPLAIN ANALYZE: %s", analyze)
	}

	// UNCACHE removes the entry and the view CACHE TABLE ... AS made, so
	// the same statement can run again.
	sqlRows(t, s, "UNCACHE TABLE recent")
	if infos, _ := s.Caches(context.Background()); len(infos) != 0 {
		t.Errorf("after UNCACHE: %+v", infos)
	}
	if _, err := s.SQL(context.Background(), "SELECT count(*) FROM recent"); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("the view after UNCACHE: %v", err)
	}
	sqlRows(t, s, "CACHE TABLE recent AS "+recentSQL)
	if info := cacheRow(t, s, "recent"); info.State != "materialized" {
		t.Errorf("CACHE TABLE again after UNCACHE: %+v", info)
	}
}

func TestCacheLazyAndExistingTable(t *testing.T) {
	s := newTPCHSession(t)
	sqlRows(t, s, "CACHE LAZY TABLE orders")
	if info := cacheRow(t, s, "orders"); info.State != "lazy" {
		t.Fatalf("CACHE LAZY TABLE: state %q", info.State)
	}
	ctx := context.Background()
	run := func(q string) quiver.QueryInfo {
		df, err := s.SQL(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		var info quiver.QueryInfo
		for _, err := range df.StreamInfo(ctx, &info) {
			if err != nil {
				t.Fatal(err)
			}
		}
		return info
	}
	first := run("SELECT count(*) FROM orders")
	second := run("SELECT count(*) FROM orders WHERE o_orderstatus = 'F'")
	if len(first.Caches) != 1 || first.Caches[0].Outcome != "miss" || len(second.Caches) != 1 || second.Caches[0].Outcome != "hit" {
		t.Fatalf("outcomes: first %+v, second %+v", first.Caches, second.Caches)
	}
	if !strings.HasPrefix(second.Caches[0].String(), "cache: hit orders (") {
		t.Errorf("footer line %q", second.Caches[0].String())
	}
	if got, want := sqlRows(t, s, "SELECT count(*) FROM orders WHERE o_orderstatus = 'F'"), localAnswer(t, "SELECT count(*) FROM orders WHERE o_orderstatus = 'F'"); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %v, want %v", got, want)
	}
	sqlRows(t, s, "CLEAR CACHE")
	if infos, _ := s.Caches(ctx); len(infos) != 0 {
		t.Errorf("after CLEAR CACHE: %+v", infos)
	}
}

// TestDataFrameCache: the first action builds and reads back, later actions
// (and DataFrames built on the cached one) read back without scanning, and
// a second Cache() call makes a second entry.
func TestDataFrameCache(t *testing.T) {
	s := newTPCHSession(t)
	ctx := context.Background()
	li := table(t, s, "lineitem")
	cached := li.Filter(col("l_quantity").Gt(45)).Cache()
	want := localAnswer(t, "SELECT count(*), sum(l_quantity) FROM lineitem WHERE l_quantity > 45")
	n1, err := cached.Count(ctx)
	if err != nil {
		t.Fatal(err)
	}
	scans := scan.ScanCount("lineitem")
	n2, err := cached.Count(ctx)
	if err != nil {
		t.Fatal(err)
	}
	built := cached.Aggregate(nil, []quiver.Expr{quiver.Sum(col("l_quantity")).As("q")})
	rows, err := built.Collect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := render(built.Schema(), rows)
	release(rows)
	if scan.ScanCount("lineitem") != scans {
		t.Error("a later action on the cached DataFrame scanned lineitem")
	}
	if fmt.Sprint(n1) != want[0][0] || n1 != n2 || got[0][0] != want[0][1] {
		t.Errorf("counts %d %d sum %v, want %v", n1, n2, got, want)
	}
	again := li.Filter(col("l_quantity").Gt(45)).Cache()
	if _, err := again.Count(ctx); err != nil {
		t.Fatal(err)
	}
	infos, err := s.Caches(ctx)
	if err != nil || len(infos) != 2 {
		t.Fatalf("two Cache() calls: %+v, %v", infos, err)
	}
	if err := s.Uncache(ctx, cached); err != nil {
		t.Fatal(err)
	}
	if infos, _ := s.Caches(ctx); len(infos) != 1 {
		t.Errorf("after Uncache: %+v", infos)
	}
	if err := s.Uncache(ctx, li); err == nil {
		t.Error("Uncache of a DataFrame that is not cached: no error")
	}
}

// TestUncacheCanceled: Uncache honours its context. Canceled, it returns
// the context's error and removes nothing (it used to ignore ctx and remove
// the entry anyway); the entry stays usable and a later Uncache removes it.
func TestUncacheCanceled(t *testing.T) {
	s := newTPCHSession(t)
	ctx := context.Background()
	cached := table(t, s, "nation").Filter(col("n_regionkey").Eq(1)).Cache()
	if n, err := cached.Count(ctx); err != nil || n != 5 {
		t.Fatalf("count of the cached nations: %d, %v", n, err)
	}
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	if err := s.Uncache(canceled, cached); !errors.Is(err, context.Canceled) || !qerr.Is(err, qerr.Canceled) {
		t.Fatalf("Uncache with a canceled context: %v, want context.Canceled", err)
	}
	if infos, err := s.Caches(ctx); err != nil || len(infos) != 1 || infos[0].State != "materialized" {
		t.Fatalf("after a canceled Uncache: %+v, %v; want the entry still built", infos, err)
	}
	if err := s.Uncache(ctx, cached); err != nil {
		t.Fatal(err)
	}
	if infos, err := s.Caches(ctx); err != nil || len(infos) != 0 {
		t.Errorf("after Uncache: %+v, %v; want no entry", infos, err)
	}
}

// TestCacheFilterParquet is Ballista's target test: read a Parquet table,
// filter id > 5, cache, collect: exactly the expected rows.
func TestCacheFilterParquet(t *testing.T) {
	s := newTPCHSession(t)
	cacheFilterParquet(t, s, t.TempDir())
}

func cacheFilterParquet(t *testing.T, s *quiver.Session, dir string) {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(dir, "ids.parquet")
	src, err := s.SQL(ctx, "SELECT CAST(n_nationkey AS BIGINT) + 1 AS id, n_name AS name FROM nation WHERE n_nationkey < 10")
	if err != nil {
		t.Fatal(err)
	}
	if err := src.WriteParquet(ctx, path); err != nil {
		t.Fatal(err)
	}
	if err := s.RegisterParquet(ctx, "ids", path); err != nil {
		t.Fatal(err)
	}
	df := table(t, s, "ids").Filter(col("id").Gt(5)).Cache().Sort(col("id").Asc())
	for round := 0; round < 2; round++ {
		batches, err := df.Collect(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got := fmt.Sprint(render(df.Schema(), batches))
		release(batches)
		if want := "[[6 ETHIOPIA] [7 FRANCE] [8 GERMANY] [9 INDIA] [10 INDONESIA]]"; got != want {
			t.Fatalf("round %d: got %s, want %s", round, got, want)
		}
	}
}

func TestCacheBadInput(t *testing.T) {
	s := newTPCHSession(t)
	ctx := context.Background()
	cases := []struct {
		sql  string
		kind qerr.Kind
		msg  string
	}{
		{"CACHE TABLE nope", qerr.Plan, `table "nope" not found`},
		{"UNCACHE TABLE nation", qerr.Plan, "not cached"},
		{"CACHE TABLE t1 OPTIONS ('color' 'red') AS SELECT 1 AS x", qerr.Plan, `unknown option "color"`},
		{"CACHE TABLE t2 OPTIONS ('ttl' 'soon') AS SELECT 1 AS x", qerr.Plan, "duration"},
		{"CACHE TABLE t3 AS SELECT l_orderkey / (l_linenumber - l_linenumber) AS boom FROM lineitem", qerr.Execution, "division by zero"},
	}
	for _, c := range cases {
		_, err := s.SQL(ctx, c.sql)
		if err == nil || qerr.KindOf(err) != c.kind || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: got %v (kind %v), want %v containing %q", c.sql, err, qerr.KindOf(err), c.kind, c.msg)
		}
	}
	if _, err := s.SQL(ctx, "UNCACHE TABLE IF EXISTS nation"); err != nil {
		t.Errorf("UNCACHE TABLE IF EXISTS: %v", err)
	}
	// Nothing is left: no entry, no table.
	if infos, err := s.Caches(ctx); err != nil || len(infos) != 0 {
		t.Errorf("entries left by failed statements: %+v %v", infos, err)
	}
	for _, r := range sqlRows(t, s, "SHOW TABLES") {
		if strings.HasPrefix(r[0], "t") && len(r[0]) == 2 {
			t.Errorf("table %s left by a failed CACHE TABLE", r[0])
		}
	}
	// A local session says the cache needs the scheduler.
	local := newTPCHSession(t, quiver.WithLocalExecution())
	if _, err := local.SQL(ctx, "CACHE TABLE x AS SELECT 1 AS a"); !qerr.Is(err, qerr.NotImplemented) {
		t.Errorf("CACHE TABLE in a local session: %v", err)
	}
}

// TestCacheConcurrentCold runs many queries at once over one cold cache:
// exactly one builds it, the others wait for that build, all answers right.
func TestCacheConcurrentCold(t *testing.T) {
	s := newTPCHSession(t, quiver.WithStandaloneCluster(2))
	ctx := context.Background()
	sqlRows(t, s, "CACHE LAZY TABLE recent AS "+recentSQL)
	q := "SELECT count(*), sum(l_quantity) FROM recent"
	want := fmt.Sprint(localAnswer(t, "SELECT count(*), sum(l_quantity) FROM ("+recentSQL+") r"))
	const n = 8
	var wg sync.WaitGroup
	outcomes := make([]string, n)
	errs := make([]error, n)
	answers := make([]string, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			df, err := s.SQL(ctx, q)
			if err != nil {
				errs[i] = err
				return
			}
			var info quiver.QueryInfo
			var rows [][]string
			for b, err := range df.StreamInfo(ctx, &info) {
				if err != nil {
					errs[i] = err
					return
				}
				rows = append(rows, render(df.Schema(), []arrow.RecordBatch{b})...)
			}
			answers[i] = fmt.Sprint(rows)
			if len(info.Caches) == 1 {
				outcomes[i] = info.Caches[0].Outcome
			}
		}()
	}
	wg.Wait()
	misses := 0
	for i := 0; i < n; i++ {
		if errs[i] != nil {
			t.Fatalf("query %d: %v", i, errs[i])
		}
		if answers[i] != want {
			t.Errorf("query %d: %s, want %s", i, answers[i], want)
		}
		if outcomes[i] == "miss" {
			misses++
		}
	}
	if misses != 1 {
		t.Errorf("%d queries built the cache (outcomes %v); want exactly 1", misses, outcomes)
	}
}

// TestShowCachesCounters: SHOW CACHES lists the entries and a totals row
// with the scheduler's counters.
func TestShowCachesCounters(t *testing.T) {
	s := newTPCHSession(t)
	sqlRows(t, s, "CACHE TABLE n AS SELECT * FROM nation")
	sqlRows(t, s, "SELECT count(*) FROM n")
	sqlRows(t, s, "UNCACHE TABLE n")
	sqlRows(t, s, "CACHE TABLE r AS SELECT * FROM region")
	rows := sqlRows(t, s, "SHOW CACHES")
	if len(rows) != 2 || rows[0][0] != "r" || rows[0][2] != "materialized" || rows[1][2] != "totals" {
		t.Fatalf("SHOW CACHES: %v", rows)
	}
	for _, want := range []string{"misses=2", "materializations=2", "uncache=1", "hits="} {
		if !strings.Contains(rows[1][6], want) {
			t.Errorf("totals %q lack %q", rows[1][6], want)
		}
	}
	st, err := s.CacheStats(context.Background())
	if err != nil || st.Materializations != 2 || st.Invalidations["uncache"] != 1 || st.Hits < 1 {
		t.Errorf("CacheStats %+v %v", st, err)
	}
}
