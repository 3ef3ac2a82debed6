package optimizer

// A DATE compared with a TIMESTAMP is compared as the timestamp of its
// midnight, so coercion writes CAST(d AS TIMESTAMP) op c. When c is a
// constant, simplify_expressions (through dateTimestampCompare) turns that
// back into a comparison of the date itself, which filter push-down, the
// scan's filter and Parquet row-group pruning understand, exactly:
//
//	d <= c → d <= floor(c)      d >  c → d >  floor(c)
//	d <  c → d <  ceil(c)       d >= c → d >= ceil(c)
//	d =  c → d =  date(c) when c is a midnight, else never
//	d <> c → d <> date(c) when c is a midnight, else always
//
// where floor(c) is c's date and ceil(c) the first date whose midnight is
// not before c. "Never" and "always" stay NULL when d is NULL: d IS NULL
// AND NULL, d IS NOT NULL OR NULL (plain false or true when d cannot be NULL).
// d [NOT] IN (c1, ...) keeps the midnights, as dates, and drops the others
// (dateTimestampIn).
// TPC-DS writes d_date BETWEEN DATE 'x' AND DATE 'x' + INTERVAL 60 DAY,
// whose upper bound is a timestamp since date + interval is one.

import (
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver/logical"
	"github.com/quiverdb/quiver/temporal"
)

// dateTimestampCompare rewrites a comparison of a date cast to TIMESTAMP
// with a TIMESTAMP constant into one on the date (see above); it returns b
// unchanged when b is not of that form or s (the schema the date is
// evaluated over) is nil.
func dateTimestampCompare(b *logical.Binary, s *logical.Schema) logical.Expr {
	if s == nil || !b.Op.IsComparison() {
		return b
	}
	op, side, other := b.Op, b.Left, b.Right
	if _, ok := side.(*logical.Literal); ok {
		op, side, other = op.Swap(), b.Right, b.Left
	}
	cast, ok := side.(*logical.Cast)
	if !ok || !isPlainTimestamp(cast.Type) {
		return b
	}
	lit, ok := other.(*logical.Literal)
	if !ok || lit.Value == nil || !isPlainTimestamp(lit.Type) {
		return b
	}
	c, ok := lit.Value.(arrow.Timestamp)
	if !ok {
		return b
	}
	d := cast.Expr
	dt, nullable, err := d.DataType(s)
	if err != nil || dt.ID() != arrow.DATE32 {
		return b
	}
	floor := temporal.FloorDiv(int64(c), temporal.MicrosPerDay)
	midnight := floor*temporal.MicrosPerDay == int64(c)
	ceil := floor
	if !midnight {
		ceil++
	}
	if floor < math.MinInt32 || ceil > math.MaxInt32 {
		return b
	}
	cmp := func(op logical.BinaryOp, day int64) logical.Expr {
		return &logical.Binary{Op: op, Left: d, Right: logical.Lit(arrow.Date32(day))}
	}
	switch op {
	case logical.OpLtEq, logical.OpGt:
		return cmp(op, floor)
	case logical.OpLt, logical.OpGtEq:
		return cmp(op, ceil)
	}
	if midnight {
		return cmp(op, floor) // = or <>
	}
	// A date is never equal to a timestamp that is not a midnight.
	return neverEqual(d, nullable, op == logical.OpNotEq)
}

// neverEqual is d = c (or d <> c when negated) for a c no date equals:
// false (true) for every date, NULL when d is NULL.
func neverEqual(d logical.Expr, nullable, negated bool) logical.Expr {
	if !nullable {
		return logical.Lit(negated)
	}
	if !negated {
		return &logical.Binary{Op: logical.OpAnd, Left: &logical.IsNull{Expr: d}, Right: nullOf(logical.Bool)}
	}
	return &logical.Binary{Op: logical.OpOr, Left: &logical.IsNull{Expr: d, Negated: true}, Right: nullOf(logical.Bool)}
}

// dateTimestampIn rewrites CAST(d AS TIMESTAMP) [NOT] IN (TIMESTAMP
// constants) into d [NOT] IN (the constants that are midnights, as dates);
// the others can never equal d. It returns x unchanged when x is not of
// that form (a NULL item included) or s is nil.
func dateTimestampIn(x *logical.InList, s *logical.Schema) logical.Expr {
	if s == nil {
		return x
	}
	cast, ok := x.Expr.(*logical.Cast)
	if !ok || !isPlainTimestamp(cast.Type) {
		return x
	}
	d := cast.Expr
	dt, nullable, err := d.DataType(s)
	if err != nil || dt.ID() != arrow.DATE32 {
		return x
	}
	var days []logical.Expr
	for _, it := range x.List {
		lit, ok := it.(*logical.Literal)
		if !ok || lit.Value == nil || !isPlainTimestamp(lit.Type) {
			return x
		}
		c, ok := lit.Value.(arrow.Timestamp)
		if !ok {
			return x
		}
		day := temporal.FloorDiv(int64(c), temporal.MicrosPerDay)
		if day*temporal.MicrosPerDay != int64(c) {
			continue
		}
		if day < math.MinInt32 || day > math.MaxInt32 {
			return x
		}
		days = append(days, logical.Lit(arrow.Date32(day)))
	}
	if len(days) == 0 {
		return neverEqual(d, nullable, x.Negated)
	}
	return &logical.InList{Expr: d, List: days, Negated: x.Negated}
}

// isPlainTimestamp reports whether t is TIMESTAMP (microseconds, no zone).
func isPlainTimestamp(t arrow.DataType) bool {
	ts, ok := t.(*arrow.TimestampType)
	return ok && ts.Unit == arrow.Microsecond && ts.TimeZone == ""
}
