package logical

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

// TestRoundType checks round's result type: for a decimal the scale is the
// digits rounded to, as in PostgreSQL, with an integer digit for a carry.
func TestRoundType(t *testing.T) {
	s := NewSchema(
		Field{Qualifier: "t", Name: "d", Type: Decimal(10, 4)},
		Field{Qualifier: "t", Name: "e", Type: Decimal(5, 3)},
		Field{Qualifier: "t", Name: "w", Type: Decimal(38, 0)},
		Field{Qualifier: "t", Name: "n", Type: Int64},
		Field{Qualifier: "t", Name: "f", Type: Float64},
	)
	round := func(args ...Expr) Expr { return &ScalarFunc{Name: "round", Args: args} }
	cases := []struct {
		name string
		e    Expr
		want arrow.DataType
	}{
		{"no digits", round(Col("t.e")), Decimal(3, 0)},
		{"zero digits", round(Col("t.e"), Lit(int64(0))), Decimal(3, 0)},
		{"fewer digits", round(Col("t.d"), Lit(int64(2))), Decimal(9, 2)},
		{"same digits", round(Col("t.d"), Lit(int64(4))), Decimal(10, 4)},
		{"more digits pad", round(Col("t.e"), Lit(int64(5))), Decimal(7, 5)},
		{"negative digits", round(Col("t.d"), Lit(int64(-2))), Decimal(7, 0)},
		{"digits under a cast", round(Col("t.d"), &Cast{Expr: &Literal{Type: Int32, Value: int32(1)}, Type: Int64}), Decimal(8, 1)},
		{"padding capped at 38 digits", round(Col("t.e"), Lit(int64(100))), Decimal(38, 36)},
		{"carry capped at 38 digits", round(Col("t.w"), Lit(int64(-1))), Decimal(38, 0)},
		{"digits from a column keep the type", round(Col("t.d"), Col("t.n")), Decimal(10, 4)},
		{"NULL digits keep the type", round(Col("t.d"), &Literal{Type: Int64}), Decimal(10, 4)},
		{"integer", round(Col("t.n"), Lit(int64(-1))), Int64},
		{"float", round(Col("t.f"), Lit(int64(2))), Float64},
		{"decimal literal", round(&Literal{Type: Decimal(4, 3), Value: decimal128.FromI64(1005)}, Lit(int64(0))), Decimal(2, 0)},
	}
	for _, c := range cases {
		got, _, err := c.e.DataType(s)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if !arrow.TypeEqual(got, c.want) {
			t.Errorf("%s: %s is %s, want %s", c.name, c.e, got, c.want)
		}
	}
}
