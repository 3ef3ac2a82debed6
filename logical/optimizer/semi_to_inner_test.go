package optimizer

import (
	"testing"

	"github.com/quiverdb/quiver/logical"
)

func TestSemiToInnerJoin(t *testing.T) {
	smallDim := func() logical.Plan { return filter(scan(tblDim, "d"), eq(col("d.name"), logical.Lit("x"))) }
	runRuleGolden(t, SemiToInnerJoin{}, "semi_to_inner_join", []ruleCase{
		{"small right side: inner join with its distinct keys (tpch q18)", func() logical.Plan {
			return join(scan(tblFact, "f"), smallDim(), logical.SemiJoin, []logical.EquiPair{{Left: col("f.dk"), Right: col("d.k")}}, nil)
		}},
		{"two keys", func() logical.Plan {
			return join(scan(tblFact, "f"), smallDim(), logical.SemiJoin,
				[]logical.EquiPair{{Left: col("f.dk"), Right: col("d.k")}, {Left: col("f.k"), Right: col("d.grp")}}, nil)
		}},
		{"residual filter: unchanged", func() logical.Plan {
			return join(scan(tblFact, "f"), smallDim(), logical.SemiJoin, []logical.EquiPair{{Left: col("f.dk"), Right: col("d.k")}},
				bin(logical.OpLt, col("f.k"), col("d.grp")))
		}},
		{"right side not smaller: unchanged", func() logical.Plan {
			return join(smallDim(), scan(tblFact, "f"), logical.SemiJoin, []logical.EquiPair{{Left: col("d.k"), Right: col("f.dk")}}, nil)
		}},
		{"anti join: unchanged", func() logical.Plan {
			return join(scan(tblFact, "f"), smallDim(), logical.AntiJoin, []logical.EquiPair{{Left: col("f.dk"), Right: col("d.k")}}, nil)
		}},
	})
}
