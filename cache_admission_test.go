package quiver_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

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
