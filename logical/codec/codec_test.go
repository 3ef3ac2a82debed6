package codec

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/quiverdb/quiver/arrowpb"
	"github.com/quiverdb/quiver/catalog"
	"github.com/quiverdb/quiver/logical"
	"github.com/quiverdb/quiver/logical/optimizer"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/physical/planner"
	"github.com/quiverdb/quiver/qerr"
	"github.com/quiverdb/quiver/rpc"
	"github.com/quiverdb/quiver/sql"
	"google.golang.org/protobuf/proto"
)

const tpchDir = "../../tpch"

var tpchTables = []string{"customer", "lineitem", "nation", "orders", "part", "partsupp", "region", "supplier"}

func tpchCatalog(t *testing.T) *catalog.Catalog {
	t.Helper()
	cat := catalog.New()
	t.Cleanup(cat.Close)
	for _, name := range tpchTables {
		tab, err := catalog.OpenTable(name, catalog.Parquet, filepath.Join(tpchDir, "sf0.01", name+".parquet"), nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := cat.RegisterTable(tab, false); err != nil {
			t.Fatal(err)
		}
	}
	return cat
}

// roundTrip encodes p, decodes it and checks that the result prints the
// same, has the same schema (with nullability) and re-encodes to the same
// message (which covers what Indent does not show: subquery plans, scan
// tables, literal values).
func roundTrip(t *testing.T, p logical.Plan) logical.Plan {
	t.Helper()
	b, err := Encode(p)
	if err != nil {
		t.Fatalf("Encode: %v\n%s", err, logical.Indent(p))
	}
	got, err := Decode(b)
	if err != nil {
		t.Fatalf("Decode: %v\n%s", err, logical.Indent(p))
	}
	if want, have := logical.Indent(p), logical.Indent(got); want != have {
		t.Fatalf("plan changed in round trip:\nwant:\n%s\ngot:\n%s", want, have)
	}
	if want, have := p.Schema().String(), got.Schema().String(); want != have {
		t.Fatalf("schema changed in round trip:\nwant %s\ngot  %s", want, have)
	}
	m1, err := EncodePlan(p)
	if err != nil {
		t.Fatal(err)
	}
	m2, err := EncodePlan(got)
	if err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(m1, m2) {
		t.Fatalf("re-encoded plan differs from the original encoding")
	}
	return got
}

func TestTPCHLogicalRoundTrip(t *testing.T) {
	cat := tpchCatalog(t)
	ctx := context.Background()
	for q := 1; q <= 22; q++ {
		t.Run(fmt.Sprintf("q%02d", q), func(t *testing.T) {
			text, err := os.ReadFile(filepath.Join(tpchDir, "queries", fmt.Sprintf("q%02d.sql", q)))
			if err != nil {
				t.Fatal(err)
			}
			raw, err := sql.NewPlanner(cat).PlanQuery(string(text))
			if err != nil {
				t.Fatal(err)
			}
			// The unoptimized plan still holds subqueries and outer references.
			roundTrip(t, raw)
			opt, err := optimizer.New().Optimize(ctx, raw, nil)
			if err != nil {
				t.Fatal(err)
			}
			got := roundTrip(t, opt)
			// The scheduler plans the decoded plan: it must give the same physical plan.
			pl := planner.New(planner.Config{TargetPartitions: 4})
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
		})
	}
}

func testTable() *catalog.Table {
	return &catalog.Table{Name: "t", Format: catalog.CSV, Location: "/data/t", Files: []string{"/data/t/a.csv", "/data/t/b.csv"},
		Options: map[string]string{"delimiter": "|", "has_header": "true"}, Rows: 42,
		Schema: arrow.NewSchema([]arrow.Field{
			{Name: "a", Type: arrow.PrimitiveTypes.Int32},
			{Name: "b", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
			{Name: "c", Type: arrow.BinaryTypes.String, Nullable: true},
			{Name: "d", Type: &arrow.Decimal128Type{Precision: 15, Scale: 2}, Nullable: true},
			{Name: "e", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
		}, nil)}
}

func TestExpressions(t *testing.T) {
	scan := logical.NewScan(testTable(), "t")
	dec := &arrow.Decimal128Type{Precision: 15, Scale: 2}
	b, c, d, e := logical.Col("t.b"), logical.Col("c"), logical.Col("d"), logical.Col("e")
	sub := logical.NewScan(testTable(), "s").WithProjection([]int{1})
	exprs := []logical.Expr{
		logical.Lit(nil),
		&logical.Literal{Type: dec, Value: nil},
		logical.Lit(true),
		logical.Lit(int32(-5)),
		logical.Lit(int64(1) << 50),
		logical.Lit(2.5),
		logical.Lit("it's"),
		&logical.Literal{Type: dec, Value: decimal128.New(-1, 99)},
		logical.Lit(arrow.Date32(10000)),
		&logical.Binary{Op: logical.OpAdd, Left: e, Right: &logical.Literal{Type: logical.Interval, Value: arrow.MonthDayNanoInterval{Months: 1, Days: 2, Nanoseconds: 3}}},
		&logical.Alias{Expr: &logical.Binary{Op: logical.OpMul, Left: b, Right: logical.Lit(int64(2))}, Name: "twice"},
		&logical.Not{Expr: &logical.Binary{Op: logical.OpEq, Left: b, Right: b}},
		&logical.Negative{Expr: d},
		&logical.IsNull{Expr: c, Negated: true},
		&logical.Cast{Expr: b, Type: dec},
		&logical.Case{Operand: b, Whens: []logical.When{{Cond: logical.Lit(int64(1)), Then: c}}, Else: logical.Lit("x")},
		&logical.Case{Whens: []logical.When{{Cond: &logical.IsNull{Expr: b}, Then: d}}},
		&logical.Like{Expr: c, Pattern: logical.Lit("a%"), Negated: true, CaseInsensitive: true},
		&logical.InList{Expr: b, List: []logical.Expr{logical.Lit(int64(1)), logical.Lit(int64(2))}, Negated: true},
		&logical.ScalarFunc{Name: "substr", Args: []logical.Expr{c, logical.Lit(int64(1)), logical.Lit(int64(3))}},
		&logical.ScalarSubquery{Plan: sub},
		&logical.Exists{Plan: sub, Negated: true},
		&logical.InSubquery{Expr: b, Plan: sub, Negated: true},
		&logical.Binary{Op: logical.OpEq, Left: b, Right: &logical.OuterRef{Qualifier: "o", Name: "x", Type: logical.Int64, Nullable: true}},
	}
	for _, x := range exprs {
		t.Run(x.String(), func(t *testing.T) {
			enc, err := EncodeExpr(x)
			if err != nil {
				t.Fatal(err)
			}
			got, err := DecodeExpr(enc)
			if err != nil {
				t.Fatal(err)
			}
			if got.String() != x.String() {
				t.Fatalf("got %s, want %s", got, x)
			}
			if l, ok := x.(*logical.Literal); ok {
				gl := got.(*logical.Literal)
				if gl.Value != l.Value || !arrow.TypeEqual(gl.Type, l.Type) {
					t.Fatalf("literal %#v (%s), want %#v (%s)", gl.Value, gl.Type, l.Value, l.Type)
				}
			}
			m1, _ := encodeExpr(x)
			m2, _ := encodeExpr(got)
			if !proto.Equal(m1, m2) {
				t.Fatal("re-encoding differs")
			}
			// In a plan, the constructors type it over the scan.
			p, err := logical.NewProjection(scan, []logical.Expr{x})
			if err != nil {
				t.Fatal(err)
			}
			roundTrip(t, p)
		})
	}
	agg, err := logical.NewAggregate(scan, []logical.Expr{c}, []logical.Expr{
		&logical.AggExpr{Func: logical.AggCount},
		&logical.Alias{Expr: &logical.AggExpr{Func: logical.AggSum, Args: []logical.Expr{d}, Distinct: true}, Name: "s"},
		&logical.AggExpr{Func: logical.AggAvg, Args: []logical.Expr{b}},
		&logical.AggExpr{Func: logical.AggMin, Args: []logical.Expr{e}},
		&logical.AggExpr{Func: logical.AggMax, Args: []logical.Expr{c}},
		&logical.AggExpr{Func: logical.AggArrayAgg, Args: []logical.Expr{d, c, &logical.IsNull{Expr: b}}, Distinct: true, Order: []logical.AggOrder{{Desc: true}}, Filter: true},
		&logical.AggExpr{Func: logical.AggStringAgg, Args: []logical.Expr{c, logical.Lit(","), b, d}, Order: []logical.AggOrder{{NullsFirst: true}, {Desc: true, NullsFirst: true}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	roundTrip(t, agg)
}

func TestNodes(t *testing.T) {
	tab := testTable()
	scan := logical.NewScan(tab, "t").WithProjection([]int{2, 1}).WithFilters([]logical.Expr{&logical.IsNull{Expr: logical.Col("b")}})
	scan.Fetch = 7
	all := logical.NewScan(tab, "u")
	b := logical.Col("t.b")
	schema := logical.NewSchema(logical.Field{Qualifier: "v", Name: "x", Type: logical.Int64, Nullable: true}, logical.Field{Name: "y", Type: logical.String})
	values, err := logical.NewValues(schema, [][]logical.Expr{{logical.Lit(int64(1)), logical.Lit("a")}, {logical.Lit(nil), logical.Lit("b")}})
	if err != nil {
		t.Fatal(err)
	}
	must := func(p logical.Plan, err error) logical.Plan {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	plans := []logical.Plan{
		scan,
		all,
		values,
		logical.NewEmptyRelation(true, nil),
		logical.NewEmptyRelation(false, schema),
		must(logical.NewFilter(scan, &logical.Binary{Op: logical.OpGt, Left: b, Right: logical.Lit(int64(3))})),
		must(logical.NewSort(scan, []logical.SortKey{{Expr: b, Asc: true, NullsFirst: true}, {Expr: logical.Col("c")}}, 10)),
		&logical.Limit{Input: scan, Skip: 3, Fetch: -1},
		must(logical.NewUnion([]logical.Plan{values, values, values})),
		logical.NewSubqueryAlias(values, "w"),
		&logical.Cache{CacheID: "2b4b4a04-9a5e-4c4f-8b7a-0d6e1c1f0a11", SessionID: "sess", Input: scan, Options: map[string]string{"k": "v"}, Name: "cached"},
		must(logical.NewJoin(scan, all, logical.LeftJoin, []logical.EquiPair{{Left: b, Right: logical.Col("u.b")}},
			&logical.Binary{Op: logical.OpNotEq, Left: logical.Col("t.c"), Right: logical.Col("u.c")}, false, "")),
		must(logical.NewJoin(scan, all, logical.AntiJoin, []logical.EquiPair{{Left: b, Right: logical.Col("u.b")}}, nil, true, "")),
		must(logical.NewJoin(scan, all, logical.MarkJoin, nil, &logical.Binary{Op: logical.OpEq, Left: b, Right: logical.Col("u.b")}, false, "m")),
		must(logical.NewJoin(scan, all, logical.FullJoin, nil, nil, false, "")),
	}
	for _, p := range plans {
		t.Run(p.String(), func(t *testing.T) { roundTrip(t, p) })
	}

	got := roundTrip(t, scan).(*logical.Scan)
	gt := got.Table
	if gt.Name != tab.Name || gt.Format != tab.Format || gt.Location != tab.Location || gt.Rows != tab.Rows ||
		fmt.Sprint(gt.Files, gt.Options) != fmt.Sprint(tab.Files, tab.Options) || !gt.Schema.Equal(tab.Schema) || got.Fetch != 7 {
		t.Fatalf("table lost fields: %+v", gt)
	}
	c := roundTrip(t, plans[10]).(*logical.Cache)
	if c.CacheID != "2b4b4a04-9a5e-4c4f-8b7a-0d6e1c1f0a11" || c.SessionID != "sess" || c.Name != "cached" || c.Options["k"] != "v" {
		t.Fatalf("cache lost fields: %+v", c)
	}
}

func TestMemoryTable(t *testing.T) {
	tab := &catalog.Table{Name: "mem", Format: catalog.Memory, Rows: 9,
		Schema:     arrow.NewSchema([]arrow.Field{{Name: "a", Type: arrow.PrimitiveTypes.Int64}}, nil),
		Partitions: make([][]arrow.RecordBatch, 3), Location: "ignored", Files: []string{"ignored"}}
	got := roundTrip(t, logical.NewScan(tab, "mem")).(*logical.Scan).Table
	if got.Format != catalog.Memory || len(got.Partitions) != 3 || got.NumPartitions() != 3 || got.Rows != 9 || got.Location != "" || got.Files != nil {
		t.Fatalf("memory table decoded as %+v", got)
	}
	for i, p := range got.Partitions {
		if p != nil {
			t.Fatalf("partition %d carries batches", i)
		}
	}
}

func TestDecodeRejects(t *testing.T) {
	schema, err := arrowpb.EncodeSchema(testTable().Schema)
	if err != nil {
		t.Fatal(err)
	}
	scan := &rpc.LogicalPlan{Node: &rpc.LogicalPlan_Scan{Scan: &rpc.LogicalScan{Table: &rpc.TableDef{Name: "t", Schema: schema, Format: "csv"}, Qualifier: "t"}}}
	col := func(name string) *rpc.LogicalExpr {
		return &rpc.LogicalExpr{Kind: &rpc.LogicalExpr_Column{Column: &rpc.LogicalColumn{Name: name}}}
	}
	bad := map[string]*rpc.LogicalPlan{
		"empty":            {},
		"unknown column":   {Node: &rpc.LogicalPlan_Filter{Filter: &rpc.LogicalFilter{Input: scan, Predicate: col("nope")}}},
		"non-bool filter":  {Node: &rpc.LogicalPlan_Filter{Filter: &rpc.LogicalFilter{Input: scan, Predicate: col("c")}}},
		"missing filter":   {Node: &rpc.LogicalPlan_Filter{Filter: &rpc.LogicalFilter{Input: scan}}},
		"bad join type":    {Node: &rpc.LogicalPlan_Join{Join: &rpc.LogicalJoin{Left: scan, Right: scan, Type: 42}}},
		"bad op":           {Node: &rpc.LogicalPlan_Projection{Projection: &rpc.LogicalProjection{Input: scan, Exprs: []*rpc.LogicalExpr{{Kind: &rpc.LogicalExpr_Binary{Binary: &rpc.LogicalBinary{Op: 99, Left: col("a"), Right: col("a")}}}}}}},
		"short union":      {Node: &rpc.LogicalPlan_Union{Union: &rpc.LogicalUnion{Inputs: []*rpc.LogicalPlan{scan}}}},
		"bad format":       {Node: &rpc.LogicalPlan_Scan{Scan: &rpc.LogicalScan{Table: &rpc.TableDef{Name: "t", Schema: schema, Format: "orc"}}}},
		"bad schema":       {Node: &rpc.LogicalPlan_Scan{Scan: &rpc.LogicalScan{Table: &rpc.TableDef{Name: "t", Schema: []byte{1, 2, 3}, Format: "csv"}}}},
		"projection range": {Node: &rpc.LogicalPlan_Scan{Scan: &rpc.LogicalScan{Table: &rpc.TableDef{Name: "t", Schema: schema, Format: "csv"}, HasProjection: true, Projection: []int32{5}}}},
		"values arity":     {Node: &rpc.LogicalPlan_Values{Values: &rpc.LogicalValues{Rows: []*rpc.LogicalExprRow{{Values: []*rpc.LogicalExpr{col("a")}}}}}},
		"not an aggregate": {Node: &rpc.LogicalPlan_Aggregate{Aggregate: &rpc.LogicalAggregate{Input: scan, Aggs: []*rpc.LogicalExpr{col("a")}}}},
		"bad agg func":     {Node: &rpc.LogicalPlan_Aggregate{Aggregate: &rpc.LogicalAggregate{Input: scan, Aggs: []*rpc.LogicalExpr{{Kind: &rpc.LogicalExpr_Agg{Agg: &rpc.LogicalAggExpr{Func: int32(logical.AggLast) + 1}}}}}}},
		"cache without id": {Node: &rpc.LogicalPlan_Cache{Cache: &rpc.LogicalCache{Input: scan}}},
		// A partition count is not backed by bytes: a forged one once
		// allocated 2^31 partitions.
		"memory partitions": {Node: &rpc.LogicalPlan_Scan{Scan: &rpc.LogicalScan{Table: &rpc.TableDef{Name: "t", Schema: schema, Format: "memory", MemoryPartitions: 1 << 30}}}},
		"decimal mismatch": {Node: &rpc.LogicalPlan_Projection{Projection: &rpc.LogicalProjection{Input: scan, Exprs: []*rpc.LogicalExpr{{Kind: &rpc.LogicalExpr_Literal{Literal: &rpc.Literal{
			Type: &rpc.ArrowType{Id: int32(arrow.INT64)}, Value: &rpc.Literal_DecimalValue{DecimalValue: &rpc.Decimal128Value{Lo: 1}}}}}}}}},
		"empty subquery": {Node: &rpc.LogicalPlan_Projection{Projection: &rpc.LogicalProjection{Input: scan, Exprs: []*rpc.LogicalExpr{{Kind: &rpc.LogicalExpr_ScalarSubquery{ScalarSubquery: &rpc.LogicalPlan{
			Node: &rpc.LogicalPlan_EmptyRelation{EmptyRelation: &rpc.LogicalEmptyRelation{}}}}}}}}},
	}
	for name, m := range bad {
		t.Run(name, func(t *testing.T) {
			enc, err := proto.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			p, err := Decode(enc)
			if err == nil {
				t.Fatalf("decoded %s, want an error", logical.Indent(p))
			}
			if qerr.KindOf(err) != qerr.Internal || !strings.Contains(err.Error(), "codec:") {
				t.Fatalf("error %v: want an Internal codec error", err)
			}
		})
	}
	if _, err := Decode([]byte("\xff\xff\xff\xff")); qerr.KindOf(err) != qerr.Internal {
		t.Fatalf("garbage: got %v, want an Internal error", err)
	}
}

func FuzzDecode(f *testing.F) {
	tab := testTable()
	scan := logical.NewScan(tab, "t")
	filter, err := logical.NewFilter(scan, &logical.InList{Expr: logical.Col("b"), List: []logical.Expr{logical.Lit(int64(1))}})
	if err != nil {
		f.Fatal(err)
	}
	proj, err := logical.NewProjection(filter, []logical.Expr{&logical.Alias{Expr: &logical.Cast{Expr: logical.Col("a"), Type: logical.Int64}, Name: "x"}})
	if err != nil {
		f.Fatal(err)
	}
	for _, p := range []logical.Plan{scan, proj, &logical.Cache{CacheID: "c", Input: proj}} {
		enc, err := Encode(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(enc)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Decode(data)
		if err != nil {
			if qerr.KindOf(err) != qerr.Internal {
				t.Fatalf("error of kind %v: %v", qerr.KindOf(err), err)
			}
			return
		}
		if _, err := Encode(p); err != nil {
			t.Fatalf("re-encode of a decoded plan: %v", err)
		}
		_ = logical.Indent(p)
	})
}

// TestDeepExpressionTravels: an expression as deep as SQL planning allows
// survives the wire (protobuf's default recursion limit, 10,000, did not
// let a 10,000-term sum through); a deeper one is refused.
func TestDeepExpressionTravels(t *testing.T) {
	chain := func(n int) logical.Plan {
		var e logical.Expr = logical.Lit(int64(1))
		for i := 1; i < n; i++ {
			e = &logical.Binary{Op: logical.OpAdd, Left: e, Right: logical.Lit(int64(1))}
		}
		p, err := logical.NewProjection(logical.NewEmptyRelation(true, logical.NewSchema()), []logical.Expr{&logical.Alias{Expr: e, Name: "s"}})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	b, err := Encode(chain(logical.MaxExprDepth - 10))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Decode(b); err != nil {
		t.Fatalf("an expression at the depth limit: %v", err)
	}
	b, err = Encode(chain(logical.MaxExprDepth + 10))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Decode(b); qerr.KindOf(err) != qerr.Internal || !strings.Contains(err.Error(), "too large") {
		t.Fatalf("an expression over the depth limit: got %v", err)
	}
}

// TestTableBoundsTravel checks that a table's value bounds (known and
// unknown) and distinct bounds survive the codec, so the scheduler's
// estimates match the client's.
func TestTableBoundsTravel(t *testing.T) {
	tab := testTable()
	n := tab.Schema.NumFields()
	tab.Distinct = make([]int64, n)
	tab.Bounds = make([]catalog.KeyRange, n)
	tab.Bounds[0] = catalog.KeyRange{Lo: -5, Hi: 70, Known: true}
	tab.Distinct[0] = 76
	got := roundTrip(t, logical.NewScan(tab, "t")).(*logical.Scan).Table
	if !slices.Equal(got.Bounds, tab.Bounds) || !slices.Equal(got.Distinct, tab.Distinct) {
		t.Fatalf("bounds decoded as %v (distinct %v), want %v (%v)", got.Bounds, got.Distinct, tab.Bounds, tab.Distinct)
	}
	tab.Bounds = nil
	if got := roundTrip(t, logical.NewScan(tab, "t")).(*logical.Scan).Table; got.Bounds != nil {
		t.Fatalf("no bounds decoded as %v", got.Bounds)
	}
}
