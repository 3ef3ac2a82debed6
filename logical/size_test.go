package logical

import (
	"fmt"
	"testing"

	"github.com/quiverdb/quiver/qerr"
)

// chain returns first op 1 op 2 ... op n-1, left-deep, as SQL builds it.
func chain(n int, op BinaryOp, term func(i int) Expr) Expr {
	e := term(0)
	for i := 1; i < n; i++ {
		e = &Binary{Op: op, Left: e, Right: term(i)}
	}
	return e
}

func TestExprKeysFollowDisplayNames(t *testing.T) {
	a, b := Col("a"), Col("b")
	exprs := []Expr{
		a, Col("a"), b, Lit(int64(1)), Lit(int64(2)),
		&Binary{Op: OpAdd, Left: a, Right: b}, &Binary{Op: OpAdd, Left: Col("a"), Right: Col("b")},
		&Binary{Op: OpAdd, Left: b, Right: a}, &Binary{Op: OpSub, Left: a, Right: b},
		&Binary{Op: OpAdd, Left: &Binary{Op: OpAdd, Left: a, Right: b}, Right: a},
		&Binary{Op: OpAdd, Left: a, Right: &Binary{Op: OpAdd, Left: b, Right: a}},
		&Not{Expr: a}, &Negative{Expr: a}, &IsNull{Expr: a}, &IsNull{Expr: a, Negated: true},
		&Cast{Expr: a, Type: Int64}, &Cast{Expr: a, Type: String},
		&ScalarFunc{Name: "abs", Args: []Expr{a}}, &ScalarFunc{Name: "abs", Args: []Expr{b}},
		&InList{Expr: a, List: []Expr{Lit(int64(1)), Lit(int64(2))}}, &InList{Expr: a, List: []Expr{Lit(int64(2)), Lit(int64(1))}},
		&Alias{Expr: a, Name: "x"}, &Alias{Expr: b, Name: "x"},
		&AggExpr{Func: AggSum, Args: []Expr{a}}, &AggExpr{Func: AggSum, Args: []Expr{a}, Distinct: true},
		&Case{Whens: []When{{Cond: a, Then: b}}, Else: a}, &Case{Operand: a, Whens: []When{{Cond: a, Then: b}}},
	}
	k := NewExprKeys()
	for _, x := range exprs {
		for _, y := range exprs {
			if (k.Key(x) == k.Key(y)) != (x.String() == y.String()) {
				t.Errorf("%s (key %d) and %s (key %d): keys and display names disagree", x, k.Key(x), y, k.Key(y))
			}
		}
	}
}

// TestDisplayNameOfLongChain: the display name of a 10,000-term chain is
// built in one pass (it used to be rebuilt at every node).
func TestDisplayNameOfLongChain(t *testing.T) {
	e := chain(10000, OpAdd, func(int) Expr { return Lit(int64(1)) })
	s := e.String()
	if len(s) != 4*9999+1+2*9998 || s[len(s)-5:] != ") + 1" {
		t.Fatalf("display name of %d bytes starting %q", len(s), s[:20])
	}
	typed, err := Coerce(e, NewSchema())
	if err != nil {
		t.Fatal(err)
	}
	if typed.String() != s {
		t.Fatalf("coercion changed the name")
	}
}

func BenchmarkDisplayName(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		e := chain(n, OpOr, func(i int) Expr { return &Binary{Op: OpEq, Left: Col("a"), Right: Lit(int64(i))} })
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				_ = e.String()
			}
		})
	}
}

func BenchmarkCoerceChain(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		e := chain(n, OpAdd, func(int) Expr { return Lit(int64(1)) })
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				if _, err := Coerce(e, NewSchema()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func TestCheckSize(t *testing.T) {
	one := NewEmptyRelation(true, NewSchema())
	proj := func(e Expr) Plan {
		p, err := NewProjection(one, []Expr{&Alias{Expr: e, Name: "x"}})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	lit := func(int) Expr { return Lit(int64(1)) }
	if err := CheckSize(proj(chain(MaxExprDepth-1, OpAdd, lit))); err != nil {
		t.Fatalf("an expression at the depth limit: %v", err)
	}
	err := CheckSize(proj(chain(MaxExprDepth+1, OpAdd, lit)))
	if err == nil || KindOfPlan(err) == false {
		t.Fatalf("an expression over the depth limit: got %v, want a planning error", err)
	}
	// Subquery plans count: MaxPlanNodes scalar subqueries in one list.
	sub := proj(Lit(int64(1)))
	list := make([]Expr, 0, MaxPlanNodes)
	for range MaxPlanNodes {
		list = append(list, &ScalarSubquery{Plan: sub})
	}
	err = CheckSize(proj(&ScalarFunc{Name: "coalesce", Args: list}))
	if err == nil || KindOfPlan(err) == false {
		t.Fatalf("a plan over the node limit: got %v, want a planning error", err)
	}
}

// KindOfPlan reports whether err is a planning error.
func KindOfPlan(err error) bool { return qerr.Is(err, qerr.Plan) }
