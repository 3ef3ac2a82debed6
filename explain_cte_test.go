package quiver_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/quiverdb/quiver"
)

// cteQuery reads one WITH query three times, each reference with its own
// filter: the plan shows the shared CTE once (with the OR of the three
// filters pushed in) and two references to it.
const cteQuery = `WITH s AS (SELECT n_regionkey AS r, count(*) AS c FROM nation GROUP BY n_regionkey)
SELECT 'low', c FROM s WHERE r = 1
UNION ALL SELECT 'high', c FROM s WHERE r = 3
UNION ALL SELECT 'mid', c FROM s WHERE r = 2 AND c > 1`

// TestExplainSharedCTEGolden keeps in testdata/explain/*.golden the plans of
// a WITH query read three times: the logical and physical plans show its
// plan once, under SharedCTE, and CTERef at the other references; the stage
// graph computes it in one stage that the final stage reads three times, in
// shuffle mode and in memory (a whole stage of its own); the local engine
// computes it at each reference.
func TestExplainSharedCTEGolden(t *testing.T) {
	s := newTPCHSession(t, quiver.WithTargetPartitions(2))
	explainGolden(t, s, "cte_shared", cteQuery)
	distributed := func(s *quiver.Session, name string) {
		t.Helper()
		for _, r := range sqlRows(t, s, "EXPLAIN DISTRIBUTED "+cteQuery) {
			if r[0] == "distributed_plan" {
				got := strings.ReplaceAll(r[1], filepath.Join("tpch", "sf0.01")+string(filepath.Separator), "")
				golden(t, filepath.Join("testdata", "explain", name+".golden"), got)
				return
			}
		}
		t.Fatal("EXPLAIN DISTRIBUTED has no distributed_plan row")
	}
	distributed(s, "cte_shared_whole")
	sqlRows(t, s, "SET quiver.exchange_mode = 'shuffle'")
	distributed(s, "cte_shared_shuffle")

	local := newTPCHSession(t, quiver.WithLocalExecution(), quiver.WithTargetPartitions(2))
	explainGolden(t, local, "cte_local", cteQuery)
}
