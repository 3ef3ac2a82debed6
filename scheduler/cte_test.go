package scheduler

import (
	"testing"
	"time"

	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/rpc"
)

// sharedStage: stage 1 (a shared CTE's stage) is read by stage 2 and by
// the final stage 3, which reads stage 2 too.
func sharedStage(job string) []plannedStage {
	return []plannedStage{
		{ID: 1, Plan: hashWriter(job, 1, scan(2), 2)},
		{ID: 2, Plan: hashWriter(job, 2, unresolved(1, 2), 2), Inputs: []int{1}},
		{ID: 3, Plan: &physical.ShuffleWriter{Input: &physical.Union{Inputs: []physical.Plan{unresolved(1, 2), unresolved(2, 2)}}, JobID: job, StageID: 3, Compression: physical.CompressLZ4}, Inputs: []int{1, 2}, Final: true},
	}
}

// An executor holding a shared stage's output is lost while one of its
// readers has completed and the other runs: the shared stage re-runs its
// lost map partition, and the completed reader, whose own output went with
// the executor, waits for it and reads its new output instead of the lost
// one.
func TestExecutorLostWhileSharedStageIsRead(t *testing.T) {
	h := newHarness(t, Config{HeartbeatTimeout: time.Second})
	h.register("e1", 1)
	h.register("e2", 3)
	h.submit("j", sharedStage("j"))
	wantStrings(t, "placement", launched(h.acts), []string{"1/0@e1#0", "1/1@e2#0"})
	h.succeed("j", 1, 0, 2)
	acts := h.succeed("j", 1, 1, 2)
	wantStrings(t, "stage 2", launched(acts), []string{"2/0@e1#0", "2/1@e2#0"})
	h.succeed("j", 2, 0, 2)
	acts = h.succeed("j", 2, 1, 2)
	if got := len(launched(acts)); got != 4 {
		t.Fatalf("stage 3 launched %d tasks, want 4: %v", got, launched(acts))
	}
	s2, s3 := h.c.jobs["j"].stages[2], h.c.jobs["j"].stages[3]
	if s3.state != stageRunning || s2.state != stageSuccessful {
		t.Fatalf("stage 2 %s, stage 3 %s", s2.state, s3.state)
	}

	h.clock.advance(1500 * time.Millisecond)
	h.send(evHeartbeat{executorID: "e1", reply: make(chan bool, 1)})
	acts = h.send(evTick{now: h.clock.now()})
	if _, ok := h.c.executors["e2"]; ok {
		t.Fatal("e2 not lost")
	}
	// Stage 2 must not re-run over stage 1's lost output: it waits.
	if s2.state != stageUnresolved {
		t.Fatalf("stage 2 %s after losing its input, want unresolved", s2.state)
	}
	if _, left := readersOf(s2.resolved, 1); !left {
		t.Fatal("stage 2 still reads stage 1's lost output")
	}
	if s3.state != stageUnresolved {
		t.Fatalf("stage 3 %s after losing its inputs", s3.state)
	}
	wantStrings(t, "rerun", launched(acts), []string{"1/1@e1#1"})
	acts = h.succeed("j", 1, 1, 2)
	wantStrings(t, "stage 2 rerun", launched(acts), []string{"2/1@e1#1"})
	if ex, left := readersOf(h.c.jobs["j"].stages[2].resolved, 1); left || ex["e2"] {
		t.Fatalf("stage 2 re-run reads stage 1 from %v (unresolved left: %v)", ex, left)
	}
	h.succeed("j", 2, 1, 2)
	for _, in := range []int{1, 2} {
		if ex, left := readersOf(s3.resolved, in); left || ex["e2"] || !ex["e1"] {
			t.Fatalf("re-resolved stage 3 reads stage %d from %v (unresolved left: %v)", in, ex, left)
		}
	}
	for p := range 4 {
		if tk := h.task("j", 3, p); tk.state == taskRunning {
			h.succeed("j", 3, p, 0)
		}
	}
	for p := range 4 {
		if tk := h.task("j", 3, p); tk.state == taskRunning {
			h.succeed("j", 3, p, 0)
		}
	}
	if h.jobState("j") != rpc.JobState_JOB_SUCCESSFUL {
		t.Fatalf("job %s", h.jobState("j"))
	}
}
