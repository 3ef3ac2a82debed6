package eval

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
)

// TestLibraryKernels runs the library's kernels over the fixture's columns
// (NULLs, empty text, multi-byte text, negative numbers) with the checked
// allocator, and again over a slice of the batch: a kernel must read
// columns at their offsets (the rows of a slice are the whole batch's rows
// 1 to 3).
func TestLibraryKernels(t *testing.T) {
	mem := checkedMem(t)
	rec := fixture.record(mem)
	defer rec.Release()
	i64 := func(v int64) physical.Expr { return lit(tI64, v) }
	str := func(v string) physical.Expr { return lit(tStr, v) }
	cases := []struct {
		name string
		e    physical.Expr
		want string
	}{
		{"replace", fn("replace", tStr, cS, str("a"), str("-")), "'-pple'|'B-n-n-'|NULL|'cherry pie'|''"},
		{"lpad", fn("lpad", tStr, cS, i64(7), str("*")), "'**apple'|'*Banana'|NULL|'cherry '|'*******'"},
		{"rpad column length", fn("rpad", tStr, str("ab"), &physical.Cast{Expr: cJ, Type: tI64}), "'ab '|NULL|'ab   '|''|''"},
		{"strpos", fn("strpos", tI64, cS, str("an")), "0|2|NULL|0|0"},
		{"split_part", fn("split_part", tStr, cS, str(" "), i64(-1)), "'apple'|'Banana'|NULL|'pie'|''"},
		{"left negative", fn("left", tStr, cS, i64(-2)), "'app'|'Bana'|NULL|'cherry p'|''"},
		{"right", fn("right", tStr, cS, cI), "'e'|'nana'|NULL|'cherry pie'|''"},
		{"reverse", fn("reverse", tStr, cS), "'elppa'|'ananaB'|NULL|'eip yrrehc'|''"},
		{"repeat", fn("repeat", tStr, cS, cI), "'apple'|''|NULL|'cherry piecherry piecherry piecherry piecherry piecherry piecherry piecherry piecherry piecherry pie'|''"},
		{"starts_with", fn("starts_with", tBool, cS, str("B")), "false|true|NULL|false|false"},
		{"ends_with column", fn("ends_with", tBool, str("Banana"), cS), "false|true|NULL|false|true"},
		{"initcap", fn("initcap", tStr, cS), "'Apple'|'Banana'|NULL|'Cherry Pie'|''"},
		{"translate", fn("translate", tStr, cS, str("ae"), str("E")), "'Eppl'|'BEnEnE'|NULL|'chrry pi'|''"},
		{"ascii", fn("ascii", tI64, cS), "97|66|NULL|99|0"},
		{"chr", fn("chr", tStr, &physical.Cast{Expr: bin(physical.OpAdd, cJ, lit(tI32, int32(70)), tI32), Type: tI64}), "'I'|NULL|'K'|'?'|'F'"},
		{"md5", fn("md5", tStr, cS), "'1f3870be274f6c49b3e31a0c6728957f'|'e6f9c347672daae5a2557ae118f44a1e'|NULL|'7a963d60ecd9fde41d8bec259a398829'|'d41d8cd98f00b204e9800998ecf8427e'"},
		{"concat_ws", fn("concat_ws", tStr, str(","), cS, &physical.Cast{Expr: cI, Type: tStr}), "'apple,1'|'Banana,-2'|''|'cherry pie,10'|',0'"},
		{"concat_ws null separator", fn("concat_ws", tStr, lit(tStr, nil), cS), "NULL|NULL|NULL|NULL|NULL"},
		{"regexp_like", fn("regexp_like", tBool, cS, str("^[a-c]"), str("i")), "true|true|NULL|true|false"},
		{"regexp_replace", fn("regexp_replace", tStr, cS, str("([aeiou])"), str("<\\1>"), str("g")), "'<a>ppl<e>'|'B<a>n<a>n<a>'|NULL|'ch<e>rry p<i><e>'|''"},
		{"regexp_match", fn("regexp_match", tStr, cS, str("(an)+")), "NULL|'an'|NULL|NULL|NULL"},
		{"btrim chars", fn("btrim", tStr, cS, str("ae")), "'ppl'|'Banan'|NULL|'cherry pi'|''"},
		{"sqrt", fn("sqrt", tF64, bin(physical.OpMul, cF, cF, tF64)), "1.5|NULL|0.5|2|0"},
		{"power", fn("power", tF64, cF, lit(tF64, 2.0)), "2.25|NULL|0.25|4|0"},
		{"sign", fn("sign", tI64, cF), "1|NULL|-1|1|0"},
		{"ceil decimal", fn("ceil", tDec(9, 0), cD), "2|3|NULL|-3|0"},
		{"floor decimal", fn("floor", tDec(9, 0), cD), "1|2|NULL|-4|0"},
		{"trunc float", fn("trunc", tF64, cF), "1|NULL|-0|2|0"},
		{"greatest", fn("greatest", tI64, cI, &physical.Cast{Expr: cJ, Type: tI64}), "3|-2|5|10|0"},
		{"least", fn("least", tI64, cI, &physical.Cast{Expr: cJ, Type: tI64}, i64(2)), "1|-2|2|-7|0"},
		{"greatest strings", fn("greatest", tStr, cS, str("b")), "'b'|'b'|'b'|'cherry pie'|'b'"},
		{"date_trunc", fn("date_trunc", tDate, str("quarter"), cDt), "1994-01-01|1995-04-01|NULL|2000-01-01|1970-01-01"},
		{"date_part isodow", fn("date_part", tI64, str("isodow"), cDt), "1|4|NULL|2|4"},
		{"make_date", fn("make_date", tDate, i64(2000), i64(2), &physical.Cast{Expr: bin(physical.OpAdd, cJ, lit(tI32, int32(24)), tI32), Type: tI64}), "2000-02-27|NULL|2000-02-29|2000-02-17|2000-02-24"},
		{"try_cast", fn("try_cast", tI64, cS, lit(tI64, nil)), "NULL|NULL|NULL|NULL|NULL"},
		{"try_cast mixed", fn("try_cast", tI64, &physical.Cast{Expr: cD, Type: tStr}, lit(tI64, nil)), "NULL|NULL|NULL|NULL|NULL"},
		{"try_cast ints", fn("try_cast", tI64, &physical.Cast{Expr: cJ, Type: tStr}, lit(tI64, nil)), "3|NULL|5|-7|0"},
	}
	sl := rec.NewSlice(1, 4)
	defer sl.Release()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := evalString(t, mem, rec, c.e)
			if err != nil {
				t.Fatalf("%s: %v", c.e, err)
			}
			if got != c.want {
				t.Errorf("%s:\n got %s\nwant %s", c.e, got, c.want)
			}
			part, err := evalString(t, mem, sl, c.e)
			if err != nil {
				t.Fatalf("%s over a slice: %v", c.e, err)
			}
			if want := strings.Join(strings.Split(c.want, "|")[1:4], "|"); part != want {
				t.Errorf("%s over rows 1-3 as a slice:\n got %s\nwant %s", c.e, part, want)
			}
		})
	}
}

func TestLibraryErrors(t *testing.T) {
	mem := checkedMem(t)
	rec := fixture.record(mem)
	defer rec.Release()
	cases := []struct {
		name string
		e    physical.Expr
		msg  string
	}{
		{"ln of zero", fn("ln", tF64, cF), "logarithm of a negative number"},
		{"sqrt negative", fn("sqrt", tF64, cF), "square root of a negative number"},
		{"chr negative", fn("chr", tStr, cI), "not a valid Unicode code point"},
		{"split_part zero", fn("split_part", tStr, cS, lit(tStr, ","), &physical.Cast{Expr: cI, Type: tI64}), "field position must not be zero"},
		{"make_date invalid", fn("make_date", tDate, lit(tI64, int64(2001)), lit(tI64, int64(2)), lit(tI64, int64(29))), "not a valid date"},
		{"regexp invalid", fn("regexp_like", tBool, cS, fn("concat", tStr, cS, lit(tStr, "("))), "invalid regular expression"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := evalString(t, mem, rec, c.e)
			if err == nil {
				t.Fatalf("%s: no error", c.e)
			}
			if !qerr.Is(err, qerr.Execution) || !strings.Contains(err.Error(), c.msg) {
				t.Errorf("%s: error %v, want an execution error mentioning %q", c.e, err, c.msg)
			}
		})
	}
}

// TestLibraryConcurrent runs one compiled Evaluator of the kernels with
// per-call state (regular expressions from a column) in several goroutines
// at once, as partitions do; -race checks they share nothing mutable.
func TestLibraryConcurrent(t *testing.T) {
	mem := checkedMem(t)
	rec := fixture.record(mem)
	defer rec.Release()
	e := fn("regexp_replace", tStr, cS, fn("concat", tStr, lit(tStr, "^"), fn("left", tStr, cS, lit(tI64, int64(1)))), lit(tStr, "<\\&>"))
	ev, err := Compile(e)
	if err != nil {
		t.Fatal(err)
	}
	const want = "'<a>pple'|'<B>anana'|NULL|'<c>herry pie'|'<>'"
	errs := make(chan error, 4)
	for range 4 {
		go func() {
			for range 50 {
				out, err := ev.Eval(context.Background(), mem, rec)
				if err != nil {
					errs <- err
					return
				}
				got := showArray(out)
				out.Release()
				if got != want {
					errs <- fmt.Errorf("got %s, want %s", got, want)
					return
				}
			}
			errs <- nil
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
