package quiver_test

import (
	"testing"

	"github.com/quiverdb/quiver"
)

// TestExplainRecursiveGolden keeps the plans of a WITH RECURSIVE query
// (two partitions) and of INTERSECT ALL / EXCEPT ALL in
// testdata/explain/*.golden: the recursive query's terms are planned for
// one partition (a Coalesce over a multi-partition source, no hash
// exchange inside) with the working table as a leaf of the recursive term;
// the ALL set operations are one window partitioned by every column.
func TestExplainRecursiveGolden(t *testing.T) {
	s := newTPCHSession(t, quiver.WithTargetPartitions(2))
	for name, q := range map[string]string{
		"recursive_union": `WITH RECURSIVE reach(k) AS (
  SELECT 0
  UNION
  SELECT n_nationkey FROM nation JOIN reach ON n_regionkey = reach.k % 5)
SELECT count(*) FROM reach`,
		"recursive_union_all": `WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t WHERE n < 10) SELECT n FROM t ORDER BY n`,
		"intersect_all":       `SELECT n_regionkey FROM nation INTERSECT ALL SELECT r_regionkey FROM region`,
		"except_all":          `SELECT n_regionkey, n_name FROM nation EXCEPT ALL SELECT r_regionkey, r_name FROM region`,
	} {
		t.Run(name, func(t *testing.T) { explainGolden(t, s, name, q) })
	}
}
