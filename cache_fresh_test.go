package quiver_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver"
	"github.com/quiverdb/quiver/exec/scan"
)

// newCacheSession is a standalone session with nothing registered.
func newCacheSession(t *testing.T) *quiver.Session {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	s, err := quiver.NewSession(context.Background(), quiver.WithAllocator(mem))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.Close()
		mem.AssertSize(t, 0)
	})
	return s
}

// writeInts writes a one-column CSV file (header v) holding vals.
func writeInts(t *testing.T, path string, vals ...int) {
	t.Helper()
	var b strings.Builder
	b.WriteString("v\n")
	for _, v := range vals {
		fmt.Fprintf(&b, "%d\n", v)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// runInfo runs q and returns its rows and what it did with caches.
func runInfo(t *testing.T, s *quiver.Session, q string) (string, []quiver.CacheEvent) {
	t.Helper()
	ctx := context.Background()
	df, err := s.SQL(ctx, q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	var info quiver.QueryInfo
	var rows []string
	for b, err := range df.StreamInfo(ctx, &info) {
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		for i := 0; i < int(b.NumRows()); i++ {
			rows = append(rows, b.Column(0).ValueStr(i))
		}
		b.Release()
	}
	return strings.Join(rows, ","), info.Caches
}

func csvTable(name, path string) string {
	return fmt.Sprintf("CREATE OR REPLACE EXTERNAL TABLE %s (v BIGINT) STORED AS CSV LOCATION '%s'", name, path)
}

// TestCacheReplacedTable is the repro: a cache over a table that is
// replaced gives the new table's answer, and so does a cached table itself.
func TestCacheReplacedTable(t *testing.T) {
	s := newCacheSession(t)
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.csv"), filepath.Join(dir, "b.csv")
	writeInts(t, a, 1, 2, 3)
	writeInts(t, b, 10, 20)
	sqlRows(t, s, csvTable("src", a))
	sqlRows(t, s, "CACHE TABLE agg AS SELECT sum(v) FROM src")
	if got, _ := runInfo(t, s, "SELECT * FROM agg"); got != "6" {
		t.Fatalf("agg = %s, want 6", got)
	}
	sqlRows(t, s, csvTable("src", b))
	got, evs := runInfo(t, s, "SELECT * FROM agg")
	if got != "30" {
		t.Fatalf("after CREATE OR REPLACE src: agg = %s, want 30", got)
	}
	if len(evs) != 1 || evs[0].Outcome != "miss" {
		t.Errorf("after CREATE OR REPLACE src: cache events %+v, want one miss (the cache was planned again)", evs)
	}
	if got, evs := runInfo(t, s, "SELECT * FROM agg"); got != "30" || len(evs) != 1 || evs[0].Outcome != "hit" {
		t.Errorf("again: agg = %s, events %+v; want 30 from a hit", got, evs)
	}

	// CACHE TABLE of the table itself, then the table replaced.
	sqlRows(t, s, "CACHE TABLE src")
	if got, _ := runInfo(t, s, "SELECT sum(v) FROM src"); got != "30" {
		t.Fatalf("sum(src) = %s, want 30", got)
	}
	sqlRows(t, s, csvTable("src", a))
	if got, _ := runInfo(t, s, "SELECT sum(v) FROM src"); got != "6" {
		t.Fatalf("after replacing cached src: sum = %s, want 6", got)
	}
	// agg reads src through its own plan: it was planned again too.
	if got, _ := runInfo(t, s, "SELECT * FROM agg"); got != "6" {
		t.Fatalf("agg after src replaced again = %s, want 6", got)
	}

	// CREATE OR REPLACE VIEW of a cache's own name: the new query is cached.
	sqlRows(t, s, "CREATE OR REPLACE VIEW agg AS SELECT max(v) FROM src")
	if got, _ := runInfo(t, s, "SELECT * FROM agg"); got != "3" {
		t.Fatalf("agg after its view was replaced = %s, want max 3", got)
	}
	if info := cacheRow(t, s, "agg"); info.State != "materialized" {
		t.Fatalf("agg after its view was replaced: %+v", info)
	}

	// DROP TABLE removes every cache that reads it; agg's view stays.
	sqlRows(t, s, "DROP TABLE src")
	infos, err := s.Caches(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(infos) != 0 {
		t.Errorf("after DROP TABLE src: caches %+v, want none", infos)
	}
	if _, err := s.SQL(context.Background(), "SELECT * FROM agg"); err == nil || !strings.Contains(err.Error(), "src") {
		t.Errorf("agg's view after its table was dropped: err %v, want one naming src", err)
	}
}

// TestCacheSourceRewritten: a file rewritten in place makes a strict cache
// stale (rebuilt, and the cache line says why); a snapshot cache keeps
// serving its data and SHOW CACHES marks it stale; REFRESH CACHE rebuilds.
func TestCacheSourceRewritten(t *testing.T) {
	s := newCacheSession(t)
	dir := t.TempDir()
	a := filepath.Join(dir, "a.csv")
	writeInts(t, a, 1, 2, 3)
	sqlRows(t, s, csvTable("src", a))
	sqlRows(t, s, "CACHE TABLE agg AS SELECT sum(v) FROM src")
	sqlRows(t, s, "CACHE TABLE snap OPTIONS ('consistency' 'snapshot') AS SELECT max(v) FROM src")
	sqlRows(t, s, "CACHE TABLE whole AS SELECT * FROM src")
	if got, _ := runInfo(t, s, "SELECT * FROM agg"); got != "6" {
		t.Fatalf("agg = %s, want 6", got)
	}

	writeInts(t, a, 100, 200, 300, 400)
	if info := cacheRow(t, s, "agg"); info.State != "stale" || info.Stale != "src changed (rebuilt by the next query)" {
		t.Errorf("SHOW CACHES of agg after a.csv changed: %+v", info)
	}
	got, evs := runInfo(t, s, "SELECT * FROM agg")
	if got != "1000" {
		t.Fatalf("after rewriting a.csv: agg = %s, want 1000", got)
	}
	if len(evs) != 1 || evs[0].Outcome != "stale" || evs[0].Reason != "src changed" ||
		!strings.HasPrefix(evs[0].String(), "cache: stale agg (src changed") {
		t.Errorf("cache events %+v (line %q), want stale agg (src changed)", evs, fmt.Sprint(evs))
	}
	if got, evs := runInfo(t, s, "SELECT * FROM agg"); got != "1000" || len(evs) != 1 || evs[0].Outcome != "hit" {
		t.Errorf("again: %s %+v, want a hit of 1000", got, evs)
	}
	// A cached table read directly: sum over the rebuilt copy.
	scans := scan.ScanCount("src")
	if got, _ := runInfo(t, s, "SELECT sum(v) FROM whole"); got != "1000" {
		t.Errorf("sum(whole) = %s, want 1000", got)
	}
	if scan.ScanCount("src") == scans {
		t.Error("the stale cache of src was not rebuilt from src")
	}

	// Snapshot: the old answer, marked stale.
	got, evs = runInfo(t, s, "SELECT * FROM snap")
	if got != "3" || len(evs) != 1 || evs[0].Outcome != "hit" || !strings.Contains(evs[0].Reason, "stale snapshot: src changed") {
		t.Errorf("snapshot cache: %s %+v, want the snapshot's 3 from a stale hit", got, evs)
	}
	if info := cacheRow(t, s, "snap"); info.State != "stale" || info.Stale != "src changed" {
		t.Errorf("SHOW CACHES of snap: %+v, want state stale (src changed)", info)
	}
	sqlRows(t, s, "REFRESH CACHE snap")
	if got, _ := runInfo(t, s, "SELECT * FROM snap"); got != "400" {
		t.Errorf("after REFRESH CACHE snap = %s, want 400", got)
	}
	if info := cacheRow(t, s, "snap"); info.State != "materialized" {
		t.Errorf("after REFRESH CACHE: %+v", info)
	}
	if _, err := s.SQL(context.Background(), "REFRESH CACHE nosuch"); err == nil || !strings.Contains(err.Error(), `"nosuch" is not cached`) {
		t.Errorf("REFRESH CACHE nosuch: %v", err)
	}
	if _, err := s.SQL(context.Background(), "CACHE TABLE bad OPTIONS ('consistency' 'eventual') AS SELECT 1"); err == nil || !strings.Contains(err.Error(), "snapshot") {
		t.Errorf("a bad consistency: %v", err)
	}
}

// TestCacheAfterWrites: a write bumps a table's version; a cache over it
// (declared, or a cached DataFrame) gives the new answer, and a CACHE
// TABLE declaration of the written table stays declared.
func TestCacheAfterWrites(t *testing.T) {
	s := newCacheSession(t)
	ctx := context.Background()
	sqlRows(t, s, "CREATE TABLE m (v BIGINT)")
	sqlRows(t, s, "INSERT INTO m VALUES (1), (2)")
	sqlRows(t, s, "CACHE TABLE agg AS SELECT sum(v) FROM m")
	sqlRows(t, s, "CACHE TABLE m")
	df, err := s.SQL(ctx, "SELECT max(v) FROM m")
	if err != nil {
		t.Fatal(err)
	}
	cached := df.Cache()
	first := func(df *quiver.DataFrame) string {
		t.Helper()
		bs, err := df.Collect(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer release(bs)
		return render(df.Schema(), bs)[0][0]
	}
	if got := first(cached); got != "2" {
		t.Fatalf("cached max = %s", got)
	}
	if got, _ := runInfo(t, s, "SELECT * FROM agg"); got != "3" {
		t.Fatalf("agg = %s", got)
	}
	sqlRows(t, s, "INSERT INTO m VALUES (10)")
	if got, _ := runInfo(t, s, "SELECT * FROM agg"); got != "13" {
		t.Errorf("agg after INSERT = %s, want 13", got)
	}
	if got, _ := runInfo(t, s, "SELECT count(*) FROM m"); got != "3" {
		t.Errorf("count(m) after INSERT = %s, want 3", got)
	}
	if info := cacheRow(t, s, "m"); info.State == "" {
		t.Errorf("CACHE TABLE m was dropped by the INSERT: %+v", info)
	}
	if got := first(cached); got != "10" {
		t.Errorf("the cached DataFrame after INSERT = %s, want 10", got)
	}
}
