package optimizer_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver/catalog"
	"github.com/quiverdb/quiver/logical"
	"github.com/quiverdb/quiver/logical/optimizer"
	"github.com/quiverdb/quiver/sql"
)

const tpchDir = "../../tpch"

// Approximate SF 0.01 row counts: only the join-order estimates use them.
var tpchRows = map[string]int64{
	"region": 5, "nation": 25, "part": 2000, "supplier": 100, "partsupp": 8000,
	"customer": 1500, "orders": 15000, "lineitem": 60175,
}

// tpchCatalog registers the TPC-H tables with the schemas of schema.sql.
func tpchCatalog(t *testing.T) *catalog.Catalog {
	t.Helper()
	text, err := os.ReadFile(filepath.Join(tpchDir, "schema.sql"))
	if err != nil {
		t.Fatal(err)
	}
	cat := catalog.New()
	tableRe := regexp.MustCompile(`(?s)CREATE TABLE (\w+) \((.*?)\);`)
	colRe := regexp.MustCompile(`^\s*(\w+)\s+(\w+)(?:\((\d+)(?:,(\d+))?\))?\s*(NOT NULL)?`)
	for _, m := range tableRe.FindAllStringSubmatch(string(text), -1) {
		var fields []arrow.Field
		for _, line := range strings.Split(m[2], "\n") {
			c := colRe.FindStringSubmatch(line)
			if c == nil {
				continue
			}
			var typ arrow.DataType
			switch strings.ToUpper(c[2]) {
			case "INTEGER":
				typ = logical.Int32
			case "BIGINT":
				typ = logical.Int64
			case "DECIMAL":
				p, _ := strconv.Atoi(c[3])
				s, _ := strconv.Atoi(c[4])
				typ = logical.Decimal(int32(p), int32(s))
			case "DATE":
				typ = logical.Date
			default:
				typ = logical.String
			}
			fields = append(fields, arrow.Field{Name: c[1], Type: typ, Nullable: c[5] == ""})
		}
		name := m[1]
		err := cat.RegisterTable(&catalog.Table{
			Name: name, Schema: arrow.NewSchema(fields, nil), Format: catalog.Parquet,
			Location: filepath.Join(tpchDir, "sf0.01", name+".parquet"),
			Files:    []string{filepath.Join(tpchDir, "sf0.01", name+".parquet")},
			Rows:     tpchRows[name],
		}, false)
		if err != nil {
			t.Fatal(err)
		}
	}
	return cat
}

// TestTPCH plans and optimizes the 22 queries, checks that no subquery or
// outer reference remains and that the schema is unchanged, and compares the
// optimized plans with testdata/tpch.golden.
func TestTPCH(t *testing.T) {
	cat := tpchCatalog(t)
	var b strings.Builder
	for q := 1; q <= 22; q++ {
		text, err := os.ReadFile(filepath.Join(tpchDir, "queries", fmt.Sprintf("q%02d.sql", q)))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "=== q%02d\n", q)
		p, err := sql.NewPlanner(cat).PlanQuery(string(text))
		if err != nil {
			t.Errorf("q%02d: plan: %v", q, err)
			fmt.Fprintf(&b, "plan error: %v\n", err)
			continue
		}
		op, err := optimizer.New().Optimize(context.Background(), p, nil)
		if err != nil {
			t.Errorf("q%02d: optimize: %v", q, err)
			fmt.Fprintf(&b, "optimize error: %v\n", err)
			continue
		}
		if !op.Schema().Equal(p.Schema()) {
			t.Errorf("q%02d: schema changed from %s to %s", q, p.Schema(), op.Schema())
		}
		logical.Inspect(op, func(n logical.Plan) bool {
			for _, e := range n.Exprs() {
				logical.InspectExpr(e, func(x logical.Expr) bool {
					switch x.(type) {
					case *logical.ScalarSubquery, *logical.Exists, *logical.InSubquery, *logical.OuterRef:
						t.Errorf("q%02d: %s remains in %s", q, x, n)
					}
					return true
				})
			}
			return true
		})
		b.WriteString(logical.Indent(op))
	}
	path := filepath.Join("testdata", "tpch.golden")
	if rewriteGolden() {
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -rewrite to create)", err)
	}
	if string(want) != b.String() {
		t.Errorf("%s differs; got:\n%s", path, b.String())
	}
}
