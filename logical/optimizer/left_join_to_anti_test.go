package optimizer

import (
	"context"
	"strings"
	"testing"

	"github.com/quiverdb/quiver/logical"
)

func TestLeftJoinToAnti(t *testing.T) {
	on := []logical.EquiPair{{Left: col("t.a"), Right: col("u.k")}}
	lj := func(f logical.Expr) logical.Plan {
		return join(scan(tblT, "t"), scan(tblU, "u"), logical.LeftJoin, on, f)
	}
	isNull := func(c string) logical.Expr { return &logical.IsNull{Expr: col(c)} }
	sumB := func(in logical.Plan) logical.Plan {
		return aggregate(in, []logical.Expr{col("t.a")}, agg(logical.AggSum, col("t.b")))
	}
	runRuleGolden(t, LeftJoinToAnti{}, "left_join_to_anti", []ruleCase{
		{"IS NULL of the right key under an aggregate of left columns: anti", func() logical.Plan {
			return sumB(filter(lj(nil), isNull("u.k")))
		}},
		{"left-only conjuncts stay, IS NULL of other right columns goes: anti", func() logical.Plan {
			return sumB(filter(lj(nil), logical.And(isNull("u.k"), eq(col("t.c"), logical.Lit("a")), isNull("u.x"))))
		}},
		{"IS NULL of a non-nullable right column that is no key: anti", func() logical.Plan {
			return project(filter(lj(nil), isNull("u.y")), col("t.a"))
		}},
		{"IS NULL of a right column the join filter rejects when NULL: anti keeping the filter", func() logical.Plan {
			return project(filter(lj(bin(logical.OpLt, col("t.b"), col("u.x"))), isNull("u.x")), col("t.a"))
		}},
		{"non-equi join filter, IS NULL of the key: anti with the same filter", func() logical.Plan {
			return project(filter(lj(bin(logical.OpLt, col("t.b"), col("u.x"))), isNull("u.k")), col("t.a"), col("t.b"))
		}},
		{"through pull_up_left_join's restoring projection: anti, projection narrowed", func() logical.Plan {
			return sumB(project(filter(lj(nil), isNull("u.k")), col("t.a"), col("t.b"), col("u.k"), col("u.x")))
		}},
		{"below an inner join keyed on the left side: anti", func() logical.Plan {
			in := join(filter(lj(nil), isNull("u.k")), scan(tblW, "w"), logical.InnerJoin, []logical.EquiPair{{Left: col("t.b"), Right: col("w.k")}}, nil)
			return project(in, col("t.a"), col("w.z"))
		}},
		{"IS NULL of a nullable right column that is no key: unchanged", func() logical.Plan {
			return sumB(filter(lj(nil), isNull("u.x")))
		}},
		{"a right column read above: unchanged", func() logical.Plan {
			return project(filter(lj(nil), isNull("u.k")), col("t.a"), col("u.y"))
		}},
		{"a right column read by an inner join above: unchanged", func() logical.Plan {
			in := join(filter(lj(nil), isNull("u.k")), scan(tblW, "w"), logical.InnerJoin, []logical.EquiPair{{Left: col("u.x"), Right: col("w.k")}}, nil)
			return project(in, col("t.a"))
		}},
		{"at the root (every column is output): unchanged", func() logical.Plan {
			return filter(lj(nil), isNull("u.k"))
		}},
		{"another conjunct reads the right side: unchanged", func() logical.Plan {
			return sumB(filter(lj(nil), logical.And(isNull("u.k"), bin(logical.OpOr, isNull("u.y"), eq(col("t.c"), logical.Lit("a"))))))
		}},
		{"IS NOT NULL of the right key: unchanged", func() logical.Plan {
			return sumB(filter(lj(nil), &logical.IsNull{Expr: col("u.k"), Negated: true}))
		}},
		{"inner join: unchanged", func() logical.Plan {
			return sumB(filter(join(scan(tblT, "t"), scan(tblU, "u"), logical.InnerJoin, on, nil), isNull("u.k")))
		}},
		{"a projection above reading only right columns of an aggregate with no arguments: unchanged", func() logical.Plan {
			return aggregate(project(filter(lj(nil), isNull("u.k")), col("u.y")), nil, agg(logical.AggCount))
		}},
	})
}

// TestLeftJoinToAntiWithPullUp runs the default rewrite, anti-join and
// join-order batches over the TPC-DS q78 shape: sales LEFT JOIN returns,
// an inner join with a selective date dimension, WHERE returns.key IS NULL.
func TestLeftJoinToAntiWithPullUp(t *testing.T) {
	lj := join(scan(tblFact, "fact"), scan(tblU, "u"), logical.LeftJoin, []logical.EquiPair{{Left: col("fact.k"), Right: col("u.k")}}, nil)
	dim := filter(scan(tblDim, "dim"), eq(col("dim.name"), logical.Lit("x")))
	in := join(lj, dim, logical.InnerJoin, []logical.EquiPair{{Left: col("fact.dk"), Right: col("dim.k")}}, nil)
	plan := aggregate(filter(in, &logical.IsNull{Expr: col("u.k")}), []logical.Expr{col("dim.grp")}, agg(logical.AggSum, col("fact.k")))
	o := &Optimizer{}
	for _, b := range New().Batches {
		if b.Name == "rewrite" || b.Name == "anti_join" || b.Name == "join_order" {
			o.Batches = append(o.Batches, b)
		}
	}
	var fired []string
	out, err := o.Optimize(context.Background(), plan, func(rule string, _ logical.Plan) { fired = append(fired, rule) })
	if err != nil {
		t.Fatal(err)
	}
	got := "=== rules: " + strings.Join(fired, ", ") + "\n" + logical.Indent(plan) + "--- after\n" + logical.Indent(out)
	checkGolden(t, "left_join_to_anti_q78", got)
	// pull_up_left_join must have moved the left join above the selective
	// dimension join before it became an anti join.
	after := logical.Indent(out)
	if a, i := strings.Index(after, "LeftAnti Join"), strings.Index(after, "Inner Join"); a < 0 || i < a {
		t.Fatalf("want the anti join above the inner join:\n%s", after)
	}
}
