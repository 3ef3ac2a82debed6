package executor_test

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/quiverdb/quiver/exec/memcheck"
	"github.com/quiverdb/quiver/executor"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/rpc"
)

func (s *fakeScheduler) DeregisterExecutor(_ context.Context, req *rpc.DeregisterExecutorRequest) (*rpc.DeregisterExecutorResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if req.Drain {
		s.calls = append(s.calls, "drain")
	} else {
		s.calls = append(s.calls, "leave")
	}
	return &rpc.DeregisterExecutorResponse{Known: true}, nil
}

func (s *fakeScheduler) callLog() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.calls)
}

// scrape reads an executor's /metrics into "name{labels}" → value.
func scrape(t *testing.T, addr string) map[string]float64 {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("metric line %q: %v", line, err)
		}
		out[line[:i]] = v
	}
	return out
}

func withMetrics(c *executor.Config) { c.MetricsAddr = "127.0.0.1:0" }

// TestExecutorMetrics: stage 1 runs on e1, stage 2 on e2 reading stage 1
// over Flight; each executor's /metrics counts what it did, in the bytes
// the tasks reported.
func TestExecutorMetrics(t *testing.T) {
	mem := memcheck.New(t)
	sched := newFakeScheduler()
	addr := startScheduler(t, sched)
	e1 := startExecutor(t, addr, mem, withMetrics)
	e2 := startExecutor(t, addr, mem, withMetrics)
	scan := nationScan(t)
	launch(t, executorClient(t, e1), &physical.ShuffleWriter{Input: scan, JobID: "jm", StageID: 1}, 0, nil)
	st := waitStatus(t, sched)
	if st.State != rpc.TaskState_TASK_SUCCESSFUL || len(st.Locations) != 1 {
		t.Fatalf("stage 1: %s %s", st.State, st.Error)
	}
	written := st.Locations[0].Bytes
	reader := &physical.ShuffleReader{StageID: 1, OutSchema: scan.Schema(), Locations: [][]physical.PartitionLocation{{toLocation(t, st.Locations[0])}}}
	launch(t, executorClient(t, e2), &physical.ShuffleWriter{Input: reader, JobID: "jm", StageID: 2, N: 1}, 0, nil)
	st2 := waitStatus(t, sched)
	if st2.State != rpc.TaskState_TASK_SUCCESSFUL {
		t.Fatalf("stage 2: %s %s", st2.State, st2.Error)
	}
	// A task that fails: a reader of a file nobody has.
	bad := &physical.ShuffleReader{StageID: 7, OutSchema: scan.Schema(), Locations: [][]physical.PartitionLocation{{signed(physical.PartitionLocation{JobID: "jm", StageID: 7, Executor: e1.Meta()})}}}
	launch(t, executorClient(t, e2), &physical.ShuffleWriter{Input: bad, JobID: "jm", StageID: 8, N: 1}, 0, nil)
	if st := waitStatus(t, sched); st.State != rpc.TaskState_TASK_FAILED {
		t.Fatalf("reading a missing file: %s", st.State)
	}

	m1, m2 := scrape(t, e1.MetricsAddr()), scrape(t, e2.MetricsAddr())
	check := func(who string, m map[string]float64, name string, want float64) {
		t.Helper()
		if got, ok := m[name]; !ok || got != want {
			t.Errorf("%s: %s = %v (present %v), want %v", who, name, got, ok, want)
		}
	}
	check("e1", m1, `quiver_executor_tasks_total{outcome="succeeded"}`, 1)
	check("e1", m1, `quiver_executor_shuffle_written_bytes_total`, float64(written))
	check("e1", m1, `quiver_executor_flight_served_files_total`, 1)
	check("e1", m1, `quiver_executor_slots`, 2)
	check("e1", m1, `quiver_executor_tasks_running`, 0)
	check("e1", m1, `quiver_executor_memory_reserved_bytes`, 0)
	check("e2", m2, `quiver_executor_tasks_total{outcome="succeeded"}`, 1)
	check("e2", m2, `quiver_executor_tasks_total{outcome="failed"}`, 1)
	check("e2", m2, `quiver_executor_shuffle_read_bytes_total`, float64(written))
	check("e2", m2, `quiver_executor_flight_fetch_seconds_count`, 1)
	check("e2", m2, `quiver_executor_flight_fetch_errors_total`, 1)
	check("e2", m2, `quiver_executor_shuffle_written_bytes_total`, float64(st2.Locations[0].Bytes))
	check("e2", m2, `quiver_executor_task_duration_seconds_count`, 2)
	// The file's messages went over the wire: at least its data, at most
	// the file (which adds framing and the end-of-stream marker).
	if s := m1[`quiver_executor_flight_served_bytes_total`]; s <= 0 || s > float64(written) {
		t.Errorf("served %v bytes of a %d-byte file", s, written)
	}
	if m1[`quiver_executor_tasks_total{outcome="failed"}`] != 0 {
		t.Errorf("e1 counted a failure")
	}

	resp, err := http.Get("http://" + e1.MetricsAddr() + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "ok" {
		t.Errorf("/healthz: %d %q", resp.StatusCode, body)
	}
}

// TestDrainLetsRunningTaskFinish: Drain tells the scheduler first, refuses
// new tasks, waits for the running one (released mid-drain) to report,
// and only then deregisters and closes.
func TestDrainLetsRunningTaskFinish(t *testing.T) {
	mem := memcheck.New(t)
	sched := newFakeScheduler()
	e := startExecutor(t, startScheduler(t, sched), mem, withMetrics)
	peer, meta := startHangingPeer(t)
	client := executorClient(t, e)
	launch(t, client, longTask(meta, "jd", 2), 0, nil)
	waitEntered(t, peer)

	drained := make(chan error, 1)
	go func() { drained <- e.Drain(context.Background(), time.Minute) }()
	waitCalls(t, sched, []string{"drain"})
	resp, err := http.Get("http://" + e.MetricsAddr() + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("/healthz while draining: %d, want 503", resp.StatusCode)
	}
	_, err = client.LaunchTasks(context.Background(), &rpc.LaunchTasksRequest{Tasks: []*rpc.TaskDefinition{{Id: &rpc.TaskId{JobId: "jd", StageId: 9}}}})
	if status.Code(err) != codes.FailedPrecondition {
		t.Errorf("launch while draining: %v, want FailedPrecondition (the scheduler places it elsewhere)", err)
	}
	select {
	case err := <-drained:
		t.Fatalf("Drain returned (%v) while a task was running", err)
	case <-time.After(200 * time.Millisecond):
	}
	// Let the task end: its peer goes away, so the read fails and the task
	// reports (a fetch failure; what matters is that it ran to its end).
	peer.release()
	if err := <-drained; err != nil {
		t.Fatal(err)
	}
	if got := sched.callLog(); !slices.Equal(got, []string{"drain", "status FAILED", "leave"}) {
		t.Errorf("scheduler heard %v, want drain, the task's status, leave", got)
	}
}

// TestDrainGraceCancels: a task still running when the grace period ends
// is cancelled, reports so, and the executor leaves.
func TestDrainGraceCancels(t *testing.T) {
	mem := memcheck.New(t)
	sched := newFakeScheduler()
	e := startExecutor(t, startScheduler(t, sched), mem, nil)
	peer, meta := startHangingPeer(t)
	launch(t, executorClient(t, e), longTask(meta, "jg", 2), 0, nil)
	waitEntered(t, peer)
	start := time.Now()
	if err := e.Drain(context.Background(), 300*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 300*time.Millisecond {
		t.Errorf("Drain took %s, less than its grace", d)
	}
	if got := sched.callLog(); !slices.Equal(got, []string{"drain", "status CANCELLED", "leave"}) {
		t.Errorf("scheduler heard %v", got)
	}
}

func waitCalls(t *testing.T, s *fakeScheduler, want []string) {
	t.Helper()
	end := time.Now().Add(10 * time.Second)
	for !slices.Equal(s.callLog(), want) {
		if time.Now().After(end) {
			t.Fatalf("scheduler heard %v, want %v", s.callLog(), want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
