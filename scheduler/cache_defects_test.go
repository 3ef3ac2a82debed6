package scheduler

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/quiverdb/quiver/cache"
	"github.com/quiverdb/quiver/logical"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
	"github.com/quiverdb/quiver/rpc"
)

func (h *harness) uncache(id string, rebuild bool) bool {
	reply := make(chan bool, 1)
	h.send(evUncache{session: "s", cacheID: id, rebuild: rebuild, reply: reply})
	return <-reply
}

// TestCachePlannedBeforeUncache: a query planned with a cache id before
// UNCACHE retired it reads the input uncached and leaves no entry behind
// (an entry no name reaches); REFRESH's removal keeps the id usable.
func TestCachePlannedBeforeUncache(t *testing.T) {
	h := cacheHarness(t, Config{})
	h.materialize("q0", "c1")
	if !h.uncache("c1", false) {
		t.Fatal("uncache c1")
	}
	h.submitPlan("late", cacheNode("c1", nil), nil)
	h.absent("c1")
	if a := h.planOf("late"); len(a.caches) != 0 || a.pinFinal {
		t.Fatalf("late query planned with caches %v", a.caches)
	}
	h.drive("late")
	h.absent("c1")
	if len(h.c.listCaches("s").infos) != 0 {
		t.Fatalf("SHOW CACHES lists %v", h.c.listCaches("s").infos)
	}

	h.materialize("q1", "c2")
	if !h.uncache("c2", true) {
		t.Fatal("refresh-uncache c2")
	}
	h.submitPlan("q2", cacheNode("c2", nil), nil)
	if e := h.entry("c2"); e.State != cache.Pending {
		t.Fatalf("after a refresh the id builds again: %+v", e)
	}
}

// TestCacheUncachePendingCancelsBuild: UNCACHE of an entry being built
// cancels its build; the query waiting for it then runs uncached.
func TestCacheUncachePendingCancelsBuild(t *testing.T) {
	h := cacheHarness(t, Config{})
	h.submitPlan("q", cacheNode("c1", nil), nil)
	b := h.builder(key("c1"))
	h.plan(b)
	if !h.uncache("c1", false) {
		t.Fatal("uncache of the pending entry")
	}
	if st := h.jobState(b); st != rpc.JobState_JOB_CANCELLED {
		t.Fatalf("build %s is %s, want cancelled", b, st)
	}
	h.absent("c1")
	if h.jobState("q") == rpc.JobState_JOB_FAILED || h.jobState("q") == rpc.JobState_JOB_CANCELLED {
		t.Fatalf("the waiting query ended: %s %s", h.jobState("q"), h.c.jobs["q"].errMsg)
	}
	h.drive("q")
	h.absent("c1")
}

// TestCacheReleaseOwnBuild: a reader of an entry that was invalidated and
// rebuilt releases nothing of the new build.
func TestCacheReleaseOwnBuild(t *testing.T) {
	h := newHarness(t, Config{Logf: func(string, ...any) {}})
	h.register("e1", 4)
	h.register("e2", 4)
	h.materialize("q0", "c1")
	h.submitPlan("old", cacheNode("c1", nil), nil)
	h.plan("old") // reads build 1
	if !h.uncache("c1", true) {
		t.Fatal("uncache")
	}
	h.submitPlan("q1", cacheNode("c1", nil), nil)
	b2 := h.builder(key("c1"))
	h.drive(b2)
	h.plan("q1") // reads build 2
	if e := h.entry("c1"); e.JobID != b2 || e.Readers != 1 {
		t.Fatalf("entry %+v", e)
	}
	h.runAll("old")
	if e := h.entry("c1"); e.Readers != 1 {
		t.Fatalf("the old build's reader dropped the new build's reader count: %d", e.Readers)
	}
	h.runAll("q1")
	if e := h.entry("c1"); e.Readers != 0 {
		t.Fatalf("readers after q1: %d", e.Readers)
	}
}

// TestCacheTooBigByEstimate: an input estimated from known row counts at
// well over the cache limit is refused before any build starts; an input
// of unknown size is built (and enforced while written).
func TestCacheTooBigByEstimate(t *testing.T) {
	h := cacheHarness(t, Config{CacheMaxBytes: 1 << 20})
	big := memScan(1).(*logical.Scan)
	big.Table.Rows = 1_000_000 // 8 MB of int64
	h.submitPlan("q", cacheNode("c1", big), nil)
	if j := h.c.jobs["q"]; j.state != rpc.JobState_JOB_FAILED || j.errKind != qerr.Resources || !strings.Contains(j.errMsg, "estimated at") {
		t.Fatalf("query %s (%v): %s", j.state, j.errKind, j.errMsg)
	}
	h.absent("c1")
	unknown := memScan(1).(*logical.Scan)
	unknown.Table.Rows = -1
	h.submitPlan("q2", cacheNode("c2", unknown), nil)
	if e := h.entry("c2"); e.State != cache.Pending {
		t.Fatalf("an input of unknown size was not built: %+v", e)
	}
}

// TestCacheReloadedWaitsForHolders: after a restart with a durable
// registry, a hit on a reloaded entry waits for its executors to register
// again instead of building a second copy; past the heartbeat timeout they
// are lost and it is a miss.
func TestCacheReloadedWaitsForHolders(t *testing.T) {
	for _, comesBack := range []bool{true, false} {
		old := time.Date(2025, 12, 31, 0, 0, 0, 0, time.UTC)
		m := cache.NewMemory(cache.WithClock(func() time.Time { return old }))
		k := key("c1")
		m.Begin(k, "job-old", "", nil)
		schema := arrow.NewSchema([]arrow.Field{{Name: "k", Type: arrow.PrimitiveTypes.Int64}}, nil)
		loc := physical.PartitionLocation{JobID: "job-old", StageID: 2, Executor: physical.ExecutorMeta{ID: "e1", Host: "127.0.0.1", FlightPort: 1000}, Rows: 1, Bytes: 10}
		if err := m.Complete(k, "job-old", 2, schema, [][]physical.PartitionLocation{{loc}}, nil); err != nil {
			t.Fatal(err)
		}
		h := newHarness(t, Config{CacheState: m, HeartbeatTimeout: 10 * time.Second, Logf: func(string, ...any) {}})
		h.register("e2", 2)
		h.submitPlan("q", cacheNode("c1", nil), nil)
		if h.hasPlan("q") {
			t.Fatalf("comesBack=%v: planned before the holder registered", comesBack)
		}
		if comesBack {
			h.register("e1", 2)
			if a := h.planOf("q"); a.caches[k] == nil {
				t.Fatalf("after the holder registered: plan %+v", a)
			}
			if e := h.entry("c1"); e.JobID != "job-old" {
				t.Fatalf("entry %+v", e)
			}
			continue
		}
		h.later(11 * time.Second)
		if e := h.entry("c1"); e.State != cache.Pending || e.JobID == "job-old" {
			t.Fatalf("past the heartbeat timeout: %+v, want a rebuild", e)
		}
	}
}

// TestResumeSession: CreateSession re-opens a session under the id a client
// gives (after an idle expiry or a restart) and refuses one that is not a
// session id; a live session of that id is kept as it is.
func TestResumeSession(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := startCluster(t, ctx, Config{HeartbeatTimeout: 5 * time.Second}, 1, mem)
	for _, bad := range []string{"not-a-uuid", "../../etc", "6F9619FF-8B86-D011-B42D-00C04FC964FF"} {
		_, err := c.client.CreateSession(ctx, &rpc.CreateSessionRequest{ProtocolVersion: rpc.ProtocolVersion, ResumeSessionId: bad})
		if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "is not a session id") {
			t.Errorf("resume %q: %v", bad, err)
		}
	}
	id := "6f9619ff-8b86-d011-b42d-00c04fc964ff"
	for range 2 {
		r, err := c.client.CreateSession(ctx, &rpc.CreateSessionRequest{ProtocolVersion: rpc.ProtocolVersion, ResumeSessionId: id})
		if err != nil || r.SessionId != id {
			t.Fatalf("resume: %v %v", r, err)
		}
	}
	known := false
	c.sched.inspect(ctx, func(co *core) { _, known = co.sessions[id] })
	if !known {
		t.Fatal("the resumed session is unknown")
	}
}

// TestCacheReconcileOnRegister: an executor registering with the job
// directories it holds keeps the entries whose files it has; one whose
// files are gone loses its partitions there (the entry is partial, its
// other partitions kept); one that reports nothing changes nothing.
func TestCacheReconcileOnRegister(t *testing.T) {
	h := cacheHarness(t, Config{})
	b := h.materialize("q1", "c1")
	reg := func(held map[string]bool) {
		h.send(evRegister{meta: physical.ExecutorMeta{ID: "e1", Host: "127.0.0.1", FlightPort: 1000}, grpcPort: 1000, vcores: 1, held: held, reply: make(chan struct{}, 1)})
	}
	reg(nil)
	reg(map[string]bool{b: true, "other": true})
	if e := h.entry("c1"); e.JobID != b {
		t.Fatalf("entry %+v", e)
	}
	reg(map[string]bool{"other": true})
	e := h.entry("c1")
	if !e.Partial() || len(e.Missing) != 1 || slices.Contains(e.Executors(), "e1") || len(e.Executors()) != 1 {
		t.Fatalf("after e1 came back without the files: %+v", e)
	}
	// The other holder coming back without them too leaves nothing.
	h.send(evRegister{meta: physical.ExecutorMeta{ID: "e2", Host: "127.0.0.1", FlightPort: 1000}, grpcPort: 1000, vcores: 1, held: map[string]bool{}, reply: make(chan struct{}, 1)})
	h.absent("c1")
	if g := h.c.gone[key("c1")]; g.why != "its files are gone from executor e2" {
		t.Fatalf("removal reason %+v", g)
	}
}
