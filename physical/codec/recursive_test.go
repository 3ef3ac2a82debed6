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

// A recursive query round-trips; a message whose terms do not fit the
// query (partitions, columns, types) or lack a part is refused.
func TestRecursiveRoundTrip(t *testing.T) {
	cat := tpchCatalog(t)
	ctx := context.Background()
	lp, err := sql.NewPlanner(cat).PlanQuery(`WITH RECURSIVE r(k) AS (SELECT 0 UNION SELECT n_nationkey FROM nation JOIN r ON n_regionkey = r.k % 5) SELECT count(*) FROM r`)
	if err != nil {
		t.Fatal(err)
	}
	if lp, err = optimizer.New().Optimize(ctx, lp, nil); err != nil {
		t.Fatal(err)
	}
	pp, err := planner.New(planner.Config{TargetPartitions: 4, MaxRecursionDepth: 9}).Plan(ctx, lp)
	if err != nil {
		t.Fatal(err)
	}
	roundTrip(t, pp)
	var rq *physical.RecursiveQuery
	for p := pp; len(p.Children()) > 0; p = p.Children()[0] {
		if r, ok := p.(*physical.RecursiveQuery); ok {
			rq = r
		}
	}
	if rq == nil || rq.MaxDepth != 9 {
		t.Fatalf("no recursive query with the planner's depth in\n%s", physical.Indent(pp))
	}
	other, err := EncodePlan(&physical.Values{OutSchema: rq.Static.Schema()})
	if err != nil {
		t.Fatal(err)
	}
	for name, mutate := range map[string]func(*rpc.PhysicalRecursiveQuery){
		"no static":    func(m *rpc.PhysicalRecursiveQuery) { m.Static = nil },
		"no recursive": func(m *rpc.PhysicalRecursiveQuery) { m.Recursive = nil },
		"schema":       func(m *rpc.PhysicalRecursiveQuery) { m.Schema = []byte("junk") },
		"types":        func(m *rpc.PhysicalRecursiveQuery) { m.Static = m.Recursive.GetProjection().GetInput() },
		"partitions": func(m *rpc.PhysicalRecursiveQuery) {
			m.Static = &rpc.PhysicalPlan{Node: &rpc.PhysicalPlan_Union{Union: &rpc.PhysicalUnion{Inputs: []*rpc.PhysicalPlan{other, other}}}}
		},
	} {
		t.Run(name, func(t *testing.T) {
			m, err := EncodePlan(rq)
			if err != nil {
				t.Fatal(err)
			}
			mutate(m.GetRecursiveQuery())
			if _, err := DecodePlan(m); err == nil {
				t.Fatal("decoded a bad recursive query")
			}
		})
	}
}
