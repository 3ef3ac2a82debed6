package logical

import (
	"math"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
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

// TestEstimateRangeBounds checks that range comparisons of a column whose
// table gives its value bounds keep the share of the bounds they admit,
// all of one column's comparisons together (through an integer cast too),
// and the fixed third each without bounds.
func TestEstimateRangeBounds(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "d_date", Type: arrow.FixedWidthTypes.Date32},
		{Name: "qty", Type: arrow.PrimitiveTypes.Int32},
		{Name: "price", Type: &arrow.Decimal128Type{Precision: 7, Scale: 2}},
	}, nil)
	lo := arrow.Date32(10_000)
	bounded := &catalog.Table{Name: "dd", Schema: schema, Format: catalog.Memory, Rows: 73_000,
		Bounds: []catalog.KeyRange{{Lo: int64(lo), Hi: int64(lo) + 72_999, Known: true}, {Lo: 1, Hi: 1000, Known: true}, {Lo: 0, Hi: 9_999, Known: true}}}
	plain := &catalog.Table{Name: "dd", Schema: schema, Format: catalog.Memory, Rows: 73_000}
	filter := func(tbl *catalog.Table, conj ...Expr) Plan {
		f, err := NewFilter(NewScan(tbl, "d"), And(conj...))
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	cmp := func(op BinaryOp, l, r Expr) Expr { return &Binary{Op: op, Left: l, Right: r} }
	price := func(cents int64) Expr {
		return &Literal{Type: &arrow.Decimal128Type{Precision: 7, Scale: 2}, Value: decimal128.FromI64(cents)}
	}
	days := cmp(OpLtEq, Col("d.d_date"), Lit(lo+1_059))
	from := cmp(OpGtEq, Col("d.d_date"), Lit(lo+1_000))
	cases := []struct {
		name string
		p    Plan
		rows float64
	}{
		{"two bounds of one column", filter(bounded, from, days), 60},
		{"a literal on the left", filter(bounded, cmp(OpGt, Lit(lo+72_000), Col("d.d_date"))), 72_000},
		{"strict bounds", filter(bounded, cmp(OpGt, Col("d.d_date"), Lit(lo+99)), cmp(OpLt, Col("d.d_date"), Lit(lo+200))), 100},
		{"through an integer cast", filter(bounded, cmp(OpLtEq, &Cast{Expr: Col("d.qty"), Type: Int64}, Lit(int64(250)))), 18_250},
		{"a decimal in its unscaled units", filter(bounded, cmp(OpGtEq, Col("d.price"), price(7_500))), 18_250},
		{"outside the bounds", filter(bounded, cmp(OpLt, Col("d.qty"), Lit(int32(0)))), 1},
		{"columns multiply", filter(bounded, from, days, cmp(OpLtEq, Col("d.qty"), Lit(int32(500)))), 30},
		{"no bounds: a third each", filter(plain, from, days), 73_000.0 / 9},
	}
	for _, c := range cases {
		if got := Estimate(c.p).Rows; math.Abs(got-c.rows) > 1e-6*c.rows {
			t.Errorf("%s: %v rows, want %v", c.name, got, c.rows)
		}
	}
}
