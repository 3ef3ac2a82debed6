package quiver_test

import (
	"testing"

	"github.com/quiverdb/quiver"
)

// mergedQuery is TPC-DS q28's shape: ungrouped subqueries over one table,
// each with its own filter, cross joined.
const mergedQuery = `SELECT * FROM
  (SELECT avg(l_extendedprice) p1, count(DISTINCT l_partkey) d1 FROM lineitem WHERE l_quantity BETWEEN 0 AND 5 AND l_discount > 0.05) b1,
  (SELECT avg(l_extendedprice) p2, count(DISTINCT l_partkey) d2 FROM lineitem WHERE l_quantity BETWEEN 6 AND 10 AND l_discount > 0.05) b2,
  (SELECT count(*) n3 FROM lineitem WHERE l_quantity > 45 AND l_discount > 0.05) b3`

// TestExplainMergedAggregatesGolden keeps in testdata/explain the plans of
// mergedQuery: through the scheduler, one aggregate over one scan of
// lineitem, read by the three subqueries as a shared CTE; run locally
// (no shared CTEs), three aggregates over three scans, as written.
func TestExplainMergedAggregatesGolden(t *testing.T) {
	s := newTPCHSession(t, quiver.WithTargetPartitions(2))
	explainGolden(t, s, "merged_aggregates", mergedQuery)
	local := newTPCHSession(t, quiver.WithLocalExecution(), quiver.WithTargetPartitions(2))
	explainGolden(t, local, "merged_aggregates_local", mergedQuery)
}
