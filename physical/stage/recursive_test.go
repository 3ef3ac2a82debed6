package stage_test

import (
	"context"
	"strings"
	"testing"

	"github.com/quiverdb/quiver/logical/optimizer"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/physical/planner"
	"github.com/quiverdb/quiver/physical/stage"
	"github.com/quiverdb/quiver/sql"
)

// TestRecursiveQueryNotCut: the stages above a recursive query are cut as
// usual, but nothing inside it is (its operator builds both terms, with
// their in-memory Coalesce, in one task), so the whole query is one stage
// reading no shuffle.
func TestRecursiveQueryNotCut(t *testing.T) {
	cat := tpchCatalog(t)
	ctx := context.Background()
	lp, err := sql.NewPlanner(cat).PlanQuery(`WITH RECURSIVE r(k) AS (
		SELECT r_regionkey FROM region
		UNION SELECT n_nationkey FROM nation JOIN r ON n_regionkey = r.k % 5)
	SELECT count(*) FROM r`)
	if err != nil {
		t.Fatal(err)
	}
	if lp, err = optimizer.New().Optimize(ctx, lp, nil); err != nil {
		t.Fatal(err)
	}
	pp, err := planner.New(planner.Config{TargetPartitions: 4}).Plan(ctx, lp)
	if err != nil {
		t.Fatal(err)
	}
	g, err := stage.Split("job1", pp, stage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Stages) != 1 {
		t.Fatalf("want one stage, got %d:\n%s", len(g.Stages), g)
	}
	plan := physical.Indent(g.Stages[0].Plan)
	for _, want := range []string{"RecursiveQueryExec", "WorkTableExec"} {
		if !strings.Contains(plan, want) {
			t.Fatalf("stage lacks %s:\n%s", want, plan)
		}
	}
	if strings.Contains(plan, "UnresolvedShuffle") || strings.Contains(plan, "Hash(") {
		t.Fatalf("the recursive query was cut or hash-exchanged inside:\n%s", plan)
	}
}
