package scheduler

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
	"github.com/quiverdb/quiver/rpc"
)

// The tests in this file drive the state machine (core) directly: events in,
// state and actions out, no network.

var testSchema = arrow.NewSchema([]arrow.Field{{Name: "k", Type: arrow.PrimitiveTypes.Int64}}, nil)

type fakeClock struct{ t time.Time }

func (f *fakeClock) now() time.Time          { return f.t }
func (f *fakeClock) advance(d time.Duration) { f.t = f.t.Add(d) }

type harness struct {
	t     *testing.T
	c     *core
	clock *fakeClock
	acts  []any // every action so far
}

func newHarness(t *testing.T, cfg Config) *harness {
	t.Helper()
	cfg, err := cfg.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	clk := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	h := &harness{t: t, c: newCore(cfg, clk.now), clock: clk}
	h.send(evCreateSession{id: "s", reply: make(chan struct{}, 1)})
	return h
}

// send applies ev and returns the actions it produced.
func (h *harness) send(ev any) []any {
	h.c.handle(ev)
	a := h.c.takeActions()
	h.acts = append(h.acts, a...)
	return a
}

func (h *harness) register(id string, vcores int) []any {
	return h.send(evRegister{meta: physical.ExecutorMeta{ID: id, Host: "127.0.0.1", FlightPort: 1000}, grpcPort: 1000, vcores: vcores, reply: make(chan struct{}, 1)})
}

func scan(parts int) *physical.Scan {
	ps := make([][]string, parts)
	for i := range ps {
		ps[i] = []string{fmt.Sprintf("f%d.parquet", i)}
	}
	return &physical.Scan{Table: "t", Format: physical.FormatParquet, FileSchema: testSchema, Partitions: ps, Fetch: -1}
}

func hashWriter(job string, id int, in physical.Plan, n int) *physical.ShuffleWriter {
	return &physical.ShuffleWriter{Input: in, JobID: job, StageID: id, N: n, Compression: physical.CompressLZ4,
		Keys: []physical.Expr{&physical.Column{Index: 0, Name: "k", Type: arrow.PrimitiveTypes.Int64}}}
}

func unresolved(id, parts int) *physical.UnresolvedShuffle {
	return &physical.UnresolvedShuffle{StageID: id, OutSchema: testSchema, Partitions: parts}
}

// chain: stage 1 scans 2 partitions and hashes into 2; stage 2 (final) reads them.
func chain(job string) []plannedStage {
	return []plannedStage{
		{ID: 1, Plan: hashWriter(job, 1, scan(2), 2)},
		{ID: 2, Plan: &physical.ShuffleWriter{Input: unresolved(1, 2), JobID: job, StageID: 2, Compression: physical.CompressLZ4}, Inputs: []int{1}, Final: true},
	}
}

// diamond: stages 1 and 2 scan independently; stage 3 (final) reads both.
func diamond(job string) []plannedStage {
	return []plannedStage{
		{ID: 1, Plan: hashWriter(job, 1, scan(2), 2)},
		{ID: 2, Plan: hashWriter(job, 2, scan(2), 2)},
		{ID: 3, Plan: &physical.ShuffleWriter{Input: &physical.Union{Inputs: []physical.Plan{unresolved(1, 2), unresolved(2, 2)}}, JobID: job, StageID: 3, Compression: physical.CompressLZ4}, Inputs: []int{1, 2}, Final: true},
	}
}

func (h *harness) submit(job string, stages []plannedStage) {
	h.t.Helper()
	reply := make(chan error, 1)
	acts := h.send(evSubmit{jobID: job, session: "s", reply: reply})
	if err := <-reply; err != nil {
		h.t.Fatal(err)
	}
	if len(ofType[actPlan](acts)) != 1 {
		h.t.Fatalf("submit: want one plan action, got %v", acts)
	}
	h.send(evPlanned{jobID: job, stages: stages})
}

func ofType[T any](acts []any) []T {
	var out []T
	for _, a := range acts {
		if x, ok := a.(T); ok {
			out = append(out, x)
		}
	}
	return out
}

// launched lists "stage/partition@executor#attempt" for the launch actions.
func launched(acts []any) []string {
	var out []string
	for _, l := range ofType[actLaunch](acts) {
		for _, td := range l.tasks {
			out = append(out, fmt.Sprintf("%d/%d@%s#%d", td.Id.StageId, td.Id.Partition, l.executorID, td.Id.Attempt))
		}
	}
	slices.Sort(out)
	return out
}

func (h *harness) task(job string, stage, part int) *task {
	return h.c.jobs[job].stages[stage].tasks[part]
}

// succeed reports task (stage, part) successful, writing outN output
// partitions on the executor running it.
func (h *harness) succeed(job string, stage, part, outN int) []any {
	h.t.Helper()
	t := h.task(job, stage, part)
	if t.state != taskRunning {
		h.t.Fatalf("task %d/%d is %s, not running", stage, part, t.state)
	}
	var locs []*rpc.PartitionLocation
	outs := make([]int, outN)
	for o := range outs {
		outs[o] = o
	}
	if outN == 0 { // passthrough: map partition p writes output partition p
		outs = []int{part}
	}
	for _, o := range outs {
		locs = append(locs, &rpc.PartitionLocation{JobId: job, StageId: int32(stage), OutputPartition: int32(o), MapPartition: int32(part),
			Executor: &rpc.ExecutorMeta{Id: t.executor, Host: "127.0.0.1", FlightPort: 1000}, Rows: 10, Bytes: 100})
	}
	return h.send(evTaskStatus{executorID: t.executor, statuses: []*rpc.TaskStatus{{
		Id:    &rpc.TaskId{JobId: job, StageId: int32(stage), Partition: int32(part), Attempt: int32(t.attempt)},
		State: rpc.TaskState_TASK_SUCCESSFUL, ExecutorId: t.executor, Locations: locs,
	}}})
}

func (h *harness) fail(job string, stage, part int, kind qerr.Kind, ff *rpc.FetchFailure) []any {
	h.t.Helper()
	t := h.task(job, stage, part)
	return h.send(evTaskStatus{executorID: t.executor, statuses: []*rpc.TaskStatus{{
		Id:    &rpc.TaskId{JobId: job, StageId: int32(stage), Partition: int32(part), Attempt: int32(t.attempt)},
		State: rpc.TaskState_TASK_FAILED, ExecutorId: t.executor, Error: "boom", ErrorKind: int32(kind), FetchFailure: ff,
	}}})
}

func (h *harness) jobState(job string) rpc.JobState { return h.c.jobs[job].state }

func wantStrings(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("%s:\n got  %v\n want %v", what, got, want)
	}
}

func TestStageResolutionOrder(t *testing.T) {
	h := newHarness(t, Config{})
	h.register("e1", 2)
	h.register("e2", 2)
	h.submit("j", diamond("j"))
	wantStrings(t, "first launches (bias fills e1 first)", launched(h.acts), []string{"1/0@e1#0", "1/1@e1#0", "2/0@e2#0", "2/1@e2#0"})
	if s := h.c.jobs["j"].stages[3]; s.state != stageUnresolved {
		t.Fatalf("stage 3 is %s before its inputs ran", s.state)
	}
	h.succeed("j", 1, 0, 2)
	h.succeed("j", 1, 1, 2)
	h.succeed("j", 2, 0, 2)
	if s := h.c.jobs["j"].stages[3]; s.state != stageUnresolved {
		t.Fatalf("stage 3 is %s with stage 2 unfinished", s.state)
	}
	acts := h.succeed("j", 2, 1, 2)
	wantStrings(t, "stage 3 launches", launched(acts), []string{"3/0@e1#0", "3/1@e1#0", "3/2@e2#0", "3/3@e2#0"})
	s3 := h.c.jobs["j"].stages[3]
	readers := 0
	var walk func(physical.Plan)
	walk = func(p physical.Plan) {
		switch r := p.(type) {
		case *physical.UnresolvedShuffle:
			t.Fatalf("stage 3 still has an unresolved input: %s", r)
		case *physical.ShuffleReader:
			readers++
			if len(r.Locations) != 2 || len(r.Locations[0]) != 2 || r.Locations[0][1].MapPartition != 1 {
				t.Fatalf("reader of stage %d: locations %v", r.StageID, r.Locations)
			}
		}
		for _, c := range p.Children() {
			walk(c)
		}
	}
	walk(s3.resolved)
	if readers != 2 {
		t.Fatalf("stage 3 has %d readers, want 2", readers)
	}
	for p := range 4 {
		h.succeed("j", 3, p, 0)
	}
	st := h.c.status(h.c.jobs["j"])
	if st.State != rpc.JobState_JOB_SUCCESSFUL || st.StagesDone != 3 || st.TasksDone != 8 || st.TasksTotal != 8 {
		t.Fatalf("status %v", st)
	}
	if len(st.Result) != 4 || len(st.Result[2].Locations) != 1 || st.Result[2].Locations[0].MapPartition != 2 {
		t.Fatalf("result locations %v", st.Result)
	}
	schema, err := flight.DeserializeSchema(st.ResultSchema, memory.DefaultAllocator)
	if err != nil || !schema.Equal(testSchema) {
		t.Fatalf("result schema %v, %v", schema, err)
	}
}

func TestTaskRetriesAndLimit(t *testing.T) {
	h := newHarness(t, Config{TaskRetries: 2})
	h.register("e1", 1)
	h.register("e2", 2)
	h.submit("j", chain("j"))
	wantStrings(t, "launches", launched(h.acts), []string{"1/0@e1#0", "1/1@e2#0"})
	// The retry goes to an executor the task has not failed on.
	acts := h.fail("j", 1, 0, qerr.IO, nil)
	wantStrings(t, "retry", launched(acts), []string{"1/0@e2#1"})
	// Failed on both: any free slot will do.
	acts = h.fail("j", 1, 0, qerr.IO, nil)
	wantStrings(t, "second retry", launched(acts), []string{"1/0@e1#2"})
	if h.jobState("j") != rpc.JobState_JOB_RUNNING {
		t.Fatalf("job %s after 2 failures with 2 retries", h.jobState("j"))
	}
	h.fail("j", 1, 0, qerr.IO, nil)
	j := h.c.jobs["j"]
	if j.state != rpc.JobState_JOB_FAILED || j.errKind != qerr.IO || !strings.Contains(j.errMsg, "boom") {
		t.Fatalf("job %s kind %s: %s", j.state, j.errKind, j.errMsg)
	}
	for _, e := range h.c.executors {
		if e.running != 0 {
			t.Fatalf("executor %s still has %d running tasks", e.meta.ID, e.running)
		}
	}
}

func TestDeterministicFailureIsNotRetried(t *testing.T) {
	for _, kind := range []qerr.Kind{qerr.Execution, qerr.Resources} {
		t.Run(kind.String(), func(t *testing.T) { testNotRetried(t, kind) })
	}
}

// testNotRetried: a task failing with kind (an error of the query, or its
// memory limit) ends the job at once, however many retries are allowed.
func testNotRetried(t *testing.T, kind qerr.Kind) {
	h := newHarness(t, Config{TaskRetries: 5})
	h.register("e1", 4)
	h.submit("j", chain("j"))
	acts := h.fail("j", 1, 0, kind, nil)
	if h.jobState("j") != rpc.JobState_JOB_FAILED || h.c.jobs["j"].errKind != kind {
		t.Fatalf("job %s", h.jobState("j"))
	}
	// The other running task is cancelled and the job's data removed.
	wantStrings(t, "cancelled", cancelled(acts), []string{"1/1@e1"})
	if rm := ofType[actRemove](acts); len(rm) != 1 || !slices.Equal(rm[0].req.StageIds, []int32{1, 2}) {
		t.Fatalf("remove actions %v", rm)
	}
}

func cancelled(acts []any) []string {
	var out []string
	for _, c := range ofType[actCancel](acts) {
		for _, id := range c.tasks {
			out = append(out, fmt.Sprintf("%d/%d@%s", id.StageId, id.Partition, c.executorID))
		}
	}
	slices.Sort(out)
	return out
}

func TestStaleStatusIgnored(t *testing.T) {
	h := newHarness(t, Config{})
	h.register("e1", 4)
	h.submit("j", chain("j"))
	h.fail("j", 1, 0, qerr.IO, nil) // attempt 0 fails, attempt 1 runs
	h.send(evTaskStatus{executorID: "e1", statuses: []*rpc.TaskStatus{{
		Id: &rpc.TaskId{JobId: "j", StageId: 1, Partition: 0, Attempt: 0}, State: rpc.TaskState_TASK_SUCCESSFUL,
	}}})
	if tk := h.task("j", 1, 0); tk.state != taskRunning || tk.attempt != 1 {
		t.Fatalf("stale status applied: %s attempt %d", tk.state, tk.attempt)
	}
}

func TestFetchFailureRerunsOnlyLostMapPartitions(t *testing.T) {
	h := newHarness(t, Config{})
	h.register("e1", 1)
	h.register("e2", 1)
	h.submit("j", chain("j"))
	h.succeed("j", 1, 0, 2) // output on e1
	h.succeed("j", 1, 1, 2) // output on e2
	wantStrings(t, "stage 2", launched(h.acts)[2:], []string{"2/0@e1#0", "2/1@e2#0"})

	// Stage 2 partition 0 cannot fetch map partition 1 from e2.
	acts := h.fail("j", 2, 0, qerr.IO, &rpc.FetchFailure{ExecutorId: "e2", JobId: "j", StageId: 1, MapPartition: 1})
	s1, s2 := h.c.jobs["j"].stages[1], h.c.jobs["j"].stages[2]
	if s2.state != stageUnresolved || s1.state != stageRunning || s1.rollbacks != 1 {
		t.Fatalf("after fetch failure: stage 1 %s (rollbacks %d), stage 2 %s", s1.state, s1.rollbacks, s2.state)
	}
	if s1.tasks[0].state != taskSuccessful {
		t.Fatalf("map partition 0 (on e1) was re-run: %s", s1.tasks[0].state)
	}
	wantStrings(t, "cancelled consumer tasks", cancelled(acts), []string{"2/1@e2"})
	// Only map partition 1 runs again (a slot on e1 freed by the failure).
	wantStrings(t, "rerun", launched(acts), []string{"1/1@e1#1"})
	if tk := h.task("j", 2, 0); tk.failures != 0 {
		t.Fatalf("a fetch failure counted against the consumer task: %d", tk.failures)
	}
	acts = h.succeed("j", 1, 1, 2)
	wantStrings(t, "stage 2 again", launched(acts), []string{"2/0@e1#1", "2/1@e2#1"})
	for _, loc := range s2.resolved.(*physical.ShuffleWriter).Input.(*physical.ShuffleReader).Locations[1] {
		if loc.MapPartition == 1 && loc.Executor.ID != "e1" {
			t.Fatalf("re-resolved stage 2 reads map 1 from %s", loc.Executor.ID)
		}
	}
	h.succeed("j", 2, 0, 0)
	h.succeed("j", 2, 1, 0)
	if h.jobState("j") != rpc.JobState_JOB_SUCCESSFUL {
		t.Fatalf("job %s", h.jobState("j"))
	}
}

func TestFetchFailureStageRetryLimit(t *testing.T) {
	h := newHarness(t, Config{StageRetries: 1})
	h.register("e1", 2)
	h.submit("j", chain("j"))
	h.succeed("j", 1, 0, 2)
	h.succeed("j", 1, 1, 2)
	ff := &rpc.FetchFailure{ExecutorId: "e1", JobId: "j", StageId: 1, MapPartition: 0}
	h.fail("j", 2, 0, qerr.IO, ff)
	h.succeed("j", 1, 0, 2)
	h.succeed("j", 1, 1, 2)
	h.fail("j", 2, 0, qerr.IO, ff)
	if j := h.c.jobs["j"]; j.state != rpc.JobState_JOB_FAILED || !strings.Contains(j.errMsg, "lost its output") {
		t.Fatalf("job %s: %s", j.state, j.errMsg)
	}
}

func TestExecutorLostReschedulesAndRecomputes(t *testing.T) {
	h := newHarness(t, Config{HeartbeatTimeout: time.Second})
	h.register("e1", 1)
	h.register("e2", 1)
	h.submit("j", chain("j"))
	h.succeed("j", 1, 0, 2) // on e1, freeing e1: stage 1 is not done
	h.succeed("j", 1, 1, 2) // on e2
	// Stage 2: partition 0 on e1, partition 1 on e2; e1 finishes its part.
	h.succeed("j", 2, 0, 0)
	// e2 stops heartbeating; e1 keeps going.
	h.clock.advance(800 * time.Millisecond)
	h.send(evHeartbeat{executorID: "e1", reply: make(chan bool, 1)})
	h.clock.advance(400 * time.Millisecond)
	acts := h.send(evTick{now: h.clock.now()})
	if _, ok := h.c.executors["e2"]; ok {
		t.Fatal("e2 not lost")
	}
	if len(ofType[actDropExecutor](acts)) != 1 {
		t.Fatalf("no drop action: %v", acts)
	}
	// Stage 1's output on e2 is still needed by stage 2: map partition 1
	// re-runs on e1; stage 2 partition 1 waits for it.
	wantStrings(t, "after loss", launched(acts), []string{"1/1@e1#1"})
	if s2 := h.c.jobs["j"].stages[2]; s2.state != stageUnresolved || s2.tasks[0].state != taskSuccessful {
		t.Fatalf("stage 2 %s, task 0 %s", s2.state, s2.tasks[0].state)
	}
	acts = h.succeed("j", 1, 1, 2)
	wantStrings(t, "stage 2 rerun", launched(acts), []string{"2/1@e1#1"})
	h.succeed("j", 2, 1, 0)
	if h.jobState("j") != rpc.JobState_JOB_SUCCESSFUL {
		t.Fatalf("job %s", h.jobState("j"))
	}
	var hb = make(chan bool, 1)
	h.send(evHeartbeat{executorID: "e2", reply: hb})
	if !<-hb {
		t.Fatal("a lost executor's heartbeat must ask it to register again")
	}
}

func TestExecutorLostRunningTaskMovesElsewhere(t *testing.T) {
	h := newHarness(t, Config{HeartbeatTimeout: time.Second})
	h.register("e1", 1)
	h.register("e2", 1)
	h.submit("j", chain("j"))
	h.clock.advance(2 * time.Second)
	h.send(evHeartbeat{executorID: "e1", reply: make(chan bool, 1)})
	acts := h.send(evTick{now: h.clock.now()})
	// e1's slot is busy with 1/0; 1/1 (was on e2) waits for it.
	if tk := h.task("j", 1, 1); tk.state != taskPending || tk.attempt != 1 {
		t.Fatalf("task 1/1 %s attempt %d", tk.state, tk.attempt)
	}
	if len(launched(acts)) != 0 {
		t.Fatalf("launched on a full executor: %v", launched(acts))
	}
	acts = h.succeed("j", 1, 0, 2)
	wantStrings(t, "moved", launched(acts), []string{"1/1@e1#1"})
}

func TestCancel(t *testing.T) {
	h := newHarness(t, Config{})
	h.register("e1", 2)
	h.submit("j", chain("j"))
	reply := make(chan cancelReply, 1)
	acts := h.send(evCancel{jobID: "j", reply: reply})
	if r := <-reply; !r.found || !r.cancelled {
		t.Fatalf("reply %+v", r)
	}
	if h.jobState("j") != rpc.JobState_JOB_CANCELLED || h.c.jobs["j"].errKind != qerr.Canceled {
		t.Fatalf("job %s", h.jobState("j"))
	}
	wantStrings(t, "cancelled", cancelled(acts), []string{"1/0@e1", "1/1@e1"})
	if rm := ofType[actRemove](acts); len(rm) != 1 {
		t.Fatalf("remove %v", rm)
	}
	if h.c.executors["e1"].running != 0 {
		t.Fatal("slots not released")
	}
	// A late success of a cancelled task changes nothing.
	h.send(evTaskStatus{executorID: "e1", statuses: []*rpc.TaskStatus{{Id: &rpc.TaskId{JobId: "j", StageId: 1}, State: rpc.TaskState_TASK_SUCCESSFUL}}})
	if h.jobState("j") != rpc.JobState_JOB_CANCELLED {
		t.Fatal("late status changed a cancelled job")
	}
	h.send(evCancel{jobID: "nope", reply: reply})
	if r := <-reply; r.found {
		t.Fatal("unknown job found")
	}
}

func removed(acts []any) []string {
	var out []string
	for _, r := range ofType[actRemove](acts) {
		out = append(out, fmt.Sprintf("%s:%v pinned=%v", r.executorID, r.req.StageIds, r.req.PinnedStageIds))
	}
	slices.Sort(out)
	return out
}

func TestCleanupOnSuccess(t *testing.T) {
	h := newHarness(t, Config{FinalStageCleanupDelay: time.Minute, HeartbeatTimeout: time.Hour})
	h.register("e1", 1)
	h.register("e2", 1)
	h.submit("j", diamond("j"))
	h.succeed("j", 1, 0, 2)
	h.succeed("j", 2, 0, 2)
	h.succeed("j", 1, 1, 2)
	h.succeed("j", 2, 1, 2)
	var acts []any
	for p := range 4 {
		acts = h.succeed("j", 3, p, 0)
	}
	wantStrings(t, "intermediate cleanup", removed(acts), []string{"e1:[1 2] pinned=[]", "e2:[1 2] pinned=[]"})
	h.clock.advance(59 * time.Second)
	if acts := h.send(evTick{now: h.clock.now()}); len(removed(acts)) != 0 {
		t.Fatalf("final stage removed early: %v", removed(acts))
	}
	h.clock.advance(2 * time.Second)
	acts = h.send(evTick{now: h.clock.now()})
	wantStrings(t, "final cleanup", removed(acts), []string{"e1:[3] pinned=[]", "e2:[3] pinned=[]"})
}

func TestCleanupSkipsPinned(t *testing.T) {
	pins := map[[2]string]bool{{"j", "1"}: true}
	h := newHarness(t, Config{FinalStageCleanupDelay: time.Second, Pinned: func() map[[2]string]bool { return pins }})
	h.register("e1", 4)
	h.submit("j", chain("j"))
	h.succeed("j", 1, 0, 2)
	h.succeed("j", 1, 1, 2)
	h.succeed("j", 2, 0, 0)
	acts := h.succeed("j", 2, 1, 0)
	if r := removed(acts); len(r) != 0 {
		t.Fatalf("pinned intermediate stage removed: %v", r)
	}
	// The final stage gets pinned while its delay runs: it survives too.
	pins[[2]string{"j", "2"}] = true
	h.clock.advance(2 * time.Second)
	if r := removed(h.send(evTick{now: h.clock.now()})); len(r) != 0 {
		t.Fatalf("pinned final stage removed: %v", r)
	}

	// A failed job keeps its pinned stages too, and tells the executor.
	pins = map[[2]string]bool{{"k", "1"}: true}
	h.submit("k", chain("k"))
	acts = h.fail("k", 1, 0, qerr.Execution, nil)
	wantStrings(t, "failed job cleanup", removed(acts), []string{"e1:[2] pinned=[1]"})

	// A writer marked Pinned (a cache materialization) is kept without the hook.
	pins = nil
	st := chain("m")
	st[1].Plan.Pinned = true
	h.submit("m", st)
	acts = h.fail("m", 1, 0, qerr.Execution, nil)
	wantStrings(t, "pinned writer", removed(acts), []string{"e1:[1] pinned=[2]"})
}

func TestGracePeriodWithoutExecutors(t *testing.T) {
	h := newHarness(t, Config{ExecutorGracePeriod: 5 * time.Second})
	h.submit("j", chain("j"))
	h.clock.advance(4 * time.Second)
	h.send(evTick{now: h.clock.now()})
	if h.jobState("j") != rpc.JobState_JOB_RUNNING {
		t.Fatalf("job %s before the grace period", h.jobState("j"))
	}
	h.clock.advance(2 * time.Second)
	h.send(evTick{now: h.clock.now()})
	j := h.c.jobs["j"]
	if j.state != rpc.JobState_JOB_FAILED || !strings.Contains(j.errMsg, "no executors available for 5s") {
		t.Fatalf("job %s: %s", j.state, j.errMsg)
	}
}

func TestLaunchFailuresLoseExecutor(t *testing.T) {
	h := newHarness(t, Config{TaskRetries: 10})
	h.register("e1", 2)
	h.submit("j", chain("j"))
	for i := range maxLaunchFailures {
		var ids []*rpc.TaskId
		for _, l := range ofType[actLaunch](h.acts) {
			for _, td := range l.tasks {
				ids = append(ids, td.Id)
			}
		}
		h.acts = nil
		h.send(evLaunchFailed{executorID: "e1", tasks: ids, err: fmt.Errorf("connection refused %d", i)})
	}
	if _, ok := h.c.executors["e1"]; ok {
		t.Fatal("unreachable executor still registered")
	}
	// The tasks never started: their retry budgets are untouched.
	if tk := h.task("j", 1, 0); tk.failures != 0 || tk.attempt != maxLaunchFailures || tk.state != taskPending {
		t.Fatalf("task %s failures %d attempt %d", tk.state, tk.failures, tk.attempt)
	}
}

func TestPolicies(t *testing.T) {
	h := newHarness(t, Config{Policy: PolicyRoundRobin})
	h.register("e1", 2)
	h.register("e2", 2)
	h.submit("j", chain("j"))
	wantStrings(t, "round robin", launched(h.acts), []string{"1/0@e1#0", "1/1@e2#0"})

	// locality: a task goes where most of its input bytes are.
	h = newHarness(t, Config{Policy: PolicyLocality})
	h.register("e1", 4)
	h.register("e2", 4)
	h.submit("j", chain("j"))
	h.succeed("j", 1, 0, 2)
	h.succeed("j", 1, 1, 2)
	s2 := h.c.jobs["j"].stages[2]
	r := s2.resolved.(*physical.ShuffleWriter).Input.(*physical.ShuffleReader)
	if b := inputBytes(s2.resolved, 0); b["e1"] != 200 || b["e2"] != 0 {
		t.Fatalf("input bytes %v", b)
	}
	r.Locations[1][1].Executor.ID = "e2"
	r.Locations[1][1].Bytes = 5000
	if e := h.c.pick(h.c.executorsBySeq(), s2, &task{partition: 1}); e.meta.ID != "e2" {
		t.Fatalf("locality picked %s for partition 1", e.meta.ID)
	}
	if e := h.c.pick(h.c.executorsBySeq(), s2, &task{partition: 0}); e.meta.ID != "e1" {
		t.Fatalf("locality picked %s for partition 0", e.meta.ID)
	}
}

func TestWatchers(t *testing.T) {
	h := newHarness(t, Config{})
	h.register("e1", 4)
	h.submit("j", chain("j"))
	reply := make(chan watchReply, 1)
	h.send(evWatch{jobID: "j", reply: reply})
	w := <-reply
	if st := <-w.ch; st.State != rpc.JobState_JOB_RUNNING {
		t.Fatalf("first status %v", st)
	}
	h.succeed("j", 1, 0, 2)
	if st := <-w.ch; st.TasksDone != 1 {
		t.Fatalf("status %v", st)
	}
	h.succeed("j", 1, 1, 2)
	h.succeed("j", 2, 0, 0)
	h.succeed("j", 2, 1, 0) // coalesced: only the latest (terminal) status is kept
	st, ok := <-w.ch
	if !ok || st.State != rpc.JobState_JOB_SUCCESSFUL {
		t.Fatalf("terminal status %v %v", st, ok)
	}
	if _, ok := <-w.ch; ok {
		t.Fatal("watcher channel not closed after the terminal status")
	}
	h.send(evWatch{jobID: "nope", reply: reply})
	if w := <-reply; w.err == nil {
		t.Fatal("watching an unknown job")
	}
}

func TestSubmitErrors(t *testing.T) {
	h := newHarness(t, Config{})
	reply := make(chan error, 1)
	h.send(evSubmit{jobID: "x", session: "unknown", reply: reply})
	if err := <-reply; qerr.KindOf(err) != qerr.Plan {
		t.Fatalf("unknown session: %v", err)
	}
	h.send(evSubmit{jobID: "y", session: "s", settings: map[string]string{"quiver.target_partitions": "zero"}, reply: reply})
	<-reply
	if h.jobState("y") != rpc.JobState_JOB_FAILED {
		t.Fatalf("bad setting: job %s", h.jobState("y"))
	}
	// A planning error fails the job with that error's kind.
	h.send(evSubmit{jobID: "z", session: "s", reply: reply})
	<-reply
	h.send(evPlanned{jobID: "z", err: qerr.NotImplementedf("planner: nope")})
	if j := h.c.jobs["z"]; j.state != rpc.JobState_JOB_FAILED || j.errKind != qerr.NotImplemented {
		t.Fatalf("job %s kind %s", j.state, j.errKind)
	}
}

// readersOf returns the executors the ShuffleReaders of stage id in p name,
// and whether p still has an UnresolvedShuffle of it.
func readersOf(p physical.Plan, id int) (execs map[string]bool, unresolvedLeft bool) {
	execs = map[string]bool{}
	var walk func(physical.Plan)
	walk = func(n physical.Plan) {
		switch r := n.(type) {
		case *physical.ShuffleReader:
			if r.StageID == id {
				for _, part := range r.Locations {
					for _, l := range part {
						execs[l.Executor.ID] = true
					}
				}
			}
		case *physical.UnresolvedShuffle:
			if r.StageID == id {
				unresolvedLeft = true
			}
		}
		for _, c := range n.Children() {
			walk(c)
		}
	}
	walk(p)
	return execs, unresolvedLeft
}

// An executor holding the output of two input stages is lost: both are
// recomputed and the consumer re-resolves with fresh locations for both.
func TestExecutorLostWithTwoLostInputs(t *testing.T) {
	h := newHarness(t, Config{HeartbeatTimeout: time.Second})
	h.register("e1", 1)
	h.register("e2", 3)
	h.submit("j", diamond("j"))
	wantStrings(t, "placement", launched(h.acts), []string{"1/0@e1#0", "1/1@e2#0", "2/0@e2#0", "2/1@e2#0"})
	h.succeed("j", 1, 0, 2)
	h.succeed("j", 1, 1, 2)
	h.succeed("j", 2, 0, 2)
	h.succeed("j", 2, 1, 2)
	s3 := h.c.jobs["j"].stages[3]
	if s3.state != stageRunning {
		t.Fatalf("stage 3 %s", s3.state)
	}
	h.clock.advance(1500 * time.Millisecond)
	h.send(evHeartbeat{executorID: "e1", reply: make(chan bool, 1)})
	acts := h.send(evTick{now: h.clock.now()})
	if s3.state != stageUnresolved {
		t.Fatalf("stage 3 %s after losing its inputs", s3.state)
	}
	for _, in := range []int{1, 2} {
		if _, left := readersOf(s3.resolved, in); !left {
			t.Fatalf("stage 3 still reads stage %d's lost output", in)
		}
	}
	// e1's one slot was running stage 3; it is cancelled, so the lost map
	// partitions re-run there one at a time, in stage order.
	wantStrings(t, "rerun", launched(acts), []string{"1/1@e1#1"})
	wantStrings(t, "rerun", launched(h.succeed("j", 1, 1, 2)), []string{"2/0@e1#1"})
	wantStrings(t, "rerun", launched(h.succeed("j", 2, 0, 2)), []string{"2/1@e1#1"})
	h.succeed("j", 2, 1, 2)
	for _, in := range []int{1, 2} {
		if ex, left := readersOf(s3.resolved, in); left || ex["e2"] || !ex["e1"] {
			t.Fatalf("re-resolved stage 3 reads stage %d from %v (unresolved left: %v)", in, ex, left)
		}
	}
	for p := range 4 {
		h.succeed("j", 3, p, 0)
	}
	if h.jobState("j") != rpc.JobState_JOB_SUCCESSFUL {
		t.Fatalf("job %s", h.jobState("j"))
	}
}

// Ended jobs leave the scheduling order (activeJobs) at once, while
// jobOrder keeps them for status until finishedJobRetention; a job still
// running stays in both, in submission order.
func TestActiveJobsSkipEnded(t *testing.T) {
	h := newHarness(t, Config{HeartbeatTimeout: time.Hour})
	h.register("e1", 4)
	h.submit("a", chain("a"))
	h.submit("b", chain("b"))
	h.submit("c", chain("c"))
	for _, job := range []string{"a", "c"} {
		h.succeed(job, 1, 0, 2)
		h.succeed(job, 1, 1, 2)
		h.succeed(job, 2, 0, 0)
		h.succeed(job, 2, 1, 0)
		if s := h.jobState(job); s != rpc.JobState_JOB_SUCCESSFUL {
			t.Fatalf("job %s is %s", job, s)
		}
	}
	wantStrings(t, "active jobs", h.c.activeJobs(), []string{"b"})
	wantStrings(t, "jobs kept", h.c.jobOrder, []string{"a", "b", "c"})
	if len(h.c.active) != 1 {
		t.Errorf("the active list still holds %v", h.c.active)
	}
}

// TestCleanupReachesRestartedExecutor: an executor that registers while a
// job is still live (restarted on a lost executor's work dir, it kept that
// job's directories) is sent the job's cleanup: at once for the stages an
// ended job no longer needs, and with the delayed cleanup of its result.
func TestCleanupReachesRestartedExecutor(t *testing.T) {
	h := newHarness(t, Config{FinalStageCleanupDelay: time.Minute, HeartbeatTimeout: time.Hour})
	h.register("e1", 1)
	h.register("e2", 1)
	h.submit("j", diamond("j"))
	h.succeed("j", 1, 0, 2)
	h.succeed("j", 2, 0, 2)
	h.succeed("j", 1, 1, 2)
	h.succeed("j", 2, 1, 2)
	for p := range 4 {
		h.succeed("j", 3, p, 0)
	}
	acts := h.register("e3", 1)
	wantStrings(t, "cleanup on registration", removed(acts), []string{"e3:[1 2] pinned=[]"})
	h.clock.advance(61 * time.Second)
	acts = h.send(evTick{now: h.clock.now()})
	wantStrings(t, "final cleanup", removed(acts), []string{"e1:[3] pinned=[]", "e2:[3] pinned=[]", "e3:[3] pinned=[]"})
}
