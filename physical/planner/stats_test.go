package planner

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver/catalog"
	"github.com/quiverdb/quiver/logical"
	"github.com/quiverdb/quiver/physical"
)

// TestScanStats: a Parquet scan carries its table's statistics, the
// union of the row groups' ranges per output column (in projection
// order), the string lengths the footers show, the distinct bounds and
// the row count; a column some row group does not bound is unbounded, and
// a table without ranges gives no statistics.
func TestScanStats(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "k", Type: arrow.PrimitiveTypes.Int64},
		{Name: "s", Type: arrow.BinaryTypes.String},
		{Name: "u", Type: arrow.PrimitiveTypes.Int32},
		{Name: "n", Type: arrow.PrimitiveTypes.Int64},
	}, nil)
	rg := func(lo, hi int64, long int, uKnown bool) []catalog.KeyRange {
		// n: bounded by lo-1 .. hi+1, NULLs in the row groups where u is known
		return []catalog.KeyRange{{Lo: lo, Hi: hi, Known: true}, {LongestAtLeast: long}, {Lo: 1, Hi: 2, Known: uKnown},
			{Lo: lo - 1, Hi: hi + 1, Known: !uKnown, Bounded: uKnown}}
	}
	tbl := &catalog.Table{Name: "t", Schema: schema, Format: catalog.Parquet, Files: []string{"f", "g"},
		RowGroupRows:   [][]int64{{100, 100}, {50}},
		RowGroupRanges: [][][]catalog.KeyRange{{rg(10, 20, 3, true), rg(-5, 12, 9, false)}, {rg(30, 40, 4, true)}},
		Rows:           250, Distinct: []int64{31, 0, 2, 0}}
	scan := logical.NewScan(tbl, "t")
	proj, err := logical.NewProjection(scan, []logical.Expr{logical.Col("u"), logical.Col("s"), logical.Col("k"), logical.Col("n")})
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(Config{TargetPartitions: 1}).Plan(context.Background(), proj)
	if err != nil {
		t.Fatal(err)
	}
	st := physical.StatsOf(p)
	want := []physical.ColumnStats{{Distinct: 2}, {LongestAtLeast: 9}, {Bounded: true, Lo: -5, Hi: 40, NoNulls: true, Distinct: 31},
		{Bounded: true, Lo: -6, Hi: 41}}
	if st.Rows != 250 || len(st.Cols) != 4 {
		t.Fatalf("stats %+v over %s", st, physical.Indent(p))
	}
	for i, w := range want {
		if st.Cols[i] != w {
			t.Errorf("column %d: %+v, want %+v", i, st.Cols[i], w)
		}
	}

	tbl.RowGroupRanges, tbl.RowGroupRows = nil, nil
	p, err = New(Config{TargetPartitions: 1}).Plan(context.Background(), logical.NewScan(tbl, "t"))
	if err != nil {
		t.Fatal(err)
	}
	if st := physical.StatsOf(p); st.Rows != -1 || st.Cols[0] != (physical.ColumnStats{}) {
		t.Errorf("a table without ranges: %+v", st)
	}
}
