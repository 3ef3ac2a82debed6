package optimizer

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver/catalog"
	"github.com/quiverdb/quiver/exec"
	"github.com/quiverdb/quiver/exec/exectest"
	"github.com/quiverdb/quiver/logical"
	"github.com/quiverdb/quiver/physical/planner"
	"github.com/quiverdb/quiver/sql"
)

func distinctAgg(f logical.AggFunc, arg logical.Expr) *logical.AggExpr {
	return &logical.AggExpr{Func: f, Args: []logical.Expr{arg}, Distinct: true}
}

// runSingleDistinctGolden is runRuleGolden for this rule, showing what every
// alias of the rewritten plan stands for (the rewrite aliases the outer
// aggregates back to the original names, which Indent alone would hide).
func runSingleDistinctGolden(t *testing.T, cases []ruleCase) {
	t.Helper()
	var b strings.Builder
	for _, c := range cases {
		p := c.plan()
		np, changed, err := SingleDistinctToGroupBy{}.Rewrite(context.Background(), p)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		b.WriteString("=== " + c.name + "\n" + logical.Indent(p))
		if !changed {
			b.WriteString("--- unchanged\n")
			if planString(np) != planString(p) {
				t.Errorf("%s: rule reported no change but returned a different plan", c.name)
			}
			continue
		}
		if !np.Schema().Equal(p.Schema()) {
			t.Errorf("%s: schema changed from %s to %s", c.name, p.Schema(), np.Schema())
		}
		b.WriteString("--- after\n" + logical.Indent(np))
		n := 0
		logical.Inspect(np, func(x logical.Plan) bool {
			n++
			switch x.(type) {
			case *logical.Projection, *logical.Aggregate:
				for _, e := range x.Exprs() {
					if a, ok := e.(*logical.Alias); ok {
						fmt.Fprintf(&b, "    %02d) %s := %s\n", n, a.Name, logical.StripAlias(e))
					}
				}
			}
			return true
		})
	}
	checkGolden(t, "single_distinct", b.String())
}

func TestSingleDistinctToGroupBy(t *testing.T) {
	runSingleDistinctGolden(t, []ruleCase{
		{"count distinct with sum, min, max and counts", func() logical.Plan {
			return aggregate(scan(tblT, "t"), []logical.Expr{col("t.c")},
				distinctAgg(logical.AggCount, col("t.a")),
				agg(logical.AggSum, col("t.e")), agg(logical.AggMin, col("t.d")), agg(logical.AggMax, col("t.b")),
				agg(logical.AggCount, col("t.b")), agg(logical.AggCount))
		}},
		{"no group by: counts are coalesced to 0", func() logical.Plan {
			return aggregate(scan(tblT, "t"), nil, distinctAgg(logical.AggCount, col("t.b")), agg(logical.AggCount))
		}},
		{"several distinct aggregates of one argument, no count: no projection", func() logical.Plan {
			return aggregate(scan(tblT, "t"), []logical.Expr{col("t.c"), col("t.d")},
				distinctAgg(logical.AggCount, col("t.a")), distinctAgg(logical.AggSum, col("t.a")),
				distinctAgg(logical.AggAvg, col("t.a")), agg(logical.AggSum, col("t.e")))
		}},
		{"aliased aggregates and an expression argument", func() logical.Plan {
			k := bin(logical.OpAdd, col("t.a"), logical.Lit(1))
			return aggregate(scan(tblT, "t"), []logical.Expr{col("t.c")},
				&logical.Alias{Expr: distinctAgg(logical.AggCount, k), Name: "n"},
				&logical.Alias{Expr: agg(logical.AggCount, col("t.b")), Name: "m"})
		}},
		{"group by an expression", func() logical.Plan {
			return aggregate(scan(tblT, "t"), []logical.Expr{&logical.ScalarFunc{Name: "upper", Args: []logical.Expr{col("t.c")}}},
				distinctAgg(logical.AggCount, col("t.a")), agg(logical.AggSum, col("t.b")))
		}},
		{"duplicate plain aggregate computed once", func() logical.Plan {
			return aggregate(scan(tblT, "t"), []logical.Expr{col("t.c")},
				distinctAgg(logical.AggCount, col("t.a")), agg(logical.AggSum, col("t.b")),
				&logical.Alias{Expr: agg(logical.AggSum, col("t.b")), Name: "s2"})
		}},
		{"blocked: distinct aggregates of different arguments", func() logical.Plan {
			return aggregate(scan(tblT, "t"), []logical.Expr{col("t.c")},
				distinctAgg(logical.AggCount, col("t.a")), distinctAgg(logical.AggCount, col("t.b")))
		}},
		{"blocked: plain avg", func() logical.Plan {
			return aggregate(scan(tblT, "t"), []logical.Expr{col("t.c")},
				distinctAgg(logical.AggCount, col("t.a")), agg(logical.AggAvg, col("t.b")))
		}},
		{"blocked: distinct argument is a group column", func() logical.Plan {
			return aggregate(scan(tblT, "t"), []logical.Expr{col("t.a")},
				distinctAgg(logical.AggCount, col("t.a")), agg(logical.AggSum, col("t.b")))
		}},
		{"no distinct aggregate", func() logical.Plan {
			return aggregate(scan(tblT, "t"), []logical.Expr{col("t.c")}, agg(logical.AggCount, col("t.a")))
		}},
	})
}

// TestSingleDistinctNullability checks the rewrite keeps count non-null and
// every other field's nullability.
func TestSingleDistinctNullability(t *testing.T) {
	for _, groups := range [][]logical.Expr{nil, {col("t.c")}} {
		p := aggregate(scan(tblT, "t"), groups,
			distinctAgg(logical.AggCount, col("t.b")), agg(logical.AggCount, col("t.b")), agg(logical.AggCount),
			agg(logical.AggSum, col("t.a")), agg(logical.AggMax, col("t.c")))
		np, changed, err := SingleDistinctToGroupBy{}.Rewrite(context.Background(), p)
		if err != nil || !changed {
			t.Fatalf("groups %v: changed=%v err=%v", groups, changed, err)
		}
		want, got := p.Schema(), np.Schema()
		if got.String() != want.String() { // String shows names, qualifiers, types and nullability
			t.Errorf("groups %v: schema %s, want %s", groups, got, want)
		}
	}
}

// distinctTable is the test table: a nullable string group g, a nullable
// key k with repeats, nullable x (Int64) and y (Decimal), in random batches
// over parts partitions. Empty makes a table with no rows.
func distinctTable(t *testing.T, mem memory.Allocator, name string, rows, parts int, seed uint64) (*catalog.Table, [][]arrow.RecordBatch) {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "g", Type: logical.String, Nullable: true},
		{Name: "k", Type: logical.Int64, Nullable: true},
		{Name: "x", Type: logical.Int64, Nullable: true},
		{Name: "y", Type: logical.Decimal(10, 2), Nullable: true},
	}, nil)
	r := rand.New(rand.NewPCG(seed, 11))
	var b strings.Builder
	b.WriteString("[")
	val := func(null bool, s string) string {
		if null {
			return "null"
		}
		return s
	}
	for i := range rows {
		if i > 0 {
			b.WriteString(",")
		}
		g := []string{`"a"`, `"b"`, `"B"`, `"c"`}[r.IntN(4)]
		fmt.Fprintf(&b, `{"g":%s,"k":%s,"x":%s,"y":%s}`,
			val(r.IntN(9) == 0, g),
			val(r.IntN(7) == 0, fmt.Sprint(r.IntN(15))),
			val(r.IntN(5) == 0, fmt.Sprint(r.IntN(1000)-300)),
			val(r.IntN(6) == 0, fmt.Sprintf(`"%d.%02d"`, r.IntN(500), r.IntN(100))))
	}
	b.WriteString("]")
	bs := exectest.Batches(t, mem, schema, b.String())
	out := make([][]arrow.RecordBatch, parts)
	for i, batch := range bs {
		out[i%parts] = append(out[i%parts], batch)
	}
	return &catalog.Table{Name: name, Schema: schema, Format: catalog.Memory, Partitions: out, Rows: int64(rows)}, out
}

func hasDistinctAgg(p logical.Plan) bool {
	found := false
	logical.Inspect(p, func(n logical.Plan) bool {
		if a, ok := n.(*logical.Aggregate); ok {
			for _, e := range a.Aggs {
				if ae, ok := logical.StripAlias(e).(*logical.AggExpr); ok && ae.Distinct {
					found = true
				}
			}
		}
		return !found
	})
	return found
}

// TestSingleDistinctResults runs SQL over small memory tables (NULL groups,
// NULL keys, empty input) with and without the rule, at several partition
// counts and batch sizes, and compares the rows and the output schemas.
func TestSingleDistinctResults(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	ctx := context.Background()

	queries := []struct {
		sql     string
		rewrite bool // the rule must fire
	}{
		{"SELECT g, count(DISTINCT k), sum(x), min(y), max(y), count(x), count(*) FROM t GROUP BY g", true},
		{"SELECT count(DISTINCT k), count(*), sum(x), sum(y), count(y), max(x) FROM t", true},
		{"SELECT count(DISTINCT k), count(*), sum(x), count(x) FROM t WHERE x > 100000", true},
		{"SELECT g, count(DISTINCT k), count(*) FROM t WHERE x > 100000 GROUP BY g", true},
		{"SELECT count(DISTINCT k), count(*), count(x), sum(y) FROM e", true},
		{"SELECT g, count(DISTINCT k) AS n, sum(x) FROM e GROUP BY g", true},
		{"SELECT g, sum(DISTINCT k), avg(DISTINCT k), min(DISTINCT k), max(DISTINCT k), count(*) FROM t GROUP BY g", true},
		{"SELECT g, count(DISTINCT k) AS n FROM t GROUP BY g HAVING count(DISTINCT k) > 10", true},
		{"SELECT g, count(DISTINCT k % 4), sum(y), count(y) FROM t GROUP BY g", true},
		{"SELECT upper(g) AS ug, count(DISTINCT k), count(x) FROM t GROUP BY upper(g)", true},
		{"SELECT g, x > 0 AS pos, count(DISTINCT k), min(x) FROM t GROUP BY g, x > 0", true},
		{"SELECT g, count(DISTINCT k), count(DISTINCT x) FROM t GROUP BY g", false},
		{"SELECT g, count(DISTINCT k), avg(x) FROM t GROUP BY g", false},
	}
	for _, parts := range []int{1, 3} {
		cat := catalog.New()
		tt, tparts := distinctTable(t, mem, "t", 600, parts, uint64(parts))
		et, eparts := distinctTable(t, mem, "e", 0, parts, 1)
		tables := exectest.Tables{"t": tparts, "e": eparts}
		t.Cleanup(tables.Release)
		for _, tab := range []*catalog.Table{tt, et} {
			if err := cat.RegisterTable(tab, false); err != nil {
				t.Fatal(err)
			}
		}
		for _, q := range queries {
			for _, batchSize := range []int{3, 0} {
				name := fmt.Sprintf("%s/parts=%d/batch=%d", q.sql, parts, batchSize)
				raw, err := sql.NewPlanner(cat).PlanQuery(q.sql)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				run := func(o *Optimizer) ([]string, *logical.Schema, logical.Plan) {
					lp, err := o.Optimize(ctx, raw, nil)
					if err != nil {
						t.Fatalf("%s: optimize: %v", name, err)
					}
					pp, err := planner.New(planner.Config{TargetPartitions: parts + 1}).Plan(ctx, lp)
					if err != nil {
						t.Fatalf("%s: physical plan: %v", name, err)
					}
					tc := exec.NewTaskContext(mem, batchSize)
					tc.MemoryTables = tables.Lookup
					rows := exectest.Collect(t, ctx, tc, pp)
					slices.Sort(rows)
					return rows, lp.Schema(), lp
				}
				want, wantSchema, _ := run(New())
				got, gotSchema, lp := run(WithSingleDistinct(New()))
				if rewritten := !hasDistinctAgg(lp); rewritten != q.rewrite {
					t.Errorf("%s: rewritten=%v, want %v:\n%s", name, rewritten, q.rewrite, logical.Indent(lp))
				}
				if !slices.Equal(got, want) {
					t.Errorf("%s: rows differ\n got  %q\n want %q\nplan:\n%s", name, got, want, logical.Indent(lp))
				}
				if gotSchema.String() != wantSchema.String() {
					t.Errorf("%s: schema %s, want %s", name, gotSchema, wantSchema)
				}
				if len(want) == 0 && !strings.Contains(q.sql, "GROUP BY") {
					t.Errorf("%s: a global aggregate returned no row", name)
				}
			}
		}
	}
}
