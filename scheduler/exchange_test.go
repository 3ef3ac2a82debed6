package scheduler

import (
	"strings"
	"testing"

	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
	"github.com/quiverdb/quiver/rpc"
)

// State-machine tests of the exchange mode: which jobs are planned as one
// whole stage with in-memory exchanges, and how such a stage's single task
// is launched, retried and completed.

// submitSettings submits job in session "s" with settings and returns its
// plan action (nil if the job failed or waits).
func (h *harness) submitSettings(job string, settings map[string]string) *actPlan {
	h.t.Helper()
	reply := make(chan error, 1)
	acts := h.send(evSubmit{jobID: job, session: "s", settings: settings, reply: reply})
	if err := <-reply; err != nil {
		h.t.Fatal(err)
	}
	for _, a := range ofType[actPlan](acts) {
		if a.jobID == job {
			return &a
		}
	}
	return nil
}

func TestExchangeModeChoice(t *testing.T) {
	h := newHarness(t, Config{})
	if a := h.submitSettings("none", nil); a == nil || a.inMemory {
		t.Fatalf("no executor alive: plan %+v, want shuffle stages", a)
	}
	h.register("e1", 2)
	if a := h.submitSettings("auto", nil); a == nil || !a.inMemory {
		t.Fatalf("one executor, default mode: plan %+v, want in-memory", a)
	}
	if a := h.submitSettings("auto2", map[string]string{"quiver.exchange_mode": "auto"}); a == nil || !a.inMemory {
		t.Fatalf("one executor, auto: plan %+v, want in-memory", a)
	}
	if a := h.submitSettings("shuffle", map[string]string{"quiver.exchange_mode": "shuffle"}); a == nil || a.inMemory {
		t.Fatalf("one executor, shuffle: plan %+v, want shuffle stages", a)
	}
	h.register("e2", 2)
	if a := h.submitSettings("two", nil); a == nil || a.inMemory {
		t.Fatalf("two executors: plan %+v, want shuffle stages", a)
	}
	if a := h.submitSettings("bad", map[string]string{"quiver.exchange_mode": "memory"}); a != nil {
		t.Fatalf("bad mode was planned: %+v", a)
	}
	j := h.c.jobs["bad"]
	if j.state != rpc.JobState_JOB_FAILED || j.errKind != qerr.Plan || !strings.Contains(j.errMsg, "quiver.exchange_mode") || !strings.Contains(j.errMsg, "shuffle") {
		t.Fatalf("bad mode: job %s kind %s: %s", j.state, j.errKind, j.errMsg)
	}
}

// whole is the one-stage graph of an in-memory job: parts partitions run
// by one task, a passthrough final writer.
func whole(job string, parts int) []plannedStage {
	w := &physical.ShuffleWriter{Input: &physical.Repartition{Input: scan(parts), N: parts}, JobID: job, StageID: 1, Compression: physical.CompressLZ4}
	return []plannedStage{{ID: 1, Plan: w, Final: true, Whole: true}}
}

// succeedWhole reports the whole task of job successful with one file per
// output partition, written by map partition p for output p.
func (h *harness) succeedWhole(job string, parts int) []any {
	h.t.Helper()
	t := h.task(job, 1, 0)
	if t.state != taskRunning {
		h.t.Fatalf("whole task is %s, not running", t.state)
	}
	var locs []*rpc.PartitionLocation
	for p := range parts {
		locs = append(locs, &rpc.PartitionLocation{JobId: job, StageId: 1, OutputPartition: int32(p), MapPartition: int32(p),
			Executor: &rpc.ExecutorMeta{Id: t.executor, Host: "127.0.0.1", FlightPort: 1000}, Rows: 10, Bytes: 100})
	}
	return h.send(evTaskStatus{executorID: t.executor, statuses: []*rpc.TaskStatus{{
		Id:    &rpc.TaskId{JobId: job, StageId: 1, Partition: 0, Attempt: int32(t.attempt)},
		State: rpc.TaskState_TASK_SUCCESSFUL, ExecutorId: t.executor, Locations: locs,
	}}})
}

func TestWholeStageRunsAsOneTask(t *testing.T) {
	h := newHarness(t, Config{})
	h.register("e1", 2)
	h.submit("j", whole("j", 3))
	ls := ofType[actLaunch](h.acts)
	if len(ls) != 1 || len(ls[0].tasks) != 1 {
		t.Fatalf("launches %v, want one task", launched(h.acts))
	}
	td := ls[0].tasks[0]
	if !td.AllPartitions || td.Id.Partition != 0 || td.Id.StageId != 1 {
		t.Fatalf("task definition %v, want stage 1 partition 0 with all partitions", td)
	}
	st := h.c.status(h.c.jobs["j"])
	if st.StagesTotal != 1 || st.TasksTotal != 1 || st.TasksDone != 0 {
		t.Fatalf("running status %v", st)
	}
	h.succeedWhole("j", 3)
	st = h.c.status(h.c.jobs["j"])
	if st.State != rpc.JobState_JOB_SUCCESSFUL || st.TasksDone != 1 || st.TasksTotal != 1 {
		t.Fatalf("status %v", st)
	}
	if len(st.Result) != 3 || len(st.Result[2].Locations) != 1 || st.Result[2].Locations[0].MapPartition != 2 {
		t.Fatalf("result locations %v", st.Result)
	}
	if info := h.c.jobInfo(h.c.jobs["j"], true); len(info.Stages) != 1 || !info.Stages[0].Whole || len(info.Stages[0].Tasks) != 1 {
		t.Fatalf("REST job info %+v", info)
	}
}

func TestWholeStageRetriesAndExecutorLoss(t *testing.T) {
	h := newHarness(t, Config{TaskRetries: 1, Logf: func(string, ...any) {}})
	h.register("e1", 1)
	h.submit("j", whole("j", 2))
	// A retryable failure runs the whole task again.
	acts := h.fail("j", 1, 0, qerr.IO, nil)
	wantStrings(t, "retry", launched(acts), []string{"1/0@e1#1"})
	// The executor dies: the task waits for another one and runs there.
	h.c.executorLost("e1", "test")
	h.c.takeActions()
	if tk := h.task("j", 1, 0); tk.state != taskPending || tk.attempt != 2 {
		t.Fatalf("after executor loss the task is %s attempt %d", tk.state, tk.attempt)
	}
	acts = h.register("e2", 4)
	wantStrings(t, "relaunch", launched(acts), []string{"1/0@e2#2"})
	if !ofType[actLaunch](acts)[0].tasks[0].AllPartitions {
		t.Fatal("relaunched task does not run all partitions")
	}
	h.succeedWhole("j", 2)
	if h.jobState("j") != rpc.JobState_JOB_SUCCESSFUL {
		t.Fatalf("job %s: %s", h.jobState("j"), h.c.jobs["j"].errMsg)
	}
}

func TestWholeStageMustBeAlone(t *testing.T) {
	h := newHarness(t, Config{Logf: func(string, ...any) {}})
	h.register("e1", 1)
	st := chain("j")
	st[1].Whole = true
	h.submit("j", st)
	if j := h.c.jobs["j"]; j.state != rpc.JobState_JOB_FAILED || j.errKind != qerr.Internal {
		t.Fatalf("job with a whole stage among others: %s %s", j.state, j.errMsg)
	}
}

// TestWholeStageCacheBuildPinned: a cache build planned in memory pins its
// one (final) stage, which cleanup then keeps.
func TestWholeStageCacheBuildPinned(t *testing.T) {
	h := newHarness(t, Config{Logf: func(string, ...any) {}})
	h.register("e1", 2)
	h.submitPlan("q", cacheNode("c1", nil), nil)
	b := h.builder(key("c1"))
	a := h.planOf(b)
	if !a.inMemory || !a.pinFinal {
		t.Fatalf("build plan action %+v, want in-memory and pinned", a)
	}
	st := whole(b, 2)
	st[0].Plan.Pinned = true
	h.send(evPlanned{jobID: b, gen: a.gen, stages: st})
	h.succeedWhole(b, 2)
	if h.jobState(b) != rpc.JobState_JOB_SUCCESSFUL {
		t.Fatalf("build %s: %s", h.jobState(b), h.c.jobs[b].errMsg)
	}
	e := h.entry("c1")
	if e.JobID != b || e.StageID != 1 || len(e.Locations) != 2 {
		t.Fatalf("entry %+v", e)
	}
	h.later(h.c.cfg.FinalStageCleanupDelay * 2)
	h.checkPinsKept()
}

// TestPlanningSettings: what a job is planned with comes from the settings
// the client sent, and where it sent none, from the scheduler's defaults.
func TestPlanningSettings(t *testing.T) {
	h := newHarness(t, Config{})
	h.register("e1", 3)
	h.register("e2", 2)
	a := h.submitSettings("default", nil)
	if a == nil || a.targetPartitions != 5 || a.compression != physical.CompressLZ4 {
		t.Fatalf("no settings: plan %+v, want the executors' 5 cores and lz4", a)
	}
	a = h.submitSettings("set", map[string]string{"quiver.target_partitions": "7", "quiver.shuffle_compression": "zstd"})
	if a == nil || a.targetPartitions != 7 || a.compression != physical.CompressZstd {
		t.Fatalf("settings sent: plan %+v, want 7 partitions and zstd", a)
	}
	for name, bad := range map[string]string{"quiver.shuffle_compression": "gzip", "quiver.target_partitions": "0", "quiver.no_such": "1"} {
		if a := h.submitSettings("bad "+name, map[string]string{name: bad}); a != nil {
			t.Fatalf("%s = %s was planned: %+v", name, bad, a)
		}
		j := h.c.jobs["bad "+name]
		if j.state != rpc.JobState_JOB_FAILED || j.errKind != qerr.Plan || !strings.Contains(j.errMsg, "scheduler: ") ||
			!strings.Contains(j.errMsg, name) || (name != "quiver.no_such" && !strings.Contains(j.errMsg, `"`+bad+`"`)) {
			t.Errorf("%s = %s: job %s kind %s: %s", name, bad, j.state, j.errKind, j.errMsg)
		}
	}
}
