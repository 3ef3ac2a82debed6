package quiver_test

import (
	"fmt"
	"testing"

	"github.com/quiverdb/quiver"
	"github.com/quiverdb/quiver/exec/aggregate"
)

// skipAggQuery groups lineitem by a nearly unique key, with NULL values
// (l_comment's long ones) among the aggregated columns.
const skipAggQuery = `SELECT l_comment, count(*) AS n, count(l_shipdate) AS ns,
 sum(l_quantity) AS q, sum(l_linenumber) AS ln, avg(l_discount) AS ad, avg(l_partkey) AS ap,
 min(l_shipmode) AS mi, max(CASE WHEN l_linenumber > 3 THEN l_returnflag END) AS mx,
 round(stddev_samp(l_tax), 9) AS sd, sum(CASE WHEN l_linenumber = 1 THEN NULL ELSE l_extendedprice END) AS se
FROM lineitem GROUP BY l_comment ORDER BY l_comment`

// TestAggregateSkipPartialThroughSQL drives the partial aggregate's switch
// to passing rows through (a small quiver.aggregate.skip_partial_probe_rows)
// through SQL, locally and on the standalone cluster: the answer is the one
// with the setting off, and rows were passed through.
func TestAggregateSkipPartialThroughSQL(t *testing.T) {
	ref := newTPCHSession(t, quiver.WithLocalExecution(), quiver.WithTargetPartitions(2))
	want := sqlRows(t, ref, skipAggQuery)
	if len(want) < 50000 {
		t.Fatalf("reference has %d groups", len(want))
	}
	for _, tc := range []struct {
		name string
		opts []quiver.Option
	}{
		{"local-batch-7", []quiver.Option{quiver.WithLocalExecution(), quiver.WithTargetPartitions(2), quiver.WithBatchSize(7)}},
		{"local", []quiver.Option{quiver.WithLocalExecution(), quiver.WithTargetPartitions(2)}},
		{"standalone", []quiver.Option{quiver.WithTargetPartitions(2)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newTPCHSession(t, tc.opts...)
			sqlRows(t, s, "SET quiver.aggregate.skip_partial_percent = 50")
			sqlRows(t, s, "SET quiver.aggregate.skip_partial_probe_rows = 1000")
			before := aggregate.PassedRows()
			got := sqlRows(t, s, skipAggQuery)
			if aggregate.PassedRows() == before {
				t.Fatal("no row was passed through")
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("got %d groups, want %d; first difference at %d", len(got), len(want), firstDiff(got, want))
			}
		})
	}
}
