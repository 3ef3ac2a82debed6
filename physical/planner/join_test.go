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

// TestSemiJoinBuildsSmallerSide: a semi or anti join whose right input is
// clearly the smaller is planned as RightSemi/RightAnti, building the right
// input and probing with the left one, with the left columns as output and
// no projection on top; a larger right side keeps LeftSemi/LeftAnti. NOT IN
// (null-aware) swaps only with one key and no filter.
func TestSemiJoinBuildsSmallerSide(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "k", Type: arrow.PrimitiveTypes.Int64},
		{Name: "v", Type: arrow.PrimitiveTypes.Int64},
	}, nil)
	table := func(name string, rows int64) logical.Plan {
		return logical.NewScan(&catalog.Table{Name: name, Schema: schema, Format: catalog.Parquet, Files: []string{name}, Rows: rows}, name)
	}
	on := func(l, r string) []logical.EquiPair {
		return []logical.EquiPair{{Left: &logical.Column{Qualifier: l, Name: "k"}, Right: &logical.Column{Qualifier: r, Name: "k"}}}
	}
	filter := &logical.Binary{Op: logical.OpLt, Left: &logical.Column{Qualifier: "big", Name: "v"}, Right: &logical.Column{Qualifier: "small", Name: "v"}}
	cases := []struct {
		typ       logical.JoinType
		bigLeft   bool
		filter    bool
		nullAware bool
		want      physical.JoinType
	}{
		{logical.SemiJoin, true, false, false, physical.RightSemiJoin},
		{logical.SemiJoin, true, true, false, physical.RightSemiJoin},
		{logical.AntiJoin, true, false, false, physical.RightAntiJoin},
		{logical.AntiJoin, true, true, false, physical.RightAntiJoin},
		{logical.AntiJoin, true, false, true, physical.RightAntiJoin},
		{logical.AntiJoin, true, true, true, physical.AntiJoin},
		{logical.SemiJoin, false, false, false, physical.SemiJoin},
		{logical.AntiJoin, false, false, true, physical.AntiJoin},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s/bigLeft=%v/filter=%v/nullAware=%v", c.typ, c.bigLeft, c.filter, c.nullAware), func(t *testing.T) {
			l, r, ln, rn := table("big", 1e6), table("small", 100), "big", "small"
			if !c.bigLeft {
				l, r, ln, rn = r, l, rn, ln
			}
			var f logical.Expr
			if c.filter {
				f = filter
			}
			j, err := logical.NewJoin(l, r, c.typ, on(ln, rn), f, c.nullAware, "")
			if err != nil {
				t.Fatal(err)
			}
			p, err := New(Config{TargetPartitions: 2}).Plan(context.Background(), j)
			if err != nil {
				t.Fatal(err)
			}
			hj, ok := p.(*physical.HashJoin)
			if !ok {
				t.Fatalf("got %s, want a hash join at the root", p)
			}
			if hj.Type != c.want {
				t.Fatalf("join type %s, want %s", hj.Type, c.want)
			}
			if p.Schema().NumFields() != j.Schema().Len() {
				t.Fatalf("schema %s, want the left input's two columns", p.Schema())
			}
			probe, build := hj.Right, hj.Left
			if c.want == physical.SemiJoin || c.want == physical.AntiJoin {
				probe, build = build, probe
			}
			if s := scanOf(probe); s == nil || s.Table != ln {
				t.Errorf("output side reads %v, want %s", s, ln)
			}
			if s := scanOf(build); s == nil || s.Table != rn {
				t.Errorf("other side reads %v, want %s", s, rn)
			}
		})
	}
}

// scanOf returns the scan under p's chain of single-input nodes.
func scanOf(p physical.Plan) *physical.Scan {
	for {
		if s, ok := p.(*physical.Scan); ok {
			return s
		}
		c := p.Children()
		if len(c) != 1 {
			return nil
		}
		p = c[0]
	}
}
