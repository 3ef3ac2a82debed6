package quiver_test

import (
	"testing"

	"github.com/quiverdb/quiver"
)

// TestExplainWindowGolden keeps the optimized logical and physical plans of
// window queries (two partitions) in testdata/explain/window_*.golden:
// functions sharing PARTITION BY and ORDER BY share one sort, a second
// ORDER BY over the same PARTITION BY re-sorts without another exchange, a
// window without PARTITION BY runs in one partition, a window over an
// aggregate sits above it, unused window functions are pruned, a filter
// on the PARTITION BY column goes below the window, others not, a window
// partitioned by the keys an exchange before it (its own chain's or the
// aggregate's below) hashed on, and maybe more, needs no exchange
// (nor a sort when the previous sort orders its rows), and a bound on a
// ranking function keeps only each window partition's rows it
// can pass in the sort below the window (in each local sort without
// PARTITION BY).
func TestExplainWindowGolden(t *testing.T) {
	s := newTPCHSession(t, quiver.WithTargetPartitions(2))
	for name, q := range map[string]string{
		"window_shared": `SELECT n_regionkey, n_name,
  row_number() OVER (PARTITION BY n_regionkey ORDER BY n_name) AS rn,
  sum(n_nationkey) OVER (PARTITION BY n_regionkey ORDER BY n_name) AS running,
  count(*) OVER (PARTITION BY n_regionkey) AS members,
  rank() OVER (ORDER BY n_nationkey DESC) AS overall
FROM nation`,
		"window_over_aggregate": `SELECT o_orderpriority, count(*) AS orders,
  rank() OVER (ORDER BY count(*) DESC) AS rk
FROM orders GROUP BY o_orderpriority ORDER BY rk`,
		"window_frame": `SELECT l_orderkey, l_linenumber, moving FROM (
  SELECT l_orderkey, l_linenumber,
    sum(l_quantity) OVER (PARTITION BY l_orderkey ORDER BY l_linenumber ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) AS moving,
    lag(l_quantity) OVER (PARTITION BY l_orderkey ORDER BY l_linenumber) AS unused
  FROM lineitem WHERE l_orderkey < 10) AS x
WHERE moving > 20`,
		"window_filter": `SELECT * FROM (
  SELECT n_regionkey, n_name, rank() OVER (PARTITION BY n_regionkey ORDER BY n_name) AS r FROM nation) AS x
WHERE n_regionkey = 1 AND r <= 2 AND n_name <> 'PERU'`,
		"window_colocated": `SELECT n_regionkey, n_nationkey,
  rank() OVER (PARTITION BY n_regionkey ORDER BY n_nationkey, n_name) AS rk,
  avg(n_nationkey) OVER (PARTITION BY n_regionkey, n_nationkey) AS same,
  count(*) OVER (PARTITION BY n_name, n_regionkey) AS resorted
FROM nation`,
		"window_over_grouped": `SELECT o_orderpriority, o_orderstatus, count(*) AS n,
  rank() OVER (PARTITION BY o_orderpriority, o_orderstatus ORDER BY count(*) DESC) AS rk
FROM orders GROUP BY o_orderpriority, o_orderstatus`,
		"window_topk": `SELECT * FROM (
  SELECT n_regionkey, n_name, dense_rank() OVER (ORDER BY n_regionkey DESC) AS dr FROM nation) AS x
WHERE dr < 3`,
		"window_topk_rows": `SELECT * FROM (
  SELECT c_nationkey, c_name, row_number() OVER (PARTITION BY c_nationkey ORDER BY c_acctbal DESC) AS rn,
    rank() OVER (PARTITION BY c_nationkey ORDER BY c_acctbal DESC) AS rk FROM customer) AS x
WHERE rn <= 3`,
	} {
		t.Run(name, func(t *testing.T) { explainGolden(t, s, name, q) })
	}
}
