package expand_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver/exec/exectest"
	"github.com/quiverdb/quiver/physical"
)

// The operator is checked through exectest (batch sizes 1, 7 and the
// default over random splits, early Close, cancellation, the checked
// allocator) alone on a hand-written case, and under a partial and final
// aggregate, as the planner lays it out, against a row-at-a-time
// reference of grouping-set semantics on random data.

var (
	i64    = arrow.PrimitiveTypes.Int64
	i32    = arrow.PrimitiveTypes.Int32
	schema = arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: i64}, {Name: "g", Type: i64, Nullable: true}, {Name: "h", Type: i64, Nullable: true}, {Name: "v", Type: i64, Nullable: true},
	}, nil)
)

func col(i int) physical.Expr {
	return &physical.Column{Index: i, Name: schema.Field(i).Name, Type: schema.Field(i).Type}
}

// keys are g and h * 10 (an expression the operator evaluates).
var keys = []physical.Expr{
	col(1),
	&physical.Binary{Op: physical.OpMul, Left: col(2), Right: &physical.Literal{Type: i64, Value: int64(10)}, Type: i64},
}

func expand(in physical.Plan, sets [][]int) *physical.Expand {
	return &physical.Expand{Input: in, Keys: keys, KeyNames: []string{"k0", "k1"}, Sets: sets}
}

func TestExpandSmall(t *testing.T) {
	rows := `[
		{"id": 1, "g": 1, "h": 2, "v": 10},
		{"id": 2, "g": null, "h": 3, "v": null},
		{"id": 3, "g": 2, "h": null, "v": 5}
	]`
	// Every row once per set, keys outside the set NULL; then, from
	// partition 0 only, one filler row per empty set (two here: () is
	// written twice) with everything but the ordinal NULL.
	want := `[
		{"id": 1, "g": 1, "h": 2, "v": 10, "k0": 1, "k1": 20, "__quiver_grouping_set": 0, "__quiver_gs_row": true},
		{"id": 2, "g": null, "h": 3, "v": null, "k0": null, "k1": 30, "__quiver_grouping_set": 0, "__quiver_gs_row": true},
		{"id": 3, "g": 2, "h": null, "v": 5, "k0": 2, "k1": null, "__quiver_grouping_set": 0, "__quiver_gs_row": true},
		{"id": 1, "g": 1, "h": 2, "v": 10, "k0": null, "k1": 20, "__quiver_grouping_set": 1, "__quiver_gs_row": true},
		{"id": 2, "g": null, "h": 3, "v": null, "k0": null, "k1": 30, "__quiver_grouping_set": 1, "__quiver_gs_row": true},
		{"id": 3, "g": 2, "h": null, "v": 5, "k0": null, "k1": null, "__quiver_grouping_set": 1, "__quiver_gs_row": true},
		{"id": 1, "g": 1, "h": 2, "v": 10, "k0": null, "k1": null, "__quiver_grouping_set": 2, "__quiver_gs_row": true},
		{"id": 2, "g": null, "h": 3, "v": null, "k0": null, "k1": null, "__quiver_grouping_set": 2, "__quiver_gs_row": true},
		{"id": 3, "g": 2, "h": null, "v": 5, "k0": null, "k1": null, "__quiver_grouping_set": 2, "__quiver_gs_row": true},
		{"id": 1, "g": 1, "h": 2, "v": 10, "k0": null, "k1": null, "__quiver_grouping_set": 3, "__quiver_gs_row": true},
		{"id": 2, "g": null, "h": 3, "v": null, "k0": null, "k1": null, "__quiver_grouping_set": 3, "__quiver_gs_row": true},
		{"id": 3, "g": 2, "h": null, "v": 5, "k0": null, "k1": null, "__quiver_grouping_set": 3, "__quiver_gs_row": true},
		{"id": null, "g": null, "h": null, "v": null, "k0": null, "k1": null, "__quiver_grouping_set": 2, "__quiver_gs_row": null},
		{"id": null, "g": null, "h": null, "v": null, "k0": null, "k1": null, "__quiver_grouping_set": 3, "__quiver_gs_row": null}
	]`
	sets := [][]int{{0, 1}, {1}, {}, {}}
	exectest.Run(t, exectest.Case{
		Name:   "small",
		Inputs: []exectest.Input{{Name: "t", Schema: schema, Rows: rows, Partitions: 3}},
		Plan:   func(s []physical.Plan) physical.Plan { return expand(s[0], sets) },
		Want:   want,
	})
	// Without an empty set there is no marker column and no filler.
	exectest.Run(t, exectest.Case{
		Name:   "no-empty-set",
		Inputs: []exectest.Input{{Name: "t", Schema: schema, Rows: `[{"id": 1, "g": 1, "h": 2, "v": 10}]`, Partitions: 2}},
		Plan:   func(s []physical.Plan) physical.Plan { return expand(s[0], [][]int{{1, 0}, {0}}) },
		Want: `[
			{"id": 1, "g": 1, "h": 2, "v": 10, "k0": 1, "k1": 20, "__quiver_grouping_set": 0},
			{"id": 1, "g": 1, "h": 2, "v": 10, "k0": 1, "k1": null, "__quiver_grouping_set": 1}
		]`,
	})
}

// ---- under an aggregate, against the reference --------------------------------------

type row struct {
	id      int64
	g, h, v *int64
}

func randomRows(r *rand.Rand, n int) []row {
	opt := func(p int, hi int64) *int64 {
		if r.IntN(p) == 0 {
			return nil
		}
		x := r.Int64N(hi)
		return &x
	}
	out := make([]row, n)
	for i := range out {
		out[i] = row{id: int64(i), g: opt(5, 4), h: opt(4, 3), v: opt(4, 100)}
	}
	return out
}

func rowsJSON(rs []row) string {
	out := make([]map[string]any, len(rs))
	for i, r := range rs {
		out[i] = map[string]any{"id": r.id, "g": r.g, "h": r.h, "v": r.v}
	}
	b, _ := json.Marshal(out)
	return string(b)
}

// aggregated is the plan the SQL planner makes: Expand, a partial
// aggregate by the keys and the ordinal, a hash exchange on them, the
// final aggregate. COUNT(*) counts the row marker (so that filler rows
// count for nothing) when a set is empty; sum(v), count(v) and max(v) skip the
// filler's NULL v.
func aggregated(in physical.Plan, sets [][]int) physical.Plan {
	ex := expand(in, sets)
	es := ex.Schema()
	n := schema.NumFields()
	var groups, finals []physical.Expr
	names := []string{"k0", "k1", physical.GroupingSetColumn}
	for i := range 3 {
		groups = append(groups, &physical.Column{Index: n + i, Name: names[i], Type: es.Field(n + i).Type})
		finals = append(finals, &physical.Column{Index: i, Name: names[i], Type: es.Field(n + i).Type})
	}
	var star physical.Expr
	if ex.HasEmptySet() {
		star = &physical.Column{Index: n + 3, Name: physical.GroupingRowColumn, Type: arrow.FixedWidthTypes.Boolean}
	}
	aggs := []physical.AggregateExpr{
		{Func: physical.AggCount, Arg: star, Type: i64, Name: "cnt"},
		{Func: physical.AggSum, Arg: col(3), Type: i64, Name: "sum"},
		{Func: physical.AggCount, Arg: col(3), Type: i64, Name: "cntv"},
		{Func: physical.AggMax, Arg: col(3), Type: i64, Name: "max"},
	}
	partial := &physical.HashAggregate{Input: ex, Mode: physical.AggPartial, GroupBy: groups, GroupNames: names, Aggs: aggs}
	mid := &physical.Repartition{Input: partial, Keys: finals, N: 3}
	return &physical.HashAggregate{Input: mid, Mode: physical.AggFinal, GroupBy: finals, GroupNames: names, Aggs: aggs}
}

// reference computes each grouping set's groups row by row: a row's key
// for set s keeps the values of the set's keys and NULL elsewhere; an
// empty set has its one group even over no rows.
func reference(rows []row, sets [][]int) string {
	type acc struct {
		k0, k1   *int64
		set      int
		cnt      int64
		sum, max *int64
		cntv     int64
		keyOrder int
	}
	var out []map[string]any
	for s, set := range sets {
		groups := map[string]*acc{}
		var order []string
		if len(set) == 0 {
			groups[""] = &acc{set: s}
			order = append(order, "")
		}
		for _, r := range rows {
			var k0, k1 *int64
			if slices.Contains(set, 0) {
				k0 = r.g
			}
			if slices.Contains(set, 1) && r.h != nil {
				x := *r.h * 10
				k1 = &x
			}
			key := fmt.Sprint(str(k0), "|", str(k1))
			if len(set) == 0 {
				key = ""
			}
			a, ok := groups[key]
			if !ok {
				a = &acc{k0: k0, k1: k1, set: s}
				groups[key] = a
				order = append(order, key)
			}
			a.cnt++
			if r.v != nil {
				a.cntv++
				if a.sum == nil {
					a.sum = new(int64)
				}
				*a.sum += *r.v
				if a.max == nil || *r.v > *a.max {
					a.max = r.v
				}
			}
		}
		for _, k := range order {
			a := groups[k]
			out = append(out, map[string]any{"k0": a.k0, "k1": a.k1, physical.GroupingSetColumn: a.set, "cnt": a.cnt, "sum": a.sum, "cntv": a.cntv, "max": a.max})
		}
	}
	if out == nil {
		return "[]"
	}
	b, _ := json.Marshal(out)
	return string(b)
}

func str(p *int64) string {
	if p == nil {
		return "null"
	}
	return fmt.Sprint(*p)
}

func TestExpandAggregateRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	choices := [][][]int{
		{{0, 1}, {0}, {}},         // ROLLUP(g, h*10)
		{{0, 1}, {0}, {1}, {}},    // CUBE
		{{0}, {0}, {1}},           // a duplicate set, no empty one
		{{}, {}},                  // only empty sets
		{{1, 0}, {1}, {0, 1}, {}}, // duplicates in another order
	}
	// More sets than the operator keeps ordinal columns for.
	var many [][]int
	for i := range 70 {
		many = append(many, [][]int{{0}, {1}, {0, 1}, {}, {1, 0}}[i%5])
	}
	choices = append(choices, many)
	for i := range 9 {
		sets := choices[i%len(choices)]
		n := r.IntN(60)
		if i == 3 {
			n = 0 // an empty set over no rows is one row
		}
		rows := randomRows(r, n)
		exectest.Run(t, exectest.Case{
			Name:   fmt.Sprintf("random%d/sets=%d", i, len(sets)),
			Inputs: []exectest.Input{{Name: "t", Schema: schema, Rows: rowsJSON(rows), Partitions: 1 + r.IntN(3)}},
			Plan:   func(s []physical.Plan) physical.Plan { return aggregated(s[0], sets) },
			Want:   reference(rows, sets),
		})
	}
}
