package quiver_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/quiverdb/quiver"
)

// coJoinQuery joins two aggregates of lineitem on their two group keys,
// with NULL keys on both sides; order names the second side's GROUP BY
// order (the same as the first: co-partitioned; swapped: not).
func coJoinQuery(join, order, k2 string) string {
	return fmt.Sprintf(`WITH a AS (SELECT l_orderkey %% 500 AS k1, CASE WHEN l_suppkey %% 7 = 0 THEN NULL ELSE %s END AS k2, count(*) AS n
  FROM lineitem WHERE l_linenumber <= 4 GROUP BY 1, 2),
 b AS (SELECT l_orderkey %% 500 AS k1, CASE WHEN l_suppkey %% 5 = 0 THEN NULL ELSE %s END AS k2, sum(l_quantity) AS q
  FROM lineitem WHERE l_linenumber >= 3 GROUP BY %s)
SELECT count(*) AS pairs, count(a.k1) AS left_rows, count(b.k1) AS right_rows, sum(a.n) AS n, sum(b.q) AS q,
  sum(CASE WHEN a.k2 IS NULL THEN 1 ELSE 0 END) AS left_null_keys
FROM a %s JOIN b ON a.k1 = b.k1 AND a.k2 = b.k2`, k2, k2, order, join)
}

// TestCoPartitionedJoinThroughSQL: a join of two aggregates split by the
// join keys in one order runs Partitioned with no repartition of its own
// (EXPLAIN), and answers as the join whose second side groups in the other
// order, which repartitions or collects; and grouping integer keys with
// NULLs (the packed layout's nullable fields) answers as grouping them as
// floats (the generic layout). Locally and on the standalone cluster.
func TestCoPartitionedJoinThroughSQL(t *testing.T) {
	for _, opts := range [][]quiver.Option{
		{quiver.WithLocalExecution(), quiver.WithTargetPartitions(2)},
		{quiver.WithLocalExecution(), quiver.WithTargetPartitions(3), quiver.WithBatchSize(97)},
		{quiver.WithTargetPartitions(2)},
	} {
		s := newTPCHSession(t, opts...)
		for _, join := range []string{"INNER", "LEFT", "FULL", "RIGHT"} {
			co := coJoinQuery(join, "1, 2", "l_suppkey % 40")
			plan := strings.Join(flatten(sqlRows(t, s, "EXPLAIN "+co)), "\n")
			if !strings.Contains(plan, "mode=Partitioned") || strings.Count(plan, "partitioning=Hash") != 2 {
				t.Fatalf("%s: want a Partitioned join over the aggregates' two repartitions:\n%s", join, plan)
			}
			general := coJoinQuery(join, "2, 1", "l_suppkey % 40")
			if plan := strings.Join(flatten(sqlRows(t, s, "EXPLAIN "+general)), "\n"); strings.Contains(plan, "mode=Partitioned") && strings.Count(plan, "partitioning=Hash") == 2 {
				t.Fatalf("%s: the swapped group order still joins without repartitions:\n%s", join, plan)
			}
			got, want := sqlRows(t, s, co), sqlRows(t, s, general)
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("%s: co-partitioned %v, general %v", join, got, want)
			}
			floats := sqlRows(t, s, coJoinQuery(join, "1, 2", "CAST(l_suppkey % 40 AS DOUBLE)"))
			keepsLeft := join == "LEFT" || join == "FULL" // then NULL group keys show
			if fmt.Sprint(got) != fmt.Sprint(floats) || keepsLeft && got[0][5] == "0" {
				t.Fatalf("%s: integer keys %v, float keys %v", join, got, floats)
			}
		}
	}
}

// TestCoPartitionedJoinChainThroughSQL: a second join on the same keys
// over a Partitioned join keeps its partitions too (q78's three channels),
// and answers as the chain whose third side groups in the other order.
func TestCoPartitionedJoinChainThroughSQL(t *testing.T) {
	chain := func(order string) string {
		return fmt.Sprintf(`WITH a AS (SELECT l_orderkey %% 300 AS k1, l_suppkey %% 30 AS k2, count(*) AS n FROM lineitem WHERE l_linenumber <= 4 GROUP BY 1, 2),
 b AS (SELECT l_orderkey %% 300 AS k1, l_suppkey %% 30 AS k2, sum(l_quantity) AS q FROM lineitem WHERE l_linenumber >= 3 GROUP BY 1, 2),
 c AS (SELECT l_orderkey %% 300 AS k1, l_suppkey %% 30 AS k2, max(l_partkey) AS m FROM lineitem WHERE l_linenumber = 2 GROUP BY %s)
SELECT count(*), count(b.k1), count(c.k1), sum(a.n), sum(b.q), sum(c.m)
FROM a LEFT JOIN b ON a.k1 = b.k1 AND a.k2 = b.k2 LEFT JOIN c ON a.k1 = c.k1 AND a.k2 = c.k2`, order)
	}
	for _, opts := range [][]quiver.Option{
		{quiver.WithLocalExecution(), quiver.WithTargetPartitions(2)},
		{quiver.WithTargetPartitions(3)},
	} {
		s := newTPCHSession(t, opts...)
		plan := strings.Join(flatten(sqlRows(t, s, "EXPLAIN "+chain("1, 2"))), "\n")
		if strings.Count(plan, "mode=Partitioned") != 2 || strings.Count(plan, "partitioning=Hash") != 3 {
			t.Fatalf("want two Partitioned joins over the aggregates' three repartitions:\n%s", plan)
		}
		got, want := sqlRows(t, s, chain("1, 2")), sqlRows(t, s, chain("2, 1"))
		if fmt.Sprint(got) != fmt.Sprint(want) || got[0][2] == "0" {
			t.Fatalf("chain %v, general %v", got, want)
		}
	}
}

func flatten(rows [][]string) []string {
	var out []string
	for _, r := range rows {
		out = append(out, strings.Join(r, " "))
	}
	return out
}
