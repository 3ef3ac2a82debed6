package aggregate_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/quiverdb/quiver/exec"
	"github.com/quiverdb/quiver/exec/execop"
	"github.com/quiverdb/quiver/exec/exectest"
	"github.com/quiverdb/quiver/physical"
)

var (
	i64         = arrow.PrimitiveTypes.Int64
	str         = arrow.BinaryTypes.String
	spillSchema = arrow.NewSchema([]arrow.Field{
		{Name: "k", Type: str, Nullable: true},
		{Name: "v", Type: i64, Nullable: true},
		{Name: "s", Type: str, Nullable: true},
	}, nil)
	kCol = &physical.Column{Index: 0, Name: "k", Type: str}
)

func spillAggs() []physical.AggregateExpr {
	v, s := &physical.Column{Index: 1, Name: "v", Type: i64}, &physical.Column{Index: 2, Name: "s", Type: str}
	return []physical.AggregateExpr{
		{Func: physical.AggCount, Type: i64, Name: "n"},
		{Func: physical.AggCount, Arg: v, Type: i64, Name: "nv"},
		{Func: physical.AggSum, Arg: v, Type: i64, Name: "sv"},
		{Func: physical.AggMin, Arg: s, Type: str, Name: "mins"},
		{Func: physical.AggMax, Arg: s, Type: str, Name: "maxs"},
	}
}

type group struct {
	n, nv, sv  int64
	mins, maxs string
	hasS       bool
}

// spillData returns rows over about groups string keys (NULL among them)
// and the expected aggregate of each key, as JSON. (String keys: a
// direct-layout integer table reserves more than these tests' limits
// before its first row.)
func spillData(rows, groups int, seed uint64) (string, string) {
	r := rand.New(rand.NewPCG(seed, 3))
	want := map[string]*group{}
	var in strings.Builder
	in.WriteByte('[')
	for i := range rows {
		k := fmt.Sprintf(`"k%05d"`, r.IntN(groups))
		if r.IntN(97) == 0 {
			k = "null"
		}
		g := want[k]
		if g == nil {
			g = &group{}
			want[k] = g
		}
		g.n++
		v := "null"
		if r.IntN(11) != 0 {
			x := int64(r.IntN(1000) - 300)
			v = fmt.Sprint(x)
			g.nv++
			g.sv += x
		}
		s := "null"
		if r.IntN(13) != 0 {
			x := fmt.Sprintf("s%04d", r.IntN(5000))
			s = fmt.Sprintf("%q", x)
			if !g.hasS || x < g.mins {
				g.mins = x
			}
			if !g.hasS || x > g.maxs {
				g.maxs = x
			}
			g.hasS = true
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
		sv, mins, maxs := fmt.Sprint(g.sv), "null", "null"
		if g.nv == 0 {
			sv = "null"
		}
		if g.hasS {
			mins, maxs = fmt.Sprintf("%q", g.mins), fmt.Sprintf("%q", g.maxs)
		}
		fmt.Fprintf(&out, `{"k":%s,"n":%d,"nv":%d,"sv":%s,"mins":%s,"maxs":%s}`, k, g.n, g.nv, sv, mins, maxs)
	}
	out.WriteByte(']')
	return in.String(), out.String()
}

// single is one aggregate of aggs by k over all of in.
func single(in physical.Plan, aggs []physical.AggregateExpr) *physical.HashAggregate {
	return &physical.HashAggregate{Input: in, Mode: physical.AggSingle, GroupBy: []physical.Expr{kCol}, GroupNames: []string{"k"}, Aggs: aggs}
}

// twoPhase is a partial aggregate of aggs by k per input partition, an
// exchange by k, and a final aggregate per output partition.
func twoPhase(in physical.Plan, aggs []physical.AggregateExpr) (final, partial *physical.HashAggregate) {
	partial = &physical.HashAggregate{Input: in, Mode: physical.AggPartial, GroupBy: []physical.Expr{kCol}, GroupNames: []string{"k"}, Aggs: aggs}
	mid := &physical.Repartition{Input: partial, Keys: []physical.Expr{kCol}, N: 2}
	return &physical.HashAggregate{Input: mid, Mode: physical.AggFinal, GroupBy: []physical.Expr{kCol}, GroupNames: []string{"k"}, Aggs: aggs}, partial
}

// runCounted runs the plan mk builds over a memory scan of the rows in
// (JSON, cut into four batches over the given number of partitions) under
// limit (0: none) with metrics on, checks its answer against want, and
// returns the task context for the plan's metrics.
func runCounted(t *testing.T, in, want string, partitions int, limit int64, mk func(scan physical.Plan) physical.Plan) (*execop.TaskContext, physical.Plan) {
	t.Helper()
	mem := exectest.Allocator(t)
	rec, _, err := array.RecordFromJSON(mem, spillSchema, strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	parts := exectest.Split(rec, []int{4000, 9000, 15000, 22000})
	rec.Release()
	tables := exectest.Tables{"t": {parts}}
	if partitions == 2 {
		tables = exectest.Tables{"t": {parts[:2], parts[2:]}}
	}
	t.Cleanup(tables.Release)
	tctx := exec.NewTaskContext(execop.NewAccountingAllocator(mem, limit), 4096)
	tctx.MemoryTables = tables.Lookup
	tctx.WorkDir = t.TempDir()
	tctx.EnableMetrics()
	plan := mk(exectest.MemoryScan("t", spillSchema, partitions))
	got := exectest.Collect(t, context.Background(), tctx, plan)
	exectest.Compare(t, got, exectest.RowsFromJSON(t, mem, plan.Schema(), want), exectest.Unordered)
	return tctx, plan
}

// checkSpilled fails when the top aggregate spilled without a limit, or
// a single-phase one did not spill under one. A final aggregate shares its
// limit with the partial ones running beside it, and whether it still
// needs to spill once they have flushed depends on how the partitions
// interleave, so only "not without a limit" holds for it. When inner is a
// partial aggregate, it must emit more rows under the limit than the
// unlimitedRows it emitted without one (it flushed early); a run without
// a limit records them.
func checkSpilled(t *testing.T, tctx *execop.TaskContext, top, inner *physical.HashAggregate, limit int64, unlimitedRows *int64) {
	t.Helper()
	spilled := tctx.NodeMetrics(top).SpilledBytes.Load()
	if spilled > 0 && limit == 0 || spilled == 0 && limit > 0 && top.Mode == physical.AggSingle {
		t.Errorf("%s aggregate: spilled %d bytes under limit %d", top.Mode, spilled, limit)
	}
	if inner == nil || inner.Mode != physical.AggPartial {
		return
	}
	out := tctx.NodeMetrics(inner).OutputRows.Load()
	if limit == 0 {
		*unlimitedRows = out
	} else if out <= *unlimitedRows {
		t.Errorf("partial aggregate emitted %d rows under limit %d, as many as the %d without: it never flushed", out, limit, *unlimitedRows)
	}
}

// TestAggregateSpills: under a memory limit well below what its groups
// take, a single-phase and a two-phase aggregate give the same groups as
// without one, at every batch size, with early close and cancellation,
// leaving no file behind.
func TestAggregateSpills(t *testing.T) {
	in, want := spillData(15000, 6000, 1)
	inputs := []exectest.Input{{Name: "t", Schema: spillSchema, Rows: in, Partitions: 2}}
	exectest.Run(t, exectest.Case{Name: "single", Inputs: inputs, Want: want, MemoryLimit: 1 << 20,
		Plan: func(s []physical.Plan) physical.Plan { return single(&physical.Coalesce{Input: s[0]}, spillAggs()) }})
	// Two phases run four aggregates in one task, each needing room of its
	// own: more groups under a larger limit.
	in, want = spillData(30000, 12000, 1)
	inputs = []exectest.Input{{Name: "t", Schema: spillSchema, Rows: in, Partitions: 2}}
	exectest.Run(t, exectest.Case{Name: "two-phase", Inputs: inputs, Want: want, MemoryLimit: 4 << 20,
		Plan: func(s []physical.Plan) physical.Plan { f, _ := twoPhase(s[0], spillAggs()); return f }})
}

// TestAggregateSpillsCounted: at that limit the single aggregate really
// spills (EXPLAIN ANALYZE's spilled bytes) and the partial one flushes
// early (it emits more rows than there are groups), and without a limit
// none of that happens.
func TestAggregateSpillsCounted(t *testing.T) {
	in, want := spillData(30000, 12000, 2)
	var partialRows int64 // the partial aggregate's output without a limit
	for _, limit := range []int64{0, 4 << 20} {
		t.Run(fmt.Sprintf("limit=%d", limit), func(t *testing.T) {
			var top, inner *physical.HashAggregate
			tctx, _ := runCounted(t, in, want, 2, limit, func(s physical.Plan) physical.Plan {
				top = single(&physical.Coalesce{Input: s}, spillAggs())
				return top
			})
			checkSpilled(t, tctx, top, nil, limit, nil)
			tctx, _ = runCounted(t, in, want, 2, limit, func(s physical.Plan) physical.Plan {
				top, inner = twoPhase(s, spillAggs())
				return top
			})
			checkSpilled(t, tctx, top, inner, limit, &partialRows)
		})
	}
}
