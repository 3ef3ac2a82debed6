package optimizer

import (
	"context"
	"testing"

	"github.com/quiverdb/quiver/logical"
)

func TestSimplifyExpressions(t *testing.T) {
	runRuleGolden(t, SimplifyExpressions{}, "simplify_expressions", []ruleCase{
		{"date minus interval days", func() logical.Plan {
			return filter(scan(tblT, "t"), bin(logical.OpLtEq, &logical.Cast{Expr: col("t.d"), Type: logical.Timestamp}, bin(logical.OpSub, date("1998-12-01"), interval(0, 90))))
		}},
		{"date plus one year and month-end clamp", func() logical.Plan {
			return project(scan(tblT, "t"),
				bin(logical.OpAdd, date("1994-01-01"), interval(12, 0)),
				bin(logical.OpAdd, date("1996-01-31"), interval(1, 0)),
				bin(logical.OpSub, date("1996-03-31"), interval(1, 1)))
		}},
		{"decimal arithmetic keeps display names", func() logical.Plan {
			return project(scan(tblT, "t"),
				bin(logical.OpSub, dec(6, 3, 2), dec(1, 3, 2)),
				bin(logical.OpAdd, dec(6, 3, 2), dec(1, 3, 2)),
				&logical.Alias{Expr: bin(logical.OpMul, dec(15, 3, 1), dec(2, 3, 2)), Name: "m"},
				bin(logical.OpMul, col("t.e"), bin(logical.OpSub, dec(100, 3, 2), dec(6, 3, 2))))
		}},
		{"boolean identities and three-valued logic", func() logical.Plan {
			gt := bin(logical.OpGt, col("t.a"), logical.Lit(1))
			return filter(scan(tblT, "t"), logical.And(
				bin(logical.OpAnd, gt, logical.Lit(true)),
				bin(logical.OpOr, &logical.Not{Expr: &logical.Not{Expr: eq(col("t.c"), logical.Lit("x"))}}, logical.Lit(false)),
				bin(logical.OpOr, &logical.Literal{Type: logical.Bool}, logical.Lit(true)),
				eq(bin(logical.OpAdd, logical.Lit(1), logical.Lit(2)), logical.Lit(3))))
		}},
		{"false conjunct folds the whole predicate", func() logical.Plan {
			return filter(scan(tblT, "t"), bin(logical.OpAnd, eq(col("t.a"), logical.Lit(1)), bin(logical.OpLt, logical.Lit(2), logical.Lit(1))))
		}},
		{"not foldable: division by zero, x = x, NULL arithmetic", func() logical.Plan {
			return project(scan(tblT, "t"),
				bin(logical.OpDiv, logical.Lit(1), logical.Lit(0)),
				eq(col("t.b"), col("t.b")),
				bin(logical.OpAdd, logical.Lit(1), &logical.Literal{Type: logical.Int64}))
		}},
		{"casts of literals and to the same type", func() logical.Plan {
			return filter(scan(tblT, "t"), logical.And(
				bin(logical.OpGt, col("t.d"), &logical.Cast{Expr: logical.Lit("1995-03-15"), Type: logical.Date}),
				bin(logical.OpGt, col("t.e"), &logical.Cast{Expr: logical.Lit(3), Type: logical.Decimal(15, 2)}),
				bin(logical.OpGt, &logical.Cast{Expr: col("t.a"), Type: logical.Int64}, logical.Lit(0)),
				&logical.InList{Expr: logical.Lit("b"), List: []logical.Expr{logical.Lit("a"), logical.Lit("b")}}))
		}},
		{"common conjuncts factored out of OR (tpch q19)", func() logical.Plan {
			k := eq(col("t.a"), col("t.b"))
			return filter(scan(tblT, "t"), bin(logical.OpOr,
				bin(logical.OpOr, logical.And(k, eq(col("t.c"), logical.Lit("x"))), logical.And(k, eq(col("t.c"), logical.Lit("y")))),
				logical.And(eq(col("t.c"), logical.Lit("z")), k)))
		}},
		{"nothing to fold", func() logical.Plan {
			return filter(scan(tblT, "t"), bin(logical.OpGt, col("t.a"), logical.Lit(1)))
		}},
	})
}

func TestEliminateFilterAndLimit(t *testing.T) {
	runRuleGolden(t, EliminateFilter{}, "eliminate_filter", []ruleCase{
		{"where true", func() logical.Plan { return filter(scan(tblT, "t"), logical.Lit(true)) }},
		{"where false", func() logical.Plan { return filter(scan(tblT, "t"), logical.Lit(false)) }},
		{"stacked filters merge", func() logical.Plan {
			return filter(filter(scan(tblT, "t"), bin(logical.OpGt, col("t.a"), logical.Lit(1))), eq(col("t.c"), logical.Lit("x")))
		}},
	})
	runRuleGolden(t, EliminateLimit{}, "eliminate_limit", []ruleCase{
		{"no-op limit", func() logical.Plan { return &logical.Limit{Input: scan(tblT, "t"), Fetch: -1} }},
		{"limit zero", func() logical.Plan { return &logical.Limit{Input: scan(tblT, "t"), Fetch: 0} }},
		{"stacked limits", func() logical.Plan {
			return &logical.Limit{Input: &logical.Limit{Input: scan(tblT, "t"), Skip: 5, Fetch: 10}, Skip: 2, Fetch: 20}
		}},
	})
}

func TestPropagateEmpty(t *testing.T) {
	none := func(p logical.Plan) logical.Plan { return logical.NewEmptyRelation(false, p.Schema()) }
	on := []logical.EquiPair{{Left: col("t.a"), Right: col("u.k")}}
	runRuleGolden(t, PropagateEmpty{}, "propagate_empty", []ruleCase{
		{"inner join with an empty side, under an aggregate by keys", func() logical.Plan {
			j := join(scan(tblT, "t"), none(scan(tblU, "u")), logical.InnerJoin, on, nil)
			return aggregate(project(j, col("t.c"), col("u.x")), []logical.Expr{col("t.c")}, agg(logical.AggSum, col("u.x")))
		}},
		{"a global aggregate keeps its one row", func() logical.Plan {
			j := join(none(scan(tblT, "t")), scan(tblU, "u"), logical.InnerJoin, on, nil)
			return aggregate(j, nil, agg(logical.AggSum, col("u.x")))
		}},
		{"left join: an empty right side keeps the left rows", func() logical.Plan {
			return join(scan(tblT, "t"), none(scan(tblU, "u")), logical.LeftJoin, on, nil)
		}},
		{"left join: an empty left side", func() logical.Plan {
			return join(none(scan(tblT, "t")), scan(tblU, "u"), logical.LeftJoin, on, nil)
		}},
		{"anti join: an empty right side keeps the left rows", func() logical.Plan {
			return join(scan(tblT, "t"), none(scan(tblU, "u")), logical.AntiJoin, on, nil)
		}},
		{"full join: one empty side is kept", func() logical.Plan {
			return join(none(scan(tblT, "t")), scan(tblU, "u"), logical.FullJoin, on, nil)
		}},
		{"union: empty inputs after the first are dropped", func() logical.Plan {
			a := project(scan(tblT, "t"), col("t.a"))
			b := project(scan(tblU, "u"), col("u.k"))
			c := project(scan(tblW, "w"), col("w.k"))
			return must(logical.NewUnion([]logical.Plan{a, none(b), c}))
		}},
		{"union: an empty first input stays", func() logical.Plan {
			a := project(scan(tblT, "t"), col("t.a"))
			b := project(scan(tblU, "u"), col("u.k"))
			return must(logical.NewUnion([]logical.Plan{none(a), b}))
		}},
		{"union of empty inputs", func() logical.Plan {
			a := project(scan(tblT, "t"), col("t.a"))
			b := project(scan(tblU, "u"), col("u.k"))
			return must(logical.NewUnion([]logical.Plan{none(a), none(b)}))
		}},
	})
}

func TestEliminateCrossJoin(t *testing.T) {
	runRuleGolden(t, EliminateCrossJoin{}, "eliminate_cross_join", []ruleCase{
		{"comma join of three tables", func() logical.Plan {
			return project(filter(cross(cross(scan(tblT, "t"), scan(tblW, "w")), scan(tblU, "u")), logical.And(
				eq(col("t.a"), col("u.k")),
				eq(col("u.x"), col("w.k")),
				bin(logical.OpGt, col("t.b"), logical.Lit(1)))),
				col("t.a"), col("w.z"), col("u.y"))
		}},
		{"no equality: unchanged", func() logical.Plan {
			return filter(cross(scan(tblT, "t"), scan(tblU, "u")), bin(logical.OpLt, col("t.a"), col("u.k")))
		}},
		{"left join is a leaf", func() logical.Plan {
			return filter(cross(join(scan(tblT, "t"), scan(tblU, "u"), logical.LeftJoin,
				[]logical.EquiPair{{Left: col("t.a"), Right: col("u.k")}}, nil), scan(tblW, "w")),
				eq(col("u.x"), col("w.k")))
		}},
	})
}

func TestPushDownFilter(t *testing.T) {
	runRuleGolden(t, PushDownFilter{}, "push_down_filter", []ruleCase{
		{"a disjunction over both sides implies one on each side", func() logical.Plan {
			return filter(join(scan(tblT, "t"), scan(tblU, "u"), logical.InnerJoin, []logical.EquiPair{{Left: col("t.a"), Right: col("u.k")}}, nil),
				bin(logical.OpOr,
					logical.And(eq(col("t.c"), logical.Lit("A")), eq(col("u.y"), logical.Lit("B"))),
					logical.And(eq(col("t.c"), logical.Lit("B")), eq(col("u.y"), logical.Lit("A")), bin(logical.OpGt, col("u.x"), logical.Lit(int64(3))))))
		}},
		{"no implied predicate when a disjunct does not constrain the side", func() logical.Plan {
			return filter(join(scan(tblT, "t"), scan(tblU, "u"), logical.InnerJoin, []logical.EquiPair{{Left: col("t.a"), Right: col("u.k")}}, nil),
				bin(logical.OpOr, eq(col("t.c"), logical.Lit("A")), eq(col("u.y"), logical.Lit("B"))))
		}},
		{"into join sides and keys", func() logical.Plan {
			return filter(cross(scan(tblT, "t"), scan(tblU, "u")), logical.And(
				bin(logical.OpGt, col("t.a"), logical.Lit(1)),
				eq(col("u.y"), logical.Lit("x")),
				eq(col("t.b"), col("u.k")),
				bin(logical.OpOr, eq(col("t.c"), col("u.y")), eq(col("t.a"), logical.Lit(5)))))
		}},
		{"through projection and alias", func() logical.Plan {
			in := logical.NewSubqueryAlias(project(scan(tblT, "t"), col("t.a"),
				&logical.Alias{Expr: bin(logical.OpAdd, col("t.b"), logical.Lit(1)), Name: "b1"}), "s")
			return filter(in, logical.And(bin(logical.OpGt, col("s.b1"), logical.Lit(10)), eq(col("s.a"), logical.Lit(3))))
		}},
		{"left join: preserved side only; ON right-only goes right", func() logical.Plan {
			j := join(scan(tblT, "t"), scan(tblU, "u"), logical.LeftJoin,
				[]logical.EquiPair{{Left: col("t.a"), Right: col("u.k")}}, eq(col("u.y"), logical.Lit("z")))
			return filter(j, logical.And(eq(col("t.c"), logical.Lit("x")), (&logical.IsNull{Expr: col("u.x")})))
		}},
		{"inner join: a constant condition on a key filters the paired key too", func() logical.Plan {
			j := join(scan(tblT, "t"), scan(tblU, "u"), logical.InnerJoin, []logical.EquiPair{{Left: col("t.a"), Right: col("u.k")}}, nil)
			return filter(j, logical.And(bin(logical.OpGt, col("t.a"), logical.Lit(int64(5))), bin(logical.OpGt, logical.Lit(int64(100)), col("u.k"))))
		}},
		{"left join: a key condition on the preserved side filters the other side", func() logical.Plan {
			j := join(scan(tblT, "t"), scan(tblU, "u"), logical.LeftJoin, []logical.EquiPair{{Left: col("t.a"), Right: col("u.k")}}, nil)
			return filter(j, &logical.InList{Expr: col("t.a"), List: []logical.Expr{logical.Lit(int64(1)), logical.Lit(int64(2))}})
		}},
		{"left join: a condition on the null-supplying key stays above and goes nowhere else", func() logical.Plan {
			j := join(scan(tblT, "t"), scan(tblU, "u"), logical.LeftJoin, []logical.EquiPair{{Left: col("t.a"), Right: col("u.k")}}, nil)
			return filter(j, eq(col("u.k"), logical.Lit(int64(3))))
		}},
		{"right join: a key condition on the preserved right side filters the left", func() logical.Plan {
			j := join(scan(tblT, "t"), scan(tblU, "u"), logical.RightJoin, []logical.EquiPair{{Left: col("t.a"), Right: col("u.k")}}, nil)
			return filter(j, eq(col("u.k"), logical.Lit(int64(3))))
		}},
		{"semi join: a key condition on the left filters the right", func() logical.Plan {
			j := join(scan(tblT, "t"), scan(tblU, "u"), logical.SemiJoin, []logical.EquiPair{{Left: col("t.a"), Right: col("u.k")}}, nil)
			return filter(j, bin(logical.OpLtEq, col("t.a"), logical.Lit(int64(7))))
		}},
		{"null-aware anti join: the right side keeps its rows", func() logical.Plan {
			j := must(logical.NewJoin(scan(tblT, "t"), scan(tblU, "u"), logical.AntiJoin, []logical.EquiPair{{Left: col("t.a"), Right: col("u.k")}}, nil, true, ""))
			return filter(j, eq(col("t.a"), logical.Lit(int64(1))))
		}},
		{"float keys: no copy (0 and -0 join but compare differently)", func() logical.Plan {
			j := join(scan(tblW, "w1"), scan(tblW, "w2"), logical.InnerJoin, []logical.EquiPair{{Left: col("w1.z"), Right: col("w2.z")}}, nil)
			return filter(j, bin(logical.OpGt, col("w1.z"), logical.Lit(1.5)))
		}},
		{"not a constant condition: no copy", func() logical.Plan {
			j := join(scan(tblT, "t"), scan(tblU, "u"), logical.InnerJoin, []logical.EquiPair{{Left: col("t.a"), Right: col("u.k")}}, nil)
			return filter(j, bin(logical.OpGt, col("t.a"), col("t.b")))
		}},
		{"below aggregate on group columns only", func() logical.Plan {
			a := aggregate(scan(tblT, "t"), []logical.Expr{col("t.c")}, agg(logical.AggSum, col("t.a")))
			return filter(a, logical.And(eq(col("t.c"), logical.Lit("x")), bin(logical.OpGt, &logical.Column{Name: "sum(t.a)"}, logical.Lit(3))))
		}},
		{"never into a cache", func() logical.Plan {
			c := &logical.Cache{CacheID: "c1", Input: filter(cross(scan(tblT, "t"), scan(tblU, "u")), eq(col("t.a"), col("u.k")))}
			return filter(c, eq(col("t.c"), logical.Lit("x")))
		}},
		{"not past a limit", func() logical.Plan {
			return filter(&logical.Limit{Input: scan(tblT, "t"), Fetch: 10}, eq(col("t.c"), logical.Lit("x")))
		}},
		{"union inputs", func() logical.Plan {
			u := must(logical.NewUnion([]logical.Plan{project(scan(tblT, "t"), col("t.a")), project(scan(tblU, "u"), col("u.k"))}))
			return filter(u, bin(logical.OpGt, col("a"), logical.Lit(1)))
		}},
	})
}

func TestPushDownProjection(t *testing.T) {
	runRuleGolden(t, PushDownProjection{}, "push_down_projection", []ruleCase{
		{"scan columns in table order", func() logical.Plan {
			return project(filter(scan(tblT, "t"), bin(logical.OpGt, col("t.d"), date("1995-01-01"))), col("t.c"), col("t.a"))
		}},
		{"through join and aggregate", func() logical.Plan {
			j := join(scan(tblT, "t"), scan(tblU, "u"), logical.InnerJoin, []logical.EquiPair{{Left: col("t.a"), Right: col("u.k")}}, nil)
			a := aggregate(j, []logical.Expr{col("u.y")}, agg(logical.AggSum, col("t.e")), agg(logical.AggMax, col("t.b")))
			return project(a, col("u.y"), &logical.Column{Name: "sum(t.e)"})
		}},
		{"count star keeps one column", func() logical.Plan {
			return aggregate(scan(tblT, "t"), nil, agg(logical.AggCount))
		}},
		{"inner projection loses unused entries", func() logical.Plan {
			in := project(scan(tblT, "t"), col("t.a"), &logical.Alias{Expr: bin(logical.OpMul, col("t.b"), logical.Lit(2)), Name: "b2"}, col("t.c"))
			return project(in, col("t.a"))
		}},
		{"cache input keeps its columns", func() logical.Plan {
			return project(&logical.Cache{CacheID: "c1", Input: scan(tblT, "t")}, col("t.a"))
		}},
		{"columns needed of a cache are selected above it", cacheFilterAgg},
	})
}

func cacheFilterAgg() logical.Plan {
	c := &logical.Cache{CacheID: "c1", Input: scan(tblT, "t")}
	f := filter(c, bin(logical.OpGt, col("t.d"), date("1995-01-01")))
	return must(logical.NewAggregate(f, []logical.Expr{col("t.c")}, []logical.Expr{&logical.AggExpr{Func: logical.AggSum, Args: []logical.Expr{col("t.a")}}}))
}

// TestPushDownProjectionCacheFixpoint: the selection above a cache is made
// once; the rule applied again changes nothing.
func TestPushDownProjectionCacheFixpoint(t *testing.T) {
	p, changed, err := PushDownProjection{}.Rewrite(context.Background(), cacheFilterAgg())
	if err != nil || !changed {
		t.Fatalf("first pass: changed %v, err %v", changed, err)
	}
	if _, changed, err := (PushDownProjection{}).Rewrite(context.Background(), p); err != nil || changed {
		t.Fatalf("second pass changed the plan (err %v):\n%s", err, logical.Indent(p))
	}
}

func TestPushDownLimit(t *testing.T) {
	runRuleGolden(t, PushDownLimit{}, "push_down_limit", []ruleCase{
		{"top-k", func() logical.Plan {
			s := must(logical.NewSort(scan(tblT, "t"), []logical.SortKey{{Expr: col("t.a"), Asc: true}}, -1))
			return &logical.Limit{Input: project(s, col("t.a")), Skip: 5, Fetch: 10}
		}},
		{"into scan and union", func() logical.Plan {
			u := must(logical.NewUnion([]logical.Plan{scan(tblW, "w"), scan(tblW, "w")}))
			return &logical.Limit{Input: u, Fetch: 3}
		}},
		{"not through filter", func() logical.Plan {
			return &logical.Limit{Input: filter(scan(tblT, "t"), bin(logical.OpGt, col("t.a"), logical.Lit(1))), Fetch: 3}
		}},
	})
}

func TestCommonSubexprEliminate(t *testing.T) {
	runRuleGolden(t, CommonSubexprEliminate{}, "common_subexpr_eliminate", []ruleCase{
		{"tpch q1 aggregates", func() logical.Plan {
			disc := bin(logical.OpMul, col("t.e"), bin(logical.OpSub, dec(100, 3, 2), col("t.e")))
			return aggregate(scan(tblT, "t"), []logical.Expr{col("t.c")},
				agg(logical.AggSum, disc),
				agg(logical.AggSum, bin(logical.OpMul, disc, bin(logical.OpAdd, dec(100, 3, 2), col("t.e")))),
				&logical.Alias{Expr: agg(logical.AggSum, col("t.e")), Name: "s"})
		}},
		{"projection", func() logical.Plan {
			x := bin(logical.OpAdd, col("t.a"), col("t.b"))
			return project(scan(tblT, "t"), bin(logical.OpMul, x, logical.Lit(2)), &logical.Alias{Expr: bin(logical.OpSub, x, logical.Lit(1)), Name: "m"})
		}},
		{"nothing repeated", func() logical.Plan {
			return project(scan(tblT, "t"), bin(logical.OpAdd, col("t.a"), col("t.b")), col("t.a"))
		}},
	})
}

func TestReorderJoins(t *testing.T) {
	runRuleGolden(t, ReorderJoins{}, "reorder_joins", []ruleCase{
		{"smallest first, smaller on the left", func() logical.Plan {
			j1 := join(scan(tblT, "t"), scan(tblU, "u"), logical.InnerJoin, []logical.EquiPair{{Left: col("t.a"), Right: col("u.k")}}, nil)
			return join(j1, filter(scan(tblW, "w"), bin(logical.OpGt, col("w.z"), logical.Lit(1.5))), logical.InnerJoin,
				[]logical.EquiPair{{Left: col("u.x"), Right: col("w.k")}}, bin(logical.OpLt, col("t.b"), col("w.k")))
		}},
		{"already ordered", func() logical.Plan {
			return join(scan(tblW, "w"), scan(tblU, "u"), logical.InnerJoin, []logical.EquiPair{{Left: col("w.k"), Right: col("u.k")}}, nil)
		}},
		{"semi join sunk onto the input with its keys", func() logical.Plan {
			j1 := join(scan(tblT, "t"), scan(tblU, "u"), logical.InnerJoin, []logical.EquiPair{{Left: col("t.a"), Right: col("u.k")}}, nil)
			return join(j1, scan(tblW, "w"), logical.SemiJoin, []logical.EquiPair{{Left: col("u.k"), Right: col("w.k")}},
				bin(logical.OpLt, col("u.x"), col("w.k")))
		}},
		{"semi join kept above a join that shrinks its input", func() logical.Plan {
			j1 := join(scan(tblFact, "f"), filter(scan(tblDim, "d"), eq(col("d.name"), logical.Lit("x"))), logical.InnerJoin,
				[]logical.EquiPair{{Left: col("f.dk"), Right: col("d.k")}}, nil)
			return join(j1, scan(tblW, "w"), logical.AntiJoin, []logical.EquiPair{{Left: col("f.k"), Right: col("w.k")}}, nil)
		}},
		{"join by smallest result, not smallest input", func() logical.Plan {
			// d (100 rows) joins f on f.dk (100 distinct) and g on g.grp (2
			// distinct): d ⋈ g is the bigger join although g is smaller than f.
			j1 := join(scan(tblDim, "d"), scan(tblGrp, "g"), logical.InnerJoin, []logical.EquiPair{{Left: col("d.grp"), Right: col("g.grp")}}, nil)
			return join(j1, filter(scan(tblFact, "f"), eq(col("f.k"), logical.Lit(int64(7)))), logical.InnerJoin,
				[]logical.EquiPair{{Left: col("d.k"), Right: col("f.dk")}}, nil)
		}},
	})
}
