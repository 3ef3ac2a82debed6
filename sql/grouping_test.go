package sql

import (
	"testing"

	"github.com/quiverdb/quiver/logical"
)

// The GROUP BY list becomes its distinct keys and PostgreSQL's grouping
// sets: the cross product of its elements, ROLLUP's prefixes, CUBE's
// subsets from all to none, composite elements as one unit, duplicates
// kept.
func TestGroupingSetsOfGroupBy(t *testing.T) {
	p := NewPlanner(tpchCatalog(t))
	for _, c := range []struct{ groupBy, keys, sets string }{
		{"ROLLUP(n_regionkey, n_name)", "nation.n_regionkey, nation.n_name", "(0, 1), (0), ()"},
		{"CUBE(n_regionkey, n_name)", "nation.n_regionkey, nation.n_name", "(0, 1), (0), (1), ()"},
		{"GROUPING SETS ((n_name), (n_regionkey, n_name), (), (n_name))", "nation.n_name, nation.n_regionkey", "(0), (1, 0), (), (0)"},
		{"n_comment, ROLLUP(n_regionkey, n_name)", "nation.n_comment, nation.n_regionkey, nation.n_name", "(0, 1, 2), (0, 1), (0)"},
		{"ROLLUP(n_regionkey), CUBE(n_name)", "nation.n_regionkey, nation.n_name", "(0, 1), (0), (1), ()"},
		{"ROLLUP((n_regionkey, n_name), n_comment)", "nation.n_regionkey, nation.n_name, nation.n_comment", "(0, 1, 2), (0, 1), ()"},
		{"GROUPING SETS (ROLLUP(n_regionkey), CUBE(n_name))", "nation.n_regionkey, nation.n_name", "(0), (), (1), ()"},
		{"ROLLUP(n_name, n_name)", "nation.n_name", "(0), (0), ()"},
		{"n_name, ()", "nation.n_name", "(0)"},
		{"()", "", "()"},
		{"n_name, n_regionkey WITH ROLLUP", "nation.n_name, nation.n_regionkey", "(0, 1), (0), ()"},
		{"ROLLUP(1)", "nation.n_name", "(0), ()"},
	} {
		sel := "count(*)"
		if c.groupBy == "ROLLUP(1)" {
			sel = "n_name, count(*)" // the ordinal names n_name
		}
		lp, err := p.PlanQuery("SELECT " + sel + " FROM nation GROUP BY " + c.groupBy)
		if err != nil {
			t.Fatalf("GROUP BY %s: %v", c.groupBy, err)
		}
		var ex *logical.Expand
		logical.Inspect(lp, func(n logical.Plan) bool {
			if e, ok := n.(*logical.Expand); ok {
				ex = e
			}
			return true
		})
		if ex == nil {
			t.Fatalf("GROUP BY %s: no Expand in\n%s", c.groupBy, logical.Indent(lp))
		}
		keys := ""
		for i, k := range ex.Keys {
			if i > 0 {
				keys += ", "
			}
			keys += k.String()
		}
		if keys != c.keys || logical.SetsString(ex.Sets) != c.sets {
			t.Errorf("GROUP BY %s: keys [%s] sets %s, want [%s] %s", c.groupBy, keys, logical.SetsString(ex.Sets), c.keys, c.sets)
		}
	}
	// A plain list has no Expand.
	lp, err := p.PlanQuery("SELECT n_name, count(*) FROM nation GROUP BY n_name, n_regionkey")
	if err != nil {
		t.Fatal(err)
	}
	logical.Inspect(lp, func(n logical.Plan) bool {
		if _, ok := n.(*logical.Expand); ok {
			t.Errorf("a plain GROUP BY made an Expand:\n%s", logical.Indent(lp))
		}
		return true
	})
}
