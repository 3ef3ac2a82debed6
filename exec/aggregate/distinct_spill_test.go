package aggregate_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/quiverdb/quiver/exec"
	"github.com/quiverdb/quiver/exec/execop"
	"github.com/quiverdb/quiver/exec/exectest"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
)

// distinctSpillAggs mixes DISTINCT aggregates over an integer and a string
// argument with plain ones and a DISTINCT that changes nothing (max).
func distinctSpillAggs(sets bool) []physical.AggregateExpr {
	v, s := &physical.Column{Index: 1, Name: "v", Type: i64}, &physical.Column{Index: 2, Name: "s", Type: str}
	aggs := []physical.AggregateExpr{
		{Func: physical.AggCount, Type: i64, Name: "n"},
		{Func: physical.AggCount, Arg: v, Distinct: true, SetState: sets, Type: i64, Name: "dv"},
		{Func: physical.AggSum, Arg: v, Distinct: true, SetState: sets, Type: i64, Name: "sdv"},
		{Func: physical.AggSum, Arg: v, Type: i64, Name: "sv"},
	}
	if !sets { // the plan by sets takes integer-like arguments only
		aggs = append(aggs,
			physical.AggregateExpr{Func: physical.AggCount, Arg: s, Distinct: true, Type: i64, Name: "ds"},
			physical.AggregateExpr{Func: physical.AggMax, Arg: s, Distinct: true, Type: str, Name: "maxs"})
	}
	return aggs
}

// distinctSpillData returns rows over about groups string keys (NULL among
// them) whose v and s each take many distinct values per group, and the
// expected aggregates of each key as JSON (withStrings: ds and maxs too).
func distinctSpillData(rows, groups int, seed uint64, withStrings bool) (string, string) {
	type agg struct {
		n, sv  int64
		hasV   bool
		vs     map[int64]bool
		ss     map[string]bool
		maxs   string
		hasMax bool
	}
	r := rand.New(rand.NewPCG(seed, 5))
	want := map[string]*agg{}
	var in strings.Builder
	in.WriteByte('[')
	for i := range rows {
		k := fmt.Sprintf(`"k%05d"`, r.IntN(groups))
		if r.IntN(97) == 0 {
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
			x := int64(r.IntN(400) - 100)
			if r.IntN(5) == 0 {
				x = r.Int64N(1 << 40) // wide values: the hashed set, not the bitmap
			}
			v = fmt.Sprint(x)
			g.vs[x] = true
			g.sv += x
			g.hasV = true
		}
		s := "null"
		if r.IntN(13) != 0 {
			x := fmt.Sprintf("comment %04d", r.IntN(300))
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
	var out strings.Builder
	out.WriteByte('[')
	keys := make([]string, 0, len(want))
	for k := range want {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for i, k := range keys {
		g := want[k]
		if i > 0 {
			out.WriteByte(',')
		}
		sdv, sv := int64(0), "null"
		for x := range g.vs {
			sdv += x
		}
		sdvs := fmt.Sprint(sdv)
		if !g.hasV {
			sdvs = "null"
		} else {
			sv = fmt.Sprint(g.sv)
		}
		fmt.Fprintf(&out, `{"k":%s,"n":%d,"dv":%d,"sdv":%s,"sv":%s`, k, g.n, len(g.vs), sdvs, sv)
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

// distinctBySets is the two-phase plan by sets: a partial aggregate per
// input partition passing sets, an exchange by k, a final one uniting them.
func distinctBySets(in physical.Plan) (final, partial *physical.HashAggregate) {
	return twoPhase(in, distinctSpillAggs(true))
}

// TestDistinctAggregateSpills: DISTINCT aggregates (over integers, wide
// integers and strings, beside plain ones) under a memory limit well below
// what their groups' sets take give the same groups as without one, single
// phase and by sets, at every batch size, with early close and
// cancellation, leaving no file behind.
func TestDistinctAggregateSpills(t *testing.T) {
	in, want := distinctSpillData(20000, 3000, 1, true)
	inputs := []exectest.Input{{Name: "t", Schema: spillSchema, Rows: in, Partitions: 2}}
	exectest.Run(t, exectest.Case{Name: "single", Inputs: inputs, Want: want, MemoryLimit: 1 << 20,
		Plan: func(s []physical.Plan) physical.Plan {
			return single(&physical.Coalesce{Input: s[0]}, distinctSpillAggs(false))
		}})
	in, want = distinctSpillData(30000, 4000, 2, false)
	inputs = []exectest.Input{{Name: "t", Schema: spillSchema, Rows: in, Partitions: 2}}
	exectest.Run(t, exectest.Case{Name: "by-sets", Inputs: inputs, Want: want, MemoryLimit: 4 << 20,
		Plan: func(s []physical.Plan) physical.Plan { f, _ := distinctBySets(s[0]); return f }})
}

// TestDistinctAggregateSpillsCounted: at those limits the single DISTINCT
// aggregate really spills (EXPLAIN ANALYZE's spilled bytes), also again
// from the files it re-aggregates, and the partial aggregate by sets
// flushes early; without a limit neither happens.
func TestDistinctAggregateSpillsCounted(t *testing.T) {
	for _, tc := range []struct {
		name  string
		limit int64
		strs  bool
		mk    func(physical.Plan) (top, inner *physical.HashAggregate)
	}{
		{"single", 1 << 20, true, func(s physical.Plan) (top, inner *physical.HashAggregate) {
			return single(&physical.Coalesce{Input: s}, distinctSpillAggs(false)), nil
		}},
		{"by-sets", 4 << 20, false, distinctBySets},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in, want := distinctSpillData(30000, 4000, 3, tc.strs)
			var unlimitedRows int64
			for _, limit := range []int64{0, tc.limit} {
				var top, inner *physical.HashAggregate
				tctx, _ := runCounted(t, in, want, 2, limit, func(s physical.Plan) physical.Plan {
					top, inner = tc.mk(s)
					return top
				})
				checkSpilled(t, tctx, top, inner, limit, &unlimitedRows)
			}
		})
	}
}

// TestCollectAggregateCannotSpill: without GROUP BY a collecting
// aggregate's one list of rows cannot be split (its order and DISTINCT
// need every row at once), so past the limit it fails with a resources
// error naming it, holding nothing after.
func TestCollectAggregateCannotSpill(t *testing.T) {
	in, _ := distinctSpillData(30000, 10, 4, true)
	mem := exectest.Allocator(t)
	rec, _, err := array.RecordFromJSON(mem, spillSchema, strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	tables := exectest.Tables{"t": {exectest.Split(rec, []int{10000, 20000})}}
	rec.Release()
	defer tables.Release()
	tctx := exec.NewTaskContext(execop.NewAccountingAllocator(mem, 64<<10), 4096)
	tctx.MemoryTables = tables.Lookup
	tctx.WorkDir = t.TempDir()
	s := &physical.Column{Index: 2, Name: "s", Type: str}
	plan := &physical.HashAggregate{Input: exectest.MemoryScan("t", spillSchema, 1), Mode: physical.AggSingle, Aggs: []physical.AggregateExpr{
		{Func: physical.AggArrayAgg, Type: arrow.ListOf(str), Name: "as",
			Arg: &physical.ScalarFunc{Name: physical.PairFunc, Args: []physical.Expr{s}, Type: physical.RowType(str)}},
	}}
	ctx := context.Background()
	op, err := exec.Execute(ctx, tctx, plan)
	if err != nil {
		t.Fatal(err)
	}
	defer op.Close()
	if err = op.Open(ctx); err == nil {
		for err == nil {
			var b arrow.RecordBatch
			if b, err = op.Next(ctx); err == nil {
				b.Release()
			}
		}
	}
	if cerr := op.Close(); cerr != nil {
		t.Fatal(cerr)
	}
	if !qerr.Is(err, qerr.Resources) || !strings.Contains(err.Error(), "memory limit") {
		t.Fatalf("want a resources error naming the memory limit, got %v", err)
	}
}
