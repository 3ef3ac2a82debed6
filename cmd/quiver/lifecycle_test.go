package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/quiverdb/quiver"
	"github.com/quiverdb/quiver/format"
)

// daemon is a quiver scheduler or executor process under test.
type daemon struct {
	cmd  *exec.Cmd
	done chan struct{}
	mu   sync.Mutex
	out  strings.Builder
	code int
}

func (d *daemon) log() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.out.String()
}

// lines are the daemon's JSON log lines, decoded.
func (d *daemon) lines(t *testing.T) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(d.log()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("log line is not JSON (--log-format json): %q", l)
		}
		out = append(out, m)
	}
	return out
}

func buildQuiver(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "quiver")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func startDaemon(t *testing.T, bin string, env []string, args ...string) *daemon {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	d := &daemon{cmd: cmd, done: make(chan struct{})}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(d.done)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			d.mu.Lock()
			d.out.WriteString(sc.Text() + "\n")
			d.mu.Unlock()
		}
		cmd.Wait()
		d.code = cmd.ProcessState.ExitCode()
	}()
	t.Cleanup(func() {
		select {
		case <-d.done:
		default:
			cmd.Process.Kill()
			<-d.done
		}
		if t.Failed() {
			t.Logf("%s log:\n%s", args[0], d.log())
		}
	})
	return d
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func waitUntil(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	end := time.Now().Add(d)
	for !cond() {
		if time.Now().After(end) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

func restJSON(url string, v any) error {
	resp, err := http.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}

// A self join of orders that keeps no row: one task that runs for a few
// seconds.
const slowSQL = "SELECT count(*) AS n FROM orders a, orders b WHERE a.o_orderkey + b.o_orderkey < 0"

// TestSIGTERMDrainsExecutor: real scheduler and executor processes,
// configured through QUIVER_* variables. SIGTERM reaches the executor
// while it runs a query's task: the task finishes (the query succeeds on
// that executor, the only one), the executor leaves with exit status 0,
// and the scheduler forgets it at once — long before its heartbeat timeout.
// Then SIGTERM stops the scheduler cleanly, failing the job still waiting
// after its grace period. Both log JSON.
func TestSIGTERMDrainsExecutor(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the quiver binary")
	}
	bin := buildQuiver(t)
	schedAddr, restAddr, metricsAddr := freeAddr(t), freeAddr(t), freeAddr(t)
	sched := startDaemon(t, bin, []string{
		"QUIVER_BIND=" + schedAddr, "QUIVER_REST=" + restAddr, "QUIVER_LOG_FORMAT=json",
		"QUIVER_HEARTBEAT_TIMEOUT=5m", "QUIVER_SHUTDOWN_GRACE=2s",
	}, "scheduler")
	exe := startDaemon(t, bin, []string{
		"QUIVER_SCHEDULER=" + schedAddr, "QUIVER_BIND=" + freeAddr(t), "QUIVER_WORK_DIR=" + t.TempDir(),
		"QUIVER_VCORES=1", "QUIVER_HEARTBEAT=200ms", "QUIVER_DRAIN_GRACE=2m", "QUIVER_LOG_FORMAT=json",
		"QUIVER_METRICS_BIND=" + metricsAddr,
	}, "executor", "--log-level", "info")
	rest := "http://" + restAddr
	waitUntil(t, "the executor to register", 30*time.Second, func() bool {
		var ex []map[string]any
		return restJSON(rest+"/api/executors", &ex) == nil && len(ex) == 1
	})
	if resp, err := http.Get("http://" + metricsAddr + "/healthz"); err != nil || resp.StatusCode != 200 {
		t.Fatalf("executor /healthz: %v", err)
	} else {
		resp.Body.Close()
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := quiver.Connect(ctx, schedAddr, quiver.WithTargetPartitions(1))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	orders, err := filepath.Abs("../../tpch/sf0.01/orders.parquet")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.RegisterParquet(ctx, "orders", orders); err != nil {
		t.Fatal(err)
	}
	type result struct {
		out string
		err error
	}
	res := make(chan result, 1)
	go func() {
		df, err := s.SQL(ctx, slowSQL)
		if err != nil {
			res <- result{err: err}
			return
		}
		var b strings.Builder
		err = df.Print(ctx, &b, format.CSV, format.Options{})
		res <- result{b.String(), err}
	}()
	// Running on the executor itself (its metrics), not only placed there.
	waitUntil(t, "the query's task to run", 30*time.Second, func() bool {
		resp, err := http.Get("http://" + metricsAddr + "/metrics")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return strings.Contains(string(b), "\nquiver_executor_tasks_running 1\n")
	})
	if err := exe.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// Draining: the scheduler marks it at once and places nothing there.
	waitUntil(t, "the scheduler to see the executor draining", 10*time.Second, func() bool {
		var ex []struct {
			Draining bool `json:"draining"`
		}
		return restJSON(rest+"/api/executors", &ex) == nil && len(ex) == 1 && ex[0].Draining
	})
	r := <-res
	if r.err != nil {
		t.Fatalf("the query running on the draining executor failed: %v", r.err)
	}
	if r.out != "n\n0\n" {
		t.Errorf("result %q, want n=0", r.out)
	}
	select {
	case <-exe.done:
	case <-time.After(30 * time.Second):
		t.Fatal("the executor did not exit after draining")
	}
	if exe.code != 0 {
		t.Errorf("executor exit status %d", exe.code)
	}
	// Gone from the scheduler at once (the heartbeat timeout is 5 minutes).
	var ex []map[string]any
	if err := restJSON(rest+"/api/executors", &ex); err != nil || len(ex) != 0 {
		t.Errorf("after the executor left: %v, executors %v", err, ex)
	}

	// The executor's log: it drained with the task running, then left.
	var draining, drained bool
	for _, l := range exe.lines(t) {
		switch l["msg"] {
		case "draining":
			draining = true
			if l["running_tasks"] != float64(1) {
				t.Errorf("drain began with %v running tasks, want 1 (the query's)", l["running_tasks"])
			}
		case "drained; leaving":
			drained = draining
		}
	}
	if !draining || !drained {
		t.Errorf("executor log lacks draining then drained")
	}
	// The scheduler's log: one line per event, with the job's outcome.
	var joined, left, finished bool
	for _, l := range sched.lines(t) {
		switch l["msg"] {
		case "executor joined":
			joined = true
		case "executor lost":
			left = joined && strings.Contains(fmt.Sprint(l["why"]), "deregistered")
		case "job finished":
			finished = l["outcome"] == "succeeded" && l["rows"] == float64(1) && l["sql_digest"] != nil
		}
	}
	if !joined || !left || !finished {
		t.Errorf("scheduler log: joined %v, left by deregistering %v, job finished with rows and digest %v", joined, left, finished)
	}

	// A query submitted now has no executor to run on: it waits. SIGTERM
	// to the scheduler stops it taking jobs, and after its grace (2s) it
	// fails the waiting one, whose client hears why, and exits cleanly.
	go func() {
		df, err := s.SQL(ctx, slowSQL)
		if err == nil {
			err = df.Print(ctx, io.Discard, format.CSV, format.Options{})
		}
		res <- result{err: err}
	}()
	waitUntil(t, "the second query to wait", 30*time.Second, func() bool {
		var jobs []struct {
			State string `json:"state"`
		}
		return restJSON(rest+"/api/jobs", &jobs) == nil && len(jobs) == 2 && (jobs[1].State == "queued" || jobs[1].State == "running")
	})
	if err := sched.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if r := <-res; r.err == nil || !strings.Contains(r.err.Error(), "scheduler shut down") {
		t.Errorf("the query queued at shutdown: %v, want it failed by the shutdown", r.err)
	}
	s.Close()
	select {
	case <-sched.done:
	case <-time.After(30 * time.Second):
		t.Fatal("the scheduler did not exit on SIGTERM")
	}
	if sched.code != 0 {
		t.Errorf("scheduler exit status %d", sched.code)
	}
}
