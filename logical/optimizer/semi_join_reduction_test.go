package optimizer

import (
	"context"
	"testing"

	"github.com/quiverdb/quiver/logical"
)

func TestSemiJoinReduction(t *testing.T) {
	// fact has 100 000 distinct k; a filtered dim holds at most 100 keys.
	perKey := func() logical.Plan {
		return logical.NewSubqueryAlias(aggregate(scan(tblFact, "f"), []logical.Expr{col("f.k")},
			agg(logical.AggSum, col("f.dk"))), "s")
	}
	smallDim := func() logical.Plan { return filter(scan(tblDim, "d"), eq(col("d.name"), logical.Lit("x"))) }
	on := []logical.EquiPair{{Left: col("d.k"), Right: col("s.k")}}
	runRuleGolden(t, SemiJoinReduction{}, "semi_join_reduction", []ruleCase{
		{"inner join of a small side and a grouped aggregate", func() logical.Plan {
			return join(smallDim(), perKey(), logical.InnerJoin, on, nil)
		}},
		{"aggregate on the non-preserved side of a left join (tpch q17)", func() logical.Plan {
			return join(smallDim(), perKey(), logical.LeftJoin, on, nil)
		}},
		{"aggregate on the preserved side of a left join: unchanged", func() logical.Plan {
			return join(perKey(), smallDim(), logical.LeftJoin, []logical.EquiPair{{Left: col("s.k"), Right: col("d.k")}}, nil)
		}},
		{"reducer found across a semi join's keys and a projection (tpch q20)", func() logical.Plan {
			partner := project(join(scan(tblFact, "g"), smallDim(), logical.SemiJoin,
				[]logical.EquiPair{{Left: col("g.k"), Right: col("d.k")}}, nil), col("g.k"), col("g.dk"))
			return join(partner, perKey(), logical.InnerJoin, []logical.EquiPair{{Left: col("g.k"), Right: col("s.k")}}, nil)
		}},
		{"partner holds as many keys as the aggregate: unchanged", func() logical.Plan {
			byDk := logical.NewSubqueryAlias(aggregate(scan(tblFact, "f"), []logical.Expr{col("f.dk")},
				agg(logical.AggCount, col("f.k"))), "s")
			return join(scan(tblDim, "d"), byDk, logical.InnerJoin, []logical.EquiPair{{Left: col("d.k"), Right: col("s.dk")}}, nil)
		}},
		{"join on an aggregate result, not a group key: unchanged", func() logical.Plan {
			sums := logical.NewSubqueryAlias(aggregate(scan(tblFact, "f"), []logical.Expr{col("f.k")},
				&logical.Alias{Expr: agg(logical.AggMax, col("f.dk")), Name: "m"}), "s")
			return join(smallDim(), sums, logical.InnerJoin, []logical.EquiPair{{Left: col("d.k"), Right: col("s.m")}}, nil)
		}},
		{"already reduced: unchanged", func() logical.Plan {
			p, changed, err := SemiJoinReduction{}.Rewrite(context.Background(), join(smallDim(), perKey(), logical.InnerJoin, on, nil))
			if err != nil || !changed {
				t.Fatalf("first application: changed %v, err %v", changed, err)
			}
			return p
		}},
	})
}
