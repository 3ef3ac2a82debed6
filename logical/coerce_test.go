package logical

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/quiverdb/quiver/qerr"
)

func TestCoerce(t *testing.T) {
	s := NewSchema(
		Field{Qualifier: "t", Name: "i32", Type: Int32},
		Field{Qualifier: "t", Name: "i64", Type: Int64},
		Field{Qualifier: "t", Name: "f", Type: Float64},
		Field{Qualifier: "t", Name: "d", Type: Decimal(15, 2)},
		Field{Qualifier: "t", Name: "s", Type: String},
		Field{Qualifier: "t", Name: "dt", Type: Date},
		Field{Qualifier: "t", Name: "b", Type: Bool},
	)
	c := func(n string) Expr { return Col("t." + n) }
	bin := func(op BinaryOp, l, r Expr) Expr { return &Binary{Op: op, Left: l, Right: r} }
	dec := &Literal{Type: Decimal(3, 2), Value: decimal128.FromI64(6)}
	cases := []struct {
		name string
		in   Expr
		want string // the coerced expression's String(), or "" when an error is expected
		typ  arrow.DataType
	}{
		{"same types", bin(OpEq, c("i64"), c("i64")), "t.i64 = t.i64", Bool},
		{"int32 vs int64 widens", bin(OpLt, c("i32"), c("i64")), "CAST(t.i32 AS Int64) < t.i64", Bool},
		{"int32 vs small int literal keeps int32", bin(OpEq, c("i32"), Lit(15)), "t.i32 = 15", Bool},
		{"decimal vs int literal folds", bin(OpLt, c("d"), Lit(24)), "t.d < 24", Bool},
		{"decimal vs int column", bin(OpLt, c("d"), c("i64")), "t.d < CAST(t.i64 AS Decimal128(20, 0))", Bool},
		{"decimals keep scales", bin(OpGtEq, c("d"), dec), "t.d >= 0.06", Bool},
		{"float wins", bin(OpAdd, c("d"), c("f")), "CAST(t.d AS Float64) + t.f", Float64},
		{"decimal product", bin(OpMul, c("d"), c("d")), "t.d * t.d", Decimal(30, 4)},
		{"decimal division is float", bin(OpDiv, c("d"), Lit(7)), "t.d / 7", Float64},
		{"date vs string literal", bin(OpGt, c("dt"), Lit("1995-01-01")), "t.dt > DATE '1995-01-01'", Bool},
		{"date plus interval is a timestamp", bin(OpAdd, c("dt"), &Literal{Type: Interval, Value: arrow.MonthDayNanoInterval{Days: 3}}), "t.dt + INTERVAL '3 days'", Timestamp},
		{"interval plus date is a timestamp", bin(OpAdd, &Literal{Type: Interval, Value: arrow.MonthDayNanoInterval{Months: 1}}, c("dt")), "INTERVAL '1 mon' + t.dt", Timestamp},
		{"date compared with date plus interval", bin(OpLt, c("dt"), bin(OpAdd, c("dt"), &Literal{Type: Interval, Value: arrow.MonthDayNanoInterval{Days: 3}})), "CAST(t.dt AS Timestamp) < (t.dt + INTERVAL '3 days')", Bool},
		{"date minus int32", bin(OpSub, c("dt"), c("i32")), "t.dt - CAST(t.i32 AS Int64)", Date},
		{"date minus date", bin(OpSub, c("dt"), c("dt")), "t.dt - t.dt", Int64},
		{"null adopts type", bin(OpEq, c("s"), Lit(nil)), "t.s = NULL", Bool},
		{"string plus int", bin(OpAdd, c("s"), Lit(1)), "", nil},
		{"and needs booleans", bin(OpAnd, c("b"), c("i32")), "", nil},
		{"and with null", bin(OpAnd, c("b"), Lit(nil)), "t.b AND NULL", Bool},
		{"like needs strings", &Like{Expr: c("i32"), Pattern: Lit("a%")}, "", nil},
		{"in list widens items", &InList{Expr: c("i32"), List: []Expr{Lit(1), Lit(2)}}, "t.i32 IN (1, 2)", Bool},
		{"in list decimal rescales", &InList{Expr: c("d"), List: []Expr{dec, Lit(1)}}, "t.d IN (0.06, 1.00)", Bool},
		{"in list of midnights stays on the date", &InList{Expr: c("dt"), List: []Expr{&Literal{Type: Timestamp, Value: arrow.Timestamp(86400e6)}}}, "t.dt IN (DATE '1970-01-02')", Bool},
		{"in list with a time of day compares timestamps", &InList{Expr: c("dt"), List: []Expr{&Literal{Type: Timestamp, Value: arrow.Timestamp(86400e6 + 1)}}}, "CAST(t.dt AS Timestamp) IN (TIMESTAMP '1970-01-02 00:00:00.000001')", Bool},
		{"in list of strings vs int", &InList{Expr: c("i32"), List: []Expr{Lit("x")}}, "", nil},
		{"case branches widen", &Case{Whens: []When{{Cond: c("b"), Then: c("d")}}, Else: Lit(0)}, "CASE WHEN t.b THEN t.d ELSE 0.00 END", Decimal(15, 2)},
		{"case with operand", &Case{Operand: c("i32"), Whens: []When{{Cond: Lit(1), Then: Lit("one")}}}, "CASE t.i32 WHEN 1 THEN 'one' END", String},
		{"case when needs boolean", &Case{Whens: []When{{Cond: c("i32"), Then: Lit(1)}}}, "", nil},
		{"coalesce common type", &ScalarFunc{Name: "coalesce", Args: []Expr{c("i32"), c("i64")}}, "coalesce(CAST(t.i32 AS Int64), t.i64)", Int64},
		{"substring positions are int64", &ScalarFunc{Name: "substring", Args: []Expr{c("s"), c("i32")}}, "substring(t.s, CAST(t.i32 AS Int64))", String},
		{"unknown function", &ScalarFunc{Name: "frobnicate", Args: []Expr{c("s")}}, "", nil},
		{"upper of int", &ScalarFunc{Name: "upper", Args: []Expr{c("i32")}}, "", nil},
		{"sum of string", &AggExpr{Func: AggSum, Args: []Expr{c("s")}}, "", nil},
		{"sum of decimal", &AggExpr{Func: AggSum, Args: []Expr{c("d")}}, "sum(t.d)", Decimal(38, 2)},
		{"unknown column", bin(OpEq, Col("t.nope"), Lit(1)), "", nil},
		{"cast folds literal", &Cast{Expr: Lit("2020-02-29"), Type: Date}, "DATE '2020-02-29'", Date},
		{"bad cast", &Cast{Expr: c("dt"), Type: Bool}, "", nil},
		{"concat casts", bin(OpConcat, c("s"), c("i32")), "t.s || CAST(t.i32 AS Utf8)", String},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Coerce(tc.in, s)
			if tc.want == "" {
				if !qerr.Is(err, qerr.Plan) {
					t.Fatalf("want a planning error, got %v, %v", got, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.String() != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
			typ, _, err := got.DataType(s)
			if err != nil || !arrow.TypeEqual(typ, tc.typ) {
				t.Errorf("type %v (%v), want %v", typ, err, tc.typ)
			}
		})
	}
}

func TestSuperType(t *testing.T) {
	cases := []struct{ a, b, want arrow.DataType }{
		{Int32, Int32, Int32},
		{Int32, Int64, Int64},
		{Int64, Decimal(15, 2), Decimal(22, 2)},
		{Decimal(5, 4), Decimal(10, 1), Decimal(13, 4)},
		{Decimal(5, 4), Float64, Float64},
		{Null, String, String},
		{String, Date, Date},
	}
	for _, c := range cases {
		got, ok := SuperType(c.a, c.b)
		if !ok || !arrow.TypeEqual(got, c.want) {
			t.Errorf("SuperType(%v, %v) = %v, %v; want %v", c.a, c.b, got, ok, c.want)
		}
	}
	if _, ok := SuperType(String, Int64); ok {
		t.Error("SuperType(Utf8, Int64) should fail")
	}
}
