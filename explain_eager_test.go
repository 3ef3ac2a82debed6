package quiver_test

import (
	"testing"

	"github.com/quiverdb/quiver"
)

// TestExplainEagerAggregate keeps the plan of a sum per nation through the
// customer: eager_aggregate sums the orders per customer nation key below
// the join with nation, whose name is the group key.
func TestExplainEagerAggregate(t *testing.T) {
	s := newTPCHSession(t, quiver.WithTargetPartitions(2))
	explainGolden(t, s, "eager_aggregate", `SELECT n_name, sum(o_totalprice), max(o_totalprice)
FROM orders JOIN customer ON o_custkey = c_custkey JOIN nation ON c_nationkey = n_nationkey
GROUP BY n_name`)
}
