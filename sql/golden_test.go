package sql

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver/catalog"
	"github.com/quiverdb/quiver/logical"
)

var rewrite = flag.Bool("rewrite", false, "rewrite golden files")

// tpchCatalog registers the 8 TPC-H tables with the Arrow types of
// tpch/schema.sql (no files).
func tpchCatalog(t testing.TB) *catalog.Catalog {
	t.Helper()
	text, err := os.ReadFile("../tpch/schema.sql")
	if err != nil {
		t.Fatal(err)
	}
	cat := catalog.New()
	tableRe := regexp.MustCompile(`(?s)CREATE TABLE (\w+) \((.*?)\);`)
	colRe := regexp.MustCompile(`^\s*(\w+)\s+(\w+)(\(\d+(?:,\d+)?\))?\s*(NOT NULL)?`)
	for _, m := range tableRe.FindAllStringSubmatch(string(text), -1) {
		var fields []arrow.Field
		for _, line := range strings.Split(m[2], "\n") {
			c := colRe.FindStringSubmatch(line)
			if c == nil {
				continue
			}
			var typ arrow.DataType
			switch c[2] {
			case "BIGINT":
				typ = logical.Int64
			case "INTEGER":
				typ = logical.Int32
			case "DECIMAL":
				typ = logical.Decimal(15, 2)
			case "DATE":
				typ = logical.Date
			case "CHAR", "VARCHAR":
				typ = logical.String
			default:
				t.Fatalf("schema.sql: unknown type %s", c[2])
			}
			fields = append(fields, arrow.Field{Name: c[1], Type: typ, Nullable: c[4] == ""})
		}
		if err := cat.RegisterTable(&catalog.Table{Name: m[1], Schema: arrow.NewSchema(fields, nil), Format: catalog.Parquet, Rows: -1}, false); err != nil {
			t.Fatal(err)
		}
	}
	if names, _ := cat.Names(); len(names) != 8 {
		t.Fatalf("want 8 TPC-H tables")
	}
	return cat
}

// render prints a statement (or its error) for the golden files.
func render(st Statement, err error) string {
	if err != nil {
		return "error: " + err.Error() + "\n"
	}
	switch st := st.(type) {
	case *Query:
		return indentAll(st.Plan)
	case *Explain:
		return fmt.Sprintf("Explain analyze=%v verbose=%v distributed=%v\n%s", st.Analyze, st.Verbose, st.Distributed, logical.Indent(st.Plan))
	case *CreateView:
		return fmt.Sprintf("CreateView %s or_replace=%v sql=%q\n%s", st.Name, st.OrReplace, st.SQL, logical.Indent(st.Plan))
	case *CacheTable:
		out := fmt.Sprintf("CacheTable %s lazy=%v options=%v\n", st.Name, st.Lazy, st.Options)
		if st.Plan != nil {
			out += logical.Indent(st.Plan)
		}
		return out
	}
	return fmt.Sprintf("%T %+v\n", st, st)
}

// planScript plans every statement of a script and renders the results.
func planScript(t *testing.T, p *Planner, script string) string {
	t.Helper()
	srcs, err := Split(script)
	if err != nil {
		return "error: " + err.Error() + "\n"
	}
	var b strings.Builder
	for _, src := range srcs {
		first, _, _ := strings.Cut(src.Text, "\n")
		fmt.Fprintf(&b, "-- %d:%d %s\n", src.Line, src.Col, first)
		st, err := p.Plan(src)
		b.WriteString(render(st, err))
		b.WriteString("\n")
	}
	return b.String()
}

func checkGolden(t *testing.T, path, got string) {
	t.Helper()
	if *rewrite {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -rewrite to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs (run go test ./sql -run TestPlanGolden -rewrite):\n%s", path, got)
	}
}

func TestPlanGolden(t *testing.T) {
	cat := tpchCatalog(t)
	if err := cat.RegisterView(&catalog.View{Name: "urgent_orders", SQL: "SELECT o_orderkey, o_totalprice FROM orders WHERE o_orderpriority = '1-URGENT'"}, false); err != nil {
		t.Fatal(err)
	}
	if err := cat.RegisterView(&catalog.View{Name: "loop_a", SQL: "SELECT * FROM loop_b"}, false); err != nil {
		t.Fatal(err)
	}
	if err := cat.RegisterView(&catalog.View{Name: "loop_b", SQL: "SELECT * FROM loop_a"}, false); err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob("testdata/plans/*.sql")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			text, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, strings.TrimSuffix(f, ".sql")+".golden", planScript(t, NewPlanner(cat), string(text)))
		})
	}
	t.Run("tpch", func(t *testing.T) {
		qs, err := filepath.Glob("../tpch/queries/q*.sql")
		if err != nil || len(qs) != 22 {
			t.Fatalf("want 22 TPC-H queries, got %d (%v)", len(qs), err)
		}
		p := NewPlanner(cat)
		var b strings.Builder
		for _, q := range qs {
			text, err := os.ReadFile(q)
			if err != nil {
				t.Fatal(err)
			}
			srcs, err := Split(string(text))
			if err != nil || len(srcs) != 1 {
				t.Fatalf("%s: %v (%d statements)", q, err, len(srcs))
			}
			st, err := p.Plan(srcs[0])
			if err != nil {
				t.Errorf("%s: %v", q, err)
			}
			fmt.Fprintf(&b, "-- %s\n%s\n", filepath.Base(q), render(st, err))
		}
		checkGolden(t, "testdata/plans/tpch.golden", b.String())
	})
}

// indentAll prints a plan and, below it, the plans of its subqueries.
func indentAll(p logical.Plan) string {
	out := logical.Indent(p)
	n := 0
	logical.Inspect(p, func(node logical.Plan) bool {
		for _, e := range node.Exprs() {
			logical.InspectExpr(e, func(x logical.Expr) bool {
				var sub logical.Plan
				switch x := x.(type) {
				case *logical.ScalarSubquery:
					sub = x.Plan
				case *logical.Exists:
					sub = x.Plan
				case *logical.InSubquery:
					sub = x.Plan
				}
				if sub != nil {
					n++
					out += fmt.Sprintf("subquery %d of %s:\n", n, strings.SplitN(node.String(), ":", 2)[0])
					out += indentAll(sub)
				}
				return true
			})
		}
		return true
	})
	return out
}
