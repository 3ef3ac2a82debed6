package quiver_test

import (
	"testing"

	"github.com/quiverdb/quiver"
)

// TestExplainGroupingGolden keeps the optimized logical and physical plans
// of grouping-set and DISTINCT ON queries (two partitions) in
// testdata/explain/grouping_*.golden: ROLLUP, CUBE and GROUPING SETS are
// one Expand under one two-phase aggregate whose exchange hashes on the
// keys and the set's ordinal; COUNT(*) under an empty set counts the row
// marker and an argument that is not NULL over NULL columns is guarded;
// GROUPING() is a CASE over the ordinal; a DISTINCT aggregate runs in one
// phase over rows exchanged on the keys and the ordinal; DISTINCT ON is a
// ROW_NUMBER() window and a filter.
func TestExplainGroupingGolden(t *testing.T) {
	s := newTPCHSession(t, quiver.WithTargetPartitions(2))
	for name, q := range map[string]string{
		"grouping_rollup": `SELECT n_regionkey, n_name, count(*), sum(n_nationkey), grouping(n_regionkey, n_name) AS g
FROM nation GROUP BY ROLLUP(n_regionkey, n_name) HAVING grouping(n_name) = 1 ORDER BY g, n_regionkey`,
		"grouping_cube": `SELECT r_name, n_regionkey, sum(coalesce(n_nationkey, 0)) AS s
FROM nation JOIN region ON n_regionkey = r_regionkey GROUP BY CUBE(r_name, n_regionkey)`,
		"grouping_sets_distinct": `SELECT o_orderstatus, o_orderpriority, count(DISTINCT o_custkey)
FROM orders GROUP BY GROUPING SETS ((o_orderstatus), (o_orderpriority), (o_orderstatus, o_orderpriority))`,
		"grouping_distinct_on": `SELECT DISTINCT ON (n_regionkey) n_regionkey, n_name FROM nation ORDER BY n_regionkey, n_name DESC`,
	} {
		t.Run(name, func(t *testing.T) { explainGolden(t, s, name, q) })
	}
}
