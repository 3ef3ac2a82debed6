package aggregate_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/quiverdb/quiver/exec"
	"github.com/quiverdb/quiver/exec/aggregate"
	"github.com/quiverdb/quiver/exec/execop"
	"github.com/quiverdb/quiver/exec/exectest"
	"github.com/quiverdb/quiver/physical"
)

var (
	skipDec    = &arrow.Decimal128Type{Precision: 12, Scale: 2}
	skipSchema = arrow.NewSchema([]arrow.Field{
		{Name: "k", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "i", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "d", Type: skipDec, Nullable: true},
		{Name: "f", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
)

// skipAggs is every aggregate with a plain partial state, over skipSchema.
func skipAggs() []physical.AggregateExpr {
	i64, f64 := arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Float64
	i := &physical.Column{Index: 1, Name: "i", Type: i64}
	d := &physical.Column{Index: 2, Name: "d", Type: skipDec}
	f := &physical.Column{Index: 3, Name: "f", Type: f64}
	s := &physical.Column{Index: 4, Name: "s", Type: arrow.BinaryTypes.String}
	str := arrow.BinaryTypes.String
	return []physical.AggregateExpr{
		{Func: physical.AggCount, Type: i64, Name: "n"},
		{Func: physical.AggCount, Arg: s, Type: i64, Name: "ns"},
		{Func: physical.AggSum, Arg: i, Type: i64, Name: "si"},
		{Func: physical.AggSum, Arg: d, Type: &arrow.Decimal128Type{Precision: 22, Scale: 2}, Name: "sd"},
		{Func: physical.AggSum, Arg: f, Type: f64, Name: "sf"},
		{Func: physical.AggMin, Arg: s, Type: str, Name: "mins"},
		{Func: physical.AggMax, Arg: s, Type: str, Name: "maxs"},
		{Func: physical.AggMin, Arg: i, Type: i64, Name: "mini"},
		{Func: physical.AggMax, Arg: d, Type: skipDec, Name: "maxd"},
		{Func: physical.AggAvg, Arg: i, Type: f64, Name: "ai"},
		{Func: physical.AggAvg, Arg: d, Type: f64, Name: "ad"},
		{Func: physical.AggVarSamp, Arg: f, Type: f64, Name: "vs"},
		{Func: physical.AggStddevPop, Arg: i, Type: f64, Name: "sp"},
	}
}

// skipData is rows whose keys are mostly distinct (some repeated, some
// NULL), with NULLs among every value column.
func skipData(rows int) string {
	r := rand.New(rand.NewPCG(11, 12))
	var b strings.Builder
	b.WriteByte('[')
	val := func(s string) string {
		if r.IntN(9) == 0 {
			return "null"
		}
		return s
	}
	for n := range rows {
		if n > 0 {
			b.WriteByte(',')
		}
		k := fmt.Sprintf(`"k%d"`, r.IntN(rows*4))
		if r.IntN(50) == 0 {
			k = "null"
		}
		fmt.Fprintf(&b, `{"k":%s,"i":%s,"d":%s,"f":%s,"s":%s}`, k,
			val(fmt.Sprint(r.IntN(2000)-1000)), val(fmt.Sprintf(`"%d.%02d"`, r.IntN(500)-250, r.IntN(100))),
			val(fmt.Sprint(float64(r.IntN(400))/4)), val(fmt.Sprintf(`"s%04d"`, r.IntN(3000))))
	}
	b.WriteByte(']')
	return b.String()
}

// runSkip runs plan over the rows cut into batches of size rows and
// returns its rows sorted.
func runSkip(t *testing.T, rows string, size int, skip execop.SkipPartial, plan func(scan physical.Plan) physical.Plan) []string {
	t.Helper()
	mem := exectest.Allocator(t)
	rec, _, err := array.RecordFromJSON(mem, skipSchema, strings.NewReader(rows))
	if err != nil {
		t.Fatal(err)
	}
	var splits []int
	for s := size; s < int(rec.NumRows()); s += size {
		splits = append(splits, s)
	}
	parts := exectest.Split(rec, splits)
	rec.Release()
	tables := exectest.Tables{"t": {parts}}
	defer tables.Release()
	tctx := exec.NewTaskContext(execop.NewAccountingAllocator(mem, 0), size)
	tctx.MemoryTables = tables.Lookup
	tctx.SkipPartial = skip
	tctx.WorkDir = t.TempDir()
	got := exectest.Collect(t, context.Background(), tctx, plan(exectest.MemoryScan("t", skipSchema, 1)))
	slices.Sort(got)
	return got
}

// sameRows fails unless got and want hold the same rows, floats equal to
// a relative 1e-9 (their sums run in other orders).
func sameRows(t *testing.T, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d rows, want %d", len(got), len(want))
	}
	for r := range got {
		g, w := strings.Split(got[r], "|"), strings.Split(want[r], "|")
		ok := len(g) == len(w)
		for c := 0; ok && c < len(g); c++ {
			if g[c] == w[c] {
				continue
			}
			x, err1 := strconv.ParseFloat(g[c], 64)
			y, err2 := strconv.ParseFloat(w[c], 64)
			ok = err1 == nil && err2 == nil && math.Abs(x-y) <= 1e-9*math.Max(math.Abs(x), math.Abs(y))
		}
		if !ok {
			t.Fatalf("row %d: got %s, want %s", r, got[r], want[r])
		}
	}
}

// TestSkipPartial checks that a partial aggregate which stops aggregating
// after its probe rows (mid-input at every batch size) gives the answer of
// the single-phase and the unskipped two-phase plans, for every aggregate
// with a plain partial state, NULL keys and values included, and that it
// did pass rows through.
func TestSkipPartial(t *testing.T) {
	const rows = 10000
	data := skipData(rows)
	k := &physical.Column{Index: 0, Name: "k", Type: arrow.BinaryTypes.String}
	gb := []physical.Expr{k}
	twoPhase := func(scan physical.Plan) physical.Plan {
		p := &physical.HashAggregate{Input: scan, Mode: physical.AggPartial, GroupBy: gb, GroupNames: []string{"k"}, Aggs: skipAggs()}
		mid := &physical.Repartition{Input: p, Keys: gb, N: 2}
		return &physical.HashAggregate{Input: mid, Mode: physical.AggFinal, GroupBy: gb, GroupNames: []string{"k"}, Aggs: skipAggs()}
	}
	single := func(scan physical.Plan) physical.Plan {
		return &physical.HashAggregate{Input: scan, Mode: physical.AggSingle, GroupBy: gb, GroupNames: []string{"k"}, Aggs: skipAggs()}
	}
	for _, size := range []int{1, 7, execop.DefaultBatchSize / 2} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			want := runSkip(t, data, size, execop.SkipPartial{Percent: 50, ProbeRows: 1000}, single)
			before := aggregate.PassedRows()
			plain := runSkip(t, data, size, execop.SkipPartial{}, twoPhase)
			if n := aggregate.PassedRows() - before; n != 0 {
				t.Fatalf("skipping off: %d rows passed through", n)
			}
			sameRows(t, plain, want)
			before = aggregate.PassedRows()
			got := runSkip(t, data, size, execop.SkipPartial{Percent: 50, ProbeRows: 1000}, twoPhase)
			passed := aggregate.PassedRows() - before
			// The switch comes after the batch that completes the probe.
			probed := max(1000, size)
			probed = (probed + size - 1) / size * size
			if passed != int64(rows-probed) {
				t.Fatalf("passed %d rows through, want %d", passed, rows-probed)
			}
			sameRows(t, got, want)
		})
	}
}
