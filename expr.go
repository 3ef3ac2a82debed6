package quiver

import (
	"fmt"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/quiverdb/quiver/logical"
	"github.com/quiverdb/quiver/qerr"
)

// Expr is an expression for the DataFrame API. Build one with Col, Lit and
// the aggregate constructors, and combine with its methods. An Expr is an
// immutable value; a bad argument is recorded in it and reported by the
// DataFrame method that uses it.
type Expr struct {
	e   logical.Expr
	err error
}

// Col references a column by name ("name" or "relation.name").
func Col(name string) Expr {
	if strings.TrimSpace(name) == "" {
		return Expr{err: qerr.Planf("Col: empty column name")}
	}
	return Expr{e: logical.Col(name)}
}

// Lit is a constant: nil, bool, int, int32, int64, float64, string,
// time.Time (a DATE) or decimal text made with Decimal.
func Lit(v any) Expr {
	switch v := v.(type) {
	case nil, bool, int, int32, int64, float64, string:
		return Expr{e: logical.Lit(v)}
	case time.Time:
		return Expr{e: logical.Lit(arrow.Date32FromTime(v))}
	case Expr:
		return v
	}
	return Expr{err: qerr.Planf("Lit: unsupported Go type %T (want nil, bool, int, int64, float64, string or time.Time)", v)}
}

// Decimal is an exact decimal literal such as "0.06" (DECIMAL(3,2)).
func Decimal(text string) Expr {
	t := strings.TrimSpace(text)
	digits := strings.NewReplacer("-", "", "+", "", ".", "").Replace(t)
	scale := 0
	if i := strings.IndexByte(t, '.'); i >= 0 {
		scale = len(t) - i - 1
	}
	prec := max(len(strings.TrimLeft(digits, "0")), scale, 1)
	n, err := decimal128.FromString(t, int32(prec), int32(scale))
	if err != nil || prec > logical.MaxDecimalPrecision {
		return Expr{err: qerr.Planf("Decimal: %q is not a decimal number", text)}
	}
	return Expr{e: &logical.Literal{Type: logical.Decimal(int32(prec), int32(scale)), Value: n}}
}

// String is the expression's display name.
func (x Expr) String() string {
	if x.err != nil {
		return "<error: " + x.err.Error() + ">"
	}
	return x.e.String()
}

// Err returns the error recorded while building x, if any.
func (x Expr) Err() error { return x.err }

func binary(op logical.BinaryOp, l, r Expr) Expr {
	if l.err != nil {
		return l
	}
	if r.err != nil {
		return r
	}
	return Expr{e: &logical.Binary{Op: op, Left: l.e, Right: r.e}}
}

// operand turns a method argument (an Expr or a Go value) into an Expr.
func operand(v any) Expr {
	if x, ok := v.(Expr); ok {
		return x
	}
	return Lit(v)
}

// Eq is x = v (v is an Expr or a Go value, as for every comparison and arithmetic method).
func (x Expr) Eq(v any) Expr { return binary(logical.OpEq, x, operand(v)) }

// Neq is x <> v.
func (x Expr) Neq(v any) Expr { return binary(logical.OpNotEq, x, operand(v)) }

// Lt is x < v.
func (x Expr) Lt(v any) Expr { return binary(logical.OpLt, x, operand(v)) }

// Lte is x <= v.
func (x Expr) Lte(v any) Expr { return binary(logical.OpLtEq, x, operand(v)) }

// Gt is x > v.
func (x Expr) Gt(v any) Expr { return binary(logical.OpGt, x, operand(v)) }

// Gte is x >= v.
func (x Expr) Gte(v any) Expr { return binary(logical.OpGtEq, x, operand(v)) }

// And is x AND v (three-valued).
func (x Expr) And(v any) Expr { return binary(logical.OpAnd, x, operand(v)) }

// Or is x OR v (three-valued).
func (x Expr) Or(v any) Expr { return binary(logical.OpOr, x, operand(v)) }

// Add is x + v.
func (x Expr) Add(v any) Expr { return binary(logical.OpAdd, x, operand(v)) }

// Sub is x - v.
func (x Expr) Sub(v any) Expr { return binary(logical.OpSub, x, operand(v)) }

// Mul is x * v.
func (x Expr) Mul(v any) Expr { return binary(logical.OpMul, x, operand(v)) }

// Div is x / v.
func (x Expr) Div(v any) Expr { return binary(logical.OpDiv, x, operand(v)) }

// Not is NOT x.
func (x Expr) Not() Expr {
	if x.err != nil {
		return x
	}
	return Expr{e: &logical.Not{Expr: x.e}}
}

// IsNull is x IS NULL.
func (x Expr) IsNull() Expr {
	if x.err != nil {
		return x
	}
	return Expr{e: &logical.IsNull{Expr: x.e}}
}

// IsNotNull is x IS NOT NULL.
func (x Expr) IsNotNull() Expr {
	if x.err != nil {
		return x
	}
	return Expr{e: &logical.IsNull{Expr: x.e, Negated: true}}
}

// Like is x LIKE pattern (% and _ wildcards).
func (x Expr) Like(pattern string) Expr {
	if x.err != nil {
		return x
	}
	return Expr{e: &logical.Like{Expr: x.e, Pattern: logical.Lit(pattern)}}
}

// In is x IN (values...), each an Expr or a Go value.
func (x Expr) In(values ...any) Expr {
	if x.err != nil {
		return x
	}
	if len(values) == 0 {
		return Expr{err: qerr.Planf("In: %s IN () needs at least one value", x)}
	}
	list := make([]logical.Expr, len(values))
	for i, v := range values {
		o := operand(v)
		if o.err != nil {
			return o
		}
		list[i] = o.e
	}
	return Expr{e: &logical.InList{Expr: x.e, List: list}}
}

// Between is lo <= x AND x <= hi.
func (x Expr) Between(lo, hi any) Expr { return x.Gte(lo).And(x.Lte(hi)) }

// Cast converts x to t; a value that does not convert is an execution error.
func (x Expr) Cast(t arrow.DataType) Expr {
	if x.err != nil {
		return x
	}
	if t == nil {
		return Expr{err: qerr.Planf("Cast: %s to a nil type", x)}
	}
	return Expr{e: &logical.Cast{Expr: x.e, Type: t}}
}

// As names x's output column.
func (x Expr) As(name string) Expr {
	if x.err != nil {
		return x
	}
	if name == "" {
		return Expr{err: qerr.Planf("As: empty name for %s", x)}
	}
	return Expr{e: &logical.Alias{Expr: x.e, Name: name}}
}

// SortKey is one key of DataFrame.Sort.
type SortKey struct {
	expr       Expr
	asc        bool
	nullsFirst bool
}

// Asc sorts by x ascending, NULLs last.
func (x Expr) Asc() SortKey { return SortKey{expr: x, asc: true} }

// Desc sorts by x descending, NULLs first.
func (x Expr) Desc() SortKey { return SortKey{expr: x, nullsFirst: true} }

// NullsFirst returns k with NULLs sorted before every value.
func (k SortKey) NullsFirst() SortKey { k.nullsFirst = true; return k }

// NullsLast returns k with NULLs sorted after every value.
func (k SortKey) NullsLast() SortKey { k.nullsFirst = false; return k }

func agg(fn logical.AggFunc, distinct bool, x Expr) Expr {
	if x.err != nil {
		return x
	}
	return Expr{e: &logical.AggExpr{Func: fn, Args: []logical.Expr{x.e}, Distinct: distinct}}
}

// Sum is the sum of x's non-NULL values (decimals keep their scale).
func Sum(x Expr) Expr { return agg(logical.AggSum, false, x) }

// Avg is the mean of x's non-NULL values, as a double.
func Avg(x Expr) Expr { return agg(logical.AggAvg, false, x) }

// Min is x's smallest non-NULL value.
func Min(x Expr) Expr { return agg(logical.AggMin, false, x) }

// Max is x's largest non-NULL value.
func Max(x Expr) Expr { return agg(logical.AggMax, false, x) }

// Count counts x's non-NULL values; Count(Col("*")) counts rows.
func Count(x Expr) Expr {
	if c, ok := x.e.(*logical.Column); ok && c.Name == "*" && c.Qualifier == "" {
		return Expr{e: &logical.AggExpr{Func: logical.AggCount}}
	}
	return agg(logical.AggCount, false, x)
}

// CountDistinct counts x's distinct non-NULL values.
func CountDistinct(x Expr) Expr { return agg(logical.AggCount, true, x) }

// JoinType is how DataFrame.Join combines rows.
type JoinType int

// Join types.
const (
	InnerJoin JoinType = iota
	LeftJoin
	RightJoin
	FullJoin
	SemiJoin // left rows with a match
	AntiJoin // left rows without a match
)

var joinKinds = map[JoinType]logical.JoinType{
	InnerJoin: logical.InnerJoin, LeftJoin: logical.LeftJoin, RightJoin: logical.RightJoin,
	FullJoin: logical.FullJoin, SemiJoin: logical.SemiJoin, AntiJoin: logical.AntiJoin,
}

func (j JoinType) String() string {
	if k, ok := joinKinds[j]; ok {
		return k.String()
	}
	return fmt.Sprintf("JoinType(%d)", int(j))
}
