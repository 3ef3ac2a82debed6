package optimizer

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver/logical"
)

func TestEagerAggregate(t *testing.T) {
	factDim := func() logical.Plan {
		return join(scan(tblFact, "f"), scan(tblDim, "d"), logical.InnerJoin, []logical.EquiPair{{Left: col("f.dk"), Right: col("d.k")}}, nil)
	}
	runRuleGolden(t, EagerAggregate{}, "eager_aggregate", []ruleCase{
		{"sum, min and max of the fact side grouped by the dimension's columns", func() logical.Plan {
			return aggregate(factDim(), []logical.Expr{col("d.name"), col("d.grp")},
				agg(logical.AggSum, col("f.k")),
				&logical.Alias{Expr: agg(logical.AggMin, bin(logical.OpAdd, col("f.k"), col("f.dk"))), Name: "lo"},
				agg(logical.AggMax, col("f.k")))
		}},
		{"fact on the right, behind the column projection reorder_joins leaves", func() logical.Plan {
			j := join(scan(tblDim, "d"), scan(tblFact, "f"), logical.InnerJoin, []logical.EquiPair{{Left: col("d.k"), Right: col("f.dk")}}, nil)
			return aggregate(project(j, col("f.k"), col("f.dk"), col("d.name")), []logical.Expr{col("d.name")}, agg(logical.AggSum, col("f.k")))
		}},
		{"a fact column among the group keys joins the pre-aggregate's keys", func() logical.Plan {
			// f.dk is both the join key and a group key: one pre-aggregate key.
			return aggregate(factDim(), []logical.Expr{col("d.name"), col("f.dk")}, agg(logical.AggSum, col("f.k")))
		}},
		{"declined: the pre-aggregate would not shrink (keys unique in the fact side)", func() logical.Plan {
			j := join(scan(tblFact, "f"), scan(tblDim, "d"), logical.InnerJoin, []logical.EquiPair{{Left: col("f.k"), Right: col("d.k")}}, nil)
			return aggregate(j, []logical.Expr{col("d.name")}, agg(logical.AggSum, col("f.dk")))
		}},
		{"declined: avg, count and distinct do not merge this way", func() logical.Plan {
			return aggregate(factDim(), []logical.Expr{col("d.name")}, agg(logical.AggAvg, col("f.k")))
		}},
		{"declined: count", func() logical.Plan {
			return aggregate(factDim(), []logical.Expr{col("d.name")}, agg(logical.AggSum, col("f.k")), agg(logical.AggCount, col("f.k")))
		}},
		{"declined: sum distinct", func() logical.Plan {
			return aggregate(factDim(), []logical.Expr{col("d.name")}, &logical.AggExpr{Func: logical.AggSum, Args: []logical.Expr{col("f.k")}, Distinct: true})
		}},
		{"declined: aggregates read both sides", func() logical.Plan {
			return aggregate(factDim(), []logical.Expr{col("d.name")}, agg(logical.AggSum, col("f.k")), agg(logical.AggMax, col("d.grp")))
		}},
		{"declined: left join (unmatched rows)", func() logical.Plan {
			j := join(scan(tblFact, "f"), scan(tblDim, "d"), logical.LeftJoin, []logical.EquiPair{{Left: col("f.dk"), Right: col("d.k")}}, nil)
			return aggregate(j, []logical.Expr{col("d.name")}, agg(logical.AggSum, col("f.k")))
		}},
		{"declined: residual join filter", func() logical.Plan {
			j := join(scan(tblFact, "f"), scan(tblDim, "d"), logical.InnerJoin, []logical.EquiPair{{Left: col("f.dk"), Right: col("d.k")}},
				bin(logical.OpLt, col("f.k"), col("d.grp")))
			return aggregate(j, []logical.Expr{col("d.name")}, agg(logical.AggSum, col("f.k")))
		}},
		{"declined: the other side only filters (no group key from it)", func() logical.Plan {
			return aggregate(factDim(), []logical.Expr{col("f.dk")}, agg(logical.AggSum, col("f.k")))
		}},
		{"declined: ungrouped", func() logical.Plan {
			return aggregate(factDim(), nil, agg(logical.AggSum, col("f.k")))
		}},
		{"declined: a group key mixes the sides", func() logical.Plan {
			return aggregate(factDim(), []logical.Expr{bin(logical.OpAdd, col("f.k"), col("d.grp"))}, agg(logical.AggSum, col("f.k")))
		}},
	})
}

// Tables for the bounded-key cases: a year-like key with 200 distinct
// values, which a filter can hold to a few.
var (
	tblSales = withDistinct(table("sales", 1_000_000,
		arrow.Field{Name: "cust", Type: logical.Int64},
		arrow.Field{Name: "day", Type: logical.Int64},
		arrow.Field{Name: "amt", Type: logical.Int64}), 2000, 1000, 0)
	tblDay = withDistinct(table("day", 1000,
		arrow.Field{Name: "k", Type: logical.Int64},
		arrow.Field{Name: "year", Type: logical.Int64}), 1000, 200)
	tblCust = withDistinct(table("cust", 1000,
		arrow.Field{Name: "k", Type: logical.Int64},
		arrow.Field{Name: "name", Type: logical.String}), 1000, 0)
)

// An IN list or an OR of equalities bounds a key's distinct values: with
// the year held to two values the groups (customer, year) are few enough,
// with 200 years they are not.
func TestEagerAggregateListBound(t *testing.T) {
	plan := func(held logical.Expr) func() logical.Plan {
		return func() logical.Plan {
			var days logical.Plan = scan(tblDay, "y")
			if held != nil {
				days = filter(days, held)
			}
			s := join(days, scan(tblSales, "s"), logical.InnerJoin, []logical.EquiPair{{Left: col("y.k"), Right: col("s.day")}}, nil)
			j := join(s, scan(tblCust, "c"), logical.InnerJoin, []logical.EquiPair{{Left: col("s.cust"), Right: col("c.k")}}, nil)
			return aggregate(j, []logical.Expr{col("c.name"), col("y.year")}, agg(logical.AggSum, col("s.amt")))
		}
	}
	runRuleGolden(t, EagerAggregate{}, "eager_aggregate_bound", []ruleCase{
		{"every year: declined", plan(nil)},
		{"year = 2001 OR year = 2002", plan(bin(logical.OpOr, eq(col("y.year"), logical.Lit(int64(2001))), eq(col("y.year"), logical.Lit(int64(2002)))))},
		{"year IN (2001, 2002)", plan(&logical.InList{Expr: col("y.year"), List: []logical.Expr{logical.Lit(int64(2001)), logical.Lit(int64(2002))}})},
		{"NOT IN bounds nothing: declined", plan(&logical.InList{Expr: col("y.year"), List: []logical.Expr{logical.Lit(int64(2001))}, Negated: true})},
	})
}

// A second pass leaves the rewritten plan alone: the pre-aggregate is an
// Aggregate, over which the rule does not stack another.
func TestEagerAggregateOnce(t *testing.T) {
	j := join(scan(tblFact, "f"), scan(tblDim, "d"), logical.InnerJoin, []logical.EquiPair{{Left: col("f.dk"), Right: col("d.k")}}, nil)
	p := aggregate(j, []logical.Expr{col("d.name")}, agg(logical.AggSum, col("f.k")))
	once, changed, err := EagerAggregate{}.Rewrite(context.Background(), p)
	if err != nil || !changed {
		t.Fatalf("first pass: changed=%v err=%v", changed, err)
	}
	twice, changed, err := EagerAggregate{}.Rewrite(context.Background(), once)
	if err != nil || changed {
		t.Fatalf("second pass: changed=%v err=%v\n%s", changed, err, logical.Indent(twice))
	}
}
