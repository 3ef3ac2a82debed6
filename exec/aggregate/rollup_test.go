package aggregate

import (
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver/physical"
)

// partialOverExpand is a Partial aggregate grouped by the keys and ordinal
// of an Expand of keys a, b, c over a three-column input, as the planner
// makes it for GROUP BY ROLLUP / CUBE / GROUPING SETS.
func partialOverExpand(sets [][]int, aggs []physical.AggregateExpr) *physical.HashAggregate {
	i64 := arrow.PrimitiveTypes.Int64
	in := &physical.Values{OutSchema: arrow.NewSchema([]arrow.Field{{Name: "a", Type: i64}, {Name: "b", Type: i64}, {Name: "v", Type: i64}}, nil)}
	keys := []physical.Expr{
		&physical.Column{Index: 0, Name: "a", Type: i64},
		&physical.Column{Index: 1, Name: "b", Type: i64},
		&physical.Column{Index: 2, Name: "v", Type: i64},
	}
	ex := &physical.Expand{Input: in, Keys: keys, KeyNames: []string{"k0", "k1", "k2"}, Sets: sets}
	es := ex.Schema()
	var groups []physical.Expr
	var names []string
	for i := range 4 {
		f := es.Field(3 + i)
		groups = append(groups, &physical.Column{Index: 3 + i, Name: f.Name, Type: f.Type})
		names = append(names, f.Name)
	}
	return &physical.HashAggregate{Input: ex, Mode: physical.AggPartial, GroupBy: groups, GroupNames: names, Aggs: aggs}
}

// TestRollupSources pins which partial aggregates over an Expand run as a
// rollup, and which earlier set each grouping set is folded from: the one
// of fewest keys that holds all of its keys.
func TestRollupSources(t *testing.T) {
	i64 := arrow.PrimitiveTypes.Int64
	v := &physical.Column{Index: 2, Name: "v", Type: i64}
	sum := []physical.AggregateExpr{{Func: physical.AggSum, Arg: v, Type: i64, Name: "s"}, {Func: physical.AggCount, Type: i64, Name: "c"}}
	for _, c := range []struct {
		name string
		sets [][]int
		aggs []physical.AggregateExpr
		want []int // nil: not a rollup
	}{
		{"rollup", [][]int{{0, 1, 2}, {0, 1}, {0}, {}}, sum, []int{-1, 0, 1, 2}},
		{"cube", [][]int{{0, 1, 2}, {0, 1}, {0, 2}, {1, 2}, {0}, {1}, {2}, {}}, sum, []int{-1, 0, 0, 0, 2, 3, 3, 6}},
		{"first set in another order", [][]int{{2, 0, 1}, {1}, {1}}, sum, []int{-1, 0, 1}},
		{"first set lacks a key", [][]int{{0, 1}, {0, 1, 2}}, sum, nil},
		{"one set", [][]int{{0, 1, 2}}, sum, nil},
		{"distinct", [][]int{{0, 1, 2}, {0}}, []physical.AggregateExpr{{Func: physical.AggSum, Arg: v, Type: i64, Name: "s", Distinct: true}}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, ok := rollupSources(partialOverExpand(c.sets, c.aggs))
			if ok != (c.want != nil) || !slices.Equal(got, c.want) {
				t.Fatalf("rollupSources = %v, %v; want %v", got, ok, c.want)
			}
		})
	}
	n := partialOverExpand([][]int{{0, 1, 2}, {0}}, sum)
	for _, mode := range []physical.AggMode{physical.AggSingle, physical.AggFinal} {
		m := *n
		m.Mode = mode
		if _, ok := rollupSources(&m); ok {
			t.Errorf("%s aggregate runs as a rollup", mode)
		}
	}
	m := *n
	m.GroupBy = slices.Clone(n.GroupBy)
	m.GroupBy[0], m.GroupBy[1] = m.GroupBy[1], m.GroupBy[0]
	if _, ok := rollupSources(&m); ok {
		t.Error("grouped by the keys out of order: runs as a rollup")
	}
}
