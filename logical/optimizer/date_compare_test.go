package optimizer

import (
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver/logical"
	"github.com/quiverdb/quiver/temporal"
)

var tblDates = table("dates", 100,
	arrow.Field{Name: "d", Type: logical.Date, Nullable: true},
	arrow.Field{Name: "n", Type: logical.Date})

func tsLit(s string) *logical.Literal {
	us, ok := temporal.ParseTimestamp(s)
	if !ok {
		panic("bad timestamp " + s)
	}
	return &logical.Literal{Type: logical.Timestamp, Value: arrow.Timestamp(us)}
}

func asTimestamp(e logical.Expr) logical.Expr { return &logical.Cast{Expr: e, Type: logical.Timestamp} }

// TestDateTimestampCompareEquivalent checks the rewrite against the
// comparison it replaces, for every operator, both operand orders, midnight
// and other constants (before 1970 too), a nullable and a non-nullable date,
// and every date in a window around the constant, NULL included.
func TestDateTimestampCompareEquivalent(t *testing.T) {
	s := scan(tblDates, "dates").Schema()
	consts := []string{"2000-02-29 00:00:00", "2000-02-29 00:00:00.000001", "2000-02-29 12:00:00",
		"2000-02-29 23:59:59.999999", "1969-12-31 18:00:00", "1969-12-31 00:00:00", "1970-01-01 00:00:00"}
	ops := []logical.BinaryOp{logical.OpEq, logical.OpNotEq, logical.OpLt, logical.OpLtEq, logical.OpGt, logical.OpGtEq}
	for _, cs := range consts {
		c := tsLit(cs)
		cus := int64(c.Value.(arrow.Timestamp))
		base := temporal.FloorDiv(cus, temporal.MicrosPerDay)
		for _, op := range ops {
			for _, column := range []string{"dates.d", "dates.n"} {
				for _, litLeft := range []bool{false, true} {
					var b *logical.Binary
					if litLeft {
						b = bin(op, c, asTimestamp(col(column)))
					} else {
						b = bin(op, asTimestamp(col(column)), c)
					}
					got := dateTimestampCompare(b, s)
					if got == logical.Expr(b) {
						t.Fatalf("%s: not rewritten", b)
					}
					if hasCast(got) {
						t.Fatalf("%s → %s still casts the date", b, got)
					}
					days := []*int64{nil}
					for k := base - 2; k <= base+2; k++ {
						days = append(days, &k)
					}
					for _, day := range days {
						if day == nil && column == "dates.n" {
							continue
						}
						want := refCompare(op, day, cus, litLeft)
						have := evalDateExpr(t, got, day)
						if want != have {
							t.Errorf("%s → %s at %s: got %s, want %s", b, got, showDay(day), have, want)
						}
					}
				}
			}
		}
	}
}

// refCompare is date*day op c (or c op date) with SQL's NULL, as text.
func refCompare(op logical.BinaryOp, day *int64, c int64, litLeft bool) string {
	if day == nil {
		return "NULL"
	}
	l, r := *day*temporal.MicrosPerDay, c
	if litLeft {
		l, r = r, l
	}
	return fmt.Sprint(compareInts(op, l, r))
}

func compareInts(op logical.BinaryOp, l, r int64) bool {
	switch op {
	case logical.OpEq:
		return l == r
	case logical.OpNotEq:
		return l != r
	case logical.OpLt:
		return l < r
	case logical.OpLtEq:
		return l <= r
	case logical.OpGt:
		return l > r
	}
	return l >= r
}

// evalDateExpr evaluates the forms the rewrite makes (a comparison of the
// column with a date constant, a boolean constant, IS [NOT] NULL combined
// with NULL) for one value of the column, as "true", "false" or "NULL".
func evalDateExpr(t *testing.T, e logical.Expr, day *int64) string {
	t.Helper()
	switch e := e.(type) {
	case *logical.Literal:
		if e.Value == nil {
			return "NULL"
		}
		return fmt.Sprint(e.Value.(bool))
	case *logical.IsNull:
		return fmt.Sprint((day == nil) != e.Negated)
	case *logical.InList:
		if day == nil {
			return "NULL"
		}
		found := false
		for _, it := range e.List {
			found = found || int64(it.(*logical.Literal).Value.(arrow.Date32)) == *day
		}
		return fmt.Sprint(found != e.Negated)
	case *logical.Binary:
		switch e.Op {
		case logical.OpAnd, logical.OpOr:
			l, r := evalDateExpr(t, e.Left, day), evalDateExpr(t, e.Right, day)
			dominant := "false"
			if e.Op == logical.OpOr {
				dominant = "true"
			}
			switch {
			case l == dominant || r == dominant:
				return dominant
			case l == "NULL" || r == "NULL":
				return "NULL"
			}
			return l
		}
		if day == nil {
			return "NULL"
		}
		if _, ok := e.Left.(*logical.Column); !ok {
			t.Fatalf("unexpected left side in %s", e)
		}
		k := e.Right.(*logical.Literal).Value.(arrow.Date32)
		return fmt.Sprint(compareInts(e.Op, *day, int64(k)))
	}
	t.Fatalf("unexpected expression %s", e)
	return ""
}

func hasCast(e logical.Expr) bool {
	found := false
	logical.TransformExprUp(e, func(x logical.Expr) (logical.Expr, bool, error) {
		if _, ok := x.(*logical.Cast); ok {
			found = true
		}
		return x, false, nil
	})
	return found
}

func showDay(day *int64) string {
	if day == nil {
		return "NULL"
	}
	return string(temporal.AppendDate(nil, int32(*day)))
}

// TestDateTimestampInEquivalent checks the IN-list rewrite against the
// list it replaces, with midnights, other times, none of either, negated.
func TestDateTimestampInEquivalent(t *testing.T) {
	s := scan(tblDates, "dates").Schema()
	lists := [][]string{
		{"2000-02-29 00:00:00", "2000-03-01 00:00:00"},
		{"2000-02-29 00:00:00", "2000-02-29 12:00:00"},
		{"2000-02-29 12:00:00", "2000-03-01 00:00:01"},
		{"1969-12-31 00:00:00", "1969-12-31 06:00:00"},
	}
	for _, items := range lists {
		var list []logical.Expr
		var cs []int64
		for _, it := range items {
			l := tsLit(it)
			list = append(list, l)
			cs = append(cs, int64(l.Value.(arrow.Timestamp)))
		}
		base := temporal.FloorDiv(cs[0], temporal.MicrosPerDay)
		for _, column := range []string{"dates.d", "dates.n"} {
			for _, negated := range []bool{false, true} {
				x := &logical.InList{Expr: asTimestamp(col(column)), List: list, Negated: negated}
				got := dateTimestampIn(x, s)
				if hasCast(got) {
					t.Fatalf("%s → %s still casts the date", x, got)
				}
				for k := base - 2; k <= base+2; k++ {
					found := false
					for _, c := range cs {
						found = found || k*temporal.MicrosPerDay == c
					}
					want := fmt.Sprint(found != negated)
					if have := evalDateExpr(t, got, &k); have != want {
						t.Errorf("%s → %s at %s: got %s, want %s", x, got, showDay(&k), have, want)
					}
				}
				if column == "dates.d" {
					if have := evalDateExpr(t, got, nil); have != "NULL" {
						t.Errorf("%s → %s at NULL: got %s", x, got, have)
					}
				}
			}
		}
	}
	withNull := &logical.InList{Expr: asTimestamp(col("dates.d")), List: []logical.Expr{tsLit("2000-01-01 00:00:00"), &logical.Literal{Type: logical.Timestamp}}}
	if got := dateTimestampIn(withNull, s); got != logical.Expr(withNull) {
		t.Errorf("a list with NULL rewritten to %s", got)
	}
}

// TestDateTimestampCompareLeavesOthers: only a date cast to TIMESTAMP
// beside a TIMESTAMP constant is rewritten.
func TestDateTimestampCompareLeavesOthers(t *testing.T) {
	s := scan(tblDates, "dates").Schema()
	c := tsLit("2000-01-01 12:00:00")
	for _, b := range []*logical.Binary{
		bin(logical.OpLt, asTimestamp(col("dates.d")), asTimestamp(col("dates.n"))),               // no constant
		bin(logical.OpLt, asTimestamp(col("dates.d")), &logical.Literal{Type: logical.Timestamp}), // NULL constant
		bin(logical.OpLt, col("dates.d"), date("2000-01-01")),                                     // no cast
		bin(logical.OpAdd, asTimestamp(col("dates.d")), c),                                        // not a comparison
	} {
		if got := dateTimestampCompare(b, s); got != logical.Expr(b) {
			t.Errorf("%s rewritten to %s", b, got)
		}
	}
	b := bin(logical.OpLt, asTimestamp(col("dates.d")), c)
	if got := dateTimestampCompare(b, nil); got != logical.Expr(b) {
		t.Errorf("rewritten without a schema: %s", got)
	}
}

// TestSimplifyDateRange: the TPC-DS form d BETWEEN DATE x AND DATE x +
// INTERVAL 60 DAY, after coercion, folds to a range on the date itself, and
// so does a bound with hours.
func TestSimplifyDateRange(t *testing.T) {
	runRuleGolden(t, SimplifyExpressions{}, "date_compare", []ruleCase{
		{"tpc-ds date range", func() logical.Plan {
			return filter(scan(tblDates, "dates"), bin(logical.OpAnd,
				bin(logical.OpGtEq, col("dates.d"), date("2000-02-01")),
				bin(logical.OpLtEq, asTimestamp(col("dates.d")), bin(logical.OpAdd, date("2000-02-01"), interval(0, 60)))))
		}},
		{"bounds with hours", func() logical.Plan {
			h := &logical.Literal{Type: logical.Interval, Value: arrow.MonthDayNanoInterval{Nanoseconds: 3 * 3600e9}}
			return filter(scan(tblDates, "dates"), logical.And(
				bin(logical.OpLt, asTimestamp(col("dates.d")), bin(logical.OpAdd, date("2000-02-01"), h)),
				bin(logical.OpGtEq, asTimestamp(col("dates.n")), bin(logical.OpSub, date("2000-02-01"), h)),
				bin(logical.OpGt, bin(logical.OpAdd, interval(1, 0), date("2000-01-31")), asTimestamp(col("dates.n")))))
		}},
		{"equality with a time of day", func() logical.Plan {
			return project(scan(tblDates, "dates"),
				eq(asTimestamp(col("dates.d")), tsLit("2000-01-01 12:00:00")),
				eq(asTimestamp(col("dates.n")), tsLit("2000-01-01 12:00:00")),
				bin(logical.OpNotEq, asTimestamp(col("dates.d")), tsLit("2000-01-01 12:00:00")),
				eq(asTimestamp(col("dates.d")), tsLit("2000-01-01 00:00:00")))
		}},
		{"filters pushed into a scan before and after simplifying", func() logical.Plan {
			bound := bin(logical.OpLtEq, asTimestamp(col("dates.d")), tsLit("2000-04-01 00:00:00"))
			return scan(tblDates, "dates").WithProjection([]int{1}).WithFilters([]logical.Expr{
				bin(logical.OpGtEq, col("dates.d"), date("2000-02-01")), bound,
				bin(logical.OpLtEq, col("dates.d"), date("2000-04-01"))})
		}},
		{"in lists", func() logical.Plan {
			return filter(scan(tblDates, "dates"), bin(logical.OpOr,
				&logical.InList{Expr: asTimestamp(col("dates.d")), List: []logical.Expr{tsLit("2000-01-01 00:00:00"), tsLit("2000-01-02 06:00:00"), bin(logical.OpAdd, date("2000-01-31"), interval(1, 0))}},
				&logical.InList{Expr: asTimestamp(col("dates.d")), List: []logical.Expr{tsLit("2000-01-02 06:00:00")}, Negated: true}))
		}},
	})
}
