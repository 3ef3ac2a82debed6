package quiver_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quiverdb/quiver"
)

// TestUncacheCascade: UNCACHE TABLE refuses while other caches read the
// table and names them; EXPLAIN UNCACHE ... CASCADE lists what would go and
// frees nothing; CASCADE removes them all with the views they made.
func TestUncacheCascade(t *testing.T) {
	s := newCacheSession(t)
	ctx := context.Background()
	a := filepath.Join(t.TempDir(), "a.csv")
	writeInts(t, a, 1, 2, 3)
	sqlRows(t, s, csvTable("src", a))
	sqlRows(t, s, "CACHE TABLE base AS SELECT v FROM src WHERE v > 1")
	sqlRows(t, s, "CACHE TABLE top AS SELECT max(v) FROM base")
	sqlRows(t, s, "CREATE VIEW over_top AS SELECT * FROM top")
	sqlRows(t, s, "CACHE LAZY TABLE outer_most AS SELECT * FROM over_top")
	sqlRows(t, s, "CACHE LAZY TABLE other AS SELECT min(v) FROM src")

	_, err := s.SQL(ctx, "UNCACHE TABLE base")
	if err == nil || !strings.Contains(err.Error(), "outer_most, top") || !strings.Contains(err.Error(), "CASCADE") {
		t.Fatalf("UNCACHE of a cache others read: %v", err)
	}
	if n := len(cachesOf(t, s)); n != 4 {
		t.Fatalf("a refused UNCACHE removed caches: %d left", n)
	}
	got := sqlRows(t, s, "EXPLAIN UNCACHE TABLE base CASCADE")
	var names []string
	for _, r := range got {
		names = append(names, r[0]+":"+r[2])
	}
	if fmt.Sprint(names) != "[outer_most:cache and its view top:cache and its view base:cache and its view]" {
		t.Errorf("EXPLAIN UNCACHE CASCADE: %v", got)
	}
	if n := len(cachesOf(t, s)); n != 4 {
		t.Fatalf("EXPLAIN UNCACHE removed caches: %d left", n)
	}
	if got, _ := runInfo(t, s, "SELECT * FROM top"); got != "3" {
		t.Fatalf("top after EXPLAIN UNCACHE = %s", got)
	}

	sqlRows(t, s, "UNCACHE TABLE base CASCADE")
	left := cachesOf(t, s)
	if len(left) != 1 || left[0] != "other" {
		t.Errorf("after CASCADE: %v, want only other", left)
	}
	for _, v := range []string{"base", "top", "outer_most"} {
		if _, err := s.SQL(ctx, "SELECT * FROM "+v); err == nil {
			t.Errorf("view %s survived UNCACHE CASCADE", v)
		}
	}
	// over_top was the user's view, not a cache's: it stays (and fails, top is gone).
	if _, err := s.SQL(ctx, "SELECT * FROM over_top"); err == nil || !strings.Contains(err.Error(), "top") {
		t.Errorf("over_top: %v", err)
	}
	sqlRows(t, s, "CACHE TABLE base AS SELECT v FROM src")
	if got, _ := runInfo(t, s, "SELECT count(*) FROM base"); got != "3" {
		t.Errorf("base cached again = %s", got)
	}
}

// cachesOf lists the names of s's caches (SHOW CACHES).
func cachesOf(t *testing.T, s *quiver.Session) []string {
	t.Helper()
	infos, err := s.Caches(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, c := range infos {
		out = append(out, c.Name)
	}
	return out
}

// explainMark returns the mark EXPLAIN puts on the Cache line of name, and
// whether the physical plan reads the cache back.
func explainMark(t *testing.T, s *quiver.Session, q, name string) (string, bool) {
	t.Helper()
	rows := sqlRows(t, s, "EXPLAIN "+q)
	for _, l := range strings.Split(rows[0][1], "\n") {
		if strings.Contains(l, "Cache: "+name+" ") {
			i := strings.LastIndex(l, " [")
			if i < 0 {
				t.Fatalf("unmarked cache line %q", l)
			}
			return strings.TrimSuffix(l[i+2:], "]"), strings.Contains(rows[1][1], "CacheReaderExec: "+name)
		}
	}
	t.Fatalf("no Cache line for %s in\n%s", name, rows[0][1])
	return "", false
}

// TestExplainCacheMarks: EXPLAIN marks each cache node after the checks a
// query makes, with the reason for anything but a hit.
func TestExplainCacheMarks(t *testing.T) {
	s := newCacheSession(t)
	a := filepath.Join(t.TempDir(), "a.csv")
	writeInts(t, a, 1, 2, 3)
	sqlRows(t, s, csvTable("src", a))
	sqlRows(t, s, "CACHE TABLE agg AS SELECT sum(v) FROM src")
	sqlRows(t, s, "CACHE TABLE snap OPTIONS ('consistency' 'snapshot') AS SELECT max(v) FROM src")
	sqlRows(t, s, "CACHE LAZY TABLE later AS SELECT min(v) FROM src")
	sqlRows(t, s, "CACHE TABLE brief OPTIONS ('ttl' '50ms') AS SELECT count(*) FROM src")

	if m, reads := explainMark(t, s, "SELECT * FROM agg", "agg"); m != "hit" || !reads {
		t.Errorf("agg: [%s], reads the cache: %v", m, reads)
	}
	if m, reads := explainMark(t, s, "SELECT * FROM later", "later"); m != "miss: never built" || reads {
		t.Errorf("later: [%s], reads the cache: %v", m, reads)
	}
	writeInts(t, a, 10, 20, 30, 40)
	if m, reads := explainMark(t, s, "SELECT * FROM agg", "agg"); m != "stale: src changed (rebuilt by the next query)" || reads {
		t.Errorf("agg after src changed: [%s], reads the cache: %v", m, reads)
	}
	if m, reads := explainMark(t, s, "SELECT * FROM snap", "snap"); m != "stale: src changed (snapshot: served as it is)" || !reads {
		t.Errorf("snap after src changed: [%s], reads the cache: %v", m, reads)
	}
	// EXPLAIN changed nothing: the query still finds agg stale and rebuilds.
	if got, evs := runInfo(t, s, "SELECT * FROM agg"); got != "100" || len(evs) != 1 || evs[0].Outcome != "stale" {
		t.Errorf("agg after EXPLAIN: %s %+v", got, evs)
	}
	if m, _ := explainMark(t, s, "SELECT * FROM agg", "agg"); m != "hit" {
		t.Errorf("agg rebuilt: [%s]", m)
	}
	// A removed entry's miss says why.
	deadline := time.Now().Add(10 * time.Second)
	for {
		m, _ := explainMark(t, s, "SELECT * FROM brief", "brief")
		if strings.HasPrefix(m, "miss: evicted (ttl or byte cap) at ") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("brief after its ttl: [%s]", m)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestSessionComesBack: after the scheduler closes an idle session, the
// client's next statement re-opens it (same id, same tables, views and
// cache declarations, the caches lazy again) and says what was dropped.
func TestSessionComesBack(t *testing.T) {
	s := newCacheSession(t)
	a := filepath.Join(t.TempDir(), "a.csv")
	writeInts(t, a, 1, 2, 3)
	sqlRows(t, s, csvTable("src", a))
	sqlRows(t, s, "CREATE VIEW big AS SELECT v FROM src WHERE v > 1")
	sqlRows(t, s, "SET quiver.session.idle_timeout = '100ms'")
	sqlRows(t, s, "CACHE TABLE agg AS SELECT sum(v) FROM big")
	id := s.ID()
	// No request meanwhile (any request keeps a session alive); the sweep
	// runs at least every second.
	time.Sleep(2500 * time.Millisecond)
	if info := cacheRow(t, s, "agg"); info.State != "lazy" {
		t.Fatalf("the idle session was not closed: %+v", info)
	}
	got, evs := runInfo(t, s, "SELECT * FROM agg")
	if got != "5" {
		t.Fatalf("after the session expired: agg = %s, want 5", got)
	}
	var lines []string
	for _, e := range evs {
		lines = append(lines, e.String())
	}
	if len(evs) != 2 || evs[0].Outcome != "dropped" || evs[1].Outcome != "miss" ||
		!strings.HasPrefix(lines[0], "cache: dropped agg (the scheduler closed the idle session") {
		t.Errorf("cache lines %q", lines)
	}
	if s.ID() != id {
		t.Errorf("session id changed: %s -> %s", id, s.ID())
	}
	if got, evs := runInfo(t, s, "SELECT * FROM agg"); got != "5" || len(evs) != 1 || evs[0].Outcome != "hit" {
		t.Errorf("again: %s %+v", got, evs)
	}
}
