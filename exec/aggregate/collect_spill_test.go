package aggregate_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver/exec/exectest"
	"github.com/quiverdb/quiver/physical"
)

// collectSpillAggs: array_agg(v ORDER BY v), string_agg(DISTINCT s, ',')
// and a plain count.
func collectSpillAggs() []physical.AggregateExpr {
	v, s := &physical.Column{Index: 1, Name: "v", Type: i64}, &physical.Column{Index: 2, Name: "s", Type: str}
	comma := &physical.Literal{Type: str, Value: ","}
	return []physical.AggregateExpr{
		{Func: physical.AggCount, Type: i64, Name: "n"},
		{Func: physical.AggArrayAgg, Type: arrow.ListOf(i64), Name: "av", Order: []physical.AggOrder{{}},
			Arg: &physical.ScalarFunc{Name: physical.PairFunc, Args: []physical.Expr{v, v}, Type: physical.RowType(i64, i64)}},
		{Func: physical.AggStringAgg, Distinct: true, Type: str, Name: "sd",
			Arg: &physical.ScalarFunc{Name: physical.PairFunc, Args: []physical.Expr{s, comma}, Type: physical.RowType(str, str)}},
	}
}

// collectSpillData returns rows over about groups string keys and each
// key's expected aggregates as JSON.
func collectSpillData(rows, groups int, seed uint64) (string, string) {
	type agg struct {
		n     int
		vs    []int64
		nulls int
		ss    map[string]bool
	}
	r := rand.New(rand.NewPCG(seed, 11))
	want := map[string]*agg{}
	var in strings.Builder
	in.WriteByte('[')
	for i := range rows {
		k := fmt.Sprintf(`"k%04d"`, r.IntN(groups))
		g := want[k]
		if g == nil {
			g = &agg{ss: map[string]bool{}}
			want[k] = g
		}
		g.n++
		v := "null"
		if r.IntN(9) != 0 {
			x := r.Int64N(1 << 40)
			v = fmt.Sprint(x)
			g.vs = append(g.vs, x)
		} else {
			g.nulls++
		}
		s := "null"
		if r.IntN(13) != 0 {
			x := fmt.Sprintf("word %03d", r.IntN(400))
			s = fmt.Sprintf("%q", x)
			g.ss[x] = true
		}
		if i > 0 {
			in.WriteByte(',')
		}
		fmt.Fprintf(&in, `{"k":%s,"v":%s,"s":%s}`, k, v, s)
	}
	in.WriteByte(']')
	var out strings.Builder
	out.WriteByte('[')
	first := true
	for k, g := range want {
		if !first {
			out.WriteByte(',')
		}
		first = false
		slices.Sort(g.vs)
		av := make([]string, 0, len(g.vs)+g.nulls)
		for _, x := range g.vs {
			av = append(av, fmt.Sprint(x))
		}
		for range g.nulls { // ORDER BY v: NULLs last
			av = append(av, "null")
		}
		ss := make([]string, 0, len(g.ss))
		for x := range g.ss {
			ss = append(ss, x)
		}
		sort.Strings(ss)
		sd := "null"
		if len(ss) > 0 {
			sd = fmt.Sprintf("%q", strings.Join(ss, ","))
		}
		fmt.Fprintf(&out, `{"k":%s,"n":%d,"av":[%s],"sd":%s}`, k, g.n, strings.Join(av, ","), sd)
	}
	out.WriteByte(']')
	return in.String(), out.String()
}

// TestCollectAggregateSpills: grouped array_agg (ordered) and DISTINCT
// string_agg over a hundred groups, whose kept rows take several times
// the memory limit, give the same lists and texts as counted in Go, single
// phase and in two phases, at every batch size, with early close and
// cancellation, leaving no file behind.
func TestCollectAggregateSpills(t *testing.T) {
	in, want := collectSpillData(20000, 100, 1)
	inputs := []exectest.Input{{Name: "t", Schema: spillSchema, Rows: in, Partitions: 2}}
	exectest.Run(t, exectest.Case{Name: "single", Inputs: inputs, Want: want, MemoryLimit: 1 << 20,
		Plan: func(s []physical.Plan) physical.Plan {
			return single(&physical.Coalesce{Input: s[0]}, collectSpillAggs())
		}})
	exectest.Run(t, exectest.Case{Name: "two-phase", Inputs: inputs, Want: want, MemoryLimit: 4 << 20,
		Plan: func(s []physical.Plan) physical.Plan { f, _ := twoPhase(s[0], collectSpillAggs()); return f }})
}

// TestCollectAggregateSpillsCounted: under the limit the single collecting
// aggregate really spills, and without one it does not.
func TestCollectAggregateSpillsCounted(t *testing.T) {
	in, want := collectSpillData(40000, 100, 2)
	for _, limit := range []int64{0, 1 << 20} {
		tctx, plan := runCounted(t, in, want, 1, limit, func(s physical.Plan) physical.Plan { return single(s, collectSpillAggs()) })
		checkSpilled(t, tctx, plan.(*physical.HashAggregate), nil, limit, nil)
	}
}
