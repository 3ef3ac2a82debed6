package codec

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/quiverdb/quiver/arrowpb"
	"github.com/quiverdb/quiver/catalog"
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

// roundTrip encodes p, decodes it, and checks that the result prints,
// has the same schema and re-encodes to the same message.
func roundTrip(t *testing.T, p physical.Plan) physical.Plan {
	t.Helper()
	b, err := Encode(p)
	if err != nil {
		t.Fatalf("Encode: %v\n%s", err, physical.Indent(p))
	}
	got, err := Decode(b)
	if err != nil {
		t.Fatalf("Decode: %v\n%s", err, physical.Indent(p))
	}
	if want, have := physical.Indent(p), physical.Indent(got); want != have {
		t.Fatalf("plan changed in round trip:\nwant:\n%s\ngot:\n%s", want, have)
	}
	if !p.Schema().Equal(got.Schema()) {
		t.Fatalf("schema changed in round trip:\nwant %s\ngot  %s", p.Schema(), got.Schema())
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

func TestTPCHPhysicalRoundTrip(t *testing.T) {
	cat := tpchCatalog(t)
	ctx := context.Background()
	for q := 1; q <= 22; q++ {
		t.Run(fmt.Sprintf("q%02d", q), func(t *testing.T) {
			text, err := os.ReadFile(filepath.Join(tpchDir, "queries", fmt.Sprintf("q%02d.sql", q)))
			if err != nil {
				t.Fatal(err)
			}
			lp, err := sql.NewPlanner(cat).PlanQuery(string(text))
			if err != nil {
				t.Fatal(err)
			}
			if lp, err = optimizer.New().Optimize(ctx, lp, nil); err != nil {
				t.Fatal(err)
			}
			for _, parts := range []int{1, 4} {
				pp, err := planner.New(planner.Config{TargetPartitions: parts}).Plan(ctx, lp)
				if err != nil {
					t.Fatal(err)
				}
				roundTrip(t, pp)
				// As a stage root, the way the scheduler ships it.
				roundTrip(t, &physical.ShuffleWriter{Input: pp, JobID: "job-1", StageID: 3, N: 0, Compression: physical.CompressLZ4})
			}
		})
	}
}

func TestLiteralsAndExpressions(t *testing.T) {
	dec := &arrow.Decimal128Type{Precision: 15, Scale: 2}
	i64 := arrow.PrimitiveTypes.Int64
	col := &physical.Column{Index: 1, Name: "b", Type: i64}
	str := &physical.Column{Index: 2, Name: "c", Type: arrow.BinaryTypes.String}
	lit := func(t arrow.DataType, v any) *physical.Literal { return &physical.Literal{Type: t, Value: v} }
	tsType := &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
	cases := []struct {
		name string
		e    physical.Expr
	}{
		{"null", lit(arrow.Null, nil)},
		{"typed null", lit(dec, nil)},
		{"bool", lit(arrow.FixedWidthTypes.Boolean, true)},
		{"int32", lit(arrow.PrimitiveTypes.Int32, int32(-7))},
		{"int64", lit(i64, int64(1)<<40)},
		{"float64", lit(arrow.PrimitiveTypes.Float64, 0.1)},
		{"string", lit(arrow.BinaryTypes.String, "it's ü")},
		{"decimal", lit(dec, decimal128.New(-3, 12345))},
		{"date32", lit(arrow.FixedWidthTypes.Date32, arrow.Date32(9000))},
		{"interval", lit(arrow.FixedWidthTypes.MonthDayNanoInterval, arrow.MonthDayNanoInterval{Months: 3, Days: -2, Nanoseconds: 5})},
		{"parametric type", lit(tsType, nil)},
		{"column", col},
		{"binary", &physical.Binary{Op: physical.OpMul, Left: col, Right: lit(i64, int64(2)), Type: i64}},
		{"not", &physical.Not{Expr: &physical.Binary{Op: physical.OpLt, Left: col, Right: col, Type: arrow.FixedWidthTypes.Boolean}}},
		{"negative", &physical.Negative{Expr: col}},
		{"is not null", &physical.IsNull{Expr: col, Negated: true}},
		{"cast", &physical.Cast{Expr: col, Type: dec}},
		{"case operand", &physical.Case{Operand: col, Whens: []physical.When{{Cond: lit(i64, int64(1)), Then: str}}, Else: lit(arrow.BinaryTypes.String, "x"), Type: arrow.BinaryTypes.String}},
		{"case searched", &physical.Case{Whens: []physical.When{{Cond: &physical.IsNull{Expr: col}, Then: col}}, Type: i64}},
		{"like", &physical.Like{Expr: str, Pattern: lit(arrow.BinaryTypes.String, "a%"), Negated: true, CaseInsensitive: true}},
		{"in list", &physical.InList{Expr: col, List: []physical.Expr{lit(i64, int64(1)), lit(i64, nil)}, Negated: true}},
		{"scalar func", &physical.ScalarFunc{Name: "substr", Args: []physical.Expr{str, lit(i64, int64(1)), lit(i64, int64(2))}, Type: arrow.BinaryTypes.String}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, err := EncodeExpr(c.e)
			if err != nil {
				t.Fatal(err)
			}
			got, err := DecodeExpr(b)
			if err != nil {
				t.Fatal(err)
			}
			if got.String() != c.e.String() || !arrow.TypeEqual(got.DataType(), c.e.DataType()) {
				t.Fatalf("got %s (%s), want %s (%s)", got, got.DataType(), c.e, c.e.DataType())
			}
			if l, ok := c.e.(*physical.Literal); ok {
				gl := got.(*physical.Literal)
				if gl.Value != l.Value {
					t.Fatalf("literal value %#v (%T), want %#v (%T)", gl.Value, gl.Value, l.Value, l.Value)
				}
			}
			m1, _ := encodeExpr(c.e)
			m2, _ := encodeExpr(got)
			if !proto.Equal(m1, m2) {
				t.Fatal("re-encoding differs")
			}
		})
	}
}

func testSchema() *arrow.Schema {
	md := arrow.NewMetadata([]string{"k"}, []string{"v"})
	return arrow.NewSchema([]arrow.Field{
		{Name: "a", Type: arrow.PrimitiveTypes.Int32},
		{Name: "b", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "c", Type: arrow.BinaryTypes.String, Nullable: true, Metadata: md},
	}, nil)
}

func testLocations() [][]physical.PartitionLocation {
	ex := physical.ExecutorMeta{ID: "exec-1", Host: "127.0.0.1", FlightPort: 50051}
	return [][]physical.PartitionLocation{
		{{JobID: "j1", StageID: 2, OutputPartition: 0, MapPartition: 0, Executor: ex, Rows: 10, Batches: 1, Bytes: 400},
			{JobID: "j1", StageID: 2, OutputPartition: 0, MapPartition: 1, Executor: ex, Rows: 3, Batches: 1, Bytes: 200}},
		{},
		{{JobID: "j1", StageID: 2, OutputPartition: 2, MapPartition: 1, Executor: physical.ExecutorMeta{ID: "exec-2", Host: "h2", FlightPort: 7}, Rows: 1, Batches: 1, Bytes: 50}},
	}
}

func TestShuffleNodes(t *testing.T) {
	s := testSchema()
	col := &physical.Column{Index: 1, Name: "b", Type: arrow.PrimitiveTypes.Int64}
	reader := &physical.ShuffleReader{StageID: 2, OutSchema: s, Locations: testLocations()}
	got := roundTrip(t, &physical.ShuffleWriter{Input: reader, JobID: "job_9", StageID: 4, Keys: []physical.Expr{col}, N: 3, Compression: physical.CompressZstd, Pinned: true})
	w := got.(*physical.ShuffleWriter)
	if !w.Pinned || w.Compression != physical.CompressZstd || w.N != 3 || w.JobID != "job_9" || w.StageID != 4 {
		t.Fatalf("writer fields lost: %+v", w)
	}
	r := w.Input.(*physical.ShuffleReader)
	if fmt.Sprint(r.Locations) != fmt.Sprint(reader.Locations) {
		t.Fatalf("locations: got %v, want %v", r.Locations, reader.Locations)
	}
	if r.Locations[0][1].Executor != reader.Locations[0][1].Executor || r.Locations[0][1].Bytes != 200 {
		t.Fatalf("location details lost: %+v", r.Locations[0][1])
	}
	roundTrip(t, &physical.UnresolvedShuffle{StageID: 5, OutSchema: s, Partitions: 8})
	cr := roundTrip(t, &physical.CacheReader{Key: physical.CacheKey{SessionID: "s1", CacheID: "c1"}, Name: "t", OutSchema: s, Locations: testLocations(), Disjoint: []int{0, 2}}).(*physical.CacheReader)
	if cr.Key.SessionID != "s1" || cr.Key.CacheID != "c1" || cr.OutSchema.Field(2).Metadata.Values()[0] != "v" || fmt.Sprint(cr.Disjoint) != "[0 2]" {
		t.Fatalf("cache reader fields lost: %+v", cr)
	}
}

func TestOtherNodes(t *testing.T) {
	s := testSchema()
	i64 := arrow.PrimitiveTypes.Int64
	b := &physical.Column{Index: 1, Name: "b", Type: i64}
	scan := &physical.Scan{Table: "t", Format: physical.FormatCSV, FileSchema: s, Projection: []int{2, 1},
		Partitions: [][]string{{"/x/a.csv", "/x/b.csv"}, {"/x/c.csv"}}, Options: map[string]string{"delimiter": "|"},
		Predicate: &physical.IsNull{Expr: b}, Fetch: 10}
	mem := &physical.Scan{Table: "m", Format: physical.FormatMemory, FileSchema: s, Projection: []int{}, Partitions: make([][]string, 3), Fetch: -1}
	values := &physical.Values{OutSchema: s, Rows: [][]*physical.Literal{
		{{Type: arrow.PrimitiveTypes.Int32, Value: int32(1)}, {Type: i64, Value: nil}, {Type: arrow.BinaryTypes.String, Value: "x"}},
	}}
	plans := []physical.Plan{
		scan,
		mem,
		values,
		&physical.Empty{OutSchema: s, ProduceOneRow: true},
		&physical.Limit{Input: values, Skip: 2, Fetch: -1},
		&physical.LocalLimit{Input: values, Fetch: 5},
		&physical.Union{Inputs: []physical.Plan{values, values}},
		&physical.Repartition{Input: values, N: 4},
		&physical.Coalesce{Input: &physical.Repartition{Input: values, Keys: []physical.Expr{b}, N: 2}},
		&physical.SortPreservingMerge{Input: &physical.Sort{Input: values, Keys: []physical.SortKey{{Expr: b, Asc: true, NullsFirst: true}}, Fetch: 3, PreservePartitioning: true},
			Keys: []physical.SortKey{{Expr: b}}, Fetch: 3},
		&physical.NestedLoopJoin{Left: values, Right: scan, Type: physical.MarkJoin, MarkName: "mark",
			Filter: &physical.Binary{Op: physical.OpEq, Left: b, Right: &physical.Column{Index: 4, Name: "b", Type: i64}, Type: arrow.FixedWidthTypes.Boolean}},
		&physical.HashJoin{Left: values, Right: values, Mode: physical.Partitioned, Type: physical.AntiJoin, NullAware: true,
			On: []physical.JoinOn{{Left: b, Right: b}}},
		&physical.HashJoin{Left: values, Right: scan, Mode: physical.CollectLeft, Type: physical.RightSemiJoin,
			On: []physical.JoinOn{{Left: b, Right: &physical.Column{Index: 1, Name: "b", Type: i64}}}},
		&physical.HashJoin{Left: values, Right: values, Mode: physical.CollectLeft, Type: physical.RightAntiJoin, NullAware: true,
			On: []physical.JoinOn{{Left: b, Right: b}}},
		&physical.HashAggregate{Input: values, Mode: physical.AggPartial, GroupBy: []physical.Expr{b}, GroupNames: []string{"b"},
			Aggs: []physical.AggregateExpr{{Func: physical.AggCount, Type: i64, Name: "count(*)"},
				{Func: physical.AggAvg, Arg: b, Distinct: true, Type: arrow.PrimitiveTypes.Float64, Name: "avg(b)"},
				{Func: physical.AggCount, Arg: b, Distinct: true, SetState: true, Type: arrow.PrimitiveTypes.Int64, Name: "count(DISTINCT a)"}}},
		collectingAggregate(b),
		&physical.Sort{Input: values, Keys: []physical.SortKey{{Expr: b, Asc: true}, {Expr: b, NullsFirst: true}}, Fetch: -1, PreservePartitioning: true,
			PartitionLimit: &physical.PartitionLimit{Keys: 1, K: 7, Mode: physical.TopKDistinct}},
	}
	for _, p := range plans {
		t.Run(p.String(), func(t *testing.T) {
			got := roundTrip(t, p)
			if sc, ok := got.(*physical.Scan); ok {
				want := p.(*physical.Scan)
				if fmt.Sprint(sc.Partitions, sc.Options, sc.Projection == nil) != fmt.Sprint(want.Partitions, want.Options, want.Projection == nil) {
					t.Fatalf("scan fields lost: %+v", sc)
				}
			}
		})
	}
}

// collectingAggregate is an array_agg(DISTINCT b ORDER BY b DESC) FILTER
// (WHERE b IS NULL) over values.
func collectingAggregate(b *physical.Column) *physical.HashAggregate {
	i64 := arrow.PrimitiveTypes.Int64
	values := &physical.Values{OutSchema: testSchema()}
	arg := &physical.ScalarFunc{Name: physical.PairFunc, Args: []physical.Expr{b, b, &physical.IsNull{Expr: b}},
		Type: physical.RowType(i64, i64, arrow.FixedWidthTypes.Boolean)}
	return &physical.HashAggregate{Input: values, Mode: physical.AggPartial, Aggs: []physical.AggregateExpr{
		{Func: physical.AggArrayAgg, Arg: arg, Distinct: true, Order: []physical.AggOrder{{Desc: true, NullsFirst: true}}, Filter: true, Type: arrow.ListOf(i64), Name: "array_agg(b)"}}}
}

// TestDecodeRejectsCollecting checks that a collecting aggregate's row
// layout (own arguments, sort keys, filter) is checked on decoding.
func TestDecodeRejectsCollecting(t *testing.T) {
	b := &physical.Column{Index: 1, Name: "b", Type: arrow.PrimitiveTypes.Int64}
	for name, mutate := range map[string]func(*rpc.PhysicalAggregateExpr){
		"extra key": func(a *rpc.PhysicalAggregateExpr) {
			a.OrderDesc, a.OrderNullsFirst = append(a.OrderDesc, true), append(a.OrderNullsFirst, true)
		},
		"unpaired order":  func(a *rpc.PhysicalAggregateExpr) { a.OrderNullsFirst = nil },
		"no filter field": func(a *rpc.PhysicalAggregateExpr) { a.Filter = false },
		"order on a sum":  func(a *rpc.PhysicalAggregateExpr) { a.Func = int32(physical.AggSum) },
	} {
		t.Run(name, func(t *testing.T) {
			m, err := EncodePlan(collectingAggregate(b))
			if err != nil {
				t.Fatal(err)
			}
			mutate(m.GetHashAggregate().Aggs[0])
			bs, err := proto.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			if p, err := Decode(bs); err == nil {
				t.Fatalf("decoded %s", physical.Indent(p))
			}
		})
	}
}

func TestDecodeRejects(t *testing.T) {
	s, err := arrowpb.EncodeSchema(testSchema())
	if err != nil {
		t.Fatal(err)
	}
	col := func(i int32) *rpc.PhysicalExpr {
		return &rpc.PhysicalExpr{Kind: &rpc.PhysicalExpr_Column{Column: &rpc.PhysicalColumn{Index: i, Name: "x", Type: &rpc.ArrowType{Id: int32(arrow.INT64)}}}}
	}
	values := &rpc.PhysicalPlan{Node: &rpc.PhysicalPlan_Values{Values: &rpc.PhysicalValues{Schema: s}}}
	bad := map[string]*rpc.PhysicalPlan{
		"empty node":          {},
		"column out of range": {Node: &rpc.PhysicalPlan_Filter{Filter: &rpc.PhysicalFilter{Input: values, Predicate: col(3)}}},
		"negative column":     {Node: &rpc.PhysicalPlan_Filter{Filter: &rpc.PhysicalFilter{Input: values, Predicate: col(-1)}}},
		"missing predicate":   {Node: &rpc.PhysicalPlan_Filter{Filter: &rpc.PhysicalFilter{Input: values}}},
		"bad join type":       {Node: &rpc.PhysicalPlan_NestedLoopJoin{NestedLoopJoin: &rpc.PhysicalNestedLoopJoin{Left: values, Right: values, Type: 99}}},
		"bad agg mode":        {Node: &rpc.PhysicalPlan_HashAggregate{HashAggregate: &rpc.PhysicalHashAggregate{Input: values, Mode: 7}}},
		"names mismatch":      {Node: &rpc.PhysicalPlan_Projection{Projection: &rpc.PhysicalProjection{Input: values, Exprs: []*rpc.PhysicalExpr{col(0)}}}},
		"empty union":         {Node: &rpc.PhysicalPlan_Union{Union: &rpc.PhysicalUnion{}}},
		"bad schema":          {Node: &rpc.PhysicalPlan_Empty{Empty: &rpc.PhysicalEmpty{Schema: []byte("not arrow")}}},
		"bad format":          {Node: &rpc.PhysicalPlan_Scan{Scan: &rpc.PhysicalScan{Format: "orc", FileSchema: s}}},
		"projection range":    {Node: &rpc.PhysicalPlan_Scan{Scan: &rpc.PhysicalScan{Format: "csv", FileSchema: s, HasProjection: true, Projection: []int32{3}}}},
		"bad job id":          {Node: &rpc.PhysicalPlan_ShuffleWriter{ShuffleWriter: &rpc.PhysicalShuffleWriter{Input: values, JobId: "../etc"}}},
		"bad compression":     {Node: &rpc.PhysicalPlan_ShuffleWriter{ShuffleWriter: &rpc.PhysicalShuffleWriter{Input: values, JobId: "j", Compression: "gzip"}}},
		"bad location": {Node: &rpc.PhysicalPlan_ShuffleReader{ShuffleReader: &rpc.PhysicalShuffleReader{Schema: s, Locations: []*rpc.PartitionLocations{
			{Locations: []*rpc.PartitionLocation{{JobId: "a/b", StageId: 1}}}}}}},
		"negative map partition": {Node: &rpc.PhysicalPlan_ShuffleReader{ShuffleReader: &rpc.PhysicalShuffleReader{Schema: s, Locations: []*rpc.PartitionLocations{
			{Locations: []*rpc.PartitionLocation{{JobId: "a", MapPartition: -1}}}}}}},
		"bad decimal":            {Node: &rpc.PhysicalPlan_Filter{Filter: &rpc.PhysicalFilter{Input: values, Predicate: &rpc.PhysicalExpr{Kind: &rpc.PhysicalExpr_Literal{Literal: &rpc.Literal{Type: &rpc.ArrowType{Id: int32(arrow.DECIMAL128), Precision: 50}}}}}}},
		"unknown type":           {Node: &rpc.PhysicalPlan_Filter{Filter: &rpc.PhysicalFilter{Input: values, Predicate: &rpc.PhysicalExpr{Kind: &rpc.PhysicalExpr_Literal{Literal: &rpc.Literal{Type: &rpc.ArrowType{Id: 9999}}}}}}},
		"values width":           {Node: &rpc.PhysicalPlan_Values{Values: &rpc.PhysicalValues{Schema: s, Rows: []*rpc.LiteralRow{{}}}}},
		"partition limit keys":   {Node: &rpc.PhysicalPlan_Sort{Sort: &rpc.PhysicalSort{Input: values, Keys: []*rpc.PhysicalSortKey{{Expr: col(0)}}, Fetch: -1, PartitionLimit: &rpc.PartitionLimit{Keys: 2, K: 1}}}},
		"partition limit k":      {Node: &rpc.PhysicalPlan_Sort{Sort: &rpc.PhysicalSort{Input: values, Keys: []*rpc.PhysicalSortKey{{Expr: col(0)}}, Fetch: -1, PartitionLimit: &rpc.PartitionLimit{Keys: 1, K: 0}}}},
		"partition limit mode":   {Node: &rpc.PhysicalPlan_Sort{Sort: &rpc.PhysicalSort{Input: values, Keys: []*rpc.PhysicalSortKey{{Expr: col(0)}}, Fetch: -1, PartitionLimit: &rpc.PartitionLimit{Keys: 1, K: 1, Mode: 9}}}},
		"partition limit fetch":  {Node: &rpc.PhysicalPlan_Sort{Sort: &rpc.PhysicalSort{Input: values, Keys: []*rpc.PhysicalSortKey{{Expr: col(0)}}, Fetch: 3, PartitionLimit: &rpc.PartitionLimit{Keys: 1, K: 1}}}},
		"shuffle partitions":     {Node: &rpc.PhysicalPlan_ShuffleWriter{ShuffleWriter: &rpc.PhysicalShuffleWriter{Input: values, JobId: "j", N: 1 << 30}}},
		"repartition partitions": {Node: &rpc.PhysicalPlan_Repartition{Repartition: &rpc.PhysicalRepartition{Input: values, N: 1 << 30}}},
		"unresolved partitions":  {Node: &rpc.PhysicalPlan_UnresolvedShuffle{UnresolvedShuffle: &rpc.PhysicalUnresolvedShuffle{Schema: s, StageId: 1, Partitions: 1 << 30}}},
		"count args":             {Node: &rpc.PhysicalPlan_HashAggregate{HashAggregate: &rpc.PhysicalHashAggregate{Input: values, Aggs: []*rpc.PhysicalAggregateExpr{{Func: int32(physical.AggSum), Type: &rpc.ArrowType{Id: int32(arrow.INT64)}}}}}},
		"case no whens":          {Node: &rpc.PhysicalPlan_Filter{Filter: &rpc.PhysicalFilter{Input: values, Predicate: &rpc.PhysicalExpr{Kind: &rpc.PhysicalExpr_Case{Case: &rpc.PhysicalCase{Type: &rpc.ArrowType{Id: 1}}}}}}},
	}
	for name, m := range bad {
		t.Run(name, func(t *testing.T) {
			b, err := proto.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			p, err := Decode(b)
			if err == nil {
				t.Fatalf("decoded %v, want an error", p)
			}
			if qerr.KindOf(err) != qerr.Internal || !strings.Contains(err.Error(), "codec:") {
				t.Fatalf("error %v: want an Internal codec error", err)
			}
		})
	}
	if _, err := Decode([]byte{0xff, 0xff, 0xff}); qerr.KindOf(err) != qerr.Internal {
		t.Fatalf("garbage: got %v, want an Internal error", err)
	}
}

func FuzzDecode(f *testing.F) {
	s := testSchema()
	b := &physical.Column{Index: 1, Name: "b", Type: arrow.PrimitiveTypes.Int64}
	values := &physical.Values{OutSchema: s, Rows: [][]*physical.Literal{
		{{Type: arrow.PrimitiveTypes.Int32, Value: int32(1)}, {Type: arrow.PrimitiveTypes.Int64, Value: int64(2)}, {Type: arrow.BinaryTypes.String, Value: "x"}}}}
	seeds := []physical.Plan{
		&physical.ShuffleWriter{Input: &physical.Filter{Input: values, Predicate: &physical.IsNull{Expr: b}}, JobID: "j", N: 2, Keys: []physical.Expr{b}},
		&physical.ShuffleReader{StageID: 1, OutSchema: s, Locations: testLocations()},
		&physical.Scan{Table: "t", Format: physical.FormatParquet, FileSchema: s, Projection: []int{1}, Partitions: [][]string{{"a"}}, Fetch: -1},
	}
	for _, p := range seeds {
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
		// A decoded plan is usable: it re-encodes and prints.
		if _, err := Encode(p); err != nil {
			t.Fatalf("re-encode of a decoded plan: %v", err)
		}
		_ = physical.Indent(p)
	})
}

// TestScanStatsRoundTrip: a scan's statistics travel with it (the
// executors' hash tables choose their layouts from them), and statistics
// that do not fit the scan are refused.
func TestScanStatsRoundTrip(t *testing.T) {
	s := testSchema()
	st := &physical.PlanStats{Rows: 1000, Cols: []physical.ColumnStats{
		{Bounded: true, Lo: -3, Hi: 1 << 40, NoNulls: true, Distinct: 77}, {LongestAtLeast: 12}}}
	scan := &physical.Scan{Table: "t", Format: physical.FormatParquet, FileSchema: s, Projection: []int{1, 2},
		Partitions: [][]string{{"a"}}, Fetch: -1, Stats: st}
	got := roundTrip(t, scan).(*physical.Scan)
	if got.Stats == nil || got.Stats.Rows != 1000 || len(got.Stats.Cols) != 2 || got.Stats.Cols[0] != st.Cols[0] || got.Stats.Cols[1] != st.Cols[1] {
		t.Fatalf("statistics %+v, want %+v", got.Stats, st)
	}
	if got := roundTrip(t, &physical.Scan{Table: "t", Format: physical.FormatCSV, FileSchema: s, Partitions: [][]string{{"a"}}, Fetch: -1}).(*physical.Scan); got.Stats != nil {
		t.Fatalf("statistics %+v from none", got.Stats)
	}
	for name, bad := range map[string]*physical.PlanStats{
		"too few columns": {Rows: 1, Cols: st.Cols[:1]},
		"reversed bounds": {Rows: 1, Cols: []physical.ColumnStats{{Bounded: true, Lo: 2, Hi: 1}, {}}},
		"negative rows":   {Rows: -2, Cols: st.Cols},
	} {
		b, err := Encode(&physical.Scan{Table: "t", Format: physical.FormatParquet, FileSchema: s, Projection: []int{1, 2}, Partitions: [][]string{{"a"}}, Fetch: -1, Stats: bad})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Decode(b); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
}

// TestCacheReaderStatsRoundTrip: a cache file's column statistics and a
// cache read's pruning hint travel with the plan; malformed statistics
// are refused.
func TestCacheReaderStatsRoundTrip(t *testing.T) {
	s := testSchema()
	locs := testLocations()
	st := []physical.ColumnStats{{Bounded: true, Lo: -3, Hi: 9, NoNulls: true, Distinct: 4}, {LongestAtLeast: 7}, {}}
	locs[0][0].Stats = st
	pred := &physical.Binary{Op: physical.OpGt, Left: &physical.Column{Index: 1, Name: "b", Type: arrow.PrimitiveTypes.Int64},
		Right: &physical.Literal{Type: arrow.PrimitiveTypes.Int64, Value: int64(5)}, Type: arrow.FixedWidthTypes.Boolean}
	cr := roundTrip(t, &physical.CacheReader{Key: physical.CacheKey{SessionID: "s1", CacheID: "c1"}, OutSchema: s, Locations: locs, Predicate: pred}).(*physical.CacheReader)
	if !reflect.DeepEqual(cr.Locations[0][0].Stats, st) || cr.Locations[0][1].Stats != nil {
		t.Fatalf("location statistics %+v / %+v, want %+v / none", cr.Locations[0][0].Stats, cr.Locations[0][1].Stats, st)
	}
	if cr.Predicate == nil || cr.Predicate.String() != pred.String() {
		t.Fatalf("predicate %v, want %v", cr.Predicate, pred)
	}
	locs[0][0].Stats = []physical.ColumnStats{{Bounded: true, Lo: 2, Hi: 1}}
	b, err := Encode(&physical.CacheReader{OutSchema: s, Locations: locs})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Decode(b); err == nil {
		t.Fatal("reversed bounds decoded")
	}
}
