package codec

import (
	"context"
	"testing"

	"github.com/quiverdb/quiver/logical/optimizer"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/physical/planner"
	"github.com/quiverdb/quiver/sql"
)

// Recursive queries (both UNION forms, a working table joined to a table)
// and the ALL set operations round-trip and plan alike after decoding.
func TestRecursiveRoundTrip(t *testing.T) {
	cat := tpchCatalog(t)
	ctx := context.Background()
	for _, q := range []string{
		`WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t WHERE n < 10) SELECT n FROM t`,
		`WITH RECURSIVE r(k) AS (SELECT 0 UNION SELECT n_nationkey FROM nation JOIN r ON n_regionkey = r.k % 5) SELECT count(*) FROM r`,
		`SELECT n_regionkey FROM nation INTERSECT ALL SELECT r_regionkey FROM region EXCEPT ALL SELECT 1`,
	} {
		raw, err := sql.NewPlanner(cat).PlanQuery(q)
		if err != nil {
			t.Fatal(err)
		}
		roundTrip(t, raw)
		opt, err := optimizer.New().Optimize(ctx, raw, nil)
		if err != nil {
			t.Fatal(err)
		}
		got := roundTrip(t, opt)
		pl := planner.New(planner.Config{TargetPartitions: 3, MaxRecursionDepth: 7})
		want, err := pl.Plan(ctx, opt)
		if err != nil {
			t.Fatal(err)
		}
		have, err := pl.Plan(ctx, got)
		if err != nil {
			t.Fatal(err)
		}
		if physical.Indent(want) != physical.Indent(have) {
			t.Fatalf("physical plan of the decoded plan differs:\nwant:\n%s\ngot:\n%s", physical.Indent(want), physical.Indent(have))
		}
	}
}
