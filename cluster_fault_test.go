package quiver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/quiverdb/quiver"
	"github.com/quiverdb/quiver/qerr"
)

// slowQuery runs long enough (seconds) at SF 0.01 to kill an executor in
// the middle: a join, a cross join with a filter, and an aggregate, in
// several stages.
const slowQuery = `SELECT count(*) AS n, sum(a.l_quantity) AS q
FROM lineitem a JOIN orders o ON a.l_orderkey = o.o_orderkey, part p
WHERE (a.l_partkey + p.p_partkey) % 97 = 0 AND p.p_size < 10`

type jobInfo struct {
	ID         string `json:"id"`
	State      string `json:"state"`
	TasksDone  int    `json:"tasks_done"`
	TasksTotal int    `json:"tasks_total"`
	Stages     []struct {
		ID        int    `json:"id"`
		State     string `json:"state"`
		Inputs    []int  `json:"inputs"`
		Rollbacks int    `json:"rollbacks"`
		Tasks     []struct {
			Attempt  int    `json:"attempt"`
			Failures int    `json:"failures"`
			Executor string `json:"executor"`
		} `json:"tasks"`
	} `json:"stages"`
}

func getJSON(t *testing.T, url string, v any) error {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}

// waitJob polls the scheduler's REST API until cond holds for the only job
// in the list (or times out) and returns it.
func waitJob(t *testing.T, rest string, cond func(jobInfo) bool) jobInfo {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		var jobs []jobInfo
		if err := getJSON(t, "http://"+rest+"/api/jobs", &jobs); err == nil {
			for _, j := range jobs {
				if cond(j) {
					return j
				}
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("timed out waiting for a job state")
	return jobInfo{}
}

// runningExecutor polls job id until one of its stages is running with a
// task placed, and returns that task's executor id.
func runningExecutor(t *testing.T, rest, id string) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		var j jobInfo
		if err := getJSON(t, "http://"+rest+"/api/job/"+id, &j); err == nil {
			for _, st := range j.Stages {
				if st.State != "running" {
					continue
				}
				for _, task := range st.Tasks {
					if task.Executor != "" {
						return task.Executor
					}
				}
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("timed out waiting for a running task")
	return ""
}

// finishedOutputHolder returns an executor holding the output of a
// successful stage that a later stage still needs: preferably one whose
// consumer is unresolved (it will fetch from the dead executor), else one
// that also runs the consumer (its task dies, and the retry elsewhere must
// fetch the lost output again). "" if there is none yet.
func finishedOutputHolder(j jobInfo) string {
	byID := map[int]int{}
	for i, st := range j.Stages {
		byID[st.ID] = i
	}
	holders := func(id int) []string {
		var out []string
		for _, task := range j.Stages[byID[id]].Tasks {
			if task.Executor != "" {
				out = append(out, task.Executor)
			}
		}
		return out
	}
	for _, want := range []string{"unresolved", "running"} {
		for _, st := range j.Stages {
			if st.State != want {
				continue
			}
			running := map[string]bool{}
			for _, e := range holders(st.ID) {
				running[e] = true
			}
			for _, in := range st.Inputs {
				if j.Stages[byID[in]].State != "successful" {
					continue
				}
				for _, e := range holders(in) {
					if want == "unresolved" || running[e] {
						return e
					}
				}
			}
		}
	}
	return ""
}

func expectedSlow(t *testing.T) [][]string {
	t.Helper()
	local := newTPCHSession(t, quiver.WithLocalExecution())
	return sqlRows(t, local, slowQuery)
}

// runAsync runs q on s in a goroutine.
func runAsync(t *testing.T, s *quiver.Session, q string) <-chan result {
	out := make(chan result, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		df, err := s.SQL(ctx, q)
		if err != nil {
			out <- result{err: err}
			return
		}
		batches, err := df.Collect(ctx)
		if err != nil {
			out <- result{err: err}
			return
		}
		rows := render(df.Schema(), batches)
		release(batches)
		out <- result{rows: rows}
	}()
	return out
}

type result struct {
	rows [][]string
	err  error
}

func reran(j jobInfo) bool {
	for _, s := range j.Stages {
		if s.Rollbacks > 0 {
			return true
		}
		for _, task := range s.Tasks {
			if task.Attempt > 0 || task.Failures > 0 {
				return true
			}
		}
	}
	return false
}

// TestClusterKillExecutorDuringQuery kills -9 an executor while a
// multi-stage query runs: the answer is still right and lost work re-ran.
func TestClusterKillExecutorDuringQuery(t *testing.T) {
	want := expectedSlow(t)
	rest := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	c := startCluster(t, 2, "--rest", rest, "--heartbeat-timeout", "1s", "--policy", "round_robin")
	s := c.connect(t, quiver.WithTargetPartitions(4))
	res := runAsync(t, s, slowQuery)
	job := waitJob(t, rest, func(j jobInfo) bool { return j.State == "running" && j.TasksDone > 0 })
	// Kill the executor running the live stage (the slow join), so that
	// its work is lost whatever stage layout the planner chose.
	c.executorByID(t, runningExecutor(t, rest, job.ID)).kill()
	r := <-res
	if r.err != nil {
		t.Fatalf("query failed after an executor was killed: %v", r.err)
	}
	if fmt.Sprint(r.rows) != fmt.Sprint(want) {
		t.Fatalf("got %v, want %v", r.rows, want)
	}
	var detail jobInfo
	if err := getJSON(t, "http://"+rest+"/api/job/"+job.ID, &detail); err != nil {
		t.Fatal(err)
	}
	if !reran(detail) {
		t.Errorf("no task was retried and no stage rolled back after the kill: %+v", detail)
	}
}

// TestClusterKillExecutorBetweenStages kills the executor holding a
// finished stage's output before its consumer reads it: the consumer's
// fetch fails or the loss is noticed, the lost map output is recomputed,
// and the answer is right.
func TestClusterKillExecutorBetweenStages(t *testing.T) {
	want := expectedSlow(t)
	rest := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	c := startCluster(t, 2, "--rest", rest, "--heartbeat-timeout", "1s", "--policy", "round_robin")
	s := c.connect(t, quiver.WithTargetPartitions(4))
	res := runAsync(t, s, slowQuery)
	// Wait until a finished stage's output is still needed — its consumer
	// unresolved, or running on the same executor — and kill that executor,
	// whichever executors the stages landed on: the lost output must be
	// fetched again and recomputed. The queries got fast enough that killing
	// a fixed executor often hit one holding nothing still needed.
	killHolderDuringQuery(t, c, rest, res, want, finishedOutputHolder)
}

// TestClusterAllExecutorsLost drops every executor: the job fails with a
// clear error after the grace period, not a hang.
func TestClusterAllExecutorsLost(t *testing.T) {
	rest := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	c := startCluster(t, 2, "--rest", rest, "--heartbeat-timeout", "1s", "--executor-grace", "2s")
	s := c.connect(t)
	res := runAsync(t, s, slowQuery)
	waitJob(t, rest, func(j jobInfo) bool { return j.State == "running" })
	for _, e := range c.executors {
		e.kill()
	}
	select {
	case r := <-res:
		if r.err == nil {
			t.Fatal("the query succeeded with every executor dead")
		}
		if qerr.KindOf(r.err) == qerr.Internal || !strings.Contains(strings.ToLower(r.err.Error()), "executor") {
			t.Errorf("unclear error: %v (kind %v)", r.err, qerr.KindOf(r.err))
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the query hung after every executor died")
	}
}

// TestClusterUnreachableScheduler: connecting to nothing is a clear error
// within the deadline, not a hang.
func TestClusterUnreachableScheduler(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	_, err := quiver.Connect(ctx, fmt.Sprintf("127.0.0.1:%d", freePort(t)))
	if err == nil {
		t.Fatal("connected to a port nobody listens on")
	}
	if !strings.Contains(err.Error(), "scheduler") {
		t.Errorf("error does not say what: %v", err)
	}
}

// TestClusterKilledExecutorNoticedAtOnce: an executor killed with -9 is
// declared lost within seconds — its dropped connection makes the
// scheduler probe it — not at the heartbeat timeout (a minute here), and
// the next query runs on the executor that is left.
func TestClusterKilledExecutorNoticedAtOnce(t *testing.T) {
	rest := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	c := startCluster(t, 2, "--rest", rest, "--heartbeat-timeout", "60s", "--policy", "round_robin")
	s := c.connect(t, quiver.WithTargetPartitions(4))
	const q = "SELECT l_returnflag, count(*) FROM lineitem GROUP BY l_returnflag ORDER BY 1"
	wantRows := sqlRows(t, s, q)
	executors := func() int {
		var list []struct {
			ID string `json:"id"`
		}
		if err := getJSON(t, "http://"+rest+"/api/executors", &list); err != nil {
			t.Fatal(err)
		}
		return len(list)
	}
	if n := executors(); n != 2 {
		t.Fatalf("%d executors before the kill, want 2", n)
	}
	c.executors[0].kill()
	killed := time.Now()
	for executors() != 1 {
		if time.Since(killed) > 10*time.Second {
			t.Fatalf("the killed executor is still listed after %s (heartbeat timeout 60s)", time.Since(killed).Round(time.Millisecond))
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("executor loss noticed %s after the kill", time.Since(killed).Round(time.Millisecond))
	if got := sqlRows(t, s, q); fmt.Sprint(got) != fmt.Sprint(wantRows) {
		t.Fatalf("after the loss got %v, want %v", got, wantRows)
	}
}

// TestClusterResultLostBeforeRead kills the executor holding a finished
// query's result after the job ended and before the client read it: the
// read fails as retryable, Collect runs the query once more on the
// executor that is left, and the answer is right.
func TestClusterResultLostBeforeRead(t *testing.T) {
	rest := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	c := startCluster(t, 2, "--rest", rest, "--heartbeat-timeout", "60s", "--policy", "round_robin")
	s := c.connect(t, quiver.WithTargetPartitions(4))
	// A result small enough to travel inline with the job's status is not
	// lost with its executor: this test needs it in a file.
	sqlRows(t, s, "SET quiver.shuffle_inline_bytes = 0")
	// ORDER BY makes the result one partition, on one executor.
	const q = "SELECT l_returnflag, count(*) FROM lineitem GROUP BY l_returnflag ORDER BY 1"
	want := sqlRows(t, s, q)
	listJobs := func() []jobInfo {
		var jobs []jobInfo
		if err := getJSON(t, "http://"+rest+"/api/jobs", &jobs); err != nil {
			t.Fatal(err)
		}
		return jobs
	}
	before := map[string]bool{}
	for _, j := range listJobs() {
		before[j.ID] = true
	}
	calls := 0
	restore := quiver.SetResultReadyHook(func() {
		calls++
		var last jobInfo
		for _, j := range listJobs() {
			if !before[j.ID] {
				last = j
			}
		}
		var detail jobInfo
		if err := getJSON(t, "http://"+rest+"/api/job/"+last.ID, &detail); err != nil {
			t.Fatal(err)
		}
		holder := resultHolder(t, detail)
		c.executorByID(t, holder).kill()
	})
	defer restore()
	got := sqlRows(t, s, q)
	ran := 0
	for _, j := range listJobs() {
		if !before[j.ID] {
			ran++
		}
	}
	// One job whose result was lost, one run again.
	if calls != 1 || ran != 2 {
		t.Fatalf("the hook ran %d times and the cluster ran %d jobs, want 1 and 2 (the query once more after its result was lost)", calls, ran)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// resultHolder is the executor that ran the final stage of j (the stage
// no other stage reads), which must have run on exactly one.
func resultHolder(t *testing.T, j jobInfo) string {
	t.Helper()
	read := map[int]bool{}
	for _, st := range j.Stages {
		for _, in := range st.Inputs {
			read[in] = true
		}
	}
	holders := map[string]bool{}
	for _, st := range j.Stages {
		if read[st.ID] {
			continue
		}
		for _, task := range st.Tasks {
			holders[task.Executor] = true
		}
	}
	if len(holders) != 1 {
		t.Fatalf("the final stage of job %s ran on %d executors, want 1: %+v", j.ID, len(holders), j)
	}
	for e := range holders {
		return e
	}
	return ""
}

// killHolderDuringQuery waits until the running job has an executor that
// holder picks from its detail, kills it with SIGKILL, and checks that the
// query res still answers want and that lost work re-ran.
func killHolderDuringQuery(t *testing.T, c *testCluster, rest string, res <-chan result, want [][]string, holder func(jobInfo) string) {
	t.Helper()
	var victim string
	job := waitJob(t, rest, func(j jobInfo) bool {
		var detail jobInfo
		if j.State != "running" || getJSON(t, "http://"+rest+"/api/job/"+j.ID, &detail) != nil {
			return false
		}
		victim = holder(detail)
		return victim != ""
	})
	c.executorByID(t, victim).kill()
	r := <-res
	if r.err != nil {
		t.Fatalf("query failed: %v", r.err)
	}
	if fmt.Sprint(r.rows) != fmt.Sprint(want) {
		t.Fatalf("got %v, want %v", r.rows, want)
	}
	var detail jobInfo
	if err := getJSON(t, "http://"+rest+"/api/job/"+job.ID, &detail); err != nil {
		t.Fatal(err)
	}
	if !reran(detail) {
		t.Errorf("no lost work re-ran: %+v", detail)
	}
}
