package quiver_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quiverdb/quiver"
	"github.com/quiverdb/quiver/exec/spill"
	"github.com/quiverdb/quiver/tpch"
)

// restartExecutor starts executor i again on its work dir (a new port)
// after it was killed, and waits until it listens.
func (c *testCluster) restartExecutor(t *testing.T, i int) {
	t.Helper()
	e := startProc(t, fmt.Sprintf("executor-%d", i), quiverBinary(t), "executor",
		"--scheduler", c.addr, "--bind", fmt.Sprintf("127.0.0.1:%d", freePort(t)), "--work-dir", c.workDirs[i], "--vcores", "2", "--heartbeat", "200ms")
	c.executors[i] = e
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(e.output(), "listening on") {
		if time.Now().After(deadline) {
			t.Fatalf("restarted executor did not start:\n%s", e.output())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestClusterChaos runs 50 random TPC-H queries on three executor
// processes while one of them is killed with SIGKILL at random moments and
// started again on its work dir: every answer is right, the scheduler
// never exits, and once the work is done and the session closed no job
// directory is left in any work dir.
func TestClusterChaos(t *testing.T) {
	const runs = 50
	c := startCluster(t, 3, "--heartbeat-timeout", "2s", "--policy", "round_robin", "--result-ttl", "1s")
	s := c.connect(t, quiver.WithTargetPartitions(4))
	texts := make([]string, 23)
	answers := make([][][]string, 23)
	for q := 1; q <= 22; q++ {
		b, err := os.ReadFile(filepath.Join("tpch", "queries", fmt.Sprintf("q%02d.sql", q)))
		if err != nil {
			t.Fatal(err)
		}
		texts[q] = string(b)
		answers[q] = readAnswer(t, filepath.Join("tpch", "answers", fmt.Sprintf("q%02d.csv", q)))
	}

	var mu sync.Mutex // guards c.executors against the chaos goroutine
	stop := make(chan struct{})
	done := make(chan struct{})
	kills := 0
	go func() {
		defer close(done)
		r := rand.New(rand.NewPCG(7, 11))
		for {
			select {
			case <-stop:
				return
			case <-time.After(time.Duration(100+r.IntN(500)) * time.Millisecond):
			}
			i := r.IntN(len(c.executors))
			mu.Lock()
			c.executors[i].kill()
			kills++
			mu.Unlock()
			time.Sleep(time.Duration(50+r.IntN(250)) * time.Millisecond)
			mu.Lock()
			c.restartExecutor(t, i)
			mu.Unlock()
		}
	}()

	r := rand.New(rand.NewPCG(1, 2))
	ctx := context.Background()
	for run := range runs {
		q := 1 + r.IntN(22)
		got, schema, err := runQuery(ctx, s, texts[q])
		if err != nil {
			close(stop)
			<-done
			t.Fatalf("run %d (q%02d) failed under chaos: %v", run, q, err)
		}
		if err := tpch.CompareAnswer(schema, got, answers[q]); err != nil {
			close(stop)
			<-done
			t.Fatalf("run %d (q%02d) wrong under chaos: %v", run, q, err)
		}
	}
	close(stop)
	<-done
	t.Logf("%d runs, %d executor kills", runs, kills)
	if kills == 0 {
		t.Fatal("no executor was killed: the test tested nothing")
	}
	select {
	case <-c.scheduler.done:
		t.Fatalf("the scheduler exited:\n%s", c.scheduler.output())
	default:
	}
	for _, e := range c.executors {
		select {
		case <-e.done:
			t.Fatalf("an executor that was not killed exited:\n%s", e.output())
		default:
		}
	}

	// Job directories go: finished jobs' at the cleanup delay, a killed
	// executor's leftovers when it registers again.
	deadline := time.Now().Add(30 * time.Second)
	for {
		var left []string
		for _, dir := range c.workDirs {
			entries, _ := os.ReadDir(dir)
			for _, e := range entries {
				if sub, _ := os.ReadDir(filepath.Join(dir, e.Name())); e.Name() == spill.DirName && len(sub) == 0 {
					continue // the spill directory, empty
				}
				left = append(left, filepath.Join(dir, e.Name()))
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("directories left in the work dirs: %v", left)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
