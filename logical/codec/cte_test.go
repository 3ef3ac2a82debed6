package codec

import (
	"context"
	"fmt"
	"testing"

	"github.com/quiverdb/quiver/logical"
	"github.com/quiverdb/quiver/logical/optimizer"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/physical/planner"
	"github.com/quiverdb/quiver/sql"
)

// cteRefs lists every CTERef of p as "id name filtered: input plan".
func cteRefs(p logical.Plan) []string {
	var out []string
	logical.Inspect(p, func(n logical.Plan) bool {
		if r, ok := n.(*logical.CTERef); ok {
			out = append(out, fmt.Sprintf("%d %s %v:\n%s", r.ID, r.Name, r.Filtered, logical.Indent(r.Input)))
		}
		return true
	})
	return out
}

// Shared CTEs round-trip with every reference's id, name, pushed-filter
// mark and plan (Indent shows only the first reference's plan), and plan
// to the same shared physical node after decoding.
func TestCTERefRoundTrip(t *testing.T) {
	cat := tpchCatalog(t)
	ctx := context.Background()
	q := `WITH s AS (SELECT n_regionkey AS r, count(*) AS c FROM nation GROUP BY n_regionkey)
SELECT a.r, b.c FROM s a JOIN s b ON a.r = b.r WHERE a.c > 1 AND b.r < 3`
	raw, err := sql.NewPlanner(cat).PlanQuery(q)
	if err != nil {
		t.Fatal(err)
	}
	opt, err := optimizer.New().Optimize(ctx, raw, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []logical.Plan{raw, opt} {
		got := roundTrip(t, p)
		want, have := cteRefs(p), cteRefs(got)
		if len(want) != 2 {
			t.Fatalf("want two references, plan has %d:\n%s", len(want), logical.Indent(p))
		}
		if fmt.Sprint(want) != fmt.Sprint(have) {
			t.Fatalf("references changed in round trip:\nwant %v\ngot  %v", want, have)
		}
	}
	if refs := cteRefs(opt); refs[0][:len("1 s true")] != "1 s true" {
		t.Fatalf("the optimized references are not marked filtered: %v", refs)
	}
	pl := planner.New(planner.Config{TargetPartitions: 2, ShareCTEs: true})
	pp, err := pl.Plan(ctx, roundTrip(t, opt))
	if err != nil {
		t.Fatal(err)
	}
	nodes := map[*physical.SharedCTE]int{}
	var walk func(physical.Plan)
	walk = func(p physical.Plan) {
		if c, ok := p.(*physical.SharedCTE); ok {
			nodes[c]++
		}
		for _, ch := range p.Children() {
			walk(ch)
		}
	}
	walk(pp)
	if len(nodes) != 1 {
		t.Fatalf("want one SharedCTE node read twice, got %v:\n%s", nodes, physical.Indent(pp))
	}
	for _, n := range nodes {
		if n != 2 {
			t.Fatalf("the SharedCTE is read %d times, want 2:\n%s", n, physical.Indent(pp))
		}
	}
}
