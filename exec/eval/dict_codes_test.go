package eval

import (
	"context"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/quiverdb/quiver/exec/filemap"
	"github.com/quiverdb/quiver/physical"
)

// fakeDicts gives arrays dictionary codes without a cache file: each
// registered array gets the dictionary of its distinct values in the given
// order (values absent from the array may be listed too).
type fakeDicts map[arrow.ArrayData]struct {
	dict  *filemap.Dict
	codes []int32
}

func (f fakeDicts) add(a *array.String, values []string) {
	d := &filemap.Dict{Values: values}
	codes := make([]int32, a.Len())
	for r := range codes {
		if a.IsNull(r) {
			codes[r] = 0 // meaningless, as in a file
			continue
		}
		codes[r] = -1
		for i, v := range values {
			if v == a.Value(r) {
				codes[r] = int32(i)
			}
		}
		if codes[r] < 0 {
			panic("fakeDicts: " + a.Value(r) + " is not in the dictionary")
		}
	}
	f[a.Data()] = struct {
		dict  *filemap.Dict
		codes []int32
	}{d, codes}
}

func (f fakeDicts) codes(a arrow.Array) (*filemap.Dict, []int32, bool) {
	e, ok := f[a.Data()]
	return e.dict, e.codes, ok
}

// TestDictCodesMatchStrings: comparisons with a constant (=, <>, <, <=, >,
// >=, inside CASE too) and IN / NOT IN lists (with and without NULL) give
// the same answers on file dictionary codes as on the strings, with NULL
// rows, a constant absent from the dictionary, two batches with different
// dictionaries through one evaluator (the cached verdict must follow the
// dictionary), and a batch without codes in between.
func TestDictCodesMatchStrings(t *testing.T) {
	mem := checkedMem(t)
	schema := arrow.NewSchema([]arrow.Field{{Name: "s", Type: tStr, Nullable: true}}, nil)
	mk := func(vals ...any) arrow.RecordBatch {
		return testBatch{schema: schema, cols: [][]any{vals}}.record(mem)
	}
	// Batch a: a dictionary without "R"; batch b: "R" present, at another code.
	a := mk("A", nil, "N", "A", "N", "A", "A", "N", "N", nil, "A")
	b := mk("R", "A", nil, "N", "R", "R", "A", "N", "R")
	plain := mk("R", "A", nil, "N", "Z")
	defer a.Release()
	defer b.Release()
	defer plain.Release()
	fake := fakeDicts{}
	fake.add(a.Column(0).(*array.String), []string{"N", "A", "unused"})
	fake.add(b.Column(0).(*array.String), []string{"A", "N", "R"})

	s := col(0, "s", tStr)
	str := func(v string) physical.Expr { return lit(tStr, v) }
	var exprs []physical.Expr
	for _, op := range []physical.BinaryOp{physical.OpEq, physical.OpNotEq, physical.OpLt, physical.OpLtEq, physical.OpGt, physical.OpGtEq} {
		for _, v := range []string{"R", "A", "B", "Z"} {
			exprs = append(exprs, bin(op, s, str(v), tBool), bin(op, str(v), s, tBool))
		}
	}
	for _, list := range [][]physical.Expr{
		{str("R")}, {str("A"), str("R")}, {str("Q"), str("X")}, {str("N"), lit(tStr, nil)},
		{str("A"), str("B"), str("C"), str("D"), str("E"), str("F"), str("G"), str("H"), str("N")}, // a hashed set
	} {
		exprs = append(exprs,
			&physical.InList{Expr: s, List: list},
			&physical.InList{Expr: s, List: list, Negated: true})
	}
	exprs = append(exprs, &physical.Case{
		Whens: []physical.When{{Cond: bin(physical.OpEq, s, str("R"), tBool), Then: lit(tI64, int64(1))}},
		Else:  lit(tI64, int64(0)), Type: tI64,
	})

	for _, e := range exprs {
		var want, got []string
		for _, rec := range []arrow.RecordBatch{a, b, plain, a, b} {
			w, err := evalString(t, mem, rec, e)
			if err != nil {
				t.Fatalf("%s: %v", e, err)
			}
			want = append(want, w)
		}
		restore := dictCodes
		dictCodes = fake.codes
		ev, err := Compile(e)
		if err != nil {
			t.Fatal(err)
		}
		before := DictCompareRows()
		for _, rec := range []arrow.RecordBatch{a, b, plain, a, b} {
			out, err := ev.Eval(context.Background(), mem, rec)
			if err != nil {
				t.Fatalf("%s: %v", e, err)
			}
			got = append(got, showArray(out))
			out.Release()
		}
		coded := DictCompareRows() - before
		dictCodes = restore
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s on codes: %v, want %v", e, got, want)
		}
		if wantCoded := 2 * (a.NumRows() + b.NumRows()); coded != wantCoded {
			t.Errorf("%s: %d rows tested on codes, want %d", e, coded, wantCoded)
		}
	}
}
