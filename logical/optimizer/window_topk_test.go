package optimizer

import (
	"testing"

	"github.com/quiverdb/quiver/logical"
)

func TestWindowTopK(t *testing.T) {
	over := func(f logical.WindowFunc, name string, part string, args ...logical.Expr) logical.Expr {
		w := &logical.WindowExpr{Func: f, Args: args, OrderBy: []logical.SortKey{{Expr: col("t.e"), Asc: false}},
			Frame: logical.DefaultFrame(true)}
		if part != "" {
			w.PartitionBy = []logical.Expr{col(part)}
		}
		return &logical.Alias{Expr: w, Name: name}
	}
	sum := func(name string) logical.Expr {
		return &logical.Alias{Expr: &logical.WindowExpr{Func: logical.WinAggregate, Agg: logical.AggSum, Args: []logical.Expr{col("t.b")},
			PartitionBy: []logical.Expr{col("t.a")}, OrderBy: []logical.SortKey{{Expr: col("t.e"), Asc: false}}, Frame: logical.DefaultFrame(true)}, Name: name}
	}
	win := func(list ...logical.Expr) logical.Plan {
		return must(logical.NewWindow(scan(tblT, "t"), list))
	}
	rk := func() logical.Expr { return over(logical.WinRank, "rk", "t.a") }
	n := func(v int64) logical.Expr { return logical.Lit(v) }
	runRuleGolden(t, WindowTopK{}, "window_topk", []ruleCase{
		{"rank() <= 100: the first 100 and ties", func() logical.Plan {
			return filter(win(rk()), bin(logical.OpLtEq, col("rk"), n(100)))
		}},
		{"row_number() < 5: four rows", func() logical.Plan {
			return filter(win(over(logical.WinRowNumber, "rn", "t.a")), bin(logical.OpLt, col("rn"), n(5)))
		}},
		{"3 >= dense_rank(), no PARTITION BY: three values", func() logical.Plan {
			return filter(win(over(logical.WinDenseRank, "dr", "")), bin(logical.OpGtEq, n(3), col("dr")))
		}},
		{"rank() = 1 and another conjunct: one", func() logical.Plan {
			return filter(win(rk()), logical.And(eq(col("rk"), n(1)), eq(col("t.c"), logical.Lit("x"))))
		}},
		{"two bounds: the tighter", func() logical.Plan {
			return filter(win(rk(), over(logical.WinRowNumber, "rn", "t.a")),
				logical.And(bin(logical.OpLtEq, col("rk"), n(10)), bin(logical.OpLtEq, col("rn"), n(3))))
		}},
		{"rank() beside sum() over the same window: unchanged", func() logical.Plan {
			return filter(win(rk(), sum("s")), bin(logical.OpLtEq, col("rk"), n(10)))
		}},
		{"ranks over two windows: unchanged", func() logical.Plan {
			return filter(win(rk(), over(logical.WinRank, "rk2", "t.c")), bin(logical.OpLtEq, col("rk"), n(10)))
		}},
		{"ntile: unchanged", func() logical.Plan {
			return filter(win(over(logical.WinNtile, "nt", "t.a", n(4))), bin(logical.OpLtEq, col("nt"), n(1)))
		}},
		{"rank() > 5: unchanged", func() logical.Plan {
			return filter(win(rk()), bin(logical.OpGt, col("rk"), n(5)))
		}},
		{"rank() < 1: unchanged", func() logical.Plan {
			return filter(win(rk()), bin(logical.OpLt, col("rk"), n(1)))
		}},
		{"rank() <= a column: unchanged", func() logical.Plan {
			return filter(win(rk()), bin(logical.OpLtEq, col("rk"), col("t.a")))
		}},
		{"a bound in an OR: unchanged", func() logical.Plan {
			return filter(win(rk()), bin(logical.OpOr, bin(logical.OpLtEq, col("rk"), n(3)), eq(col("t.c"), logical.Lit("x"))))
		}},
		{"a filter on an input column only: unchanged", func() logical.Plan {
			return filter(win(rk()), bin(logical.OpLtEq, col("t.a"), n(3)))
		}},
	})
}
