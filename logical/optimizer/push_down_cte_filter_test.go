package optimizer

import (
	"context"
	"strings"
	"testing"

	"github.com/quiverdb/quiver/catalog"
	"github.com/quiverdb/quiver/logical"
	"github.com/quiverdb/quiver/sql"
)

// refInputs returns, per reference of a shared CTE in p, its Filtered mark
// and its input's plan.
func refInputs(p logical.Plan) (filtered []bool, inputs []string) {
	logical.Inspect(p, func(n logical.Plan) bool {
		if r, ok := n.(*logical.CTERef); ok {
			filtered = append(filtered, r.Filtered)
			inputs = append(inputs, logical.Indent(r.Input))
		}
		return true
	})
	return filtered, inputs
}

func TestPushDownCTEFilter(t *testing.T) {
	cat := catalog.New()
	for _, tb := range []*catalog.Table{tblT, tblU} {
		if err := cat.RegisterTable(tb, false); err != nil {
			t.Fatal(err)
		}
	}
	const cte = `WITH s AS (SELECT a, c, sum(e) AS total FROM t GROUP BY a, c) `
	for _, tc := range []struct {
		name, q string
		pushed  bool
		want    []string // in the shared input when pushed
		notWant []string
	}{
		{name: "every reference filters: their OR, and per column",
			q:      cte + `SELECT x.a, y.total FROM s x JOIN s y ON x.c = y.c WHERE x.a = 1 AND x.total > 5 AND y.a = 2`,
			pushed: true,
			want: []string{"Filter: ((t.a = 1) AND (sum(t.e) > 5)) OR (t.a = 2)",
				"Filter: (t.a = 1) OR (t.a = 2)"}},
		{name: "three references in a union",
			q:      cte + `SELECT total FROM s WHERE c = 'x' UNION ALL SELECT total FROM s WHERE c = 'y' UNION ALL SELECT total FROM s WHERE c = 'z' AND a > 3`,
			pushed: true,
			want:   []string{"((t.c = 'x') OR (t.c = 'y')) OR (t.c = 'z')"}},
		{name: "one reference reads every row: nothing moves",
			q:       cte + `SELECT x.a, y.total FROM s x JOIN s y ON x.c = y.c WHERE x.a = 1`,
			notWant: []string{"t.a = 1"}},
		{name: "a filter with a subquery stays",
			q:       cte + `SELECT x.a FROM s x, s y WHERE x.a IN (SELECT k FROM u) AND y.a = 2 AND x.c = y.c`,
			notWant: []string{"t.a = 2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw, err := sql.NewPlanner(cat).PlanQuery(tc.q)
			if err != nil {
				t.Fatal(err)
			}
			opt, err := New().Optimize(context.Background(), raw, nil)
			if err != nil {
				t.Fatal(err)
			}
			filtered, inputs := refInputs(opt)
			if len(inputs) < 2 {
				t.Fatalf("want shared references, plan:\n%s", logical.Indent(opt))
			}
			for i := range inputs {
				if inputs[i] != inputs[0] {
					t.Fatalf("references' plans differ:\n%s\nvs\n%s", inputs[0], inputs[i])
				}
				if filtered[i] != tc.pushed {
					t.Fatalf("reference %d filtered=%v, want %v:\n%s", i, filtered[i], tc.pushed, logical.Indent(opt))
				}
			}
			for _, w := range tc.want {
				if !strings.Contains(inputs[0], w) {
					t.Errorf("shared input lacks %q:\n%s", w, inputs[0])
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(inputs[0], w) {
					t.Errorf("shared input has %q, which one reference alone filters:\n%s", w, inputs[0])
				}
			}
			// Once is enough: the rule leaves its own result alone.
			if _, changed, err := (PushDownCTEFilter{}).Rewrite(context.Background(), opt); err != nil || changed {
				t.Errorf("second run: changed=%v err=%v", changed, err)
			}
		})
	}
}
