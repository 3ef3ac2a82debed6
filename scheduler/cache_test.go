package scheduler

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/quiverdb/quiver/cache"
	"github.com/quiverdb/quiver/logical"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
	"github.com/quiverdb/quiver/rpc"
)

// State-machine tests of the dataset cache: events in, registry state and
// actions out, no network. Planning is simulated: the tests read the loop's
// actPlan (its cache hits, whether its final stage is pinned) and answer
// with a hand-made stage graph.

// cacheHarness is a harness with two one-slot executors, so a two-task
// stage spreads over both.
func cacheHarness(t *testing.T, cfg Config) *harness {
	t.Helper()
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	h := newHarness(t, cfg)
	h.register("e1", 1)
	h.register("e2", 1)
	return h
}

func cacheNode(id string, in logical.Plan) *logical.Cache {
	if in == nil {
		in = logical.NewEmptyRelation(false, nil)
	}
	return &logical.Cache{CacheID: id, SessionID: "s", Input: in, Name: "t_" + id}
}

func key(id string) cache.Key { return cache.Key{SessionID: "s", CacheID: id} }

// submitPlan submits a logical plan in session "s"; the job may wait.
func (h *harness) submitPlan(job string, lp logical.Plan, settings map[string]string) {
	h.t.Helper()
	reply := make(chan error, 1)
	h.send(evSubmit{jobID: job, session: "s", plan: lp, settings: settings, reply: reply})
	if err := <-reply; err != nil {
		h.t.Fatal(err)
	}
}

// planOf returns the latest plan action for job, failing if there is none.
func (h *harness) planOf(job string) actPlan {
	h.t.Helper()
	var last *actPlan
	for _, a := range ofType[actPlan](h.acts) {
		if a.jobID == job {
			a := a
			last = &a
		}
	}
	if last == nil {
		h.t.Fatalf("job %s was never sent to planning", job)
	}
	return *last
}

func (h *harness) hasPlan(job string) bool {
	for _, a := range ofType[actPlan](h.acts) {
		if a.jobID == job {
			return true
		}
	}
	return false
}

// plan answers job's latest plan action with chain(job) (two stages, the
// final one passthrough over two partitions, pinned for a build).
func (h *harness) plan(job string) {
	h.t.Helper()
	a := h.planOf(job)
	st := chain(job)
	st[1].Plan.Pinned = a.pinFinal
	h.send(evPlanned{jobID: job, gen: a.gen, stages: st})
}

// runAll reports every running task of job successful until the job ends.
func (h *harness) runAll(job string) {
	h.t.Helper()
	for range 20 {
		j := h.c.jobs[job]
		if j.terminal() {
			return
		}
		progressed := false
		for _, sid := range j.order {
			s := j.stages[sid]
			for _, t := range s.tasks {
				if t.state != taskRunning {
					continue
				}
				outN := 0
				if len(s.plan.Keys) > 0 || s.plan.N == 1 {
					outN = s.plan.N
				}
				h.succeed(job, sid, t.partition, outN)
				progressed = true
			}
		}
		if !progressed {
			h.t.Fatalf("job %s is %s with no running task", job, j.state)
		}
	}
	h.t.Fatalf("job %s did not finish", job)
}

// drive plans and runs job to success.
func (h *harness) drive(job string) {
	h.t.Helper()
	h.plan(job)
	h.runAll(job)
	if st := h.jobState(job); st != rpc.JobState_JOB_SUCCESSFUL {
		h.t.Fatalf("job %s: %s: %s", job, st, h.c.jobs[job].errMsg)
	}
}

// builder returns the job building key (the pending entry's owner).
func (h *harness) builder(k cache.Key) string {
	h.t.Helper()
	e, ok := h.c.caches.Lookup(k)
	if !ok || e.State != cache.Pending {
		h.t.Fatalf("cache %s is not pending: %+v %v", k.CacheID, e, ok)
	}
	return e.JobID
}

// materialize runs a query on cache id to completion and returns the build job.
func (h *harness) materialize(job, id string) string {
	h.t.Helper()
	h.submitPlan(job, cacheNode(id, nil), nil)
	b := h.builder(key(id))
	h.drive(b)
	h.drive(job)
	return b
}

func (h *harness) entry(id string) cache.Entry {
	h.t.Helper()
	e, ok := h.c.caches.Lookup(key(id))
	if !ok {
		h.t.Fatalf("cache %s is absent", id)
	}
	return e
}

func (h *harness) absent(id string) {
	h.t.Helper()
	if e, ok := h.c.caches.Lookup(key(id)); ok {
		h.t.Fatalf("cache %s is still there: %s by %s", id, e.State, e.JobID)
	}
}

// removals lists "executor:job/stages" of the remove actions in acts.
func removals(acts []any, job string) []string {
	var out []string
	for _, r := range ofType[actRemove](acts) {
		if r.req.JobId == job {
			out = append(out, r.executorID+":"+formatIDs(r.req.StageIds))
		}
	}
	slices.Sort(out)
	return out
}

func formatIDs(ids []int32) string {
	var b strings.Builder
	for i, id := range ids {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(int(id)))
	}
	return b.String()
}

// checkPinsKept fails if any remove action so far deleted the pinned stage
// of a cache entry that is still registered.
func (h *harness) checkPinsKept() {
	h.t.Helper()
	for _, e := range h.c.caches.List("") {
		for _, r := range ofType[actRemove](h.acts) {
			if r.req.JobId == e.JobID && (len(r.req.StageIds) == 0 && !slices.Contains(r.req.PinnedStageIds, int32(e.StageID)) ||
				slices.Contains(r.req.StageIds, int32(e.StageID))) {
				h.t.Fatalf("cleanup removed pinned stage %d of job %s (cache %s): %v", e.StageID, e.JobID, e.Key.CacheID, r.req)
			}
		}
	}
}

func (h *harness) heartbeatAll() {
	for id := range h.c.executors {
		h.send(evHeartbeat{executorID: id, reply: make(chan bool, 1)})
	}
}

// later advances the clock by d, keeping the executors alive, and ticks.
func (h *harness) later(d time.Duration) []any {
	h.clock.advance(d)
	h.heartbeatAll()
	return h.send(evTick{now: h.clock.t})
}

func events(j *job) []string {
	var out []string
	for _, e := range j.events {
		out = append(out, e.key.CacheID+":"+e.outcome)
	}
	return out
}

func TestCacheMissBuildsThenHits(t *testing.T) {
	h := cacheHarness(t, Config{FinalStageCleanupDelay: time.Minute})
	h.submitPlan("q1", cacheNode("c1", nil), nil)
	if h.hasPlan("q1") || h.jobState("q1") != rpc.JobState_JOB_QUEUED {
		t.Fatalf("q1 is %s and planned=%v before its cache exists", h.jobState("q1"), h.hasPlan("q1"))
	}
	b := h.builder(key("c1"))
	if pins := h.c.caches.PinnedStages(); !pins[[2]string{b, cache.AllStages}] {
		t.Fatalf("a pending build must pin its whole job before its stages are known: %v", pins)
	}
	a := h.planOf(b)
	if !a.pinFinal || len(a.caches) != 0 || h.c.jobs[b].session != "s" {
		t.Fatalf("build plan action %+v", a)
	}
	if _, ok := a.plan.(*logical.EmptyRelation); !ok {
		t.Fatalf("the build runs the Cache node's input, got %T", a.plan)
	}
	h.plan(b)
	if pins := h.c.caches.PinnedStages(); !pins[[2]string{b, "2"}] || pins[[2]string{b, cache.AllStages}] {
		t.Fatalf("once planned the pin narrows to the final stage: %v", pins)
	}
	h.runAll(b)
	e := h.entry("c1")
	if e.State != cache.Materialized || e.JobID != b || e.StageID != 2 || len(e.Locations) != 2 || e.Bytes != 200 {
		t.Fatalf("entry %+v", e)
	}
	wantStrings(t, "executors", e.Executors(), []string{"e1", "e2"})
	// The build's intermediate stage is cleaned at once, its pinned output never.
	wantStrings(t, "build cleanup", removals(h.acts, b), []string{"e1:1", "e2:1"})

	// q1 is now planned as a hit.
	a = h.planOf("q1")
	r := a.caches[key("c1")]
	if r == nil || len(r.Locations) != 2 || r.Locations[1][0].JobID != b || r.OutSchema == nil || a.pinFinal {
		t.Fatalf("q1 plan action %+v", a)
	}
	wantStrings(t, "q1 events", events(h.c.jobs["q1"]), []string{"c1:miss"})
	if ev := h.c.jobs["q1"].events[0]; ev.partitions != 2 || ev.bytes != 200 {
		t.Fatalf("q1 event %+v", ev)
	}
	// q1 built the entry: its read-back is no hit.
	if e := h.entry("c1"); e.Readers != 1 || e.Hits != 0 || h.c.caches.Stats().Hits != 0 {
		t.Fatalf("q1 reads the entry: %+v", e)
	}
	h.drive("q1")
	if e := h.entry("c1"); e.Readers != 0 {
		t.Fatalf("readers after q1 ended: %d", e.Readers)
	}

	// A second query hits at once: no build, planned immediately.
	jobs := len(h.c.jobs)
	h.submitPlan("q2", &logical.SubqueryAlias{Input: cacheNode("c1", nil), Alias: "x"}, nil)
	if len(h.c.jobs) != jobs+1 || h.planOf("q2").caches[key("c1")] == nil {
		t.Fatalf("q2 did not hit: %d jobs, plan %+v", len(h.c.jobs), h.planOf("q2"))
	}
	wantStrings(t, "q2 events", events(h.c.jobs["q2"]), []string{"c1:hit"})
	h.drive("q2")
	st := h.c.caches.Stats()
	if st.Misses != 1 || st.Materializations != 1 || st.Hits != 1 || st.BytesRead != 400 {
		t.Fatalf("stats %+v", st)
	}
	// The delayed final-stage cleanup of the build keeps the pinned stage.
	h.later(2 * time.Minute)
	h.checkPinsKept()
	if e := h.entry("c1"); e.State != cache.Materialized {
		t.Fatal("entry lost")
	}
}

func TestCacheHitOnDeadExecutorIsAMiss(t *testing.T) {
	h := cacheHarness(t, Config{})
	// An entry recorded on e1 and an executor that is gone (as after a
	// scheduler restart with the durable registry).
	k := key("c1")
	h.c.caches.Begin(k, "old", "t", nil)
	locs := [][]physical.PartitionLocation{
		{{JobID: "old", StageID: 3, OutputPartition: 0, Executor: physical.ExecutorMeta{ID: "e1"}, Bytes: 10}},
		{{JobID: "old", StageID: 3, OutputPartition: 1, Executor: physical.ExecutorMeta{ID: "ghost"}, Bytes: 10}},
	}
	if err := h.c.caches.Complete(k, "old", 3, testSchema, locs, nil); err != nil {
		t.Fatal(err)
	}
	h.acts = nil
	h.submitPlan("q", cacheNode("c1", nil), nil)
	if h.hasPlan("q") {
		t.Fatal("q was planned against a dead executor's cache")
	}
	b := h.builder(k)
	if b == "old" {
		t.Fatal("no new build")
	}
	if n := h.c.caches.Stats().Invalidations[cache.CauseExecutorLost]; n != 1 {
		t.Fatalf("executor_lost invalidations %d", n)
	}
	wantStrings(t, "files deleted on the live holder", removals(h.acts, "old"), []string{"e1:3"})
	wantStrings(t, "q events", events(h.c.jobs["q"]), []string{"c1:miss"})
	h.drive(b)
	h.drive("q")
}

func TestCachePendingWaitsForOneBuild(t *testing.T) {
	h := cacheHarness(t, Config{})
	h.submitPlan("q1", cacheNode("c1", nil), nil)
	h.submitPlan("q2", cacheNode("c1", nil), nil)
	h.submitPlan("q3", cacheNode("c1", nil), nil)
	builds := 0
	for _, j := range h.c.jobs {
		if j.build != nil {
			builds++
		}
	}
	if builds != 1 {
		t.Fatalf("%d builds for one cache", builds)
	}
	wantStrings(t, "q2 events", events(h.c.jobs["q2"]), []string{"c1:pending"})
	b := h.builder(key("c1"))
	h.drive(b)
	for _, q := range []string{"q1", "q2", "q3"} {
		if h.planOf(q).caches[key("c1")] == nil {
			t.Fatalf("%s not planned as a hit", q)
		}
	}
	if e := h.entry("c1"); e.Readers != 3 {
		t.Fatalf("readers %d", e.Readers)
	}
	if st := h.c.caches.Stats(); st.Misses != 1 || st.Materializations != 1 {
		t.Fatalf("stats %+v", st)
	}
}

func TestCacheBuildFailureReclaimsThenFails(t *testing.T) {
	h := cacheHarness(t, Config{TaskRetries: -1})
	h.submitPlan("q1", cacheNode("c1", nil), nil)
	h.submitPlan("q2", cacheNode("c1", nil), nil)
	seen := map[string]bool{}
	for attempt := 1; attempt <= maxCacheBuildAttempts; attempt++ {
		b := h.builder(key("c1"))
		if seen[b] {
			t.Fatalf("attempt %d reuses build %s", attempt, b)
		}
		seen[b] = true
		if p := h.c.jobs[b].build.parent; attempt > 1 && p != "q1" {
			t.Fatalf("attempt %d claimed by %s, want the first waiter q1", attempt, p)
		}
		h.plan(b)
		h.succeed(b, 1, 0, 2)
		h.fail(b, 1, 1, qerr.IO, nil)
		if h.jobState(b) != rpc.JobState_JOB_FAILED {
			t.Fatalf("build %s is %s", b, h.jobState(b))
		}
		// Its files go, pinned final stage included.
		if got := removals(h.acts, b); len(got) == 0 || !strings.Contains(strings.Join(got, " "), "1,2") {
			t.Fatalf("failed build %s files not deleted: %v", b, got)
		}
		if attempt < maxCacheBuildAttempts {
			if h.jobState("q1") != rpc.JobState_JOB_QUEUED || h.jobState("q2") != rpc.JobState_JOB_QUEUED {
				t.Fatalf("after %d failures: q1 %s q2 %s", attempt, h.jobState("q1"), h.jobState("q2"))
			}
		}
	}
	for _, q := range []string{"q1", "q2"} {
		j := h.c.jobs[q]
		if j.state != rpc.JobState_JOB_FAILED || !strings.Contains(j.errMsg, "boom") || j.errKind != qerr.IO {
			t.Fatalf("%s: %s %s: %s", q, j.state, j.errKind, j.errMsg)
		}
	}
	h.absent("c1")
	if st := h.c.caches.Stats(); st.Aborts != maxCacheBuildAttempts || st.Misses != maxCacheBuildAttempts {
		t.Fatalf("stats %+v", st)
	}
}

func TestCacheBuildPlanErrorFailsAtOnce(t *testing.T) {
	h := cacheHarness(t, Config{})
	h.submitPlan("q", cacheNode("c1", nil), nil)
	b := h.builder(key("c1"))
	h.send(evPlanned{jobID: b, err: qerr.Planf("planner: no such column x")})
	if j := h.c.jobs["q"]; j.state != rpc.JobState_JOB_FAILED || !strings.Contains(j.errMsg, "no such column x") || j.errKind != qerr.Plan {
		t.Fatalf("q: %s %s", j.state, j.errMsg)
	}
	h.absent("c1")
}

func TestCacheNestedInnermostFirst(t *testing.T) {
	h := cacheHarness(t, Config{})
	inner := cacheNode("b", nil)
	outer := cacheNode("a", &logical.SubqueryAlias{Input: inner, Alias: "x"})
	h.submitPlan("q", outer, nil)
	ba := h.builder(key("a"))
	bb := h.builder(key("b"))
	if h.c.jobs[bb].build.parent != ba {
		t.Fatalf("b is built for %s, want a's build %s", h.c.jobs[bb].build.parent, ba)
	}
	if h.hasPlan(ba) || h.hasPlan("q") {
		t.Fatal("a's build or q planned before b exists")
	}
	h.drive(bb)
	a := h.planOf(ba)
	if a.caches[key("b")] == nil || !a.pinFinal {
		t.Fatalf("a's build must read b as a hit: %+v", a)
	}
	h.drive(ba)
	a = h.planOf("q")
	if a.caches[key("a")] == nil || a.caches[key("b")] != nil {
		t.Fatalf("q must read a (and not b): %v", a.caches)
	}
	wantStrings(t, "q events", events(h.c.jobs["q"]), []string{"a:miss"})
	wantStrings(t, "a's build events", events(h.c.jobs[ba]), []string{"b:miss"})
	h.drive("q")
	h.checkPinsKept()
}

func TestCacheFetchFailureReRunsAsMiss(t *testing.T) {
	h := cacheHarness(t, Config{})
	b1 := h.materialize("q0", "c1")
	h.submitPlan("q", cacheNode("c1", nil), nil)
	h.plan("q")
	old := h.task("q", 1, 1)
	oldAttempt := old.attempt
	h.succeed("q", 1, 0, 2)
	h.acts = nil
	h.fail("q", 1, 1, qerr.IO, &rpc.FetchFailure{ExecutorId: "e2", JobId: b1, StageId: 2, MapPartition: 1})
	if e := h.entry("c1"); e.State != cache.Pending || e.JobID == b1 {
		t.Fatalf("after the fetch failure the entry must be rebuilt: %s by %s", e.State, e.JobID)
	}
	if n := h.c.caches.Stats().Invalidations[cache.CauseFetchFailed]; n != 1 {
		t.Fatalf("fetch_failed invalidations %d", n)
	}
	wantStrings(t, "the lost entry's files", removals(h.acts, b1), []string{"e1:2", "e2:2"})
	j := h.c.jobs["q"]
	if j.state != rpc.JobState_JOB_QUEUED || j.restarts != 1 || j.planned || len(j.readers) != 0 {
		t.Fatalf("q after the fetch failure: %s restarts=%d planned=%v", j.state, j.restarts, j.planned)
	}
	_ = h.builder(key("c1"))
	// A status of the old run is ignored after the restart.
	h.send(evTaskStatus{executorID: "e1", statuses: []*rpc.TaskStatus{{
		Id: &rpc.TaskId{JobId: "q", StageId: 1, Partition: 1, Attempt: int32(oldAttempt)}, State: rpc.TaskState_TASK_SUCCESSFUL,
	}}})
	h.drive(h.builder(key("c1")))
	a := h.planOf("q")
	if a.gen != 1 || a.caches[key("c1")] == nil {
		t.Fatalf("q re-planned %+v", a)
	}
	// A stale planning result of the first run would be ignored too.
	h.send(evPlanned{jobID: "q", gen: 0, stages: chain("q")})
	if j.planned {
		t.Fatal("a stale planning result was applied")
	}
	h.plan("q")
	if at := h.task("q", 1, 0).attempt; at <= oldAttempt {
		t.Fatalf("new run's tasks start at attempt %d, old run reached %d", at, oldAttempt)
	}
	h.runAll("q")
	if h.jobState("q") != rpc.JobState_JOB_SUCCESSFUL {
		t.Fatalf("q %s: %s", h.jobState("q"), j.errMsg)
	}
	wantStrings(t, "q events", events(j), []string{"c1:miss"})
	h.checkPinsKept()
}

func TestCacheExecutorLossPartialRepair(t *testing.T) {
	h := cacheHarness(t, Config{HeartbeatTimeout: 10 * time.Second})
	b := h.materialize("q0", "c1")
	before := h.entry("c1")
	lostPart := slices.IndexFunc(before.Locations, func(p []physical.PartitionLocation) bool { return p[0].Executor.ID == "e2" })
	if lostPart < 0 {
		t.Fatalf("no partition on e2: %+v", before.Locations)
	}
	h.acts = nil
	h.clock.advance(11 * time.Second)
	h.send(evHeartbeat{executorID: "e1", reply: make(chan bool, 1)})
	h.send(evTick{now: h.clock.t})
	if h.c.executors["e2"] != nil {
		t.Fatal("e2 not lost")
	}
	// The entry keeps its partition on e1, pinned; e2's is missing.
	e := h.entry("c1")
	if !e.Partial() || !slices.Equal(e.Missing, []int{lostPart}) || len(e.Locations[1-lostPart]) != 1 || e.Bytes != 100 {
		t.Fatalf("after losing e2: %+v", e)
	}
	if got := removals(h.acts, b); len(got) != 0 {
		t.Fatalf("the surviving partition's files were deleted: %v", got)
	}
	if l := h.c.listCaches("s"); len(l.infos) != 1 || l.infos[0].State != "partial" || l.infos[0].Check != outcomePartial || !strings.Contains(l.infos[0].Reason, "lost with an executor") {
		t.Fatalf("SHOW CACHES: %+v", l.infos)
	}

	// The next reader starts a repair of only the missing partition.
	h.submitPlan("q1", cacheNode("c1", nil), nil)
	rep := h.entry("c1").RepairJob
	if rep == "" || h.hasPlan("q1") {
		t.Fatalf("q1 did not wait for a repair: %+v", h.entry("c1"))
	}
	wantStrings(t, "q1 events", events(h.c.jobs["q1"]), []string{"c1:partial"})
	if r := h.c.jobs["q1"].events[0].reason; r != fmt.Sprintf("partition %d of 2 lost with an executor", lostPart) {
		t.Fatalf("q1's event reason %q", r)
	}
	if a := h.planOf(rep); a.targetPartitions != 2 || a.inMemory || !a.pinFinal {
		t.Fatalf("repair plan action: target %d, in memory %v, pinned %v", a.targetPartitions, a.inMemory, a.pinFinal)
	}
	// A second reader waits for the same repair.
	h.submitPlan("q2", cacheNode("c1", nil), nil)
	if w := h.c.jobs["q2"].waitingOn[key("c1")]; w != rep {
		t.Fatalf("q2 waits on %q, want the repair %s", w, rep)
	}
	h.plan(rep)
	if pins := h.c.caches.PinnedStages(); !pins[[2]string{rep, "2"}] || !pins[[2]string{b, "2"}] {
		t.Fatalf("pins during the repair: %v", pins)
	}
	h.runAll(rep)
	var ran []int
	for _, tk := range h.c.jobs[rep].stages[2].tasks {
		if !tk.kept {
			ran = append(ran, tk.partition)
		}
	}
	if !slices.Equal(ran, []int{lostPart}) {
		t.Fatalf("the repair's final stage ran partitions %v, want only %d", ran, lostPart)
	}
	if st := h.c.status(h.c.jobs[rep]); st.TasksTotal != 3 { // stage 1's two and the one repaired
		t.Fatalf("repair job status counts %d tasks", st.TasksTotal)
	}
	e = h.entry("c1")
	if e.Partial() || e.JobID != b || e.Locations[lostPart][0].JobID != rep || e.Locations[1-lostPart][0].JobID != b || e.Bytes != 200 {
		t.Fatalf("after the repair: %+v", e)
	}
	if r := h.planOf("q1").caches[key("c1")]; r == nil || r.Locations[lostPart][0].JobID != rep {
		t.Fatalf("q1 was not planned on the repaired entry: %+v", h.planOf("q1"))
	}
	wantStrings(t, "q1 events after", events(h.c.jobs["q1"]), []string{"c1:partial"})
	h.drive("q1")
	h.drive("q2")
	if st := h.c.caches.Stats(); st.Partials != 1 || st.Repairs != 1 || st.Materializations != 1 {
		t.Fatalf("stats %+v", st)
	}
	// Removing the entry deletes the build's and the repair's outputs.
	h.acts = nil
	if !h.uncache("c1", false) {
		t.Fatal("uncache failed")
	}
	wantStrings(t, "build files", removals(h.acts, b), []string{"e1:2"})
	wantStrings(t, "repair files", removals(h.acts, rep), []string{"e1:2"})
}

// TestCacheRepairFailsStaysPartial: a repair build that fails leaves the
// entry partial, its surviving partition kept, for the next reader to
// repair; a repair whose input plans to another partition count drops the
// entry so that it is built whole.
func TestCacheRepairFailsStaysPartial(t *testing.T) {
	h := cacheHarness(t, Config{HeartbeatTimeout: 10 * time.Second})
	h.materialize("q0", "c1")
	h.clock.advance(11 * time.Second)
	h.send(evHeartbeat{executorID: "e1", reply: make(chan bool, 1)})
	h.send(evTick{now: h.clock.t})
	h.submitPlan("q1", cacheNode("c1", nil), nil)
	rep := h.entry("c1").RepairJob
	h.plan(rep)
	h.fail(rep, 1, 0, qerr.Execution, nil)
	if st := h.jobState(rep); st != rpc.JobState_JOB_FAILED {
		t.Fatalf("repair %s", st)
	}
	if e := h.entry("c1"); !e.Partial() || e.RepairJob == rep || len(e.Executors()) != 1 {
		t.Fatalf("after a failed repair: %+v", e)
	}
	// q1 saw one failed build and, an execution error being final, failed.
	if st := h.jobState("q1"); st != rpc.JobState_JOB_FAILED {
		t.Fatalf("q1 %s", st)
	}
	h.submitPlan("q2", cacheNode("c1", nil), nil)
	rep2 := h.entry("c1").RepairJob
	if rep2 == "" || rep2 == rep {
		t.Fatalf("no new repair: %+v", h.entry("c1"))
	}
	a := h.planOf(rep2)
	st := chain(rep2)
	st[1].Plan.Pinned = a.pinFinal
	st[1].Plan.Input = unresolved(1, 3) // the input now plans to 3 partitions
	st[0].Plan.N = 3
	h.send(evPlanned{jobID: rep2, gen: a.gen, stages: st})
	if g := h.c.gone[key("c1")]; !strings.Contains(g.why, "rebuilt whole") {
		t.Fatalf("removal reason %+v", g)
	}
	if e := h.entry("c1"); e.State != cache.Pending || e.JobID == rep2 || e.Partial() {
		t.Fatalf("q2 did not build it whole: %+v", e)
	}
	if st := h.jobState(rep2); st != rpc.JobState_JOB_CANCELLED {
		t.Fatalf("the repair that could not be is %s", st)
	}
}

// TestCachePinsSurviveExecutorLossRecompute: an executor is lost while a
// build's final stage runs; the lost map output is recomputed, the build
// completes, and no cleanup path removed the pinned output.
func TestCachePinsSurviveExecutorLossRecompute(t *testing.T) {
	h := cacheHarness(t, Config{HeartbeatTimeout: 10 * time.Second, FinalStageCleanupDelay: time.Second})
	h.register("e3", 1)
	h.submitPlan("q", cacheNode("c1", nil), nil)
	b := h.builder(key("c1"))
	h.plan(b)
	h.succeed(b, 1, 0, 2)
	h.succeed(b, 1, 1, 2)
	// Final stage: lose e2 (which holds stage 1 output) while it runs.
	h.clock.advance(11 * time.Second)
	for _, id := range []string{"e1", "e3"} {
		h.send(evHeartbeat{executorID: id, reply: make(chan bool, 1)})
	}
	h.send(evTick{now: h.clock.t})
	h.runAll(b)
	if h.jobState(b) != rpc.JobState_JOB_SUCCESSFUL {
		t.Fatalf("build %s: %s", h.jobState(b), h.c.jobs[b].errMsg)
	}
	e := h.entry("c1")
	if e.State != cache.Materialized || slices.Contains(e.Executors(), "e2") {
		t.Fatalf("entry %+v", e)
	}
	h.drive("q")
	h.later(2 * time.Second) // the build's delayed final cleanup is due
	h.later(2 * time.Second)
	h.checkPinsKept()
	// A failed consumer job cleans up only its own stages.
	h.submitPlan("bad", cacheNode("c1", nil), map[string]string{})
	h.plan("bad")
	h.fail("bad", 1, 0, qerr.Execution, nil)
	if h.jobState("bad") != rpc.JobState_JOB_FAILED {
		t.Fatal("bad did not fail")
	}
	h.checkPinsKept()
	if e := h.entry("c1"); e.Readers != 0 {
		t.Fatalf("a failed reader kept its reader count: %d", e.Readers)
	}
}

func TestCacheSessionClose(t *testing.T) {
	h := cacheHarness(t, Config{})
	b1 := h.materialize("q0", "c1")
	h.submitPlan("q", cacheNode("c2", nil), nil)
	b2 := h.builder(key("c2"))
	h.plan(b2)
	h.succeed(b2, 1, 0, 2)
	h.acts = nil
	h.send(evCloseSession{id: "s", reply: make(chan struct{}, 1)})
	h.absent("c1")
	h.absent("c2")
	wantStrings(t, "c1 files", removals(h.acts, b1), []string{"e1:2", "e2:2"})
	if got := removals(h.acts, b2); !slices.Contains(got, "e1:1,2") {
		t.Fatalf("the cancelled build's files: %v", got)
	}
	if h.jobState(b2) != rpc.JobState_JOB_CANCELLED || h.jobState("q") != rpc.JobState_JOB_CANCELLED {
		t.Fatalf("build %s, waiting query %s", h.jobState(b2), h.jobState("q"))
	}
	if n := h.c.caches.Stats().Invalidations[cache.CauseSessionClosed]; n != 2 {
		t.Fatalf("session_closed invalidations %d", n)
	}
}

func TestCacheUncacheAndClear(t *testing.T) {
	h := cacheHarness(t, Config{})
	b1 := h.materialize("q1", "c1")
	h.materialize("q2", "c2")
	infos := h.c.listCaches("s").infos
	if len(infos) != 2 || infos[0].State != "materialized" || infos[0].Partitions != 2 || infos[0].Bytes != 200 ||
		infos[0].Hits != 0 || len(infos[0].Executors) != 2 || infos[0].Name != "t_c1" || infos[0].CreatedUnixMs == 0 {
		t.Fatalf("list %v", infos)
	}
	if got := h.c.listCaches("other").infos; len(got) != 0 {
		t.Fatalf("another session sees %v", got)
	}
	h.acts = nil
	uncache := func(id string) bool {
		reply := make(chan bool, 1)
		h.send(evUncache{session: "s", cacheID: id, reply: reply})
		return <-reply
	}
	if !uncache("c1") {
		t.Fatal("uncache c1")
	}
	wantStrings(t, "c1 files", removals(h.acts, b1), []string{"e1:2", "e2:2"})
	if uncache("c1") {
		t.Fatal("uncache of an absent entry reported a removal")
	}
	reply := make(chan int, 1)
	h.send(evClearCaches{session: "s", reply: reply})
	if n := <-reply; n != 1 {
		t.Fatalf("clear removed %d", n)
	}
	if n := h.c.caches.Stats().Invalidations[cache.CauseUncache]; n != 2 {
		t.Fatalf("uncache invalidations %d", n)
	}
	h.checkPinsKept()
}

func TestCacheOptionsAndSessionValidated(t *testing.T) {
	h := cacheHarness(t, Config{})
	n := cacheNode("c1", nil)
	n.Options = map[string]string{"bogus": "1"}
	h.submitPlan("q1", n, nil)
	if j := h.c.jobs["q1"]; j.state != rpc.JobState_JOB_FAILED || j.errKind != qerr.Plan || !strings.Contains(j.errMsg, `"bogus"`) {
		t.Fatalf("q1: %s %s", j.state, j.errMsg)
	}
	n = cacheNode("c1", nil)
	n.Options = map[string]string{"ttl": "soon"}
	h.submitPlan("q2", n, nil)
	if j := h.c.jobs["q2"]; j.state != rpc.JobState_JOB_FAILED || !strings.Contains(j.errMsg, "ttl") {
		t.Fatalf("q2: %s %s", j.state, j.errMsg)
	}
	n = cacheNode("c1", nil)
	n.SessionID = "other"
	h.submitPlan("q3", n, nil)
	if j := h.c.jobs["q3"]; j.state != rpc.JobState_JOB_FAILED || !strings.Contains(j.errMsg, "session") {
		t.Fatalf("q3: %s %s", j.state, j.errMsg)
	}
	h.submitPlan("q4", cacheNode("c1", nil), map[string]string{"quiver.cache.ttl": "-1s"})
	if j := h.c.jobs["q4"]; j.state != rpc.JobState_JOB_FAILED || !strings.Contains(j.errMsg, "quiver.cache.ttl") {
		t.Fatalf("q4: %s %s", j.state, j.errMsg)
	}
	h.absent("c1")
	if st := h.c.caches.Stats(); st.Misses != 0 {
		t.Fatalf("a rejected query claimed an entry: %+v", st)
	}
}

func TestCacheEvictionTTL(t *testing.T) {
	h := cacheHarness(t, Config{CacheTTL: time.Minute})
	b1 := h.materialize("q1", "c1")
	// c2 never expires (its own ttl option); c3 gets the session's 10m.
	n := cacheNode("c2", nil)
	n.Options = map[string]string{"TTL": "0"}
	h.submitPlan("q2", n, nil)
	h.drive(h.builder(key("c2")))
	h.drive("q2")
	h.submitPlan("q3", cacheNode("c3", nil), map[string]string{"quiver.cache.ttl": "10m"})
	h.drive(h.builder(key("c3")))
	h.drive("q3")
	if o := h.entry("c3").Options; o["ttl"] != "10m" {
		t.Fatalf("c3 options %v", o)
	}
	h.acts = nil
	h.later(30 * time.Second)
	h.entry("c1")
	h.later(31 * time.Second)
	h.absent("c1")
	h.entry("c2")
	h.entry("c3")
	wantStrings(t, "evicted files", removals(h.acts, b1), []string{"e1:2", "e2:2"})
	h.later(10 * time.Minute)
	h.absent("c3")
	h.entry("c2")
	if n := h.c.caches.Stats().Invalidations[cache.CauseEvicted]; n != 2 {
		t.Fatalf("evictions %d", n)
	}
}

func TestCacheEvictionByValueSparesReaders(t *testing.T) {
	h := cacheHarness(t, Config{})
	b1 := h.materialize("q1", "c1")
	h.later(time.Second)
	b2 := h.materialize("q2", "c2")
	h.later(time.Second)
	// The cap is the scheduler's (its flag), 300 bytes: two entries of 200.
	h.c.cacheMaxBytes = 300
	// q3 reads c1 (the least recently used) and keeps running.
	h.submitPlan("q3", cacheNode("c1", nil), nil)
	h.plan("q3")
	h.acts = nil
	h.later(time.Second)
	h.entry("c1")
	h.absent("c2")
	wantStrings(t, "c2 files", removals(h.acts, b2), []string{"e1:2", "e2:2"})
	h.runAll("q3")
	// Now nobody reads c1; a third entry, as costly to build but never
	// read back, is worth less per byte than c1 (read once) and goes.
	h.submitPlan("q4", cacheNode("c3", nil), nil)
	b3 := h.builder(key("c3"))
	h.drive(b3)
	h.drive("q4")
	h.acts = nil
	h.later(time.Second)
	h.absent("c3")
	h.entry("c1")
	wantStrings(t, "c3 files", removals(h.acts, b3), []string{"e1:2", "e2:2"})
	if len(removals(h.acts, b1)) != 0 {
		t.Fatal("c1's files were deleted")
	}
	// A bad size fails its job.
	h.submitPlan("q6", logical.NewEmptyRelation(false, nil), map[string]string{"quiver.cache.max_bytes": "lots"})
	if j := h.c.jobs["q6"]; j.state != rpc.JobState_JOB_FAILED || !strings.Contains(j.errMsg, `quiver.cache.max_bytes: want a size`) || !strings.Contains(j.errMsg, `"lots"`) {
		t.Fatalf("bad size: job %s: %s", j.state, j.errMsg)
	}
}

// TestCacheSessionQuota: a session's quiver.cache.max_bytes never changes
// the scheduler's cap; it may set a lower quota of its own (evicting its
// own entries past it), and one above the cap is refused.
func TestCacheSessionQuota(t *testing.T) {
	h := cacheHarness(t, Config{CacheMaxBytes: 1000})
	h.materialize("q1", "c1")
	h.later(time.Second)
	h.materialize("q2", "c2")
	h.submitPlan("big", logical.NewEmptyRelation(false, nil), map[string]string{"quiver.cache.max_bytes": "2 GiB"})
	if j := h.c.jobs["big"]; j.state != rpc.JobState_JOB_FAILED || !strings.Contains(j.errMsg, "a session may only set a lower quota") {
		t.Fatalf("a quota above the cap: job %s: %s", j.state, j.errMsg)
	}
	if h.c.cacheMaxBytes != 1000 {
		t.Fatalf("a session changed the scheduler's cap to %d", h.c.cacheMaxBytes)
	}
	h.submitPlan("low", logical.NewEmptyRelation(false, nil), map[string]string{"quiver.cache.max_bytes": "300"})
	if h.c.cacheMaxBytes != 1000 || h.c.sessions["s"].cacheQuota != 300 {
		t.Fatalf("cap %d, quota %d", h.c.cacheMaxBytes, h.c.sessions["s"].cacheQuota)
	}
	h.drive("low")
	h.later(time.Second)
	h.absent("c1") // the session's least recently used entry
	h.entry("c2")
}

// TestCacheTooBigFailsOnce: a build whose output passes the cache limit
// fails as soon as its written bytes show it, with a clear error, and the
// query waiting for it fails too instead of building it again.
func TestCacheTooBigFailsOnce(t *testing.T) {
	h := cacheHarness(t, Config{CacheMaxBytes: 150})
	h.submitPlan("q", cacheNode("c1", nil), nil)
	b := h.builder(key("c1"))
	h.plan(b)
	h.succeed(b, 1, 0, 2)
	h.succeed(b, 1, 1, 2)
	h.succeed(b, 2, 0, 0) // 100 bytes: under the limit
	if h.jobState(b) != rpc.JobState_JOB_RUNNING {
		t.Fatalf("build %s after 100 bytes", h.jobState(b))
	}
	h.succeed(b, 2, 1, 0) // 200 bytes
	if j := h.c.jobs[b]; j.state != rpc.JobState_JOB_FAILED || j.errKind != qerr.Resources || !strings.Contains(j.errMsg, "over the cache limit") {
		t.Fatalf("build %s (%v): %s", j.state, j.errKind, j.errMsg)
	}
	h.absent("c1")
	if j := h.c.jobs["q"]; j.state != rpc.JobState_JOB_FAILED || !strings.Contains(j.errMsg, "over the cache limit") {
		t.Fatalf("waiting query %s: %s", j.state, j.errMsg)
	}
	if st := h.c.caches.Stats(); st.Misses != 1 {
		t.Fatalf("built %d times", st.Misses)
	}
}

func TestCacheIdleSession(t *testing.T) {
	h := cacheHarness(t, Config{SessionIdleTimeout: time.Minute})
	b := h.materialize("q1", "c1")
	// A session with a running job is not idle.
	h.submitPlan("q2", cacheNode("c1", nil), nil)
	h.plan("q2")
	h.later(2 * time.Minute)
	if h.c.sessions["s"] == nil {
		t.Fatal("a busy session was closed")
	}
	h.runAll("q2")
	h.acts = nil
	h.later(30 * time.Second)
	if h.c.sessions["s"] == nil {
		t.Fatal("closed before its idle timeout")
	}
	h.later(31 * time.Second)
	if h.c.sessions["s"] != nil {
		t.Fatal("idle session not closed")
	}
	h.absent("c1")
	wantStrings(t, "its cache files", removals(h.acts, b), []string{"e1:2", "e2:2"})

	// quiver.session.idle_timeout=0 keeps a session forever.
	h.send(evCreateSession{id: "s", reply: make(chan struct{}, 1)})
	h.submitPlan("q3", logical.NewEmptyRelation(false, nil), map[string]string{"quiver.session.idle_timeout": "0s"})
	h.drive("q3")
	h.later(time.Hour)
	if h.c.sessions["s"] == nil {
		t.Fatal("a session with idle_timeout 0 was closed")
	}
}

func TestCacheReadsPlacedOnHolders(t *testing.T) {
	h := newHarness(t, Config{})
	h.register("e1", 2)
	h.register("e2", 2)
	k := key("c1")
	h.c.caches.Begin(k, "b", "t", nil)
	loc := func(p int) []physical.PartitionLocation {
		return []physical.PartitionLocation{{JobID: "b", StageID: 1, OutputPartition: p, Executor: physical.ExecutorMeta{ID: "e2"}, Bytes: 50}}
	}
	if err := h.c.caches.Complete(k, "b", 1, testSchema, [][]physical.PartitionLocation{loc(0), loc(1)}, nil); err != nil {
		t.Fatal(err)
	}
	h.submitPlan("q", cacheNode("c1", nil), nil)
	a := h.planOf("q")
	r := a.caches[k]
	h.acts = nil
	h.send(evPlanned{jobID: "q", gen: a.gen, stages: []plannedStage{{ID: 1, Final: true,
		Plan: &physical.ShuffleWriter{Input: r, JobID: "q", StageID: 1, Compression: physical.CompressLZ4}}}})
	// bias would put both on e1; they go where the data is.
	wantStrings(t, "read-back placement", launched(h.acts), []string{"1/0@e2#0", "1/1@e2#0"})
}

// TestCacheUncacheCancelsRepair: UNCACHE of a partial entry whose repair is
// running cancels the repair, which then deletes what it wrote.
func TestCacheUncacheCancelsRepair(t *testing.T) {
	h := cacheHarness(t, Config{HeartbeatTimeout: 10 * time.Second})
	h.materialize("q0", "c1")
	h.clock.advance(11 * time.Second)
	h.send(evHeartbeat{executorID: "e1", reply: make(chan bool, 1)})
	h.send(evTick{now: h.clock.t})
	h.submitPlan("q1", cacheNode("c1", nil), nil)
	rep := h.entry("c1").RepairJob
	h.plan(rep)
	h.acts = nil
	if !h.uncache("c1", false) {
		t.Fatal("uncache failed")
	}
	if st := h.jobState(rep); st != rpc.JobState_JOB_CANCELLED {
		t.Fatalf("the repair is %s after UNCACHE", st)
	}
	if got := removals(h.acts, rep); len(got) == 0 {
		t.Fatal("the cancelled repair's files were not deleted")
	}
}
