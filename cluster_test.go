package quiver_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver"
	"go.uber.org/goleak"
)

// The cluster tests run real processes: the quiver binary, built once, as
// one scheduler and several executors on loopback ports.

var (
	buildOnce sync.Once
	binDir    string // removed by TestMain
	binPath   string
	buildErr  error
)

func quiverBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "quiver-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binDir = dir
		binPath = filepath.Join(dir, "quiver")
		out, err := exec.Command("go", "build", "-o", binPath, "./cmd/quiver").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// proc is a daemon process of a test cluster.
type proc struct {
	name string
	cmd  *exec.Cmd
	done chan struct{}
	log  *strings.Builder
	mu   *sync.Mutex
}

// kill sends SIGKILL (kill -9) and waits for the process to be gone.
func (p *proc) kill() {
	p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// waitFor waits until the process's output holds text; false when the
// process ended or d passed first.
func (p *proc) waitFor(text string, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for !strings.Contains(p.output(), text) {
		select {
		case <-p.done:
			return strings.Contains(p.output(), text)
		default:
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}

func (p *proc) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log.String()
}

type testCluster struct {
	addr      string
	scheduler *proc
	executors []*proc
	workDirs  []string
}

// executorByID returns the executor process that announced id ("quiver
// executor ID listening on ...").
func (c *testCluster) executorByID(t *testing.T, id string) *proc {
	t.Helper()
	for _, e := range c.executors {
		if strings.Contains(e.output(), "quiver executor "+id+" listening") {
			return e
		}
	}
	t.Fatalf("no executor process announced id %s", id)
	return nil
}

// startCluster starts a scheduler and n executors and waits until all
// executors have registered. Everything is killed when the test ends.
func startCluster(t *testing.T, n int, schedulerArgs ...string) *testCluster {
	t.Helper()
	bin := quiverBinary(t)
	c := &testCluster{}
	// A port found free can be taken by another test process before the
	// scheduler binds it; then the scheduler does not come up, and it is
	// started again on another port.
	for attempt := 1; ; attempt++ {
		c.addr = fmt.Sprintf("127.0.0.1:%d", freePort(t))
		c.scheduler = startProc(t, "scheduler", bin, append([]string{"scheduler", "--bind", c.addr}, schedulerArgs...)...)
		if c.scheduler.waitFor("listening on", 15*time.Second) || attempt == 3 {
			break
		}
		c.scheduler.kill()
	}
	for i := 0; i < n; i++ {
		c.addExecutor(t)
	}
	// Wait until the executors have registered: a query then has somewhere to run.
	deadline := time.Now().Add(30 * time.Second)
	for _, e := range c.executors {
		for !strings.Contains(e.output(), "listening on") {
			if time.Now().After(deadline) {
				t.Fatalf("executor did not register:\n%s\nscheduler:\n%s", e.output(), c.scheduler.output())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	return c
}

func (c *testCluster) addExecutor(t *testing.T) *proc {
	dir := t.TempDir()
	c.workDirs = append(c.workDirs, dir)
	e := startProc(t, fmt.Sprintf("executor-%d", len(c.executors)), quiverBinary(t), "executor",
		"--scheduler", c.addr, "--bind", fmt.Sprintf("127.0.0.1:%d", freePort(t)), "--work-dir", dir, "--vcores", "2", "--heartbeat", "200ms")
	c.executors = append(c.executors, e)
	return e
}

func startProc(t *testing.T, name, bin string, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(bin, args...)
	p := &proc{name: name, cmd: cmd, done: make(chan struct{}), log: &strings.Builder{}, mu: &sync.Mutex{}}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = nil
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			p.mu.Lock()
			p.log.WriteString(sc.Text() + "\n")
			p.mu.Unlock()
		}
		cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			p.kill()
		}
		if t.Failed() {
			t.Logf("%s log:\n%s", name, p.output())
		}
	})
	return p
}

// connect opens a session on the cluster with the TPC-H tables registered
// (absolute paths: executors resolve them in their own processes).
func (c *testCluster) connect(t *testing.T, opts ...quiver.Option) *quiver.Session {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := quiver.Connect(ctx, c.addr, append([]quiver.Option{quiver.WithAllocator(mem)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.Close()
		mem.AssertSize(t, 0)
	})
	wd, _ := os.Getwd()
	for _, name := range tpchTables {
		if err := s.RegisterParquet(ctx, name, filepath.Join(wd, "tpch", "sf0.01", name+".parquet")); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func TestClusterTPCH(t *testing.T) {
	c := startCluster(t, 2)
	s := c.connect(t, quiver.WithTargetPartitions(3))
	for q := 1; q <= 22; q++ {
		t.Run(fmt.Sprintf("q%02d", q), func(t *testing.T) { runTPCH(t, s, q) })
	}
}

// TestConnectRunsNothingLocally: a session on a cluster leaves the work to
// the cluster. Connect used to start a hidden standalone scheduler and
// executor as well (NewSession's default), which EXPLAIN DISTRIBUTED then
// described as one in-memory stage and Close never stopped.
func TestConnectRunsNothingLocally(t *testing.T) {
	c := startCluster(t, 2)
	// The cluster's log readers (startProc) run until the test ends.
	before := goleak.IgnoreCurrent()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := quiver.Connect(ctx, c.addr, quiver.WithTargetPartitions(2))
	if err != nil {
		t.Fatal(err)
	}
	wd, _ := os.Getwd()
	for _, name := range []string{"orders", "customer"} {
		if err := s.RegisterParquet(ctx, name, filepath.Join(wd, "tpch", "sf0.01", name+".parquet")); err != nil {
			t.Fatal(err)
		}
	}
	q := "SELECT o_orderpriority, count(*) AS n FROM orders JOIN customer ON o_custkey = c_custkey GROUP BY o_orderpriority"
	if rows := sqlRows(t, s, q); len(rows) != 5 {
		t.Errorf("query rows %v, want 5 priorities", rows)
	}
	var d string
	for _, r := range sqlRows(t, s, "EXPLAIN DISTRIBUTED "+q) {
		if r[0] == "distributed_plan" {
			d = r[1]
		}
	}
	// Two executors: the cluster cuts a stage per exchange.
	if d == "" || strings.Contains(d, "1 stages") {
		t.Errorf("EXPLAIN DISTRIBUTED on a cluster of two executors should show shuffle stages:\n%s", d)
	}
	// The split is the scheduler's, made with what it knows now.
	if !strings.Contains(d, "2 executors alive") || !strings.Contains(d, "2 target partitions") {
		t.Errorf("EXPLAIN DISTRIBUTED should say the scheduler's choices (2 executors alive, 2 target partitions):\n%s", d)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	goleak.VerifyNone(t, before)
}
