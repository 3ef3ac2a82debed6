package optimizer

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/quiverdb/quiver/catalog"
	"github.com/quiverdb/quiver/logical"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the golden files in testdata")

func table(name string, rows int64, fields ...arrow.Field) *catalog.Table {
	return &catalog.Table{Name: name, Schema: arrow.NewSchema(fields, nil), Format: catalog.Memory, Rows: rows}
}

var (
	tblT = table("t", 1000,
		arrow.Field{Name: "a", Type: logical.Int64},
		arrow.Field{Name: "b", Type: logical.Int64, Nullable: true},
		arrow.Field{Name: "c", Type: logical.String},
		arrow.Field{Name: "d", Type: logical.Date},
		arrow.Field{Name: "e", Type: logical.Decimal(15, 2)})
	tblU = table("u", 100,
		arrow.Field{Name: "k", Type: logical.Int64},
		arrow.Field{Name: "x", Type: logical.Int64, Nullable: true},
		arrow.Field{Name: "y", Type: logical.String})
	tblW = table("w", 10,
		arrow.Field{Name: "k", Type: logical.Int64},
		arrow.Field{Name: "z", Type: logical.Float64})
)

// Tables with distinct-value bounds, for the estimates of join ordering.
var (
	tblFact = withDistinct(table("fact", 100_000,
		arrow.Field{Name: "k", Type: logical.Int64},
		arrow.Field{Name: "dk", Type: logical.Int64}), 100_000, 100)
	tblDim = withDistinct(table("dim", 100,
		arrow.Field{Name: "k", Type: logical.Int64},
		arrow.Field{Name: "grp", Type: logical.Int64},
		arrow.Field{Name: "name", Type: logical.String}), 100, 2, 0)
	tblGrp = withDistinct(table("grp", 50,
		arrow.Field{Name: "grp", Type: logical.Int64}), 2)
)

func withDistinct(t *catalog.Table, d ...int64) *catalog.Table {
	t.Distinct = d
	return t
}

func scan(t *catalog.Table, q string) *logical.Scan { return logical.NewScan(t, q) }

func col(s string) *logical.Column { return logical.Col(s) }

func outer(q, n string, t arrow.DataType) *logical.OuterRef {
	return &logical.OuterRef{Qualifier: q, Name: n, Type: t}
}

func bin(op logical.BinaryOp, l, r logical.Expr) *logical.Binary {
	return &logical.Binary{Op: op, Left: l, Right: r}
}

func eq(l, r logical.Expr) *logical.Binary { return bin(logical.OpEq, l, r) }

func dec(unscaled int64, p, s int32) *logical.Literal {
	return &logical.Literal{Type: logical.Decimal(p, s), Value: decimal128.FromI64(unscaled)}
}

func date(s string) *logical.Literal {
	tm, err := time.Parse("2006-01-02", s)
	if err != nil {
		panic(err)
	}
	return logical.Lit(arrow.Date32FromTime(tm))
}

func interval(months, days int32) *logical.Literal {
	return &logical.Literal{Type: logical.Interval, Value: arrow.MonthDayNanoInterval{Months: months, Days: days}}
}

func agg(f logical.AggFunc, args ...logical.Expr) *logical.AggExpr {
	return &logical.AggExpr{Func: f, Args: args}
}

// must panics on a construction error: test plans are hand-built and fixed.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func filter(in logical.Plan, e logical.Expr) logical.Plan { return must(logical.NewFilter(in, e)) }

func project(in logical.Plan, es ...logical.Expr) logical.Plan {
	return must(logical.NewProjection(in, es))
}

func join(l, r logical.Plan, typ logical.JoinType, on []logical.EquiPair, f logical.Expr) logical.Plan {
	return must(logical.NewJoin(l, r, typ, on, f, false, ""))
}

func cross(l, r logical.Plan) logical.Plan { return join(l, r, logical.InnerJoin, nil, nil) }

func aggregate(in logical.Plan, group []logical.Expr, aggs ...logical.Expr) logical.Plan {
	return must(logical.NewAggregate(in, group, aggs))
}

// ruleCase is one hand-built plan given to one rule.
type ruleCase struct {
	name string
	plan func() logical.Plan
}

// runRuleGolden runs rule alone on each case and compares "before/after" text
// with testdata/<file>.golden (rewritten with -rewrite). It checks the schema
// is unchanged when the rule reports a change.
func runRuleGolden(t *testing.T, rule Rule, file string, cases []ruleCase) {
	t.Helper()
	var b strings.Builder
	for _, c := range cases {
		p := c.plan()
		np, changed, err := rule.Rewrite(context.Background(), p)
		b.WriteString("=== " + c.name + "\n")
		b.WriteString(logical.Indent(p))
		if err != nil {
			b.WriteString("--- error\n" + err.Error() + "\n")
			continue
		}
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
		switch np.(type) {
		case *logical.Projection, *logical.Aggregate:
			// Aliases hide rewritten expressions in Indent; show them.
			for _, e := range np.Exprs() {
				b.WriteString("    " + e.String() + " := " + logical.StripAlias(e).String() + "\n")
			}
		}
	}
	checkGolden(t, file, b.String())
}

func checkGolden(t *testing.T, file, got string) {
	t.Helper()
	path := filepath.Join("testdata", file+".golden")
	if *rewrite {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -rewrite to create)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from the golden file; got:\n%s", path, got)
	}
}
