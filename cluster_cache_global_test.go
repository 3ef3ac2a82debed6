package quiver_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/quiverdb/quiver"
)

// TestClusterGlobalCache: with real processes and two tenants' tokens, a
// cache with scope 'global' outlives the session that built it and the
// scheduler's restart with its state directory: a later session of the
// same tenant sees it in SHOW CACHES, attaches to it without a build and
// reads it as a hit; the other tenant neither sees nor removes it and
// builds its own copy; UNCACHE TABLE of its name removes it.
func TestClusterGlobalCache(t *testing.T) {
	tokens := writeTenantTokens(t)
	state := t.TempDir()
	schedArgs := []string{"--auth-token-file", tokens, "--state-dir", state, "--heartbeat-timeout", "2s"}
	c := startCluster(t, 0, schedArgs...)
	c.addTokenExecutor(t, tokens)
	as := func(secret string) *quiver.Session { return c.connectAs(t, secret) }
	stats := func(s *quiver.Session) quiver.CacheStats {
		st, err := s.CacheStats(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	findRecent := func(s *quiver.Session) (quiver.CacheInfo, bool) {
		infos, err := s.Caches(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, in := range infos {
			if in.Name == "recent" {
				return in, true
			}
		}
		return quiver.CacheInfo{}, false
	}
	const cacheSQL = "CACHE TABLE recent OPTIONS ('scope' 'global') AS " + recentSQL
	const q = "SELECT count(*), sum(l_quantity) FROM recent"

	a1 := as(aliceSecret)
	sqlRows(t, a1, cacheSQL)
	if in := cacheRow(t, a1, "recent"); in.Scope != "global" || in.Global || in.State != "materialized" {
		t.Fatalf("alice's first session: %+v, want its own materialized entry of scope global", in)
	}
	o, want := outcome(t, a1, q)
	if o != "hit" {
		t.Fatalf("alice's first session reads %s", o)
	}
	// The DataFrame equivalent, unnamed.
	nations := func(s *quiver.Session) *quiver.DataFrame {
		df, err := s.SQL(context.Background(), "SELECT n_name FROM nation WHERE n_regionkey = 1")
		if err != nil {
			t.Fatal(err)
		}
		return df.CacheWithOptions(map[string]string{"scope": "global"})
	}
	if n, err := nations(a1).Count(context.Background()); err != nil || n != 5 {
		t.Fatalf("alice's DataFrame cache: %d rows, %v", n, err)
	}
	if _, err := a1.SQL(context.Background(), "CACHE TABLE bad OPTIONS ('scope' 'cluster') AS SELECT 1"); err == nil || !strings.Contains(err.Error(), "global") {
		t.Fatalf("an unknown scope: %v, want an error naming the scopes", err)
	}
	if err := a1.Close(); err != nil {
		t.Fatal(err)
	}

	// A restart with the state directory keeps the global entry.
	time.Sleep(300 * time.Millisecond) // the registry is written off the loop
	c.scheduler.kill()
	c.scheduler = startProc(t, "scheduler-2", quiverBinary(t), append([]string{"scheduler", "--bind", c.addr}, schedArgs...)...)

	bob := as(bobSecret)
	if in, ok := findRecent(bob); ok {
		t.Fatalf("bob sees alice's global cache: %+v", in)
	}
	if _, err := bob.SQL(context.Background(), "UNCACHE TABLE recent"); err == nil || !strings.Contains(err.Error(), "not cached") {
		t.Fatalf("bob's UNCACHE TABLE of alice's global cache: %v, want not cached", err)
	}

	a2 := as(aliceSecret)
	var g quiver.CacheInfo
	waitFor(t, "alice's global cache listed", func() bool {
		in, ok := findRecent(a2)
		g = in
		return ok
	})
	if g.Scope != "global" || !g.Global || g.State != "materialized" {
		t.Fatalf("alice's second session lists %+v, want the global entry materialized", g)
	}
	before := stats(a2)
	sqlRows(t, a2, cacheSQL)
	if o, rows := outcome(t, a2, q); o != "hit" || fmt.Sprint(rows) != fmt.Sprint(want) {
		t.Fatalf("alice's second session: %s %v, want a hit of %v", o, rows, want)
	}
	if after := stats(a2); after.Misses != before.Misses || after.Materializations != before.Materializations {
		t.Fatalf("alice's second session built the cache again: stats before %+v, after %+v", before, after)
	}
	if in := cacheRow(t, a2, "recent"); in.Shared < 1 {
		t.Fatalf("alice's second session's entry does not share the global one's data: %+v", in)
	}
	if n, err := nations(a2).Count(context.Background()); err != nil || n != 5 {
		t.Fatalf("alice's second DataFrame cache: %d rows, %v", n, err)
	}
	if after := stats(a2); after.Materializations != before.Materializations {
		t.Fatalf("alice's second DataFrame cache was built again: stats before %+v, after %+v", before, after)
	}

	// Bob's same query is his own build: content keys are per tenant.
	before = stats(bob)
	sqlRows(t, bob, cacheSQL)
	if after := stats(bob); after.Materializations != before.Materializations+1 {
		t.Fatalf("bob's cache: stats before %+v, after %+v, want one build of his own", before, after)
	}

	// UNCACHE TABLE removes alice's entry and the global one with it.
	sqlRows(t, a2, "UNCACHE TABLE recent")
	if in, ok := findRecent(a2); ok {
		t.Fatalf("after UNCACHE TABLE alice still lists %+v", in)
	}
	if _, ok := findRecent(bob); !ok {
		t.Fatal("alice's UNCACHE TABLE removed bob's cache")
	}
}

// TestClusterGlobalCacheByName: with real processes and two tenants, a
// later session of the tenant reads a global cache by its name without
// declaring it (a hit, no build), EXPLAIN says so, the session's own view
// of the name wins over it, the other tenant finds no such table, and
// EXPLAIN of a lazy declaration of the same query says it would share it.
func TestClusterGlobalCacheByName(t *testing.T) {
	tokens := writeTenantTokens(t)
	c := startCluster(t, 0, "--auth-token-file", tokens)
	c.addTokenExecutor(t, tokens)
	as := func(secret string) *quiver.Session { return c.connectAs(t, secret) }
	ctx := context.Background()
	const q = "SELECT count(*), sum(l_quantity) FROM recent"

	a1 := as(aliceSecret)
	sqlRows(t, a1, "CACHE TABLE recent OPTIONS ('scope' 'global') AS "+recentSQL)
	want := sqlRows(t, a1, q)
	if err := a1.Close(); err != nil {
		t.Fatal(err)
	}

	a2 := as(aliceSecret)
	before, err := a2.CacheStats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if m, reads := explainMark(t, a2, q, "recent"); m != "hit" || !reads {
		t.Errorf("EXPLAIN of the global cache by name: [%s], reads it: %v", m, reads)
	}
	if o, rows := outcome(t, a2, q); o != "hit" || fmt.Sprint(rows) != fmt.Sprint(want) {
		t.Fatalf("a new session reading the global cache by name: %s %v, want a hit of %v", o, rows, want)
	}
	if after, err := a2.CacheStats(ctx); err != nil || after.Misses != before.Misses || after.Materializations != before.Materializations {
		t.Fatalf("reading the global cache by name built: stats before %+v, after %+v (%v)", before, after, err)
	}
	// The session's own names win.
	sqlRows(t, a2, "CREATE VIEW recent AS SELECT 7 AS x")
	if got := sqlRows(t, a2, "SELECT * FROM recent"); fmt.Sprint(got) != "[[7]]" {
		t.Fatalf("the session's view named recent: %v", got)
	}
	sqlRows(t, a2, "DROP VIEW recent")
	if got := sqlRows(t, a2, q); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("the global cache after the view was dropped: %v", got)
	}

	bob := as(bobSecret)
	if _, err := bob.SQL(ctx, q); err == nil || !strings.Contains(err.Error(), `table "recent" not found`) {
		t.Fatalf("bob reading alice's global cache by name: %v, want table not found", err)
	}

	// A lazy declaration of the same query would attach to it: EXPLAIN says so.
	sqlRows(t, a2, "CACHE LAZY TABLE recent AS "+recentSQL)
	if m, reads := explainMark(t, a2, q, "recent"); m != "hit: shared with the global cache recent" || !reads {
		t.Errorf("EXPLAIN of a lazy declaration of the global cache's query: [%s], reads it: %v", m, reads)
	}
	if after, err := a2.CacheStats(ctx); err != nil || after.Misses != before.Misses || after.Materializations != before.Materializations {
		t.Fatalf("EXPLAIN built: stats before %+v, after %+v (%v)", before, after, err)
	}
	sqlRows(t, a2, "UNCACHE TABLE recent") // the declaration
	sqlRows(t, a2, "UNCACHE TABLE recent") // the global cache
	if _, err := a2.SQL(ctx, q); err == nil || !strings.Contains(err.Error(), `table "recent" not found`) {
		t.Fatalf("after UNCACHE TABLE recent: %v, want table not found", err)
	}
}
