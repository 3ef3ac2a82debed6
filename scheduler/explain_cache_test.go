package scheduler

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/quiverdb/quiver/cache"
	"github.com/quiverdb/quiver/logical"
	"github.com/quiverdb/quiver/settings"
)

// TestExplainSharedContent: EXPLAIN of a Cache node with no entry of its
// own says what its query would do with an entry of the same content: wait
// for it while it is built (pending), read it once materialized (a hit, the
// physical plan reading its files), in another session or the tenant's
// global name space; a changed file, another tenant or a node with an entry
// of its own gets no such mark. Nothing is claimed or attached.
func TestExplainSharedContent(t *testing.T) {
	h := cacheHarness(t, Config{})
	h.send(evCreateSession{id: "s2", reply: make(chan struct{}, 1)})
	h.send(evCreateSession{id: "bob", tenant: "bob", reply: make(chan struct{}, 1)})
	path := filepath.Join(t.TempDir(), "a.csv")
	if err := os.WriteFile(path, []byte("v\n1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	node := func(session, id string, opts map[string]string) *logical.Cache {
		return &logical.Cache{CacheID: id, SessionID: session, Input: fileScan(path), Name: "same", Options: opts}
	}
	explain := func(session, id string) explainShares {
		t.Helper()
		before := h.c.caches.Stats()
		_, had := h.c.caches.Lookup(cache.Key{SessionID: session, CacheID: id})
		x := h.c.explainShared(session, settings.Values{}, node(session, id, nil), statFiles([]string{path}))
		if _, ok := h.c.caches.Lookup(cache.Key{SessionID: session, CacheID: id}); ok && !had {
			t.Fatalf("EXPLAIN made an entry for %s", id)
		}
		if after := h.c.caches.Stats(); after.Hits != before.Hits || after.Misses != before.Misses {
			t.Fatalf("EXPLAIN counted: %+v, then %+v", before, after)
		}
		return x
	}
	mark := func(x explainShares) string {
		if len(x.infos) == 0 {
			return "none"
		}
		return x.infos[0].Check + ": " + x.infos[0].Reason
	}
	stat := func(job string) {
		t.Helper()
		acts := ofType[actStat](h.acts)
		a := acts[len(acts)-1]
		h.send(evStatted{jobID: job, gen: a.gen, files: statFiles(a.paths)})
	}

	if m := mark(explain("s2", "c2")); m != "none" {
		t.Fatalf("nothing built yet: %s", m)
	}
	h.submitPlan("q1", node("s", "c1", map[string]string{"scope": "global"}), nil)
	stat("q1")
	b := h.builder(key("c1"))
	if m := mark(explain("s2", "c2")); m != "pending: shared with same, being built" {
		t.Fatalf("while c1 is built: %s", m)
	}
	h.drive(b)
	h.drive("q1")
	x := explain("s2", "c2")
	if m := mark(x); m != "hit: shared with same" {
		t.Fatalf("c1 materialized: %s", m)
	}
	k2 := cache.Key{SessionID: "s2", CacheID: "c2"}
	if e, ok := x.hits[k2]; !ok || e.JobID != b {
		t.Fatalf("the hit's entry %+v %v, want c1's data", e, ok)
	}
	if m := mark(explain("s", "c1")); m != "none" {
		t.Fatalf("a node with its own entry: %s", m)
	}
	if m := mark(explain("bob", "c3")); m != "none" {
		t.Fatalf("another tenant: %s", m)
	}

	// Its session closes: the global entry is what a new session attaches to.
	h.send(evCloseSession{id: "s", reply: make(chan struct{}, 1)})
	if m := mark(explain("s2", "c2")); m != "hit: shared with the global cache same" {
		t.Fatalf("after its session closed: %s", m)
	}

	// A changed file: the query would build, and so EXPLAIN says nothing shared.
	if err := os.WriteFile(path, []byte("v\n1\n2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if m := mark(explain("s2", "c2")); m != "none" {
		t.Fatalf("after the file changed: %s", m)
	}
}

// TestExplainSharedAfterOwnDropped: a node whose own entry the query would
// drop (a strict entry whose file changed) is marked by what the query then
// does — attach to another session's entry built over the file as it is now
// — and the query does attach to that entry's data.
func TestExplainSharedAfterOwnDropped(t *testing.T) {
	h := cacheHarness(t, Config{})
	h.send(evCreateSession{id: "s2", reply: make(chan struct{}, 1)})
	path := filepath.Join(t.TempDir(), "a.csv")
	if err := os.WriteFile(path, []byte("v\n1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	node := func(session, id string) *logical.Cache {
		return &logical.Cache{CacheID: id, SessionID: session, Input: fileScan(path), Name: "same"}
	}
	stat := func(job string) {
		t.Helper()
		acts := ofType[actStat](h.acts)
		a := acts[len(acts)-1]
		h.send(evStatted{jobID: job, gen: a.gen, files: statFiles(a.paths)})
	}
	h.submitPlan("q1", node("s", "c1"), nil)
	stat("q1")
	h.drive(h.builder(key("c1")))
	h.drive("q1")

	if err := os.WriteFile(path, []byte("v\n1\n2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	reply := make(chan error, 1)
	h.send(evSubmit{jobID: "q2", session: "s2", plan: node("s2", "c2"), reply: reply})
	if err := <-reply; err != nil {
		t.Fatal(err)
	}
	stat("q2")
	b2 := h.builder(cache.Key{SessionID: "s2", CacheID: "c2"})
	h.drive(b2)
	h.drive("q2")

	x := h.c.explainShared("s", settings.Values{}, node("s", "c1"), statFiles([]string{path}))
	if len(x.infos) != 1 || x.infos[0].Check != outcomeHit || x.infos[0].Reason != "shared with same (its own entry dropped: f changed)" {
		t.Fatalf("EXPLAIN marks: %+v", x.infos)
	}
	if e, ok := x.hits[key("c1")]; !ok || e.JobID != b2 {
		t.Fatalf("EXPLAIN's hit %+v %v, want c2's data (built by %s)", e, ok, b2)
	}
	if e, ok := h.c.caches.Lookup(key("c1")); !ok || e.State != cache.Materialized || e.JobID == b2 {
		t.Fatalf("EXPLAIN changed c1's entry: %+v %v", e, ok)
	}

	h.submitPlan("q3", node("s", "c1"), nil)
	stat("q3")
	if ev := h.eventOf("q3", key("c1")); ev.reason != "shared with same" {
		t.Fatalf("the query's event: %+v", ev)
	}
	if e, ok := h.c.caches.Lookup(key("c1")); !ok || e.JobID != b2 {
		t.Fatalf("after the query c1 is %+v %v, want attached to c2's data", e, ok)
	}
}
