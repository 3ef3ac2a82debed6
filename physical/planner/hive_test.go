package planner

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver/catalog"
	"github.com/quiverdb/quiver/logical"
	"github.com/quiverdb/quiver/physical"
)

// TestHivePartitionPruning: a file is dropped only when a filter is
// certainly false for its partition values (NULL and unknown keep it), and
// each kept file's values reach the scan's options.
func TestHivePartitionPruning(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "v", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "year", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "region", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	files := []string{
		"/d/year=2023/region=eu/a.parquet",
		"/d/year=2023/region=us/a.parquet",
		"/d/year=2024/region=eu/a.parquet",
		"/d/year=__HIVE_DEFAULT_PARTITION__/region=eu/a.parquet",
	}
	tab := &catalog.Table{Name: "t", Schema: schema, Format: catalog.Parquet, Files: files, Rows: -1,
		Options: map[string]string{catalog.PartitionColumnsOption: "year,region"}}
	col := func(n string) logical.Expr { return &logical.Column{Qualifier: "t", Name: n} }
	bin := func(op logical.BinaryOp, l, r logical.Expr) logical.Expr {
		return &logical.Binary{Op: op, Left: l, Right: r}
	}
	for _, c := range []struct {
		name    string
		filters []logical.Expr
		kept    []int
	}{
		{"none", nil, []int{0, 1, 2, 3}},
		{"year = 2023", []logical.Expr{bin(logical.OpEq, col("year"), logical.Lit(int64(2023)))}, []int{0, 1}},
		{"year >= 2024 AND region = 'eu'", []logical.Expr{bin(logical.OpGtEq, col("year"), logical.Lit(int64(2024))), bin(logical.OpEq, col("region"), logical.Lit("eu"))}, []int{2}},
		{"region IN ('us') OR year > 2023", []logical.Expr{bin(logical.OpOr,
			&logical.InList{Expr: col("region"), List: []logical.Expr{logical.Lit("us")}}, bin(logical.OpGt, col("year"), logical.Lit(int64(2023))))}, []int{1, 2}},
		{"year IS NULL", []logical.Expr{&logical.IsNull{Expr: col("year")}}, []int{3}},
		{"v > 1 (a file column)", []logical.Expr{bin(logical.OpGt, col("v"), logical.Lit(int64(1)))}, []int{0, 1, 2, 3}},
		{"v > 1 OR year = 1999", []logical.Expr{bin(logical.OpOr, bin(logical.OpGt, col("v"), logical.Lit(int64(1))), bin(logical.OpEq, col("year"), logical.Lit(int64(1999))))}, []int{0, 1, 2, 3}},
		{"CAST(year AS VARCHAR) = '2024'", []logical.Expr{bin(logical.OpEq, &logical.Cast{Expr: col("year"), Type: arrow.BinaryTypes.String}, logical.Lit("2024"))}, []int{2}},
	} {
		scan := logical.NewScan(tab, "t").WithFilters(c.filters)
		got, opts := hivePartitions(scan)
		if len(got.Files) != len(c.kept) {
			t.Errorf("%s: kept %v, want files %v", c.name, got.Files, c.kept)
			continue
		}
		for i, k := range c.kept {
			if got.Files[i] != files[k] {
				t.Errorf("%s: kept %v, want files %v", c.name, got.Files, c.kept)
			}
			if _, ok := opts[physical.PartitionValuesKey(files[k])]; !ok {
				t.Errorf("%s: no partition values for %s", c.name, files[k])
			}
		}
	}
	s := &physical.Scan{Table: "t", Options: map[string]string{}}
	_, opts := hivePartitions(logical.NewScan(tab, "t"))
	s.Options = opts
	vals, err := s.PartitionValues(files[3], 2)
	if err != nil || vals[0] != nil || vals[1] == nil || *vals[1] != "eu" {
		t.Errorf("values of %s: %v, %v", files[3], vals, err)
	}
}
