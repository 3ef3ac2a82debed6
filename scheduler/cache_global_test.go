package scheduler

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quiverdb/quiver/cache"
	"github.com/quiverdb/quiver/logical"
	"github.com/quiverdb/quiver/rpc"
)

// materializeGlobal builds cache id of session "s" with scope 'global'
// under name and returns its build job.
func (h *harness) materializeGlobal(job, id, name string, opts map[string]string) string {
	h.t.Helper()
	n := cacheNode(id, nil)
	n.Name = name
	n.Options = map[string]string{"scope": "global"}
	for k, v := range opts {
		n.Options[k] = v
	}
	h.submitPlan(job, n, nil)
	b := h.builder(key(id))
	h.drive(b)
	h.drive(job)
	return b
}

// TestCacheGlobalScope: a closing session's materialized global-scope
// entries stay, over the same files, in its tenant's global name space;
// its other entries go with it. A later session lists them with scope
// global; a second global entry of one name replaces the first; UNCACHE of
// a global entry's id removes it and its files; the TTL evicts it.
func TestCacheGlobalScope(t *testing.T) {
	h := cacheHarness(t, Config{SessionIdleTimeout: time.Minute})
	b1 := h.materializeGlobal("q1", "c1", "sales", map[string]string{"ttl": "1h"})
	b2 := h.materialize("q2", "c2")
	h.acts = nil
	h.later(2 * time.Minute) // idle: the session closes
	if h.c.sessions["s"] != nil {
		t.Fatal("the idle session was not closed")
	}
	h.absent("c1")
	h.absent("c2")
	gs := cache.GlobalSession("")
	g, ok := h.c.caches.Lookup(cache.Key{SessionID: gs, CacheID: "c1"})
	if !ok || g.State != cache.Materialized || g.JobID != b1 || g.Name != "sales" || entryScope(g) != cache.ScopeGlobal {
		t.Fatalf("the global entry: %+v %v", g, ok)
	}
	if got := removals(h.acts, b1); len(got) != 0 {
		t.Fatalf("the global entry's files were removed: %v", got)
	}
	wantStrings(t, "the session entry's files", removals(h.acts, b2), []string{"e1:2", "e2:2"})
	if got := h.c.entryTenant(gs); got != "" {
		t.Fatalf("the global entry's tenant %q", got)
	}
	if got := h.c.entryTenant(cache.GlobalSession("alice")); got != "alice" {
		t.Fatalf("alice's global name space's tenant %q", got)
	}

	// A later session lists it with scope global.
	h.send(evCreateSession{id: "s", reply: make(chan struct{}, 1)})
	l := h.c.listCaches("s")
	if len(l.infos) != 1 || l.infos[0].Scope != cache.ScopeGlobal || l.infos[0].SessionId != gs || l.infos[0].Name != "sales" {
		t.Fatalf("the later session's list: %v", l.infos)
	}

	// Another global entry of the name replaces it when its session closes.
	b3 := h.materializeGlobal("q3", "c3", "sales", nil)
	if got := h.c.listCaches("s").infos; len(got) != 2 || got[0].Scope != cache.ScopeGlobal || got[1].Scope != cache.ScopeGlobal {
		t.Fatalf("with its own global-scope entry: %v", got)
	}
	h.acts = nil
	h.send(evCloseSession{id: "s", reply: make(chan struct{}, 1)})
	if _, ok := h.c.caches.Lookup(cache.Key{SessionID: gs, CacheID: "c1"}); ok {
		t.Fatal("the replaced global entry is still there")
	}
	wantStrings(t, "the replaced global entry's files", removals(h.acts, b1), []string{"e1:2", "e2:2"})
	if g, ok := h.c.caches.Lookup(cache.Key{SessionID: gs, CacheID: "c3"}); !ok || g.JobID != b3 {
		t.Fatalf("the new global entry: %+v %v", g, ok)
	}

	// UNCACHE of its id from a session of the tenant removes it.
	h.send(evCreateSession{id: "s", reply: make(chan struct{}, 1)})
	h.acts = nil
	reply := make(chan bool, 1)
	h.send(evUncache{session: "s", cacheID: "c3", reply: reply})
	if !<-reply {
		t.Fatal("UNCACHE of the global entry removed nothing")
	}
	if _, ok := h.c.caches.Lookup(cache.Key{SessionID: gs, CacheID: "c3"}); ok {
		t.Fatal("the uncached global entry is still there")
	}
	wantStrings(t, "the uncached global entry's files", removals(h.acts, b3), []string{"e1:2", "e2:2"})

	// Its TTL evicts it.
	h.materializeGlobal("q4", "c4", "other", map[string]string{"ttl": "10m"})
	h.send(evCloseSession{id: "s", reply: make(chan struct{}, 1)})
	if _, ok := h.c.caches.Lookup(cache.Key{SessionID: gs, CacheID: "c4"}); !ok {
		t.Fatal("no global entry c4")
	}
	h.later(11 * time.Minute)
	if _, ok := h.c.caches.Lookup(cache.Key{SessionID: gs, CacheID: "c4"}); ok {
		t.Fatal("the global entry outlived its ttl")
	}
}

// TestRESTCachesScope: GET /api/caches gives each entry its scope; a
// global entry kept after its session closed has no session id (its
// tenant's name space is no session) and names its tenant.
func TestRESTCachesScope(t *testing.T) {
	h := cacheHarness(t, Config{})
	h.materializeGlobal("q1", "c1", "sales", nil)
	h.materialize("q2", "c2")
	scopes := func() map[string]CacheEntryInfo {
		t.Helper()
		out := map[string]CacheEntryInfo{}
		for _, e := range h.c.cachesInfo().Entries {
			out[e.CacheID+"@"+e.SessionID] = e
		}
		return out
	}
	got := scopes()
	if e := got["c1@s"]; e.Scope != cache.ScopeGlobal || e.Tenant != "" {
		t.Fatalf("the live session's global-scope entry: %+v", e)
	}
	if e := got["c2@s"]; e.Scope != cache.ScopeSession {
		t.Fatalf("the session's entry: %+v", e)
	}
	h.send(evCloseSession{id: "s", reply: make(chan struct{}, 1)})
	got = scopes()
	if e, ok := got["c1@"]; len(got) != 1 || !ok || e.Scope != cache.ScopeGlobal || e.Name != "sales" {
		t.Fatalf("after the session closed: %+v, want only the global entry, with no session", got)
	}
	b, err := json.Marshal(h.c.cachesInfo())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "global:") || !strings.Contains(string(b), `"scope":"global"`) {
		t.Fatalf("GET /api/caches: %s", b)
	}
}

// TestCacheGlobalByName: a reference by name to the tenant's global entry
// (a Cache node of its global name space) reads it without a build; one to
// an entry that is gone, or whose files changed (strict), fails the query
// saying so and builds nothing; another tenant's session may not refer to
// it.
func TestCacheGlobalByName(t *testing.T) {
	h := cacheHarness(t, Config{})
	path := filepath.Join(t.TempDir(), "a.csv")
	if err := os.WriteFile(path, []byte("v\n1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stat := func(job string) {
		t.Helper()
		acts := ofType[actStat](h.acts)
		if len(acts) == 0 || acts[len(acts)-1].jobID != job {
			t.Fatalf("no stat for %s", job)
		}
		a := acts[len(acts)-1]
		h.send(evStatted{jobID: job, gen: a.gen, files: statFiles(a.paths)})
	}
	n := &logical.Cache{CacheID: "c1", SessionID: "s", Input: fileScan(path), Name: "sales", Options: map[string]string{"scope": "global"}}
	h.submitPlan("q1", n, nil)
	stat("q1")
	h.drive(h.builder(key("c1")))
	h.drive("q1")
	h.send(evCloseSession{id: "s", reply: make(chan struct{}, 1)})
	h.send(evCreateSession{id: "s", reply: make(chan struct{}, 1)})
	gk := cache.Key{SessionID: cache.GlobalSession(""), CacheID: "c1"}
	ref := func(id string) *logical.Cache {
		return &logical.Cache{CacheID: id, SessionID: gk.SessionID, Name: "sales", Input: logical.NewEmptyRelation(false, nil)}
	}
	built := h.c.caches.Stats().Materializations

	h.acts = nil
	h.submitPlan("q2", ref("c1"), nil)
	stat("q2")
	if p := h.planOf("q2"); p.caches[gk] == nil {
		t.Fatalf("q2 does not read the global entry: %v", p.caches)
	}
	h.drive("q2")

	h.submitPlan("q3", ref("nope"), nil)
	if j := h.c.jobs["q3"]; j.state != rpc.JobState_JOB_FAILED || !strings.Contains(j.errMsg, "global cache sales is gone") {
		t.Fatalf("a reference to no entry: %s %s", j.state, j.errMsg)
	}

	h.send(evCreateSession{id: "b", tenant: "bob", reply: make(chan struct{}, 1)})
	reply := make(chan error, 1)
	h.send(evSubmit{jobID: "q4", session: "b", plan: ref("c1"), reply: reply})
	if err := <-reply; err != nil {
		t.Fatal(err)
	}
	if j := h.c.jobs["q4"]; j.state != rpc.JobState_JOB_FAILED || !strings.Contains(j.errMsg, "session") {
		t.Fatalf("another tenant's reference: %s %s", j.state, j.errMsg)
	}

	if err := os.WriteFile(path, []byte("v\n1\n2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	l := h.c.listCaches("s")
	checkFiles(l)
	if len(l.infos) != 1 || l.infos[0].Check != outcomeStale || !strings.Contains(l.infos[0].Reason, "declare it again") {
		t.Fatalf("SHOW CACHES and EXPLAIN of the stale global entry: %v", l.infos)
	}
	h.acts = nil
	h.submitPlan("q5", ref("c1"), nil)
	stat("q5")
	if j := h.c.jobs["q5"]; j.state != rpc.JobState_JOB_FAILED || !strings.Contains(j.errMsg, "f changed") {
		t.Fatalf("a reference to an entry whose file changed: %s %s", j.state, j.errMsg)
	}
	if _, ok := h.c.caches.Lookup(gk); ok {
		t.Fatal("the stale global entry is still there")
	}
	if st := h.c.caches.Stats(); st.Materializations != built {
		t.Fatalf("references built: %d builds, want %d", st.Materializations, built)
	}
}
