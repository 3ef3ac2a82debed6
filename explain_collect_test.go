package quiver_test

import (
	"testing"

	"github.com/quiverdb/quiver"
)

// TestExplainCollectGolden keeps the plans of array_agg and ordered
// string_agg (two partitions) in testdata/explain/collect_*.golden: the
// aggregate's arguments, ORDER BY keys and FILTER condition travel as one
// struct, and even with DISTINCT it runs in two phases, its partial state
// being the group's rows. Also interval_keys.golden: an interval grouping
// or join key is hashed and matched by its length (interval_key), the
// group showing one of its intervals through an any_value.
func TestExplainCollectGolden(t *testing.T) {
	s := newTPCHSession(t, quiver.WithTargetPartitions(2))
	for name, q := range map[string]string{
		"collect_array_agg": `SELECT n_regionkey, array_agg(n_name ORDER BY n_nationkey DESC) FILTER (WHERE n_nationkey > 3),
  string_agg(DISTINCT n_name, ', ' ORDER BY n_name) FROM nation GROUP BY n_regionkey`,
		"collect_array_agg_rollup": `SELECT n_regionkey, array_agg(DISTINCT n_regionkey) FROM nation GROUP BY ROLLUP(n_regionkey)`,
		"interval_keys": `SELECT a.i, count(*), count(DISTINCT b.i) FROM (SELECT n_regionkey * INTERVAL '1' DAY AS i FROM nation) a
  JOIN (SELECT r_regionkey * INTERVAL '24' HOUR AS i FROM region) b ON a.i = b.i GROUP BY a.i`,
	} {
		t.Run(name, func(t *testing.T) { explainGolden(t, s, name, q) })
	}
}
