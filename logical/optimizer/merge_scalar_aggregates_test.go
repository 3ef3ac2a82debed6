package optimizer

import (
	"context"
	"strings"
	"testing"

	"github.com/quiverdb/quiver/logical"
)

// scalarSub is FROM (SELECT aggs FROM in WHERE pred) alias, as SQL builds it.
func scalarSub(alias string, in logical.Plan, pred logical.Expr, names []string, aggs ...logical.Expr) logical.Plan {
	if pred != nil {
		in = filter(in, pred)
	}
	a := aggregate(in, nil, aggs...)
	list := make([]logical.Expr, len(aggs))
	for i, e := range aggs {
		list[i] = &logical.Alias{Expr: &logical.Column{Name: e.String()}, Name: names[i]}
	}
	return logical.NewSubqueryAlias(project(a, list...), alias)
}

func TestMergeScalarAggregates(t *testing.T) {
	a1 := eq(col("t.a"), logical.Lit(int64(1)))
	// The golden file shows the merged aggregates by name; what they compute:
	p := cross(
		scalarSub("s1", scan(tblT, "t"), logical.And(a1, bin(logical.OpGt, col("t.b"), logical.Lit(int64(2)))), []string{"n"}, agg(logical.AggCount)),
		scalarSub("s2", scan(tblT, "t"), nil, []string{"m"}, agg(logical.AggMin, col("t.e"))))
	np, changed, err := MergeScalarAggregates{}.Rewrite(context.Background(), p)
	if err != nil || !changed {
		t.Fatalf("Rewrite: changed %v, %v", changed, err)
	}
	var got []string
	logical.Inspect(np, func(n logical.Plan) bool {
		if a, ok := n.(*logical.Aggregate); ok && got == nil {
			for _, e := range a.Aggs {
				got = append(got, logical.StripAlias(e).String())
			}
		}
		return true
	})
	if want := "count(CASE WHEN (t.a = 1) AND (t.b > 2) THEN 1 END); min(t.e)"; strings.Join(got, "; ") != want {
		t.Errorf("merged aggregates: got %q, want %q", strings.Join(got, "; "), want)
	}
	runRuleGolden(t, MergeScalarAggregates{}, "merge_scalar_aggregates", []ruleCase{
		{"shared conjunct stays, the others guard", func() logical.Plan {
			return cross(
				scalarSub("s1", scan(tblT, "t"), logical.And(a1, bin(logical.OpGt, col("t.b"), logical.Lit(int64(2)))), []string{"n"},
					agg(logical.AggCount)),
				scalarSub("s2", scan(tblT, "t"), logical.And(a1, bin(logical.OpLt, col("t.b"), logical.Lit(int64(0)))), []string{"s", "d"},
					agg(logical.AggSum, col("t.e")), &logical.AggExpr{Func: logical.AggCount, Args: []logical.Expr{col("t.c")}, Distinct: true}))
		}},
		{"an input without its own conjuncts reads every row", func() logical.Plan {
			return cross(cross(
				scalarSub("s1", scan(tblT, "t"), nil, []string{"n"}, agg(logical.AggCount)),
				scan(tblW, "w")),
				scalarSub("s2", scan(tblT, "t"), a1, []string{"m"}, agg(logical.AggMax, col("t.d"))))
		}},
		{"different inputs", func() logical.Plan {
			return cross(
				scalarSub("s1", scan(tblT, "t"), a1, []string{"n"}, agg(logical.AggCount)),
				scalarSub("s2", scan(tblU, "u"), nil, []string{"n"}, agg(logical.AggCount)))
		}},
		{"grouped", func() logical.Plan {
			g := aggregate(filter(scan(tblT, "t"), a1), []logical.Expr{col("t.c")}, agg(logical.AggCount))
			return cross(logical.NewSubqueryAlias(g, "s1"),
				scalarSub("s2", scan(tblT, "t"), nil, []string{"n"}, agg(logical.AggCount)))
		}},
		{"volatile predicate", func() logical.Plan {
			r := bin(logical.OpLt, &logical.ScalarFunc{Name: "random"}, logical.Lit(0.5))
			return cross(
				scalarSub("s1", scan(tblT, "t"), r, []string{"n"}, agg(logical.AggCount)),
				scalarSub("s2", scan(tblT, "t"), r, []string{"n"}, agg(logical.AggCount)))
		}},
		{"collecting aggregate", func() logical.Plan {
			return cross(
				scalarSub("s1", scan(tblT, "t"), a1, []string{"n"}, agg(logical.AggArrayAgg, col("t.a"))),
				scalarSub("s2", scan(tblT, "t"), nil, []string{"n"}, agg(logical.AggCount)))
		}},
	})
}

// TestMergeScalarAggregatesFixpoint: the default optimizer reaches a
// fixpoint over a merged plan and every reader keeps reading one shared
// input, common subexpressions inside it included.
func TestMergeScalarAggregatesFixpoint(t *testing.T) {
	x := bin(logical.OpMul, col("t.a"), col("t.a"))
	p := cross(
		scalarSub("s1", scan(tblT, "t"), bin(logical.OpGt, col("t.b"), logical.Lit(int64(2))), []string{"p", "q"},
			agg(logical.AggSum, bin(logical.OpAdd, x, logical.Lit(int64(1)))), agg(logical.AggSum, bin(logical.OpSub, x, logical.Lit(int64(1))))),
		scalarSub("s2", scan(tblT, "t"), bin(logical.OpLt, col("t.b"), logical.Lit(int64(0))), []string{"r"},
			agg(logical.AggAvg, x)))
	out, err := New().Optimize(context.Background(), p, nil)
	if err != nil {
		t.Fatal(err)
	}
	inputs := map[string]bool{}
	logical.Inspect(out, func(n logical.Plan) bool {
		if r, ok := n.(*logical.CTERef); ok {
			inputs[planString(r.Input)] = true
		}
		return true
	})
	if len(inputs) != 1 {
		t.Fatalf("want one shared input read by both subqueries, got %d:\n%s", len(inputs), logical.Indent(out))
	}
	if s := logical.Indent(out); strings.Count(s, "TableScan: t") != 1 {
		t.Errorf("want t scanned once, got:\n%s", s)
	}
	if _, err := New().Without(MergeScalarAggregates{}.Name()).Optimize(context.Background(), p, func(rule string, _ logical.Plan) {
		if rule == (MergeScalarAggregates{}).Name() {
			t.Errorf("Without left %s in", rule)
		}
	}); err != nil {
		t.Fatal(err)
	}
}

func TestPullUpLeftJoin(t *testing.T) {
	// fact ⟕ u on fact.k = u.k, then an inner join with a filtered dim.
	lj := func() logical.Plan {
		return join(scan(tblFact, "fact"), scan(tblU, "u"), logical.LeftJoin, []logical.EquiPair{{Left: col("fact.k"), Right: col("u.k")}}, nil)
	}
	dim := func() logical.Plan { return filter(scan(tblDim, "dim"), eq(col("dim.name"), logical.Lit("x"))) }
	onDim := []logical.EquiPair{{Left: col("fact.dk"), Right: col("dim.k")}}
	runRuleGolden(t, PullUpLeftJoin{}, "pull_up_left_join", []ruleCase{
		{"selective inner join below the left join", func() logical.Plan {
			return join(lj(), dim(), logical.InnerJoin, onDim, nil)
		}},
		{"a filter above the left join goes up with it", func() logical.Plan {
			return join(filter(lj(), &logical.IsNull{Expr: col("u.x")}), dim(), logical.InnerJoin, onDim, nil)
		}},
		{"the inner join reads the right side", func() logical.Plan {
			return join(lj(), dim(), logical.InnerJoin, []logical.EquiPair{{Left: col("u.x"), Right: col("dim.k")}}, nil)
		}},
		{"the inner join does not cut the rows", func() logical.Plan {
			return join(lj(), scan(tblDim, "dim"), logical.InnerJoin, onDim, nil)
		}},
		{"anti join", func() logical.Plan {
			anti := join(scan(tblFact, "fact"), scan(tblU, "u"), logical.AntiJoin, []logical.EquiPair{{Left: col("fact.k"), Right: col("u.k")}}, nil)
			return join(anti, dim(), logical.InnerJoin, onDim, nil)
		}},
	})
}

// TestEliminateOuterJoinFilters: the filters right above an outer join
// that make it inner, and those that keep it.
func TestEliminateOuterJoinFilters(t *testing.T) {
	on := []logical.EquiPair{{Left: col("t.a"), Right: col("u.k")}}
	lj := func(typ logical.JoinType) logical.Plan { return join(scan(tblT, "t"), scan(tblU, "u"), typ, on, nil) }
	runRuleGolden(t, EliminateOuterJoin{}, "outer_join_filters", []ruleCase{
		{"comparison on the NULL-extended side", func() logical.Plan {
			return filter(lj(logical.LeftJoin), bin(logical.OpGt, bin(logical.OpAdd, col("u.x"), logical.Lit(int64(1))), logical.Lit(int64(5))))
		}},
		{"IS NOT NULL on the NULL-extended side of a right join", func() logical.Plan {
			return filter(lj(logical.RightJoin), &logical.IsNull{Expr: col("t.b"), Negated: true})
		}},
		{"IS NULL keeps the rows the join adds", func() logical.Plan {
			return filter(lj(logical.LeftJoin), &logical.IsNull{Expr: col("u.x")})
		}},
		{"a condition on the preserved side", func() logical.Plan {
			return filter(lj(logical.LeftJoin), bin(logical.OpGt, col("t.b"), logical.Lit(int64(5))))
		}},
		{"OR is not strict", func() logical.Plan {
			return filter(lj(logical.LeftJoin), bin(logical.OpOr, bin(logical.OpGt, col("u.x"), logical.Lit(int64(5))), bin(logical.OpGt, col("t.b"), logical.Lit(int64(5)))))
		}},
		{"full join", func() logical.Plan {
			return filter(lj(logical.FullJoin), bin(logical.OpGt, col("u.x"), logical.Lit(int64(5))))
		}},
	})
}
