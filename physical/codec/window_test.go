package codec

import (
	"context"
	"strings"
	"testing"

	"github.com/quiverdb/quiver/logical/optimizer"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/physical/planner"
	"github.com/quiverdb/quiver/rpc"
	"github.com/quiverdb/quiver/sql"
)

// Window nodes round-trip with every function, frame unit and bound kind;
// malformed window messages are refused.
func TestWindowRoundTrip(t *testing.T) {
	cat := tpchCatalog(t)
	ctx := context.Background()
	lp, err := sql.NewPlanner(cat).PlanQuery(`SELECT n_name,
		row_number() OVER (PARTITION BY n_regionkey ORDER BY n_name DESC NULLS LAST), rank() OVER (ORDER BY n_regionkey),
		dense_rank() OVER (ORDER BY n_regionkey), percent_rank() OVER (), cume_dist() OVER (ORDER BY n_name), ntile(3) OVER (ORDER BY n_name),
		lag(n_name, 2, 'x') OVER (ORDER BY n_nationkey), lead(n_nationkey) OVER (ORDER BY n_nationkey),
		first_value(n_name) OVER (ORDER BY n_nationkey ROWS BETWEEN 2 PRECEDING AND 3 FOLLOWING),
		last_value(n_name) OVER (ORDER BY n_nationkey RANGE BETWEEN 1 PRECEDING AND UNBOUNDED FOLLOWING),
		nth_value(n_name, 2) OVER (ORDER BY n_regionkey GROUPS BETWEEN CURRENT ROW AND 1 FOLLOWING),
		sum(n_nationkey) OVER (PARTITION BY n_regionkey), count(*) OVER (), avg(n_nationkey) OVER (ORDER BY n_name ROWS UNBOUNDED PRECEDING)
		FROM nation`)
	if err != nil {
		t.Fatal(err)
	}
	if lp, err = optimizer.New().Optimize(ctx, lp, nil); err != nil {
		t.Fatal(err)
	}
	var win *physical.Window
	for _, parts := range []int{1, 4} {
		pp, err := planner.New(planner.Config{TargetPartitions: parts}).Plan(ctx, lp)
		if err != nil {
			t.Fatal(err)
		}
		roundTrip(t, pp)
		for p := pp; len(p.Children()) > 0; p = p.Children()[0] {
			if w, ok := p.(*physical.Window); ok {
				win = w
			}
		}
	}
	if win == nil {
		t.Fatal("no window node in the plan")
	}
	for name, mutate := range map[string]func(*rpc.PhysicalWindow){
		"function": func(m *rpc.PhysicalWindow) { m.Funcs[0].Func = 12 },
		"frame":    func(m *rpc.PhysicalWindow) { m.Funcs[0].Frame.Unit = 3 },
		"offset":   func(m *rpc.PhysicalWindow) { m.Funcs[0].Frame.EndOffset = -1 },
		"no frame": func(m *rpc.PhysicalWindow) { m.Funcs[0].Frame = nil },
		"type":     func(m *rpc.PhysicalWindow) { m.Funcs[0].Type = nil },
		"input":    func(m *rpc.PhysicalWindow) { m.Input = nil },
	} {
		t.Run(name, func(t *testing.T) {
			m, err := EncodePlan(win)
			if err != nil {
				t.Fatal(err)
			}
			mutate(m.GetWindow())
			if _, err := DecodePlan(m); err == nil {
				t.Fatal("decoded a bad window")
			}
		})
	}
}

// RANGE offsets that are intervals or fractions travel whole (the plan's
// text shows them, and roundTrip compares it).
func TestWindowRangeOffsetRoundTrip(t *testing.T) {
	ctx := context.Background()
	lp, err := sql.NewPlanner(tpchCatalog(t)).PlanQuery(`SELECT
		count(*) OVER (ORDER BY o_orderdate RANGE BETWEEN INTERVAL '1 month 2 hours' PRECEDING AND INTERVAL '3' DAY FOLLOWING),
		sum(o_totalprice) OVER (ORDER BY o_totalprice DESC RANGE BETWEEN 1.5 PRECEDING AND 0.025 FOLLOWING) FROM orders`)
	if err != nil {
		t.Fatal(err)
	}
	pp, err := planner.New(planner.Config{TargetPartitions: 2}).Plan(ctx, lp)
	if err != nil {
		t.Fatal(err)
	}
	text := physical.Indent(roundTrip(t, pp))
	for _, want := range []string{"INTERVAL '1 mon 02:00:00' PRECEDING AND INTERVAL '3 days' FOLLOWING", "1.5 PRECEDING AND 0.025 FOLLOWING"} {
		if !strings.Contains(text, want) {
			t.Errorf("plan lacks %q:\n%s", want, text)
		}
	}
}
