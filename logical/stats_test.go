package logical

import (
	"math"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver/catalog"
)

func statsTable(name string, rows int64, distinct []int64, names ...string) *catalog.Table {
	fs := make([]arrow.Field, len(names))
	for i, n := range names {
		fs[i] = arrow.Field{Name: n, Type: Int64}
	}
	return &catalog.Table{Name: name, Schema: arrow.NewSchema(fs, nil), Format: catalog.Memory, Rows: rows, Distinct: distinct}
}

func TestEstimate(t *testing.T) {
	orders := NewScan(statsTable("orders", 1_500_000, []int64{1_500_000, 100_000}, "o_orderkey", "o_custkey"), "o")
	customer := NewScan(statsTable("customer", 150_000, []int64{150_000, 25}, "c_custkey", "c_nationkey"), "c")
	supplier := NewScan(statsTable("supplier", 10_000, []int64{10_000, 25}, "s_suppkey", "s_nationkey"), "s")
	unknown := NewScan(statsTable("u", -1, nil, "k"), "u")
	// l_orderkey's bound comes from its value range (6M) though only 1.5M
	// order keys exist: the unique o_orderkey caps it.
	lineitem := NewScan(statsTable("lineitem", 6_000_000, []int64{6_000_000}, "l_orderkey"), "l")
	mustJoin := func(l, r Plan, typ JoinType, on ...EquiPair) Plan {
		j, err := NewJoin(l, r, typ, on, nil, false, "")
		if err != nil {
			t.Fatal(err)
		}
		return j
	}
	eqLit := func(p Plan, c string, v int64) Plan {
		f, err := NewFilter(p, &Binary{Op: OpEq, Left: Col(c), Right: Lit(v)})
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	agg := func(p Plan, keys ...Expr) Plan {
		a, err := NewAggregate(p, keys, nil)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	cases := []struct {
		name string
		p    Plan
		rows float64
	}{
		{"scan rows from the catalog", orders, 1_500_000},
		{"unknown size", unknown, defaultRows},
		{"equality keeps 1/distinct", eqLit(customer, "c.c_nationkey", 3), 6_000},
		{"foreign-key join keeps the fact rows", mustJoin(customer, orders, InnerJoin, EquiPair{Left: Col("c.c_custkey"), Right: Col("o.o_custkey")}), 1_500_000},
		{"join on a low-cardinality key multiplies", mustJoin(supplier, customer, InnerJoin, EquiPair{Left: Col("s.s_nationkey"), Right: Col("c.c_nationkey")}), 60_000_000},
		{"a filtered side lowers its key's distinct count", mustJoin(eqLit(customer, "c.c_custkey", 5), orders, InnerJoin, EquiPair{Left: Col("c.c_custkey"), Right: Col("o.o_custkey")}), 15},
		{"a unique key caps the foreign key's distinct count", mustJoin(orders, lineitem, InnerJoin, EquiPair{Left: Col("o.o_orderkey"), Right: Col("l.l_orderkey")}), 6_000_000},
		{"group by a bounded key", agg(customer, Col("c.c_nationkey")), 25},
		{"group by an unbounded key", agg(unknown, Col("u.k")), defaultRows / 10},
		{"semi join keeps the matched fraction", mustJoin(orders, customer, SemiJoin, EquiPair{Left: Col("o.o_custkey"), Right: Col("c.c_custkey")}), 1_500_000},
		{"semi join against fewer keys", mustJoin(customer, agg(orders, Col("o.o_custkey")), SemiJoin, EquiPair{Left: Col("c.c_custkey"), Right: Col("o.o_custkey")}), 100_000},
	}
	for _, c := range cases {
		got := Estimate(c.p).Rows
		if math.Abs(got-c.rows) > 1e-6*c.rows {
			t.Errorf("%s: Estimate = %.1f rows, want %.1f", c.name, got, c.rows)
		}
		if n := len(Estimate(c.p).Distinct); n != c.p.Schema().Len() {
			t.Errorf("%s: %d distinct counts for %d columns", c.name, n, c.p.Schema().Len())
		}
	}
}
