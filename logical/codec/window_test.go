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

// Window nodes and expressions travel whole: every function, frame unit
// and bound kind, and the physical plan of the decoded plan is the same.
func TestWindowRoundTrip(t *testing.T) {
	cat := tpchCatalog(t)
	ctx := context.Background()
	for _, q := range []string{
		`SELECT n_name, row_number() OVER (PARTITION BY n_regionkey ORDER BY n_name DESC NULLS LAST), rank() OVER (ORDER BY n_regionkey),
			dense_rank() OVER (ORDER BY n_regionkey), percent_rank() OVER (), cume_dist() OVER (ORDER BY n_name), ntile(3) OVER (ORDER BY n_name),
			lag(n_name, 2, 'x') OVER (ORDER BY n_nationkey), lead(n_nationkey) OVER (ORDER BY n_nationkey) FROM nation`,
		`SELECT first_value(n_name) OVER (ORDER BY n_nationkey ROWS BETWEEN 2 PRECEDING AND 3 FOLLOWING),
			last_value(n_name) OVER (ORDER BY n_nationkey RANGE BETWEEN 1 PRECEDING AND UNBOUNDED FOLLOWING),
			nth_value(n_name, 2) OVER (ORDER BY n_regionkey GROUPS BETWEEN CURRENT ROW AND 1 FOLLOWING),
			sum(n_nationkey) OVER (PARTITION BY n_regionkey), count(*) OVER (), avg(n_nationkey) OVER (ORDER BY n_name ROWS UNBOUNDED PRECEDING),
			min(n_name) OVER (PARTITION BY n_regionkey ORDER BY n_nationkey), max(n_nationkey) OVER (ORDER BY n_nationkey DESC RANGE BETWEEN 3 FOLLOWING AND 5 FOLLOWING) FROM nation`,
		`SELECT o_orderpriority, rank() OVER (ORDER BY sum(o_totalprice) DESC) FROM orders GROUP BY o_orderpriority`,
		`SELECT * FROM (SELECT n_name, rank() OVER (PARTITION BY n_regionkey ORDER BY n_name) AS rk FROM nation) WHERE rk <= 2`,
		`SELECT * FROM (SELECT n_name, dense_rank() OVER (ORDER BY n_regionkey) AS rk FROM nation) WHERE rk < 3`,
		`SELECT count(*) OVER (ORDER BY o_orderdate RANGE BETWEEN INTERVAL '1 month 2 hours' PRECEDING AND INTERVAL '3' DAY FOLLOWING),
			sum(o_totalprice) OVER (ORDER BY o_totalprice DESC RANGE BETWEEN 1.5 PRECEDING AND 0.025 FOLLOWING) FROM orders`,
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
}

// A window message that names an unknown function, a bad frame, or
// arguments its function does not take is refused, never a panic.
func TestWindowDecodeRejects(t *testing.T) {
	cat := tpchCatalog(t)
	raw, err := sql.NewPlanner(cat).PlanQuery(`SELECT ntile(2) OVER (ORDER BY n_name) FROM nation`)
	if err != nil {
		t.Fatal(err)
	}
	var win *logical.Window
	logical.Inspect(raw, func(p logical.Plan) bool {
		if w, ok := p.(*logical.Window); ok {
			win = w
		}
		return true
	})
	for name, mutate := range map[string]func(*rpc.LogicalWindowExpr){
		"function":  func(m *rpc.LogicalWindowExpr) { m.Func = 99 },
		"aggregate": func(m *rpc.LogicalWindowExpr) { m.Agg = -1 },
		"frame":     func(m *rpc.LogicalWindowExpr) { m.Frame.StartKind = 7 },
		"no frame":  func(m *rpc.LogicalWindowExpr) { m.Frame = nil },
		"bounds":    func(m *rpc.LogicalWindowExpr) { m.Frame.StartKind, m.Frame.EndKind = 4, 0 },
		"arity":     func(m *rpc.LogicalWindowExpr) { m.Args = nil },
		"constant": func(m *rpc.LogicalWindowExpr) {
			m.Args = m.PartitionBy[:0:0]
			m.Args = append(m.Args, m.OrderBy[0].Expr)
		},
	} {
		t.Run(name, func(t *testing.T) {
			m, err := EncodePlan(win)
			if err != nil {
				t.Fatal(err)
			}
			mutate(m.GetWindow().Exprs[0].GetWindow())
			if _, err := DecodePlan(m); err == nil {
				t.Fatal("decoded a bad window")
			}
		})
	}
}

// A window's top-k travels with it, and one over a function that is no
// ranking function, or of a negative count, is refused.
func TestWindowTopKCodec(t *testing.T) {
	cat := tpchCatalog(t)
	raw, err := sql.NewPlanner(cat).PlanQuery(`SELECT * FROM (SELECT n_name, row_number() OVER (ORDER BY n_name) AS rn FROM nation) WHERE rn <= 2`)
	if err != nil {
		t.Fatal(err)
	}
	opt, err := optimizer.New().Optimize(context.Background(), raw, nil)
	if err != nil {
		t.Fatal(err)
	}
	var win *logical.Window
	logical.Inspect(opt, func(p logical.Plan) bool {
		if w, ok := p.(*logical.Window); ok {
			win = w
		}
		return true
	})
	if win == nil || win.TopK != (logical.WindowTopK{Func: logical.WinRowNumber, K: 2}) {
		t.Fatalf("no top-k on the window:\n%s", logical.Indent(opt))
	}
	got := roundTrip(t, win).(*logical.Window)
	if got.TopK != win.TopK {
		t.Fatalf("top-k %+v after the round trip, want %+v", got.TopK, win.TopK)
	}
	for name, mutate := range map[string]func(*rpc.LogicalWindow){
		"function": func(m *rpc.LogicalWindow) { m.TopKFunc = int32(logical.WinNtile) },
		"count":    func(m *rpc.LogicalWindow) { m.TopK = -3 },
	} {
		t.Run(name, func(t *testing.T) {
			m, err := EncodePlan(win)
			if err != nil {
				t.Fatal(err)
			}
			mutate(m.GetWindow())
			if _, err := DecodePlan(m); err == nil {
				t.Fatal("decoded a bad window top-k")
			}
		})
	}
}
