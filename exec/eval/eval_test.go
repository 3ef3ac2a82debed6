package eval

import (
	"context"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
	"github.com/quiverdb/quiver/temporal"
)

func ivl(months, days int32) arrow.MonthDayNanoInterval {
	return arrow.MonthDayNanoInterval{Months: months, Days: days}
}

func TestEvalTable(t *testing.T) {
	mem := checkedMem(t)
	rec := fixture.record(mem)
	defer rec.Release()
	O := physical.OpEq
	_ = O
	cases := []struct {
		name string
		e    physical.Expr
		want string
	}{
		// columns and literals
		{"column", cI, "1|-2|NULL|10|0"},
		{"literal", lit(tI64, int64(7)), "7|7|7|7|7"},
		{"null literal", lit(tI64, nil), "NULL|NULL|NULL|NULL|NULL"},
		{"string literal", lit(tStr, "x"), "'x'|'x'|'x'|'x'|'x'"},
		// comparisons
		{"int eq lit", bin(physical.OpEq, cI, lit(tI64, int64(10)), tBool), "false|false|NULL|true|false"},
		{"int lt lit", bin(physical.OpLt, cI, lit(tI64, int64(1)), tBool), "false|true|NULL|false|true"},
		{"lit gt int (flipped)", bin(physical.OpGt, lit(tI64, int64(1)), cI, tBool), "false|true|NULL|false|true"},
		{"int ne", bin(physical.OpNotEq, cI, lit(tI64, int64(0)), tBool), "true|true|NULL|true|false"},
		{"int32 ge col", bin(physical.OpGtEq, cJ, cJ, tBool), "true|NULL|true|true|true"},
		{"float le", bin(physical.OpLtEq, cF, lit(tF64, 1.5), tBool), "true|NULL|true|false|true"},
		{"string lt", bin(physical.OpLt, cS, lit(tStr, "b"), tBool), "true|true|NULL|false|true"},
		{"string eq col", bin(physical.OpEq, cS, cS, tBool), "true|true|NULL|true|true"},
		{"decimal scales differ", bin(physical.OpEq, cD, lit(tDec(3, 1), dec("2.5", 1)), tBool), "false|true|NULL|false|false"},
		{"decimal cols scales differ", bin(physical.OpLt, cD, cE, tBool), "false|false|NULL|NULL|true"},
		{"date gt", bin(physical.OpGt, cDt, lit(tDate, arrow.Date32(date("1995-01-01"))), tBool), "false|true|NULL|true|false"},
		{"cmp null literal", bin(physical.OpEq, cI, lit(tNull, nil), tBool), "NULL|NULL|NULL|NULL|NULL"},
		{"int vs float widened", bin(physical.OpGt, cI, cF, tBool), "false|NULL|NULL|true|false"},
		{"bool eq", bin(physical.OpEq, cB, lit(tBool, true), tBool), "true|false|NULL|true|false"},
		// arithmetic
		{"int add", bin(physical.OpAdd, cI, lit(tI64, int64(5)), tI64), "6|3|NULL|15|5"},
		{"int sub lit-left", bin(physical.OpSub, lit(tI64, int64(5)), cI, tI64), "4|7|NULL|-5|5"},
		{"int mul", bin(physical.OpMul, cI, cI, tI64), "1|4|NULL|100|0"},
		{"int32 add", bin(physical.OpAdd, cJ, cJ, tI32), "6|NULL|10|-14|0"},
		{"int div truncates", bin(physical.OpDiv, cI, lit(tI64, int64(-3)), tI64), "0|0|NULL|-3|0"},
		{"int mod", bin(physical.OpMod, cI, lit(tI64, int64(3)), tI64), "1|-2|NULL|1|0"},
		{"float div", bin(physical.OpDiv, cF, lit(tF64, 2.0), tF64), "0.75|NULL|-0.25|1|0"},
		{"float mod", bin(physical.OpMod, cF, lit(tF64, 1.0), tF64), "0.5|NULL|-0.5|0|0"},
		{"decimal add rescale", bin(physical.OpAdd, cD, cE, tDec(13, 4)), "2.5000|0.4999|NULL|NULL|0.0049"},
		{"decimal sub lit-left", bin(physical.OpSub, lit(tDec(1, 0), dec("1", 0)), cD, tDec(11, 2)), "-0.25|-1.50|NULL|4.75|1.00"},
		{"decimal mul", bin(physical.OpMul, cD, cE, tDec(22, 6)), "1.562500|-5.000250|NULL|NULL|0.000000"},
		{"decimal div float", bin(physical.OpDiv, cD, lit(tDec(2, 1), dec("0.5", 1)), tF64), "2.5|5|NULL|-7.5|0"},
		{"decimal mod", bin(physical.OpMod, cD, lit(tDec(2, 1), dec("1.0", 1)), tDec(3, 2)), "0.25|0.50|NULL|-0.75|0.00"},
		{"negative int", &physical.Negative{Expr: cI}, "-1|2|NULL|-10|0"},
		{"negative decimal", &physical.Negative{Expr: cD}, "-1.25|-2.50|NULL|3.75|0.00"},
		{"null arithmetic", bin(physical.OpAdd, cI, lit(tNull, nil), tI64), "NULL|NULL|NULL|NULL|NULL"},
		// dates
		{"date + 1 month clamps", bin(physical.OpAdd, cDt, lit(tIvl, ivl(1, 0)), tTs), "1994-02-28 00:00:00|1995-07-15 00:00:00|NULL|2000-03-29 00:00:00|1970-02-01 00:00:00"},
		{"date - 1 year", bin(physical.OpSub, cDt, lit(tIvl, ivl(12, 0)), tTs), "1993-01-31 00:00:00|1994-06-15 00:00:00|NULL|1999-02-28 00:00:00|1969-01-01 00:00:00"},
		{"date + 90 days", bin(physical.OpAdd, cDt, lit(tIvl, ivl(0, 90)), tTs), "1994-05-01 00:00:00|1995-09-13 00:00:00|NULL|2000-05-29 00:00:00|1970-04-01 00:00:00"},
		{"interval + date", bin(physical.OpAdd, lit(tIvl, ivl(1, 1)), cDt, tTs), "1994-03-01 00:00:00|1995-07-16 00:00:00|NULL|2000-03-30 00:00:00|1970-02-02 00:00:00"},
		{"date + 3 hours keeps them", bin(physical.OpAdd, cDt, lit(tIvl, arrow.MonthDayNanoInterval{Nanoseconds: 3 * 3600e9}), tTs), "1994-01-31 03:00:00|1995-06-15 03:00:00|NULL|2000-02-29 03:00:00|1970-01-01 03:00:00"},
		{"date - 1 month 90 minutes", bin(physical.OpSub, cDt, lit(tIvl, arrow.MonthDayNanoInterval{Months: 1, Nanoseconds: 90 * 60e9}), tTs), "1993-12-30 22:30:00|1995-05-14 22:30:00|NULL|2000-01-28 22:30:00|1969-11-30 22:30:00"},
		{"date - int days", bin(physical.OpSub, cDt, lit(tI64, int64(1)), tDate), "1994-01-30|1995-06-14|NULL|2000-02-28|1969-12-31"},
		{"date - date", bin(physical.OpSub, cDt, lit(tDate, arrow.Date32(date("1994-01-01"))), tI64), "30|530|NULL|2250|-8766"},
		// boolean logic
		{"and kleene", bin(physical.OpAnd, cB, lit(tBool, nil), tBool), "NULL|false|NULL|NULL|false"},
		{"or kleene", bin(physical.OpOr, cB, lit(tBool, nil), tBool), "true|NULL|NULL|true|NULL"},
		{"and cols", bin(physical.OpAnd, cB, bin(physical.OpGt, cI, lit(tI64, int64(0)), tBool), tBool), "true|false|NULL|true|false"},
		{"or cols", bin(physical.OpOr, cB, bin(physical.OpGt, cI, lit(tI64, int64(0)), tBool), tBool), "true|false|NULL|true|false"},
		{"not", &physical.Not{Expr: cB}, "false|true|NULL|false|true"},
		{"is null", &physical.IsNull{Expr: cI}, "false|false|true|false|false"},
		{"is not null", &physical.IsNull{Expr: cS, Negated: true}, "true|true|false|true|true"},
		// casts
		{"int to string", &physical.Cast{Expr: cI, Type: tStr}, "'1'|'-2'|NULL|'10'|'0'"},
		{"decimal to string", &physical.Cast{Expr: cD, Type: tStr}, "'1.25'|'2.50'|NULL|'-3.75'|'0.00'"},
		{"date to string", &physical.Cast{Expr: cDt, Type: tStr}, "'1994-01-31'|'1995-06-15'|NULL|'2000-02-29'|'1970-01-01'"},
		{"float to string", &physical.Cast{Expr: cF, Type: tStr}, "'1.5'|NULL|'-0.5'|'2'|'0'"},
		{"decimal rescale rounds half away", &physical.Cast{Expr: cD, Type: tDec(5, 1)}, "1.3|2.5|NULL|-3.8|0.0"},
		{"decimal to int rounds", &physical.Cast{Expr: cD, Type: tI64}, "1|3|NULL|-4|0"},
		{"decimal to float", &physical.Cast{Expr: cD, Type: tF64}, "1.25|2.5|NULL|-3.75|0"},
		{"int to decimal", &physical.Cast{Expr: cI, Type: tDec(5, 2)}, "1.00|-2.00|NULL|10.00|0.00"},
		{"float to decimal", &physical.Cast{Expr: cF, Type: tDec(5, 0)}, "2|NULL|-1|2|0"},
		{"int64 to int32", &physical.Cast{Expr: cI, Type: tI32}, "1|-2|NULL|10|0"},
		{"string to date", &physical.Cast{Expr: lit(tStr, "1998-12-01"), Type: tDate}, "1998-12-01|1998-12-01|1998-12-01|1998-12-01|1998-12-01"},
		{"string to decimal", &physical.Cast{Expr: lit(tStr, " -12.345 "), Type: tDec(6, 2)}, "-12.35|-12.35|-12.35|-12.35|-12.35"},
		{"null to int", &physical.Cast{Expr: lit(tNull, nil), Type: tI64}, "NULL|NULL|NULL|NULL|NULL"},
		{"int to float", &physical.Cast{Expr: cJ, Type: tF64}, "3|NULL|5|-7|0"},
		// CASE
		{"case searched", &physical.Case{Whens: []physical.When{
			{Cond: bin(physical.OpGt, cI, lit(tI64, int64(5)), tBool), Then: lit(tStr, "big")},
			{Cond: bin(physical.OpGt, cI, lit(tI64, int64(0)), tBool), Then: lit(tStr, "pos")},
		}, Else: lit(tStr, "other"), Type: tStr}, "'pos'|'other'|'other'|'big'|'other'"},
		{"case no else", &physical.Case{Whens: []physical.When{
			{Cond: cB, Then: cI},
		}, Type: tI64}, "1|NULL|NULL|10|NULL"},
		{"case operand", &physical.Case{Operand: cJ, Whens: []physical.When{
			{Cond: lit(tI32, int32(5)), Then: lit(tStr, "five")},
			{Cond: lit(tI32, int32(0)), Then: lit(tStr, "zero")},
		}, Type: tStr}, "NULL|NULL|'five'|NULL|'zero'"},
		{"case guards division by zero", &physical.Case{Whens: []physical.When{
			{Cond: bin(physical.OpNotEq, cI, lit(tI64, int64(0)), tBool), Then: bin(physical.OpDiv, lit(tI64, int64(100)), cI, tI64)},
		}, Else: lit(tI64, int64(-1)), Type: tI64}, "100|-50|-1|10|-1"},
		{"case string columns, first when wins", &physical.Case{Whens: []physical.When{
			{Cond: bin(physical.OpGt, cI, lit(tI64, int64(0)), tBool), Then: cS},
			{Cond: bin(physical.OpLt, cI, lit(tI64, int64(5)), tBool), Then: lit(tStr, "low")},
		}, Type: tStr}, "'apple'|'low'|NULL|'cherry pie'|'low'"},
		{"case overlapping whens, column else", &physical.Case{Whens: []physical.When{
			{Cond: bin(physical.OpGtEq, cI, lit(tI64, int64(0)), tBool), Then: lit(tI64, int64(1))},
			{Cond: bin(physical.OpGtEq, cI, lit(tI64, int64(1)), tBool), Then: lit(tI64, int64(2))},
		}, Else: cI, Type: tI64}, "1|-2|NULL|1|1"},
		{"case date column or literal", &physical.Case{Whens: []physical.When{
			{Cond: cB, Then: cDt},
		}, Else: lit(tDate, arrow.Date32(date("1999-01-01"))), Type: tDate}, "1994-01-31|1999-01-01|1999-01-01|2000-02-29|1999-01-01"},
		{"case null then", &physical.Case{Whens: []physical.When{
			{Cond: cB, Then: lit(tNull, nil)},
		}, Else: cD, Type: tDec(5, 2)}, "NULL|2.50|NULL|NULL|0.00"},
		{"case decimal branches", &physical.Case{Whens: []physical.When{
			{Cond: bin(physical.OpLt, cD, lit(tDec(1, 0), dec("2", 0)), tBool), Then: bin(physical.OpMul, cD, lit(tDec(2, 1), dec("2.0", 1)), tDec(13, 3))},
		}, Else: lit(tDec(13, 3), dec("0", 3)), Type: tDec(13, 3)}, "2.500|0.000|0.000|-7.500|0.000"},
		// LIKE
		{"like prefix", &physical.Like{Expr: cS, Pattern: lit(tStr, "ch%")}, "false|false|NULL|true|false"},
		{"like suffix", &physical.Like{Expr: cS, Pattern: lit(tStr, "%na")}, "false|true|NULL|false|false"},
		{"like infix", &physical.Like{Expr: cS, Pattern: lit(tStr, "%an%")}, "false|true|NULL|false|false"},
		{"like sequence", &physical.Like{Expr: cS, Pattern: lit(tStr, "%e%r%")}, "false|false|NULL|true|false"},
		{"like underscore", &physical.Like{Expr: cS, Pattern: lit(tStr, "_pple")}, "true|false|NULL|false|false"},
		{"like exact", &physical.Like{Expr: cS, Pattern: lit(tStr, "apple")}, "true|false|NULL|false|false"},
		{"like empty", &physical.Like{Expr: cS, Pattern: lit(tStr, "")}, "false|false|NULL|false|true"},
		{"not like", &physical.Like{Expr: cS, Pattern: lit(tStr, "%a%"), Negated: true}, "false|false|NULL|true|true"},
		{"ilike", &physical.Like{Expr: cS, Pattern: lit(tStr, "b%"), CaseInsensitive: true}, "false|true|NULL|false|false"},
		{"like column pattern", &physical.Like{Expr: cS, Pattern: cS}, "true|true|NULL|true|true"},
		// IN
		{"in ints", &physical.InList{Expr: cI, List: []physical.Expr{lit(tI64, int64(1)), lit(tI64, int64(10))}}, "true|false|NULL|true|false"},
		{"in with null", &physical.InList{Expr: cI, List: []physical.Expr{lit(tI64, int64(1)), lit(tI64, nil)}}, "true|NULL|NULL|NULL|NULL"},
		{"not in with null", &physical.InList{Expr: cI, List: []physical.Expr{lit(tI64, int64(1)), lit(tI64, nil)}, Negated: true}, "false|NULL|NULL|NULL|NULL"},
		{"not in strings", &physical.InList{Expr: cS, List: []physical.Expr{lit(tStr, "apple"), lit(tStr, "")}, Negated: true}, "false|true|NULL|true|false"},
		{"in decimals other scale", &physical.InList{Expr: cD, List: []physical.Expr{lit(tDec(2, 1), dec("2.5", 1)), lit(tDec(4, 3), dec("1.251", 3))}}, "false|true|NULL|false|false"},
		{"in non-constant", &physical.InList{Expr: cI, List: []physical.Expr{cJ, lit(tI64, int64(0))}}, "false|NULL|NULL|false|true"},
		// functions
		{"upper", fn("upper", tStr, cS), "'APPLE'|'BANANA'|NULL|'CHERRY PIE'|''"},
		{"lower", fn("lower", tStr, cS), "'apple'|'banana'|NULL|'cherry pie'|''"},
		{"trim", fn("trim", tStr, lit(tStr, "  a b  ")), "'a b'|'a b'|'a b'|'a b'|'a b'"},
		{"ltrim", fn("ltrim", tStr, lit(tStr, "  a ")), "'a '|'a '|'a '|'a '|'a '"},
		{"rtrim", fn("rtrim", tStr, lit(tStr, "  a ")), "'  a'|'  a'|'  a'|'  a'|'  a'"},
		{"length chars", fn("length", tI64, cS), "5|6|NULL|10|0"},
		{"length utf8", fn("char_length", tI64, lit(tStr, "héllo")), "5|5|5|5|5"},
		{"concat skips nulls", fn("concat", tStr, cS, lit(tStr, "-"), cI), "'apple-1'|'Banana--2'|'-'|'cherry pie-10'|'-0'"},
		{"|| propagates null", bin(physical.OpConcat, cS, lit(tStr, "!"), tStr), "'apple!'|'Banana!'|NULL|'cherry pie!'|'!'"},
		{"substr 2 args", fn("substr", tStr, cS, lit(tI64, int64(3))), "'ple'|'nana'|NULL|'erry pie'|''"},
		{"substring 3 args", fn("substring", tStr, cS, lit(tI64, int64(1)), lit(tI64, int64(2))), "'ap'|'Ba'|NULL|'ch'|''"},
		{"substring start<1", fn("substring", tStr, cS, lit(tI64, int64(-1)), lit(tI64, int64(3))), "'a'|'B'|NULL|'c'|''"},
		{"substring utf8", fn("substring", tStr, lit(tStr, "héllo"), lit(tI64, int64(2)), lit(tI64, int64(2))), "'él'|'él'|'él'|'él'|'él'"},
		{"coalesce", fn("coalesce", tI64, cI, &physical.Cast{Expr: cJ, Type: tI64}, lit(tI64, int64(99))), "1|-2|5|10|0"},
		{"coalesce all null", fn("coalesce", tI64, lit(tI64, nil), lit(tI64, nil)), "NULL|NULL|NULL|NULL|NULL"},
		{"nullif", fn("nullif", tI64, cI, lit(tI64, int64(10))), "1|-2|NULL|NULL|0"},
		{"abs int", fn("abs", tI64, cI), "1|2|NULL|10|0"},
		{"abs decimal", fn("abs", tDec(10, 2), cD), "1.25|2.50|NULL|3.75|0.00"},
		{"round decimal", fn("round", tDec(10, 2), cD, lit(tI64, int64(1))), "1.30|2.50|NULL|-3.80|0.00"},
		{"round decimal 0", fn("round", tDec(12, 4), cE), "1.0000|-2.0000|7.0000|NULL|0.0000"},
		// a decimal result has the scale of the digits (logical's type rule)
		{"round decimal to scale 1", fn("round", tDec(10, 1), cD, lit(tI64, int64(1))), "1.3|2.5|NULL|-3.8|0.0"},
		{"round decimal to scale 0", fn("round", tDec(9, 0), cE), "1|-2|7|NULL|0"},
		{"round decimal 2 of 4", fn("round", tDec(11, 2), cE, lit(tI64, int64(2))), "1.25|-2.00|7.00|NULL|0.00"},
		{"round decimal negative digits", fn("round", tDec(9, 0), cD, lit(tI64, int64(-1))), "0|0|NULL|0|0"},
		{"round decimal pads zeros", fn("round", tDec(14, 6), cE, lit(tI64, int64(6))), "1.250000|-2.000100|7.000000|NULL|0.004900"},
		{"round decimal carry", fn("round", tDec(3, 1), lit(tDec(3, 2), dec("9.99", 2)), lit(tI64, int64(1))), "10.0|10.0|10.0|10.0|10.0"},
		{"round decimal hundreds", fn("round", tDec(5, 0), lit(tDec(5, 1), dec("-1250.0", 1)), lit(tI64, int64(-2))), "-1300|-1300|-1300|-1300|-1300"},
		// digits that vary by row keep the argument's scale
		{"round decimal column digits", fn("round", tDec(10, 2), cD, cI), "1.30|0.00|NULL|-3.75|0.00"},
		{"round float", fn("round", tF64, cF), "2|NULL|-1|2|0"},
		{"round float digits", fn("round", tF64, lit(tF64, 2.345), lit(tI64, int64(2))), "2.35|2.35|2.35|2.35|2.35"},
		{"round int negative digits", fn("round", tI64, lit(tI64, int64(-1250)), lit(tI64, int64(-2))), "-1300|-1300|-1300|-1300|-1300"},
		{"date_part year", fn("date_part", tI64, lit(tStr, "year"), cDt), "1994|1995|NULL|2000|1970"},
		{"date_part month", fn("date_part", tI64, lit(tStr, "month"), cDt), "1|6|NULL|2|1"},
		{"date_part day", fn("date_part", tI64, lit(tStr, "day"), cDt), "31|15|NULL|29|1"},
		{"date_part quarter", fn("date_part", tI64, lit(tStr, "quarter"), cDt), "1|2|NULL|1|1"},
		{"date_part dow", fn("date_part", tI64, lit(tStr, "dow"), cDt), "1|4|NULL|2|4"},
		{"date_part doy", fn("date_part", tI64, lit(tStr, "doy"), cDt), "31|166|NULL|60|1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := evalString(t, mem, rec, c.e)
			if err != nil {
				t.Fatalf("%s: %v", c.e, err)
			}
			if got != c.want {
				t.Errorf("%s\n got  %s\n want %s", c.e, got, c.want)
			}
		})
	}
}

func TestEvalErrors(t *testing.T) {
	mem := checkedMem(t)
	rec := fixture.record(mem)
	defer rec.Release()
	cases := []struct {
		name string
		e    physical.Expr
		kind qerr.Kind
		msg  string
	}{
		{"int div by zero", bin(physical.OpDiv, cI, cI, tI64), qerr.Execution, "division by zero"},
		{"round past the result's precision", fn("round", tDec(2, 1), lit(tDec(3, 2), dec("9.99", 2)), lit(tI64, int64(1))), qerr.Execution, "decimal overflow"},
		{"int mod by zero", bin(physical.OpMod, lit(tI64, int64(1)), cJ, tI64), qerr.Execution, "division by zero"},
		{"float div by zero", bin(physical.OpDiv, cF, cF, tF64), qerr.Execution, "division by zero"},
		{"decimal div by zero", bin(physical.OpDiv, cD, cD, tF64), qerr.Execution, "division by zero"},
		{"decimal mod by zero", bin(physical.OpMod, cD, cD, tDec(10, 2)), qerr.Execution, "division by zero"},
		{"bad cast int", &physical.Cast{Expr: cS, Type: tI64}, qerr.Execution, "cannot cast 'apple' to Int64"},
		{"bad cast date", &physical.Cast{Expr: lit(tStr, "1994-13-01"), Type: tDate}, qerr.Execution, "cannot cast '1994-13-01' to Date32"},
		{"bad cast decimal", &physical.Cast{Expr: lit(tStr, "abc"), Type: tDec(5, 2)}, qerr.Execution, "cannot cast 'abc' to Decimal128(5, 2)"},
		{"int overflow add", bin(physical.OpAdd, cI, lit(tI64, int64(9223372036854775807)), tI64), qerr.Execution, ""},
		{"int overflow mul", bin(physical.OpMul, cI, lit(tI64, int64(4611686018427387904)), tI64), qerr.Execution, ""},
		{"narrowing overflow", &physical.Cast{Expr: lit(tI64, int64(1)<<40), Type: tI32}, qerr.Execution, ""},
		{"decimal precision overflow", &physical.Cast{Expr: cI, Type: tDec(2, 1)}, qerr.Execution, ""},
		{"negative substring length", fn("substring", tStr, cS, lit(tI64, int64(1)), lit(tI64, int64(-1))), qerr.Execution, ""},
		{"unknown function", fn("nosuch", tStr, cS), qerr.NotImplemented, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := evalString(t, mem, rec, c.e)
			if err == nil {
				t.Fatalf("%s: no error", c.e)
			}
			if k := qerr.KindOf(err); k != c.kind {
				t.Fatalf("%s: kind %v, want %v (%v)", c.e, k, c.kind, err)
			}
			if c.msg != "" && !containsStr(err.Error(), c.msg) {
				t.Errorf("%s: error %q does not mention %q", c.e, err, c.msg)
			}
		})
	}
}

func containsStr(s, sub string) bool {
	return len(sub) == 0 || (len(s) >= len(sub) && indexOf(s, sub) >= 0)
}

func indexOf(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	return -1
}

// Division by zero on a NULL row is not an error.
func TestDivisionByZeroOnNullRow(t *testing.T) {
	mem := checkedMem(t)
	num := buildArray(mem, tI64, []any{int64(4), nil})
	den := buildArray(mem, tI64, []any{int64(2), nil}) // the NULL slot holds 0
	defer num.Release()
	defer den.Release()
	sch := arrow.NewSchema([]arrow.Field{{Name: "a", Type: tI64, Nullable: true}, {Name: "b", Type: tI64, Nullable: true}}, nil)
	rec := array.NewRecordBatch(sch, []arrow.Array{num, den}, 2)
	defer rec.Release()
	got, err := evalString(t, mem, rec, bin(physical.OpDiv, col(0, "a", tI64), col(1, "b", tI64), tI64))
	if err != nil {
		t.Fatal(err)
	}
	if got != "2|NULL" {
		t.Fatalf("got %s", got)
	}
}

func TestEvalSelection(t *testing.T) {
	mem := checkedMem(t)
	rec := fixture.record(mem)
	defer rec.Release()
	ev, err := Compile(bin(physical.OpOr, cB, bin(physical.OpLt, cI, lit(tI64, int64(0)), tBool), tBool))
	if err != nil {
		t.Fatal(err)
	}
	sel, err := ev.EvalSelection(context.Background(), mem, rec, make([]int32, 3, 8))
	if err != nil {
		t.Fatal(err)
	}
	if len(sel) != 3 || sel[0] != 0 || sel[1] != 1 || sel[2] != 3 {
		t.Fatalf("selection %v, want [0 1 3]", sel)
	}
	// a non-boolean expression is refused
	ev2, err := Compile(cI)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ev2.EvalSelection(context.Background(), mem, rec, nil); err == nil {
		t.Fatal("selection over Int64 did not fail")
	}
}

func TestScalarValueAndLiteral(t *testing.T) {
	mem := checkedMem(t)
	ctx := context.Background()
	a, err := ScalarValue(ctx, mem, bin(physical.OpSub, lit(tDate, arrow.Date32(date("1998-12-01"))), lit(tIvl, ivl(0, 90)), tTs))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Release()
	if got := showArray(a); got != "1998-09-02 00:00:00" {
		t.Fatalf("got %s", got)
	}
	if _, err := ScalarValue(ctx, mem, cI); err == nil {
		t.Fatal("scalar value of a column did not fail")
	}
	for _, l := range []*physical.Literal{lit(tDec(5, 2), dec("1.5", 2)), lit(tStr, nil), lit(tBool, true), lit(tIvl, ivl(1, 2))} {
		arr, err := Literal(mem, l, 3)
		if err != nil {
			t.Fatal(err)
		}
		if arr.Len() != 3 || !arrow.TypeEqual(arr.DataType(), l.Type) || (l.Value == nil) != (arr.NullN() == 3) {
			t.Errorf("Literal(%s): %v", l, arr)
		}
		arr.Release()
	}
}

// Sliced inputs (non-zero offsets) must evaluate like copies.
func TestSlicedInput(t *testing.T) {
	mem := checkedMem(t)
	rec := fixture.record(mem)
	defer rec.Release()
	sl := rec.NewSlice(1, 5)
	defer sl.Release()
	exprs := []physical.Expr{
		bin(physical.OpAnd, cB, bin(physical.OpGt, cI, lit(tI64, int64(-5)), tBool), tBool),
		&physical.Not{Expr: cB},
		&physical.IsNull{Expr: cJ},
		bin(physical.OpAdd, cD, cE, tDec(13, 4)),
		fn("upper", tStr, cS),
		&physical.Like{Expr: cS, Pattern: lit(tStr, "%e%")},
		&physical.Case{Whens: []physical.When{{Cond: cB, Then: cI}}, Else: lit(tI64, int64(0)), Type: tI64},
		&physical.Case{Whens: []physical.When{{Cond: cB, Then: cS}}, Else: lit(tStr, "none"), Type: tStr},
		&physical.Case{Whens: []physical.When{{Cond: bin(physical.OpEq, cS, lit(tStr, "banana"), tBool), Then: cD}}, Else: cE, Type: tDec(5, 2)},
	}
	for _, e := range exprs {
		full, err := evalString(t, mem, rec, e)
		if err != nil {
			t.Fatal(err)
		}
		part, err := evalString(t, mem, sl, e)
		if err != nil {
			t.Fatal(err)
		}
		if want := full[indexOf(full, "|")+1:]; part != want {
			t.Errorf("%s on slice: got %s want %s", e, part, want)
		}
	}
}

func TestDecimalHelpers(t *testing.T) {
	cases := []struct {
		in       string
		from, to int32
		want     string
	}{
		{"1.25", 2, 1, "1.3"},
		{"-1.25", 2, 1, "-1.3"},
		{"1.24", 2, 1, "1.2"},
		{"0.5", 1, 0, "1"},
		{"-0.5", 1, 0, "-1"},
		{"12345678901234567890123.456789012345678", 15, 0, "12345678901234567890123"},
		{"1234567890123.9999999999999999999999995", 25, 3, "1234567890124.000"},
		{"1", 0, 30, "1.000000000000000000000000000000"},
	}
	for _, c := range cases {
		n := dec(c.in, c.from)
		r, ok := rescale(n, c.from, c.to)
		if !ok {
			t.Errorf("rescale %s: overflow", c.in)
			continue
		}
		if got := string(appendDecimal(nil, r, c.to)); got != c.want {
			t.Errorf("rescale %s from %d to %d: got %s want %s", c.in, c.from, c.to, got, c.want)
		}
	}
	big := dec("99999999999999999999999999999999999999", 0)
	if _, ok := mulDec(big, dec("10", 0)); ok {
		t.Error("mulDec did not report overflow")
	}
	if _, ok := addDec(big, big); ok {
		t.Error("addDec did not report overflow of 2*(10^38-1) > 2^127")
	}
	if r, ok := addDec(pow10[37], pow10[37]); !ok || string(appendDecimal(nil, r, 37)) != "2.0000000000000000000000000000000000000" {
		t.Errorf("addDec(10^37, 10^37) = %v, %v", r, ok)
	}
}

func TestDates(t *testing.T) {
	for d := int32(-800000); d < 800000; d += 97 {
		y, m, dd := temporal.Civil(d)
		if back := temporal.DaysFromCivil(y, m, dd); back != int64(d) {
			t.Fatalf("civil round trip of %d: %d-%d-%d -> %d", d, y, m, dd, back)
		}
	}
	if got := string(temporal.AppendDate(nil, temporal.AddMonths(date("2024-01-31"), 1))); got != "2024-02-29" {
		t.Errorf("2024-01-31 + 1 month = %s", got)
	}
	if got := string(temporal.AppendDate(nil, temporal.AddMonths(date("2024-03-31"), -13))); got != "2023-02-28" {
		t.Errorf("2024-03-31 - 13 months = %s", got)
	}
}

func TestLikeMatcher(t *testing.T) {
	cases := []struct {
		pat, s string
		want   bool
	}{
		{"%", "", true},
		{"%", "abc", true},
		{"", "", true},
		{"", "a", false},
		{"a%", "abc", true},
		{"a%", "ba", false},
		{"%c", "abc", true},
		{"%b%", "abc", true},
		{"%x%", "abc", false},
		{"a%c", "abc", true},
		{"a%c", "ac", true},
		{"ab%bc", "abc", false},
		{"%a%b%c%", "xaxbxcx", true},
		{"%a%b%c%", "xcxbxax", false},
		{"a_c", "abc", true},
		{"a_c", "ac", false},
		{"a_c", "aéc", true},
		{"_%_", "a", false},
		{"_%_", "ab", true},
		{"%_b", "ab", true},
		{"%a_b%", "xxaxbxx", true},
		{`a\%b`, "a%b", true},
		{`a\%b`, "axb", false},
		{`a\_b`, "a_b", true},
		{`a\_b`, "axb", false},
		{`100\\`, `100\`, true},
		{"%special%requests%", "the special foo requests", true},
		{"%special%requests%", "requests special", false},
	}
	for _, c := range cases {
		if got := compilePattern(c.pat, false).match([]byte(c.s)); got != c.want {
			t.Errorf("%q LIKE %q = %v, want %v", c.s, c.pat, got, c.want)
		}
	}
}

// CASE takes its fast path for the result types it has a gather loop for.
func TestCaseFastPathChosen(t *testing.T) {
	for _, typ := range []arrow.DataType{tI64, tI32, tDate, tF64, tDec(5, 2), tStr} {
		e := &physical.Case{Whens: []physical.When{{Cond: cB, Then: lit(typ, nil)}}, Type: typ}
		n, err := compileCase(e)
		if err != nil {
			t.Fatal(err)
		}
		if n.(*caseNode).fast == nil {
			t.Errorf("CASE of %s: no fast path", typ)
		}
	}
	n, err := compileCase(&physical.Case{Whens: []physical.When{{Cond: cB, Then: cB}}, Type: tBool})
	if err != nil {
		t.Fatal(err)
	}
	if n.(*caseNode).fast != nil {
		t.Errorf("CASE of bool: a fast path without a gather loop")
	}
}

// CASE with string constants over batches long enough for whole bytes of
// the condition bitmaps (the masked path of markTrue) and for the short
// constants' word stores: checked against a row-by-row reference, also on
// a slice that starts mid-byte. Conditions are NULL on some rows, which
// must fall through to the next WHEN; one constant is 8 bytes, one empty.
func TestCaseStringConstantsLong(t *testing.T) {
	mem := checkedMem(t)
	const n = 203
	vals := make([]any, n)
	for i := range vals {
		if i%11 != 3 {
			vals[i] = int64((i * 37) % 50)
		}
	}
	schema := arrow.NewSchema([]arrow.Field{{Name: "q", Type: tI64, Nullable: true}}, nil)
	arr := buildArray(mem, tI64, vals)
	rec := array.NewRecordBatch(schema, []arrow.Array{arr}, n)
	arr.Release()
	defer rec.Release()
	q := col(0, "q", tI64)
	le := func(v int64) physical.Expr { return bin(physical.OpLtEq, q, lit(tI64, v), tBool) }
	for _, els := range []string{"41-50", "longer than eight"} {
		e := &physical.Case{Whens: []physical.When{
			{Cond: le(10), Then: lit(tStr, "")},
			{Cond: le(25), Then: lit(tStr, "12345678")},
			{Cond: le(40), Then: lit(tStr, "x")},
		}, Else: lit(tStr, els), Type: tStr}
		ref := make([]string, n)
		for i, v := range vals {
			switch {
			case v == nil:
				ref[i] = "'" + els + "'"
			case v.(int64) <= 10:
				ref[i] = "''"
			case v.(int64) <= 25:
				ref[i] = "'12345678'"
			case v.(int64) <= 40:
				ref[i] = "'x'"
			default:
				ref[i] = "'" + els + "'"
			}
		}
		for _, off := range []int64{0, 5} {
			in := rec.NewSlice(off, n)
			got, err := evalString(t, mem, in, e)
			in.Release()
			if err != nil {
				t.Fatal(err)
			}
			if want := strings.Join(ref[off:], "|"); got != want {
				t.Errorf("else %q, offset %d:\n got  %s\n want %s", els, off, got, want)
			}
		}
	}
}
