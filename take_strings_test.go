package quiver_test

import (
	"slices"
	"testing"

	"github.com/quiverdb/quiver"
)

// TestDistinctStringsQueries runs the two queries that crashed the process
// inside arrow-go's string take (count(DISTINCT) over a string column,
// grouped; and over a three-way join), standalone and local, and checks
// each against the same counts computed another way: DISTINCT rows first,
// then a plain count.
func TestDistinctStringsQueries(t *testing.T) {
	cases := []struct{ query, reference string }{
		{
			"SELECT l_orderkey, count(DISTINCT l_shipinstruct) FROM lineitem GROUP BY l_orderkey ORDER BY 2 DESC, 1",
			"SELECT l_orderkey, count(*) FROM (SELECT DISTINCT l_orderkey, l_shipinstruct FROM lineitem) d GROUP BY l_orderkey ORDER BY 2 DESC, 1",
		},
		{
			"SELECT o_orderpriority, count(DISTINCT l_comment) FROM lineitem, orders, customer " +
				"WHERE l_orderkey = o_orderkey AND o_custkey = c_custkey GROUP BY o_orderpriority ORDER BY 1",
			"SELECT o_orderpriority, count(*) FROM (SELECT DISTINCT o_orderpriority, l_comment FROM lineitem, orders, customer " +
				"WHERE l_orderkey = o_orderkey AND o_custkey = c_custkey) d GROUP BY o_orderpriority ORDER BY 1",
		},
	}
	for _, mode := range []struct {
		name string
		opts []quiver.Option
	}{{"standalone", nil}, {"local", []quiver.Option{quiver.WithLocalExecution(), quiver.WithTargetPartitions(3)}}} {
		t.Run(mode.name, func(t *testing.T) {
			s := newTPCHSession(t, mode.opts...)
			for _, c := range cases {
				got, want := sqlRows(t, s, c.query), sqlRows(t, s, c.reference)
				if len(want) == 0 {
					t.Fatalf("%s: the reference returned no rows", c.reference)
				}
				if !slices.Equal(fpJoin(got), fpJoin(want)) {
					t.Errorf("%s:\n got %d rows, first %v\nwant %d rows, first %v", c.query, len(got), got[:min(3, len(got))], len(want), want[:min(3, len(want))])
				}
			}
		})
	}
}
