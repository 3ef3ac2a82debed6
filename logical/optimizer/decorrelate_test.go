package optimizer

import (
	"testing"

	"github.com/quiverdb/quiver/logical"
)

func TestDecorrelateSubqueries(t *testing.T) {
	// u rows of the current t row: SELECT * FROM u WHERE u.k = t.a [AND extra]
	corrU := func(extra logical.Expr) logical.Plan {
		return project(filter(scan(tblU, "u"), logical.And(eq(col("u.k"), outer("t", "a", logical.Int64)), extra)), col("u.k"), col("u.x"), col("u.y"))
	}
	runRuleGolden(t, DecorrelateSubqueries{}, "decorrelate_subqueries", []ruleCase{
		{"exists to semi join", func() logical.Plan {
			return filter(scan(tblT, "t"), logical.And(bin(logical.OpGt, col("t.b"), logical.Lit(1)), &logical.Exists{Plan: corrU(nil)}))
		}},
		{"not exists with a non-equality (tpch q21)", func() logical.Plan {
			sub := corrU(bin(logical.OpNotEq, col("u.x"), outer("t", "b", logical.Int64)))
			return filter(scan(tblT, "t"), &logical.Exists{Plan: sub, Negated: true})
		}},
		{"in and not in", func() logical.Plan {
			in := project(filter(scan(tblU, "u"), eq(col("u.y"), logical.Lit("q"))), col("u.k"))
			notIn := project(scan(tblW, "w"), col("w.k"))
			return filter(scan(tblT, "t"), logical.And(
				&logical.InSubquery{Expr: col("t.a"), Plan: in},
				&logical.InSubquery{Expr: col("t.b"), Plan: notIn, Negated: true}))
		}},
		{"exists under OR becomes a mark join", func() logical.Plan {
			return filter(scan(tblT, "t"), bin(logical.OpOr, eq(col("t.c"), logical.Lit("x")), &logical.Exists{Plan: corrU(nil)}))
		}},
		{"uncorrelated scalar aggregate (tpch q22)", func() logical.Plan {
			sub := project(aggregate(scan(tblW, "w"), nil, agg(logical.AggAvg, col("w.z"))), &logical.Column{Name: "avg(w.z)"})
			return project(filter(scan(tblT, "t"), bin(logical.OpGt, &logical.Cast{Expr: col("t.a"), Type: logical.Float64}, &logical.ScalarSubquery{Plan: sub})), col("t.a"))
		}},
		{"correlated scalar min (tpch q2, q17)", func() logical.Plan {
			inner := filter(scan(tblU, "u"), eq(outer("t", "a", logical.Int64), col("u.k")))
			sub := project(aggregate(inner, nil, agg(logical.AggMin, col("u.x"))), &logical.Column{Name: "min(u.x)"})
			return filter(scan(tblT, "t"), eq(col("t.b"), &logical.ScalarSubquery{Plan: sub}))
		}},
		{"correlated count is coalesced to zero", func() logical.Plan {
			inner := filter(scan(tblU, "u"), eq(col("u.k"), outer("t", "a", logical.Int64)))
			sub := aggregate(inner, nil, agg(logical.AggCount))
			return filter(scan(tblT, "t"), bin(logical.OpGt, col("t.b"), &logical.ScalarSubquery{Plan: sub}))
		}},
		{"nested: in subquery with a correlated scalar inside (tpch q20)", func() logical.Plan {
			innermost := project(aggregate(filter(scan(tblW, "w"), eq(col("w.k"), outer("u", "k", logical.Int64))), nil,
				agg(logical.AggSum, col("w.z"))), &logical.Column{Name: "sum(w.z)"})
			mid := project(filter(scan(tblU, "u"), bin(logical.OpGt, &logical.Cast{Expr: col("u.x"), Type: logical.Float64}, &logical.ScalarSubquery{Plan: innermost})), col("u.k"))
			return filter(scan(tblT, "t"), &logical.InSubquery{Expr: col("t.a"), Plan: mid})
		}},
		{"scalar subquery in a projection", func() logical.Plan {
			sub := aggregate(scan(tblW, "w"), nil, agg(logical.AggMax, col("w.k")))
			return project(scan(tblT, "t"), col("t.a"), &logical.ScalarSubquery{Plan: sub})
		}},
		{"correlated not in: anti join on the correlation, the NULL cases in its filter", func() logical.Plan {
			sub := project(filter(scan(tblU, "u"), eq(col("u.k"), outer("t", "a", logical.Int64))), col("u.x"))
			return filter(scan(tblT, "t"), &logical.InSubquery{Expr: col("t.b"), Plan: sub, Negated: true})
		}},
		{"correlated in under OR: a mark for a match and one for a NULL", func() logical.Plan {
			sub := project(filter(scan(tblU, "u"), eq(col("u.k"), outer("t", "a", logical.Int64))), col("u.x"))
			return filter(scan(tblT, "t"), bin(logical.OpOr, eq(col("t.c"), logical.Lit("x")),
				&logical.InSubquery{Expr: col("t.b"), Plan: sub}))
		}},
		{"not in a correlated global aggregate: a comparison with its value", func() logical.Plan {
			inner := filter(scan(tblU, "u"), eq(col("u.k"), outer("t", "a", logical.Int64)))
			sub := project(aggregate(inner, nil, agg(logical.AggMax, col("u.x"))), &logical.Column{Name: "max(u.x)"})
			return filter(scan(tblT, "t"), &logical.InSubquery{Expr: col("t.b"), Plan: sub, Negated: true})
		}},
		{"correlation under a limit is not implemented", func() logical.Plan {
			sub := &logical.Limit{Input: corrU(nil), Fetch: 1}
			return filter(scan(tblT, "t"), &logical.Exists{Plan: sub})
		}},
		{"no subqueries", func() logical.Plan {
			return filter(scan(tblT, "t"), bin(logical.OpGt, col("t.b"), logical.Lit(1)))
		}},
	})
}
