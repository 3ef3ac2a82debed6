package scheduler

import (
	"encoding/binary"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/quiverdb/quiver/cache"
	"github.com/quiverdb/quiver/catalog"
	"github.com/quiverdb/quiver/logical"
)

func memScan(version uint64) logical.Plan {
	schema := arrow.NewSchema([]arrow.Field{{Name: "v", Type: arrow.PrimitiveTypes.Int64}}, nil)
	return logical.NewScan(&catalog.Table{Name: "m", Schema: schema, Format: catalog.Memory, Partitions: make([][]arrow.RecordBatch, 1), Version: version}, "m")
}

func fileScan(path string) logical.Plan {
	schema := arrow.NewSchema([]arrow.Field{{Name: "v", Type: arrow.PrimitiveTypes.Int64}}, nil)
	return logical.NewScan(&catalog.Table{Name: "f", Schema: schema, Format: catalog.CSV, Files: []string{path}}, "f")
}

// eventOf returns job's cache event for key.
func (h *harness) eventOf(job string, k cache.Key) cacheEvent {
	h.t.Helper()
	for _, ev := range h.c.jobs[job].events {
		if ev.key == k {
			return ev
		}
	}
	h.t.Fatalf("job %s has no event for %s", job, k.CacheID)
	return cacheEvent{}
}

// TestCacheMemoryVersion: an entry records the memory table's version it
// was built from; a query whose plan carries a newer version finds it stale
// (strict: invalidated and rebuilt; the event names the table), and a
// snapshot entry keeps serving, marked stale.
func TestCacheMemoryVersion(t *testing.T) {
	h := cacheHarness(t, Config{})
	h.submitPlan("q1", cacheNode("c", memScan(1)), nil)
	b1 := h.builder(key("c"))
	h.drive(b1)
	h.drive("q1")
	if e := h.entry("c"); len(e.Sources) != 1 || e.Sources[0] != (cache.Source{Table: "m", Version: 1}) {
		t.Fatalf("sources %+v", e.Sources)
	}
	h.submitPlan("q2", cacheNode("c", memScan(1)), nil)
	if ev := h.eventOf("q2", key("c")); ev.outcome != outcomeHit {
		t.Fatalf("same version: %+v, want a hit", ev)
	}
	h.drive("q2")

	h.submitPlan("q3", cacheNode("c", memScan(2)), nil)
	ev := h.eventOf("q3", key("c"))
	if ev.outcome != outcomeStale || ev.reason != "m changed" {
		t.Fatalf("new version: %+v, want stale (m changed)", ev)
	}
	b3 := h.builder(key("c"))
	if b3 == b1 {
		t.Fatal("the stale entry was not rebuilt")
	}
	if rm := removals(h.acts, b1); len(rm) == 0 {
		t.Error("the stale entry's files were not deleted")
	}
	h.drive(b3)
	h.drive("q3")
	if e := h.entry("c"); e.Sources[0].Version != 2 {
		t.Errorf("rebuilt entry's sources %+v", e.Sources)
	}
	if n := h.c.caches.Stats().Invalidations[cache.CauseSourceChanged]; n != 1 {
		t.Errorf("source_changed invalidations = %d, want 1", n)
	}

	snap := cacheNode("s", memScan(1))
	snap.Options = map[string]string{"consistency": "snapshot"}
	h.submitPlan("q4", snap, nil)
	b4 := h.builder(key("s"))
	h.drive(b4)
	h.drive("q4")
	snap2 := cacheNode("s", memScan(5))
	snap2.Options = snap.Options
	h.submitPlan("q5", snap2, nil)
	if ev := h.eventOf("q5", key("s")); ev.outcome != outcomeHit || ev.reason != "stale snapshot: m changed" {
		t.Fatalf("snapshot: %+v", ev)
	}
	if e := h.entry("s"); e.JobID != b4 || e.Stale != "m changed" || cacheInfo(e).Stale != "m changed" {
		t.Fatalf("snapshot entry %+v", e)
	}
}

// TestCacheFileStat: a query over cached files asks for a stat before it
// resolves its caches (no stat on the loop), and the build records the
// fingerprints it got; a changed size or mtime is stale.
func TestCacheFileStat(t *testing.T) {
	h := cacheHarness(t, Config{})
	path := filepath.Join(t.TempDir(), "a.csv")
	if err := os.WriteFile(path, []byte("v\n1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stat := func(job string) {
		t.Helper()
		var a *actStat
		for _, x := range ofType[actStat](h.acts) {
			if x.jobID == job {
				x := x
				a = &x
			}
		}
		if a == nil || len(a.paths) != 1 || a.paths[0] != path {
			t.Fatalf("job %s: stat action %+v", job, a)
		}
		if h.hasPlan(job) {
			t.Fatalf("job %s was planned before its files were stat'ed", job)
		}
		h.send(evStatted{jobID: job, gen: a.gen, files: statFiles(a.paths)})
	}
	h.submitPlan("q1", cacheNode("c", fileScan(path)), nil)
	if _, ok := h.c.caches.Lookup(key("c")); ok {
		t.Fatal("the cache was claimed before the stat")
	}
	stat("q1")
	b1 := h.builder(key("c"))
	if ofType[actStat](h.acts)[len(ofType[actStat](h.acts))-1].jobID != "q1" {
		t.Error("the build job stat'ed again")
	}
	h.drive(b1)
	h.drive("q1")
	if e := h.entry("c"); len(e.Sources) != 1 || e.Sources[0].Path != path || e.Sources[0].Size != 4 || e.Sources[0].Table != "f" {
		t.Fatalf("sources %+v", e.Sources)
	}
	h.submitPlan("q2", cacheNode("c", fileScan(path)), nil)
	stat("q2")
	if ev := h.eventOf("q2", key("c")); ev.outcome != outcomeHit {
		t.Fatalf("unchanged file: %+v", ev)
	}
	h.drive("q2")
	if err := os.WriteFile(path, []byte("v\n1\n2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h.submitPlan("q3", cacheNode("c", fileScan(path)), nil)
	stat("q3")
	if ev := h.eventOf("q3", key("c")); ev.outcome != outcomeStale || ev.reason != "f changed" {
		t.Fatalf("rewritten file: %+v", ev)
	}
	os.Remove(path)
	h.drive(h.builder(key("c")))
	h.drive("q3")
	h.submitPlan("q4", cacheNode("c", fileScan(path)), nil)
	stat("q4")
	if ev := h.eventOf("q4", key("c")); ev.outcome != outcomeStale {
		t.Fatalf("removed file: %+v", ev)
	}
}

// TestCacheSharedByContent: a cache of the same plan over the same files in
// another session attaches to the data being built or built (one build,
// one copy); the files go only with the last holder.
func TestCacheSharedByContent(t *testing.T) {
	h := cacheHarness(t, Config{})
	h.send(evCreateSession{id: "s2", reply: make(chan struct{}, 1)})
	path := filepath.Join(t.TempDir(), "a.csv")
	if err := os.WriteFile(path, []byte("v\n1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stat := func(job string) {
		t.Helper()
		acts := ofType[actStat](h.acts)
		a := acts[len(acts)-1]
		if a.jobID != job {
			t.Fatalf("last stat is %s's, want %s's", a.jobID, job)
		}
		h.send(evStatted{jobID: job, gen: a.gen, files: statFiles(a.paths)})
	}
	node := func(session, id string) *logical.Cache {
		return &logical.Cache{CacheID: id, SessionID: session, Input: fileScan(path), Name: "same"}
	}
	submit := func(job, session string, n *logical.Cache) {
		t.Helper()
		reply := make(chan error, 1)
		h.send(evSubmit{jobID: job, session: session, plan: n, reply: reply})
		if err := <-reply; err != nil {
			t.Fatal(err)
		}
		stat(job)
	}
	k1 := cache.Key{SessionID: "s", CacheID: "c1"}
	k2 := cache.Key{SessionID: "s2", CacheID: "c2"}
	submit("q1", "s", node("s", "c1"))
	b := h.builder(k1)
	// While c1 is being built, the same content in s2 waits for it.
	submit("q2", "s2", node("s2", "c2"))
	if ev := h.eventOf("q2", k2); ev.outcome != outcomePending {
		t.Fatalf("q2: %+v, want pending on the build of c1", ev)
	}
	if _, ok := h.c.caches.Lookup(k2); ok {
		t.Fatal("c2 was claimed: a second build")
	}
	h.drive(b)
	h.drive("q1")
	h.drive("q2")
	e1, _ := h.c.caches.Lookup(k1)
	e2, ok := h.c.caches.Lookup(k2)
	if !ok || e2.JobID != b || e2.StageID != e1.StageID || e2.ContentKey == "" || e2.ContentKey != e1.ContentKey {
		t.Fatalf("c2 %+v, want it over c1's data", e2)
	}
	if ev := h.eventOf("q2", k2); ev.reason != "shared with same" {
		t.Errorf("q2 event %+v", ev)
	}
	if st := h.c.caches.Stats(); st.Misses != 1 || st.Materializations != 1 {
		t.Fatalf("stats %+v, want one build", st)
	}
	if infos := h.c.listCaches("s2").infos; len(infos) != 1 || infos[0].Shared != 1 {
		t.Fatalf("SHOW CACHES of s2: %v", infos)
	}
	// s closes: c1 goes, its files stay for c2.
	h.acts = nil
	h.send(evCloseSession{id: "s", reply: make(chan struct{}, 1)})
	if rm := removals(h.acts, b); len(rm) != 0 {
		t.Fatalf("shared files deleted while c2 holds them: %v", rm)
	}
	h.send(evCloseSession{id: "s2", reply: make(chan struct{}, 1)})
	if rm := removals(h.acts, b); len(rm) == 0 {
		t.Fatal("the last holder's files were not deleted")
	}
}

// TestCacheParquetFooterLineage: a Parquet file's fingerprint carries its
// footer's length and row count; another file's has neither; a file that
// only looks like Parquet (its footer does not decode, or its length does
// not fit) is fingerprinted with rows -1, never an error or a panic.
func TestCacheParquetFooterLineage(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile(filepath.Join("..", "tpch", "sf0.01", "nation.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	nation := filepath.Join(dir, "nation.parquet")
	if err := os.WriteFile(nation, data, 0o644); err != nil {
		t.Fatal(err)
	}
	wantLen := int64(binary.LittleEndian.Uint32(data[len(data)-8:]))
	if s := statFile(nation); s.FooterLen != wantLen || s.Rows != 25 || s.Size != int64(len(data)) || s.Missing {
		t.Fatalf("nation.parquet: %+v, want footer %d bytes and 25 rows", s, wantLen)
	}
	csv := filepath.Join(dir, "a.csv")
	os.WriteFile(csv, []byte("v\n1\n2\n3\n4\n5\n6\n"), 0o644)
	if s := statFile(csv); s.FooterLen != 0 || s.Rows != 0 || s.Size == 0 {
		t.Fatalf("a.csv: %+v", s)
	}
	// A same-size rewrite whose footer says something else is told apart
	// even when the modification time is put back (and though the footer
	// before was answered from the memo of decoded footers).
	footerMemo.Lock()
	hits := footerMemo.hits
	footerMemo.Unlock()
	before := statFile(nation)
	footerMemo.Lock()
	hit := footerMemo.hits > hits
	footerMemo.Unlock()
	if !hit || before.Rows != 25 {
		t.Fatalf("nation.parquet again: %+v, answered from the memo: %v", before, hit)
	}
	bad := slices.Clone(data)
	copy(bad[len(bad)-8-int(wantLen):], "garbage!")
	st, _ := os.Stat(nation)
	os.WriteFile(nation, bad, 0o644)
	os.Chtimes(nation, st.ModTime(), st.ModTime())
	after := statFile(nation)
	if after.Size != before.Size || after.ModTime != before.ModTime || after.Rows != -1 {
		t.Fatalf("rewritten footer: before %+v, after %+v", before, after)
	}
	if got := cache.Changed([]cache.Source{before}, []cache.Source{after}); len(got) != 1 {
		t.Fatalf("a rewritten footer is no change: %v", got)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 200 {
		junk := make([]byte, 12+rng.IntN(200))
		for j := range junk {
			junk[j] = byte(rng.IntN(256))
		}
		if i%2 == 0 { // a length that fits the file
			binary.LittleEndian.PutUint32(junk[len(junk)-8:], uint32(rng.IntN(len(junk)-11)))
		}
		copy(junk[len(junk)-4:], "PAR1")
		p := filepath.Join(dir, "junk.parquet")
		os.WriteFile(p, junk, 0o644)
		if s := statFile(p); s.Missing || s.Rows != -1 && s.Rows < 0 {
			t.Fatalf("junk %x: %+v", junk, s)
		}
	}
}

// TestContentKeySortBy: the sort_by option is part of the content key, so
// only caches sorted alike share a copy; other options are not.
func TestContentKeySortBy(t *testing.T) {
	in := fileScan("/data/f.csv")
	srcs := []cache.Source{{Path: "/data/f.csv", Size: 10}}
	key := func(opts map[string]string) string {
		return contentKey(&logical.Cache{CacheID: "c", Input: in, Options: opts}, srcs)
	}
	plain := key(nil)
	if plain == "" || key(map[string]string{cache.TTLOption: "1h"}) != plain {
		t.Fatalf("options other than sort_by change the key (or no key): %q", plain)
	}
	asc, desc := key(map[string]string{"sort_by": "v"}), key(map[string]string{"SORT_BY": "v DESC"})
	if asc == plain || desc == plain || asc == desc {
		t.Fatalf("keys plain %s, sort_by v %s, sort_by v DESC %s: want all different", plain, asc, desc)
	}
	if key(map[string]string{"sort_by": " V  ASC "}) != asc {
		t.Fatal("the same sort written differently changes the key")
	}
}
