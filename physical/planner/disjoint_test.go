package planner

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver/catalog"
	"github.com/quiverdb/quiver/logical"
	"github.com/quiverdb/quiver/physical"
)

// TestDisjointScanAggregate: a Parquet table split by row groups whose key
// ranges do not overlap marks the key disjoint, and an aggregate grouped by
// it runs single-phase over the scan's partitions with no exchange; when the
// ranges share one value (a key split across row groups), or are unknown,
// the aggregate keeps its two phases around a hash repartition.
func TestDisjointScanAggregate(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "k", Type: arrow.PrimitiveTypes.Int64},
		{Name: "v", Type: arrow.PrimitiveTypes.Int64},
	}, nil)
	r := func(lo, hi int64) []catalog.KeyRange {
		return []catalog.KeyRange{{Lo: lo, Hi: hi, Known: true}, {}}
	}
	cases := []struct {
		name     string
		ranges   [][][]catalog.KeyRange
		disjoint bool
	}{
		{"disjoint", [][][]catalog.KeyRange{{r(1, 10), r(11, 20), r(21, 30), r(31, 40)}}, true},
		{"shared boundary key", [][][]catalog.KeyRange{{r(1, 10), r(11, 20), r(20, 30), r(31, 40)}}, false},
		{"unknown", nil, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tbl := &catalog.Table{Name: "t", Schema: schema, Format: catalog.Parquet, Files: []string{"f"},
				RowGroupRows: [][]int64{{100, 100, 100, 100}}, RowGroupRanges: c.ranges, Rows: 400}
			scan := logical.NewScan(tbl, "t")
			agg, err := logical.NewAggregate(scan, []logical.Expr{logical.Col("k")}, []logical.Expr{&logical.AggExpr{Func: logical.AggSum, Args: []logical.Expr{logical.Col("v")}}})
			if err != nil {
				t.Fatal(err)
			}
			p, err := New(Config{TargetPartitions: 2}).Plan(context.Background(), agg)
			if err != nil {
				t.Fatal(err)
			}
			a, ok := p.(*physical.HashAggregate)
			if !ok {
				t.Fatalf("got %s, want a hash aggregate at the root", p)
			}
			s, single := a.Input.(*physical.Scan)
			if single != c.disjoint || (single && a.Mode != physical.AggSingle) {
				t.Fatalf("got %s over %s, want single-phase over the scan: %v", a, a.Input, c.disjoint)
			}
			if single && (len(s.Disjoint) != 1 || s.Disjoint[0] != 0) {
				t.Fatalf("scan disjoint columns %v, want [0]", s.Disjoint)
			}
			if !single && a.Mode != physical.AggFinal {
				t.Fatalf("got mode %s, want Final above a repartition", a.Mode)
			}
		})
	}
}
