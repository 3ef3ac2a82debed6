package optimizer

import (
	"testing"

	"github.com/quiverdb/quiver/logical"
)

func TestEliminateOuterJoin(t *testing.T) {
	on := []logical.EquiPair{{Left: col("t.a"), Right: col("u.k")}}
	tu := func(typ logical.JoinType) logical.Plan { return join(scan(tblT, "t"), scan(tblU, "u"), typ, on, nil) }
	runRuleGolden(t, EliminateOuterJoin{}, "eliminate_outer_join", []ruleCase{
		{"left join, comparison on the right side: inner", func() logical.Plan {
			return filter(tu(logical.LeftJoin), eq(col("t.b"), col("u.x")))
		}},
		{"left join, arithmetic and cast of a right column: inner", func() logical.Plan {
			return filter(tu(logical.LeftJoin), bin(logical.OpGt,
				&logical.Cast{Expr: col("t.b"), Type: logical.Float64},
				bin(logical.OpMul, logical.Lit(1.2), &logical.Cast{Expr: col("u.x"), Type: logical.Float64})))
		}},
		{"left join, IS NOT NULL of a right column: inner", func() logical.Plan {
			return filter(tu(logical.LeftJoin), &logical.IsNull{Expr: col("u.y"), Negated: true})
		}},
		{"left join, IN list of a right column among other conjuncts: inner", func() logical.Plan {
			return filter(tu(logical.LeftJoin), logical.And(
				eq(col("t.c"), logical.Lit("a")),
				&logical.InList{Expr: col("u.x"), List: []logical.Expr{logical.Lit(int64(1)), logical.Lit(int64(2))}}))
		}},
		{"left join, OR of two rejecting sides: inner", func() logical.Plan {
			return filter(tu(logical.LeftJoin), bin(logical.OpOr,
				eq(col("u.x"), logical.Lit(int64(1))), eq(col("u.y"), logical.Lit("z"))))
		}},
		{"left join, IS NULL of a right column (anti-join idiom): unchanged", func() logical.Plan {
			return filter(tu(logical.LeftJoin), &logical.IsNull{Expr: col("u.x")})
		}},
		{"left join, OR with a left-only disjunct: unchanged", func() logical.Plan {
			return filter(tu(logical.LeftJoin), bin(logical.OpOr,
				eq(col("u.x"), logical.Lit(int64(1))), eq(col("t.a"), logical.Lit(int64(2)))))
		}},
		{"left join, coalesce of a right column: unchanged", func() logical.Plan {
			return filter(tu(logical.LeftJoin), eq(
				&logical.ScalarFunc{Name: "coalesce", Args: []logical.Expr{col("u.x"), logical.Lit(int64(0))}},
				logical.Lit(int64(0))))
		}},
		{"left join, condition on the preserved side only: unchanged", func() logical.Plan {
			return filter(tu(logical.LeftJoin), eq(col("t.b"), logical.Lit(int64(3))))
		}},
		{"right join, comparison on the left side: inner", func() logical.Plan {
			return filter(tu(logical.RightJoin), bin(logical.OpLt, col("t.b"), logical.Lit(int64(3))))
		}},
		{"right join, comparison on the right side: unchanged", func() logical.Plan {
			return filter(tu(logical.RightJoin), bin(logical.OpLt, col("u.x"), logical.Lit(int64(3))))
		}},
		{"full join, right padding rejected: right", func() logical.Plan {
			return filter(tu(logical.FullJoin), eq(col("u.y"), logical.Lit("z")))
		}},
		{"full join, left padding rejected: left", func() logical.Plan {
			return filter(tu(logical.FullJoin), eq(col("t.c"), logical.Lit("z")))
		}},
		{"full join, both rejected: inner", func() logical.Plan {
			return filter(tu(logical.FullJoin), eq(col("t.b"), col("u.x")))
		}},
		{"full join, NOT of IS NULL (not recognised, so kept): unchanged", func() logical.Plan {
			return filter(tu(logical.FullJoin), &logical.Not{Expr: &logical.IsNull{Expr: col("t.b")}})
		}},
		{"inner join above, keyed on the padded side: inner", func() logical.Plan {
			return join(tu(logical.LeftJoin), scan(tblW, "w"), logical.InnerJoin, []logical.EquiPair{{Left: col("u.x"), Right: col("w.k")}}, nil)
		}},
		{"inner join above, keyed on the preserved side: unchanged", func() logical.Plan {
			return join(tu(logical.LeftJoin), scan(tblW, "w"), logical.InnerJoin, []logical.EquiPair{{Left: col("t.b"), Right: col("w.k")}}, nil)
		}},
		{"inner join above as the right input, filter on the padded side: inner", func() logical.Plan {
			return join(scan(tblW, "w"), tu(logical.LeftJoin), logical.InnerJoin, []logical.EquiPair{{Left: col("w.k"), Right: col("t.b")}},
				bin(logical.OpLt, col("w.z"), &logical.Cast{Expr: col("u.x"), Type: logical.Float64}))
		}},
		{"inner join above, filter OR-ed with the other input: unchanged", func() logical.Plan {
			return join(tu(logical.LeftJoin), scan(tblW, "w"), logical.InnerJoin, []logical.EquiPair{{Left: col("t.b"), Right: col("w.k")}},
				bin(logical.OpOr, eq(col("u.x"), logical.Lit(int64(1))), bin(logical.OpGt, col("w.z"), logical.Lit(0.5))))
		}},
		{"semi join above, keyed on the padded side: inner", func() logical.Plan {
			return join(tu(logical.LeftJoin), scan(tblW, "w"), logical.SemiJoin, []logical.EquiPair{{Left: col("u.x"), Right: col("w.k")}}, nil)
		}},
		{"anti join above, keyed on the padded side: unchanged", func() logical.Plan {
			return join(tu(logical.LeftJoin), scan(tblW, "w"), logical.AntiJoin, []logical.EquiPair{{Left: col("u.x"), Right: col("w.k")}}, nil)
		}},
		{"semi join: unchanged", func() logical.Plan {
			return filter(tu(logical.SemiJoin), eq(col("t.b"), logical.Lit(int64(3))))
		}},
	})
}
