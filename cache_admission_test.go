package quiver_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quiverdb/quiver/qerr"
)

// TestCacheAdmissionBySize: under a session's quota (SET
// quiver.cache.max_bytes), a cache that would not fit fails its build with
// a clear resources error instead of being built and evicted — refused
// before it starts when the estimate from known row counts says so
// (Parquet), stopped as its written output passes the quota when the size
// is unknown (CSV) — and leaves no entry and no table behind.
func TestCacheAdmissionBySize(t *testing.T) {
	ctx := context.Background()
	s := newTPCHSession(t)
	dir := t.TempDir()
	csv := filepath.Join(dir, "lineitem.csv")
	sqlRows(t, s, "COPY (SELECT * FROM lineitem) TO '"+csv+"' (HEADER)")
	sqlRows(t, s, "CREATE EXTERNAL TABLE lcsv STORED AS CSV LOCATION '"+csv+"'")
	sqlRows(t, s, "SET quiver.cache.max_bytes = '64KiB'")
	for _, c := range []struct{ name, from, says string }{
		{"big_estimated", "lineitem", "estimated at"},
		{"big_written", "lcsv", "its data passed"},
	} {
		df, err := s.SQL(ctx, "CACHE TABLE "+c.name+" AS SELECT * FROM "+c.from)
		if err == nil {
			_, err = df.Collect(ctx)
		}
		if !qerr.Is(err, qerr.Resources) || !strings.Contains(err.Error(), c.says) || !strings.Contains(err.Error(), "quiver.cache.max_bytes") {
			t.Fatalf("CACHE TABLE %s: %v, want a resources error saying %q and naming the setting", c.name, err, c.says)
		}
		infos, err := s.Caches(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, in := range infos {
			if in.Name == c.name {
				t.Fatalf("a refused cache is listed: %+v", in)
			}
		}
		if _, err := s.SQL(ctx, "SELECT count(*) FROM "+c.name); err == nil {
			t.Fatalf("the table of a refused cache %s exists", c.name)
		}
	}
	// A cache within the quota is built and kept.
	sqlRows(t, s, "CACHE TABLE small AS SELECT * FROM nation")
	if info := cacheRow(t, s, "small"); info.State != "materialized" {
		t.Fatalf("small cache: %+v", info)
	}
}

// TestCacheEvictByValueSQL: over a session's quota, the sweeper evicts the
// cache worth least per byte — a large one never read back — and keeps a
// small one read often, although that one was used less recently (least
// recently used eviction would drop it).
func TestCacheEvictByValueSQL(t *testing.T) {
	ctx := context.Background()
	s := newTPCHSession(t)
	sqlRows(t, s, "CACHE TABLE small AS SELECT n_nationkey, n_name FROM nation")
	for range 3 {
		if _, evs := runInfo(t, s, "SELECT count(*) FROM small"); len(evs) != 1 || evs[0].Outcome != "hit" {
			t.Fatalf("reading small: %+v", evs)
		}
	}
	time.Sleep(20 * time.Millisecond) // big is used after small's last hit
	sqlRows(t, s, "CACHE TABLE big AS SELECT o_orderkey, o_custkey, o_totalprice FROM orders")
	small, big := cacheRow(t, s, "small"), cacheRow(t, s, "big")
	if small.Bytes <= 0 || big.Bytes <= 4*small.Bytes {
		t.Fatalf("sizes: small %d, big %d", small.Bytes, big.Bytes)
	}
	// A quota that holds either, not both; it applies from the next query.
	sqlRows(t, s, fmt.Sprintf("SET quiver.cache.max_bytes = %d", big.Bytes+small.Bytes/2))
	sqlRows(t, s, "SELECT 1")
	deadline := time.Now().Add(10 * time.Second)
	for {
		infos, err := s.Caches(ctx)
		if err != nil {
			t.Fatal(err)
		}
		names := map[string]bool{}
		for _, in := range infos {
			names[in.Name] = in.State == "materialized" // an evicted declaration stays, lazy
		}
		if !names["big"] {
			if !names["small"] {
				t.Fatal("small was evicted too")
			}
			break
		}
		if !names["small"] {
			t.Fatal("the small cache read often was evicted before the large one never read")
		}
		if time.Now().After(deadline) {
			t.Fatalf("nothing evicted over the quota: %+v", infos)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
