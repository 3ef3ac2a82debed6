package codec

import (
	"context"
	"testing"

	"github.com/quiverdb/quiver/logical"
	"github.com/quiverdb/quiver/logical/optimizer"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/physical/planner"
	"github.com/quiverdb/quiver/rpc"
	"github.com/quiverdb/quiver/sql"
)

// Expand nodes travel whole (keys, sets with duplicates and empty ones),
// and the physical plan of the decoded plan is the same; a message with a
// set naming a key that does not exist is refused.
func TestExpandRoundTrip(t *testing.T) {
	cat := tpchCatalog(t)
	ctx := context.Background()
	for _, q := range []string{
		`SELECT n_regionkey, n_name, count(*), grouping(n_regionkey, n_name) FROM nation GROUP BY ROLLUP(n_regionkey, n_name)`,
		`SELECT n_regionkey % 2, sum(n_nationkey) FROM nation GROUP BY GROUPING SETS ((n_regionkey % 2), (n_regionkey % 2), ())`,
		`SELECT n_regionkey, n_name FROM nation GROUP BY n_regionkey, CUBE(n_name, n_comment)`,
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
		pl := planner.New(planner.Config{TargetPartitions: 3})
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

	raw, err := sql.NewPlanner(cat).PlanQuery(`SELECT n_name, count(*) FROM nation GROUP BY ROLLUP(n_name)`)
	if err != nil {
		t.Fatal(err)
	}
	var ex *logical.Expand
	logical.Inspect(raw, func(p logical.Plan) bool {
		if e, ok := p.(*logical.Expand); ok {
			ex = e
		}
		return true
	})
	if ex == nil {
		t.Fatal("no Expand in the plan")
	}
	for name, mutate := range map[string]func(*rpc.LogicalExpand){
		"key out of range": func(m *rpc.LogicalExpand) { m.Sets[0].Keys[0] = 5 },
		"negative key":     func(m *rpc.LogicalExpand) { m.Sets[0].Keys[0] = -1 },
		"no sets":          func(m *rpc.LogicalExpand) { m.Sets = nil },
		"nil set":          func(m *rpc.LogicalExpand) { m.Sets[1] = nil },
		"key twice":        func(m *rpc.LogicalExpand) { m.Sets[0].Keys = []int32{0, 0} },
		"no input":         func(m *rpc.LogicalExpand) { m.Input = nil },
	} {
		t.Run(name, func(t *testing.T) {
			m, err := EncodePlan(ex)
			if err != nil {
				t.Fatal(err)
			}
			mutate(m.GetExpand())
			if _, err := DecodePlan(m); err == nil {
				t.Fatal("decoded a bad expand")
			}
		})
	}
}
