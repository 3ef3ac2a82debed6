package exec_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver/exec/exectest"
	"github.com/quiverdb/quiver/physical"
)

// TestFilterConjunctions checks the operand-at-a-time evaluation of AND
// predicates against a row-at-a-time reference in Go, with selective and
// unselective first operands (so the survivors are compacted early, late
// or never), nested ANDs and ORs, and NULLs, at the batch sizes
// exectest.Run perturbs.
func TestFilterConjunctions(t *testing.T) {
	type row struct {
		a *int64
		b *string
		c int64
	}
	r := rand.New(rand.NewPCG(7, 11))
	strs := []string{"x", "y", "z"}
	rows := make([]row, 1500)
	var in []map[string]any
	for i := range rows {
		var rw row
		if r.IntN(10) > 0 {
			v := int64(r.IntN(100))
			rw.a = &v
		}
		if k := r.IntN(4); k < 3 {
			rw.b = &strs[k]
		}
		rw.c = int64(r.IntN(100))
		rows[i] = rw
		m := map[string]any{"a": nil, "b": nil, "c": rw.c}
		if rw.a != nil {
			m["a"] = *rw.a
		}
		if rw.b != nil {
			m["b"] = *rw.b
		}
		in = append(in, m)
	}
	inJSON, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "a", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "b", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "c", Type: arrow.PrimitiveTypes.Int64},
	}, nil)
	boolT := arrow.FixedWidthTypes.Boolean
	a := opCol(0, "a", arrow.PrimitiveTypes.Int64)
	b := opCol(1, "b", arrow.BinaryTypes.String)
	c := opCol(2, "c", arrow.PrimitiveTypes.Int64)
	str := func(s string) *physical.Literal { return &physical.Literal{Type: arrow.BinaryTypes.String, Value: s} }
	and := func(l, r physical.Expr) physical.Expr { return opBin(physical.OpAnd, l, r, boolT) }
	or := func(l, r physical.Expr) physical.Expr { return opBin(physical.OpOr, l, r, boolT) }
	cmp := func(op physical.BinaryOp, l, r physical.Expr) physical.Expr { return opBin(op, l, r, boolT) }

	// Kleene truth of the reference: 1 true, 0 false, -1 NULL.
	aCmp := func(rw row, f func(int64) bool) int {
		if rw.a == nil {
			return -1
		}
		return b2i(f(*rw.a))
	}
	bEq := func(rw row, s string) int {
		if rw.b == nil {
			return -1
		}
		return b2i(*rw.b == s)
	}
	kAnd := func(x, y int) int {
		if x == 0 || y == 0 {
			return 0
		}
		if x == -1 || y == -1 {
			return -1
		}
		return 1
	}
	kOr := func(x, y int) int {
		if x == 1 || y == 1 {
			return 1
		}
		if x == -1 || y == -1 {
			return -1
		}
		return 0
	}
	cases := []struct {
		name string
		pred physical.Expr
		ref  func(row) int
	}{
		{"selective-first", and(and(cmp(physical.OpGtEq, a, i64Lit(80)), cmp(physical.OpEq, b, str("x"))), cmp(physical.OpLt, c, i64Lit(30))),
			func(rw row) int {
				return kAnd(kAnd(aCmp(rw, func(v int64) bool { return v >= 80 }), bEq(rw, "x")), b2i(rw.c < 30))
			}},
		{"unselective-first", and(and(cmp(physical.OpGtEq, c, i64Lit(5)), cmp(physical.OpLt, c, i64Lit(95))), cmp(physical.OpEq, b, str("y"))),
			func(rw row) int { return kAnd(kAnd(b2i(rw.c >= 5), b2i(rw.c < 95)), bEq(rw, "y")) }},
		{"nested-or", and(and(or(cmp(physical.OpLt, a, i64Lit(10)), cmp(physical.OpGt, c, i64Lit(90))), &physical.IsNull{Expr: b, Negated: true}), cmp(physical.OpGt, a, i64Lit(3))),
			func(rw row) int {
				return kAnd(kAnd(kOr(aCmp(rw, func(v int64) bool { return v < 10 }), b2i(rw.c > 90)), b2i(rw.b != nil)), aCmp(rw, func(v int64) bool { return v > 3 }))
			}},
		{"nested-right", and(cmp(physical.OpLt, c, i64Lit(50)), and(cmp(physical.OpEq, b, str("z")), cmp(physical.OpGtEq, a, i64Lit(20)))),
			func(rw row) int {
				return kAnd(b2i(rw.c < 50), kAnd(bEq(rw, "z"), aCmp(rw, func(v int64) bool { return v >= 20 })))
			}},
		{"two-compactions", and(and(and(cmp(physical.OpGtEq, a, i64Lit(50)), cmp(physical.OpEq, b, str("x"))), cmp(physical.OpNotEq, b, str("y"))), cmp(physical.OpLt, c, i64Lit(50))),
			func(rw row) int {
				ne := bEq(rw, "y")
				if ne >= 0 {
					ne = 1 - ne
				}
				return kAnd(kAnd(kAnd(aCmp(rw, func(v int64) bool { return v >= 50 }), bEq(rw, "x")), ne), b2i(rw.c < 50))
			}},
		{"all-pass", and(cmp(physical.OpGtEq, c, i64Lit(0)), cmp(physical.OpLt, c, i64Lit(100))),
			func(rw row) int { return kAnd(b2i(rw.c >= 0), b2i(rw.c < 100)) }},
		{"none-pass", and(cmp(physical.OpGtEq, c, i64Lit(0)), cmp(physical.OpLt, c, i64Lit(0))),
			func(rw row) int { return 0 }},
	}
	for _, tc := range cases {
		var want []map[string]any
		for i, rw := range rows {
			if tc.ref(rw) == 1 {
				want = append(want, in[i])
			}
		}
		if want == nil {
			want = []map[string]any{}
		}
		wantJSON, err := json.Marshal(want)
		if err != nil {
			t.Fatal(err)
		}
		pred := tc.pred
		exectest.Run(t, exectest.Case{
			Name:   fmt.Sprintf("%s(%d rows)", tc.name, len(want)),
			Inputs: []exectest.Input{{Name: "t", Schema: schema, Rows: string(inJSON), Partitions: 2}},
			Plan: func(s []physical.Plan) physical.Plan {
				return &physical.Filter{Input: s[0], Predicate: pred}
			},
			Want: string(wantJSON),
		})
	}
}

func b2i(v bool) int {
	if v {
		return 1
	}
	return 0
}
