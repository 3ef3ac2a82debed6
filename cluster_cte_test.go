package quiver_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/quiverdb/quiver"
)

// sharedCTEQuery reads one slow WITH query (slowQuery's join) from two
// aggregates grouped differently, so two stages read the shared CTE's
// stage.
const sharedCTEQuery = `WITH j AS (SELECT a.l_orderkey AS k, a.l_partkey AS pk, a.l_quantity AS q
  FROM lineitem a JOIN orders o ON a.l_orderkey = o.o_orderkey, part p
  WHERE (a.l_partkey + p.p_partkey) % 97 = 0 AND p.p_size < 10)
SELECT x.n, x.q, y.n, y.q
FROM (SELECT count(*) AS n, sum(s) AS q FROM (SELECT k, sum(q) AS s FROM j GROUP BY k) g) x,
     (SELECT count(*) AS n, sum(m) AS q FROM (SELECT pk, max(q) AS m FROM j GROUP BY pk) h) y`

// sharedHolder returns an executor holding the output of a finished stage
// that two or more stages read while one of them is not done, or "".
func sharedHolder(j jobInfo) string {
	for _, st := range j.Stages {
		if st.State != "successful" {
			continue
		}
		var readers, pending int
		for _, c := range j.Stages {
			if slices.Contains(c.Inputs, st.ID) {
				readers++
				if c.State != "successful" {
					pending++
				}
			}
		}
		if readers < 2 || pending == 0 {
			continue
		}
		for _, task := range st.Tasks {
			if task.Executor != "" {
				return task.Executor
			}
		}
	}
	return ""
}

// TestClusterKillExecutorReadingSharedCTE kills -9 the executor holding a
// shared CTE's stage output while the stages reading it run: the lost
// output is recomputed, every reader reads the new output, and the answer
// is the local engine's (which computes the CTE at each reference).
func TestClusterKillExecutorReadingSharedCTE(t *testing.T) {
	local := newTPCHSession(t, quiver.WithLocalExecution())
	want := sqlRows(t, local, sharedCTEQuery)
	rest := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	c := startCluster(t, 2, "--rest", rest, "--heartbeat-timeout", "1s", "--policy", "round_robin")
	s := c.connect(t, quiver.WithTargetPartitions(4))
	res := runAsync(t, s, sharedCTEQuery)
	killHolderDuringQuery(t, c, rest, res, want, sharedHolder)
}
