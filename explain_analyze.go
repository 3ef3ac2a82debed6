package quiver

import (
	"fmt"
	"strings"

	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/rpc"
)

// analyzeRows are EXPLAIN ANALYZE's rows for a query the cluster ran: one
// row with each stage's plan and its operators' figures summed over the
// stage's tasks (in run order, the final stage last), a row per cache the
// query read or built, and a summary.
func analyzeRows(jobID string, st *rpc.JobStatus, rows int64) [][]string {
	var b strings.Builder
	for _, sa := range st.GetAnalyze() {
		role := ""
		if sa.GetFinal() {
			role = "final, "
		}
		fmt.Fprintf(&b, "stage %d (%s%d task%s):\n%s", sa.GetStageId(), role, sa.GetTasks(), plural(int(sa.GetTasks())), sa.GetPlan())
	}
	out := [][]string{{"Plan with Metrics", strings.TrimSuffix(b.String(), "\n")}}
	for _, e := range st.GetCaches() {
		what := "hit: read back by CacheReaderExec; the cached input did not run"
		switch e.Outcome {
		case "miss":
			what = "miss: built by a separate job, then read back by CacheReaderExec"
		case "pending":
			what = "pending: waited for another query's build, then read back by CacheReaderExec"
		}
		name := e.Name
		if name == "" {
			name = e.CacheId
		}
		out = append(out, []string{"Cache " + name, fmt.Sprintf("%s (%d partitions, %s)", what, e.Partitions, physical.FormatBytes(e.Bytes))})
	}
	return append(out, []string{"Summary", fmt.Sprintf("output_rows=%d, job %s: %d stages, %d tasks", rows, jobID, st.GetStagesTotal(), st.GetTasksTotal())})
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
