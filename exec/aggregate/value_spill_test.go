package aggregate_test

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver/exec/exectest"
	"github.com/quiverdb/quiver/physical"
)

// valueSpillAggs: DISTINCT aggregates over a wide integer and a string
// (count, sum, avg), beside plain ones and a DISTINCT that changes nothing;
// with sets, the integer ones by sets only.
func valueSpillAggs(sets bool) []physical.AggregateExpr {
	v, s := &physical.Column{Index: 1, Name: "v", Type: i64}, &physical.Column{Index: 2, Name: "s", Type: str}
	f64 := arrow.PrimitiveTypes.Float64
	aggs := []physical.AggregateExpr{
		{Func: physical.AggCount, Type: i64, Name: "n"},
		{Func: physical.AggCount, Arg: v, Distinct: true, SetState: sets, Type: i64, Name: "dv"},
		{Func: physical.AggSum, Arg: v, Distinct: true, SetState: sets, Type: i64, Name: "sdv"},
		{Func: physical.AggAvg, Arg: v, Distinct: true, SetState: sets, Type: f64, Name: "adv"},
		{Func: physical.AggSum, Arg: v, Type: i64, Name: "sv"},
	}
	if !sets {
		aggs = append(aggs,
			physical.AggregateExpr{Func: physical.AggCount, Arg: s, Distinct: true, Type: i64, Name: "ds"},
			physical.AggregateExpr{Func: physical.AggMax, Arg: s, Distinct: true, Type: str, Name: "maxs"})
	}
	return aggs
}

// valueSpillData returns rows whose key is "big" with probability big and
// else one of groups others (no key column at all when grouped is false:
// every row is in the one group), with mostly distinct wide v and s, and
// the expected aggregates as JSON (withStrings: ds and maxs too).
func valueSpillData(rows, groups int, big float64, grouped, withStrings bool, seed uint64) (string, string) {
	type agg struct {
		n, sv  int64
		hasV   bool
		vs     map[int64]bool
		ss     map[string]bool
		maxs   string
		hasMax bool
	}
	r := rand.New(rand.NewPCG(seed, 7))
	want := map[string]*agg{}
	var in strings.Builder
	in.WriteByte('[')
	for i := range rows {
		k := `"big"`
		if r.Float64() >= big {
			k = fmt.Sprintf(`"k%03d"`, r.IntN(groups))
		}
		if !grouped {
			k = "null"
		}
		g := want[k]
		if g == nil {
			g = &agg{vs: map[int64]bool{}, ss: map[string]bool{}}
			want[k] = g
		}
		g.n++
		v := "null"
		if r.IntN(11) != 0 {
			x := r.Int64N(1<<36) - 1<<30 // exact in a float64 sum
			if r.IntN(4) == 0 {
				x = int64(r.IntN(50)) // repeated values
			}
			v = fmt.Sprint(x)
			g.vs[x] = true
			g.sv += x
			g.hasV = true
		}
		s := "null"
		if r.IntN(13) != 0 {
			x := fmt.Sprintf("line comment %06d", r.IntN(rows))
			s = fmt.Sprintf("%q", x)
			g.ss[x] = true
			if !g.hasMax || x > g.maxs {
				g.maxs, g.hasMax = x, true
			}
		}
		if i > 0 {
			in.WriteByte(',')
		}
		fmt.Fprintf(&in, `{"k":%s,"v":%s,"s":%s}`, k, v, s)
	}
	in.WriteByte(']')
	keys := make([]string, 0, len(want))
	for k := range want {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out strings.Builder
	out.WriteByte('[')
	for i, k := range keys {
		g := want[k]
		if i > 0 {
			out.WriteByte(',')
		}
		sdv, sv, adv := "null", "null", "null"
		if g.hasV {
			sum := int64(0)
			for x := range g.vs {
				sum += x
			}
			sdv, sv = fmt.Sprint(sum), fmt.Sprint(g.sv)
			adv = fmt.Sprint(float64(sum) / float64(len(g.vs)))
		}
		if grouped {
			fmt.Fprintf(&out, `{"k":%s,`, k)
		} else {
			out.WriteByte('{')
		}
		fmt.Fprintf(&out, `"n":%d,"dv":%d,"sdv":%s,"adv":%s,"sv":%s`, g.n, len(g.vs), sdv, adv, sv)
		if withStrings {
			maxs := "null"
			if g.hasMax {
				maxs = fmt.Sprintf("%q", g.maxs)
			}
			fmt.Fprintf(&out, `,"ds":%d,"maxs":%s`, len(g.ss), maxs)
		}
		out.WriteByte('}')
	}
	out.WriteByte(']')
	return in.String(), out.String()
}

// valueSingle is a single-phase aggregate, grouped by k or not at all.
func valueSingle(in physical.Plan, grouped bool) *physical.HashAggregate {
	a := &physical.HashAggregate{Input: in, Mode: physical.AggSingle, Aggs: valueSpillAggs(false)}
	if grouped {
		a.GroupBy, a.GroupNames = []physical.Expr{kCol}, []string{"k"}
	}
	return a
}

// valueBySets is the plan by sets without GROUP BY: a partial aggregate
// per partition passing sets, a final one uniting them.
func valueBySets(in physical.Plan) (final, partial *physical.HashAggregate) {
	partial = &physical.HashAggregate{Input: in, Mode: physical.AggPartial, Aggs: valueSpillAggs(true)}
	return &physical.HashAggregate{Input: &physical.Coalesce{Input: partial}, Mode: physical.AggFinal, Aggs: valueSpillAggs(true)}, partial
}

// TestDistinctAggregateSpillsByValue: DISTINCT aggregates whose groups are
// too few to split (no GROUP BY; a handful of groups, one holding most
// rows; many groups, one of them holding half the rows) under a limit far
// below their sets give the same answer as the sets counted in Go, single
// phase and by sets, at every batch size, with early close and
// cancellation, leaving no file behind.
func TestDistinctAggregateSpillsByValue(t *testing.T) {
	for _, tc := range []struct {
		name    string
		groups  int
		big     float64
		grouped bool
		limit   int64
	}{
		{"no-group-by", 1, 0, false, 1 << 20},
		{"few-groups", 4, 0.9, true, 1 << 20},
		{"one-giant-group", 200, 0.5, true, 2 << 20},
	} {
		in, want := valueSpillData(40000, tc.groups, tc.big, tc.grouped, true, 1)
		inputs := []exectest.Input{{Name: "t", Schema: spillSchema, Rows: in, Partitions: 2}}
		exectest.Run(t, exectest.Case{Name: tc.name, Inputs: inputs, Want: want, MemoryLimit: tc.limit,
			Plan: func(s []physical.Plan) physical.Plan { return valueSingle(&physical.Coalesce{Input: s[0]}, tc.grouped) }})
	}
	in, want := valueSpillData(40000, 1, 0, false, false, 2)
	inputs := []exectest.Input{{Name: "t", Schema: spillSchema, Rows: in, Partitions: 2}}
	exectest.Run(t, exectest.Case{Name: "by-sets", Inputs: inputs, Want: want, MemoryLimit: 2 << 20,
		Plan: func(s []physical.Plan) physical.Plan { f, _ := valueBySets(s[0]); return f }})
}

// TestDistinctAggregateSpillsByValueCounted: without GROUP BY the
// aggregate really spills under the limit (EXPLAIN ANALYZE's spilled
// bytes), and not without one.
func TestDistinctAggregateSpillsByValueCounted(t *testing.T) {
	in, want := valueSpillData(40000, 1, 0, false, true, 3)
	for _, limit := range []int64{0, 1 << 20} {
		tctx, plan := runCounted(t, in, want, 1, limit, func(s physical.Plan) physical.Plan { return valueSingle(s, false) })
		checkSpilled(t, tctx, plan.(*physical.HashAggregate), nil, limit, nil)
	}
}
