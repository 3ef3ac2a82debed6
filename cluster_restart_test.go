package quiver_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/quiverdb/quiver"
	"github.com/quiverdb/quiver/qerr"
)

// restartSlowQuery runs for about a second on two executors, long enough to
// be still running when a test kills the scheduler on seeing it start, even
// on a loaded machine (every part pairs with every line).
const restartSlowQuery = `SELECT count(*) AS n, sum(a.l_quantity) AS q
FROM lineitem a, part p
WHERE (a.l_partkey + p.p_partkey) % 89 = 0 AND p.p_size <= 50`

// TestClusterSchedulerRestartMidQuery: the scheduler, run with a state
// directory, is killed with -9 while a client's query runs and restarted
// on the same directory. The query in flight fails with a retryable error
// and, run through ScriptRetry (as the shell and `quiver -c` run
// statements), runs once more and answers; the client keeps its session id
// without re-opening it (the restarted scheduler logs no session opened);
// and the materialized cache is a hit without a rebuild.
func TestClusterSchedulerRestartMidQuery(t *testing.T) {
	local := newTPCHSession(t, quiver.WithLocalExecution())
	want := sqlRows(t, local, restartSlowQuery)
	state := t.TempDir()
	rest := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	args := []string{"--rest", rest, "--heartbeat-timeout", "2s", "--state-dir", state}
	c := startCluster(t, 2, args...)
	s := c.connect(t, quiver.WithTargetPartitions(4))
	sqlRows(t, s, "CACHE TABLE recent AS "+recentSQL)
	const q = "SELECT count(*), sum(l_quantity) FROM recent"
	o, wantCached := outcome(t, s, q)
	if o != "hit" {
		t.Fatalf("before the restart: %s", o)
	}
	before := cacheRow(t, s, "recent")
	// The stores are written off the loop, moments after each change.
	time.Sleep(300 * time.Millisecond)

	type outcomeOf struct {
		rows    [][]string
		retried []error
		err     error
	}
	done := make(chan outcomeOf, 1)
	go func() {
		var out outcomeOf
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		out.err = s.ScriptRetry(ctx, restartSlowQuery, func(df *quiver.DataFrame) error {
			batches, err := df.Collect(ctx)
			if err != nil {
				return err
			}
			out.rows = render(df.Schema(), batches)
			release(batches)
			return nil
		}, func(err error) { out.retried = append(out.retried, err) })
		done <- out
	}()
	waitJob(t, rest, func(j jobInfo) bool { return j.State == "running" })
	c.scheduler.kill()
	c.scheduler = startProc(t, "scheduler-2", quiverBinary(t), append([]string{"scheduler", "--bind", c.addr}, args...)...)

	r := <-done
	if r.err != nil {
		t.Fatalf("the query in flight during the restart, retried once: %v", r.err)
	}
	if len(r.retried) != 1 || !qerr.Retryable(r.retried[0]) {
		t.Fatalf("retries %v, want one after a retryable error", r.retried)
	}
	if fmt.Sprint(r.rows) != fmt.Sprint(want) {
		t.Fatalf("after the retry: %v, want %v", r.rows, want)
	}
	if strings.Contains(c.scheduler.output(), "session opened") {
		t.Errorf("the client re-opened its session; the restarted scheduler should have kept it:\n%s", c.scheduler.output())
	}
	o, rows := outcome(t, s, q)
	if o != "hit" || fmt.Sprint(rows) != fmt.Sprint(wantCached) {
		t.Fatalf("after the restart: outcome %q rows %v, want a hit of %v", o, rows, wantCached)
	}
	after := cacheRow(t, s, "recent")
	if !after.Created.Equal(before.Created) || after.Hits != before.Hits+1 {
		t.Errorf("the entry was rebuilt: before %+v, after %+v", before, after)
	}
	// The entry's column statistics came back from the state directory
	// with it: a GROUP BY over it chooses its tables by them.
	if f := fpTables(t, s, "SELECT l_orderkey, count(*) FROM recent GROUP BY l_orderkey", "HashAggregateExec"); f["by_stats"] < 1 {
		t.Errorf("GROUP BY over the reloaded cache: hash tables %v, want them chosen by the cache's statistics", f)
	}
}
