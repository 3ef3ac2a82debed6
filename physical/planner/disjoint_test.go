package planner

import (
	"context"
	"fmt"
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

// TestDistinctOverDisjoint: an aggregate whose DISTINCT argument is
// disjoint across the input partitions runs as Partial (with DISTINCT) and
// Final (merging plain states) around an exchange of partial rows; with the
// argument not disjoint it stays single-phase over a repartition of every
// row.
func TestDistinctOverDisjoint(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "k", Type: arrow.PrimitiveTypes.Int64},
		{Name: "g", Type: arrow.PrimitiveTypes.Int64},
	}, nil)
	r := func(lo, hi int64) []catalog.KeyRange {
		return []catalog.KeyRange{{Lo: lo, Hi: hi, Known: true}, {Lo: 1, Hi: 3, Known: true}}
	}
	tbl := &catalog.Table{Name: "t", Schema: schema, Format: catalog.Parquet, Files: []string{"f"},
		RowGroupRows: [][]int64{{100, 100}}, RowGroupRanges: [][][]catalog.KeyRange{{r(1, 10), r(11, 20)}}, Rows: 200}
	for _, c := range []struct {
		arg      string
		twoPhase bool
	}{{"k", true}, {"g", false}} {
		t.Run(c.arg, func(t *testing.T) {
			scan := logical.NewScan(tbl, "t")
			groupBy := "g"
			if c.arg == "g" {
				groupBy = "k"
			}
			p := planCountDistinct(t, scan, groupBy, c.arg)
			top := p.(*physical.HashAggregate)
			if !c.twoPhase {
				// k is the group key and disjoint: single-phase, no exchange.
				if top.Mode != physical.AggSingle || !top.Aggs[0].Distinct {
					t.Fatalf("got %s", physical.Indent(p))
				}
				return
			}
			partial := partialUnder(t, top)
			if !partial.Aggs[0].Distinct || top.Aggs[0].Distinct {
				t.Fatalf("DISTINCT must stay in the partial phase only: partial %v, final %v", partial.Aggs, top.Aggs)
			}
			if _, ok := partial.Input.(*physical.Scan); !ok {
				t.Fatalf("the partial phase reads %s, want the scan itself", partial.Input)
			}
		})
	}
}

// A DISTINCT aggregate over values not disjoint across partitions runs by
// sets when its input is estimated at DistinctSetsRows or more (Partial
// and Final both SetState), else over an exchange of its rows (Single);
// a string argument has no sets.
func TestDistinctBySets(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "k", Type: arrow.PrimitiveTypes.Int64},
		{Name: "g", Type: arrow.PrimitiveTypes.Int64},
		{Name: "s", Type: arrow.BinaryTypes.String},
	}, nil)
	for _, c := range []struct {
		arg  string
		rows int64
		sets bool
	}{{"k", 2_000_000, true}, {"k", 2_000, false}, {"s", 2_000_000, false}} {
		t.Run(fmt.Sprint(c.arg, c.rows), func(t *testing.T) {
			tbl := &catalog.Table{Name: "t", Schema: schema, Format: catalog.Parquet, Files: []string{"f", "g"}, Rows: c.rows}
			p := planCountDistinct(t, logical.NewScan(tbl, "t"), "g", c.arg)
			top := p.(*physical.HashAggregate)
			if !c.sets {
				if top.Mode != physical.AggSingle || top.Aggs[0].SetState {
					t.Fatalf("got %s, want a single phase over the rows", physical.Indent(p))
				}
				return
			}
			partial := partialUnder(t, top)
			for _, a := range [][]physical.AggregateExpr{partial.Aggs, top.Aggs} {
				if !a[0].Distinct || !a[0].SetState || a[1].SetState {
					t.Fatalf("want the DISTINCT aggregate by sets in both phases, the sum plain: %v", a)
				}
			}
		})
	}
}

// planCountDistinct plans SELECT count(DISTINCT arg), sum(k) FROM in
// GROUP BY group at two partitions.
func planCountDistinct(t *testing.T, in logical.Plan, group, arg string) physical.Plan {
	t.Helper()
	agg, err := logical.NewAggregate(in, []logical.Expr{logical.Col(group)}, []logical.Expr{
		&logical.AggExpr{Func: logical.AggCount, Distinct: true, Args: []logical.Expr{logical.Col(arg)}},
		&logical.AggExpr{Func: logical.AggSum, Args: []logical.Expr{logical.Col("k")}},
	})
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(Config{TargetPartitions: 2}).Plan(context.Background(), agg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// partialUnder returns the Partial aggregate of a two-phase plan whose
// top is the Final one over a repartition, failing t for another shape.
func partialUnder(t *testing.T, top *physical.HashAggregate) *physical.HashAggregate {
	t.Helper()
	rep, ok := top.Input.(*physical.Repartition)
	if top.Mode != physical.AggFinal || !ok {
		t.Fatalf("got %s, want Final over a repartition", physical.Indent(top))
	}
	partial, ok := rep.Input.(*physical.HashAggregate)
	if !ok || partial.Mode != physical.AggPartial {
		t.Fatalf("got %s, want a Partial under the repartition", physical.Indent(top))
	}
	return partial
}
