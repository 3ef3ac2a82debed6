package codec

import (
	"context"
	"testing"

	"github.com/quiverdb/quiver/logical/optimizer"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/physical/planner"
	"github.com/quiverdb/quiver/rpc"
	"github.com/quiverdb/quiver/sql"
)

// Expand nodes round-trip with expression keys, duplicate and empty sets;
// malformed expand messages are refused.
func TestExpandRoundTrip(t *testing.T) {
	cat := tpchCatalog(t)
	ctx := context.Background()
	lp, err := sql.NewPlanner(cat).PlanQuery(`SELECT n_regionkey % 2, n_name, count(*), sum(n_nationkey)
		FROM nation GROUP BY GROUPING SETS ((n_regionkey % 2, n_name), (n_name), (n_name), ())`)
	if err != nil {
		t.Fatal(err)
	}
	if lp, err = optimizer.New().Optimize(ctx, lp, nil); err != nil {
		t.Fatal(err)
	}
	var ex *physical.Expand
	for _, parts := range []int{1, 4} {
		pp, err := planner.New(planner.Config{TargetPartitions: parts}).Plan(ctx, lp)
		if err != nil {
			t.Fatal(err)
		}
		roundTrip(t, pp)
		for p := pp; len(p.Children()) > 0; p = p.Children()[0] {
			if e, ok := p.(*physical.Expand); ok {
				ex = e
			}
		}
	}
	if ex == nil {
		t.Fatal("no expand node in the plan")
	}
	for name, mutate := range map[string]func(*rpc.PhysicalExpand){
		"key out of range": func(m *rpc.PhysicalExpand) { m.Sets[0].Keys[0] = 2 },
		"key twice":        func(m *rpc.PhysicalExpand) { m.Sets[0].Keys = []int32{1, 1} },
		"no sets":          func(m *rpc.PhysicalExpand) { m.Sets = nil },
		"nil set":          func(m *rpc.PhysicalExpand) { m.Sets[0] = nil },
		"names":            func(m *rpc.PhysicalExpand) { m.KeyNames = m.KeyNames[:1] },
		"input":            func(m *rpc.PhysicalExpand) { m.Input = nil },
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
