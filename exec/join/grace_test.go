package join_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
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

var (
	i64    = arrow.PrimitiveTypes.Int64
	str    = arrow.BinaryTypes.String
	boolT  = arrow.FixedWidthTypes.Boolean
	gLeft  = arrow.NewSchema([]arrow.Field{{Name: "lk", Type: i64, Nullable: true}, {Name: "lv", Type: str, Nullable: true}}, nil)
	gRight = arrow.NewSchema([]arrow.Field{{Name: "rk", Type: i64, Nullable: true}, {Name: "rv", Type: str, Nullable: true}, {Name: "ok", Type: boolT, Nullable: true}}, nil)
)

func col(i int, name string, t arrow.DataType) *physical.Column {
	return &physical.Column{Index: i, Name: name, Type: t}
}

// graceRows returns n rows of schema gLeft (right=false) or gRight as
// JSON: keys drawn from [0, keys) with about one in fifty NULL, padded
// string payloads, and for the right side a nullable boolean for filters.
func graceRows(n, keys int, right bool, seed uint64, pad int) string {
	r := rand.New(rand.NewPCG(seed, 7))
	var sb strings.Builder
	sb.WriteByte('[')
	filler := strings.Repeat("x", pad)
	for i := range n {
		if i > 0 {
			sb.WriteByte(',')
		}
		k := fmt.Sprint(r.IntN(keys))
		if r.IntN(50) == 0 {
			k = "null"
		}
		if !right {
			fmt.Fprintf(&sb, `{"lk":%s,"lv":"l%d%s"}`, k, i, filler)
			continue
		}
		ok := []string{"true", "false", "null"}[r.IntN(3)]
		fmt.Fprintf(&sb, `{"rk":%s,"rv":"r%d%s","ok":%s}`, k, i, filler, ok)
	}
	sb.WriteByte(']')
	return sb.String()
}

type graceCase struct {
	name      string
	typ       physical.JoinType
	filter    bool
	nullAware bool
	swap      bool // build on the right table (RightSemi/RightAnti)
}

var graceCases = []graceCase{
	{"inner", physical.InnerJoin, false, false, false},
	{"inner-filter", physical.InnerJoin, true, false, false},
	{"left", physical.LeftJoin, false, false, false},
	{"left-filter", physical.LeftJoin, true, false, false},
	{"right", physical.RightJoin, false, false, false},
	{"full", physical.FullJoin, false, false, false},
	{"full-filter", physical.FullJoin, true, false, false},
	{"semi", physical.SemiJoin, false, false, false},
	{"semi-filter", physical.SemiJoin, true, false, false},
	{"anti", physical.AntiJoin, false, false, false},
	{"anti-filter", physical.AntiJoin, true, false, false},
	{"anti-nullaware", physical.AntiJoin, false, true, false},
	{"mark", physical.MarkJoin, false, false, false},
	{"mark-filter", physical.MarkJoin, true, false, false},
	{"rightsemi", physical.RightSemiJoin, false, false, true},
	{"rightanti", physical.RightAntiJoin, false, false, true},
	{"rightanti-nullaware", physical.RightAntiJoin, false, true, true},
	{"rightanti-filter", physical.RightAntiJoin, true, false, true},
}

// gracePlan joins scans s[0] (gLeft) and s[1] (gRight) on lk = rk.
func gracePlan(mode physical.JoinMode, c graceCase, parts int) func([]physical.Plan) physical.Plan {
	return func(s []physical.Plan) physical.Plan {
		build, probe := s[0], s[1]
		bk, pk := physical.Expr(col(0, "lk", i64)), physical.Expr(col(0, "rk", i64))
		var filter physical.Expr
		if c.filter {
			filter = col(4, "ok", boolT) // after gLeft's two columns
		}
		if c.swap {
			build, probe, bk, pk = probe, build, pk, bk
			if c.filter {
				filter = col(2, "ok", boolT) // gRight is the build side
			}
		}
		if mode == physical.Partitioned {
			build = &physical.Repartition{Input: build, Keys: []physical.Expr{bk}, N: parts}
			probe = &physical.Repartition{Input: probe, Keys: []physical.Expr{pk}, N: parts}
		}
		return &physical.HashJoin{Left: build, Right: probe, Mode: mode, Type: c.typ, Filter: filter,
			On: []physical.JoinOn{{Left: bk, Right: pk}}, NullAware: c.nullAware, MarkName: "m"}
	}
}

// runJoin runs plan over the tables with the given limit and returns its
// rows and the join's spilled bytes.
func runJoin(t *testing.T, mk func([]physical.Plan) physical.Plan, left, right string, parts int, limit int64, batch int) ([]string, int64, *arrow.Schema) {
	t.Helper()
	mem := exectest.Allocator(t)
	tables := exectest.Tables{}
	for _, in := range []struct {
		name, rows string
		sc         *arrow.Schema
		parts      int
	}{{"l", left, gLeft, 2}, {"r", right, gRight, parts}} {
		rec, _, err := array.RecordFromJSON(mem, in.sc, strings.NewReader(in.rows))
		if err != nil {
			t.Fatal(err)
		}
		bs := exectest.Split(rec, exectest.RandomSplits(rand.New(rand.NewPCG(1, 2)), int(rec.NumRows()), 0))
		rec.Release()
		tbl := make([][]arrow.RecordBatch, in.parts)
		for i, b := range bs {
			tbl[i%in.parts] = append(tbl[i%in.parts], b)
		}
		tables[in.name] = tbl
	}
	defer tables.Release()
	tc := exec.NewTaskContext(execop.NewAccountingAllocator(mem, limit), batch)
	tc.MemoryTables = tables.Lookup
	tc.WorkDir = t.TempDir()
	tc.EnableMetrics()
	plan := mk([]physical.Plan{exectest.MemoryScan("l", gLeft, 2), exectest.MemoryScan("r", gRight, parts)})
	got := exectest.Collect(t, context.Background(), tc, plan)
	return got, tc.NodeMetrics(plan).SpilledBytes.Load(), plan.Schema()
}

// toJSON renders rows of the in-memory run as the JSON exectest.Case wants.
func toJSON(t *testing.T, mk func([]physical.Plan) physical.Plan, left, right string, parts int) string {
	t.Helper()
	mem := exectest.Allocator(t)
	tables := exectest.Tables{}
	for _, in := range []struct {
		name, rows string
		sc         *arrow.Schema
		parts      int
	}{{"l", left, gLeft, 1}, {"r", right, gRight, 1}} {
		rec, _, err := array.RecordFromJSON(mem, in.sc, strings.NewReader(in.rows))
		if err != nil {
			t.Fatal(err)
		}
		tables[in.name] = [][]arrow.RecordBatch{{rec}}
	}
	defer tables.Release()
	tc := exec.NewTaskContext(mem, 0)
	tc.MemoryTables = tables.Lookup
	plan := mk([]physical.Plan{exectest.MemoryScan("l", gLeft, 1), exectest.MemoryScan("r", gRight, 1)})
	op, err := exec.Execute(context.Background(), tc, plan)
	if err != nil {
		t.Fatal(err)
	}
	defer op.Close()
	if err := op.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	out.WriteByte('[')
	first := true
	for {
		b, err := op.Next(context.Background())
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		var lines bytes.Buffer
		if err := array.RecordToJSON(b, &lines); err != nil {
			t.Fatal(err)
		}
		b.Release()
		for _, l := range strings.Split(strings.TrimSpace(lines.String()), "\n") {
			if l == "" {
				continue
			}
			if !first {
				out.WriteByte(',')
			}
			first = false
			out.WriteString(l)
		}
	}
	out.WriteByte(']')
	return out.String()
}

// TestGraceJoinSpills: under a memory limit far below what the build side
// takes, every join type gives the rows it gives in memory, at batch
// sizes 1, 7 and the default, with early close and cancellation, leaving
// no file or byte behind; and it really went to disk.
func TestGraceJoinSpills(t *testing.T) {
	left := graceRows(2000, 1000, false, 1, 12)
	right := graceRows(2000, 1200, true, 2, 12)
	for _, mode := range []physical.JoinMode{physical.CollectLeft, physical.Partitioned} {
		// Far below the build side's worst case, yet room for the builds
		// of two probe partitions' current partitions at once; a
		// partitioned join builds half the rows per partition.
		limit := int64(1536 << 10)
		if mode == physical.Partitioned {
			limit = 768 << 10
		}
		for _, c := range graceCases {
			if mode == physical.Partitioned && (c.nullAware || c.typ == physical.MarkJoin) {
				continue // such joins need CollectLeft
			}
			parts := 1
			if mode == physical.Partitioned {
				parts = 2
			}
			mk := gracePlan(mode, c, parts)
			want := toJSON(t, mk, left, right, parts)
			name := fmt.Sprintf("%s/%s", mode, c.name)
			t.Run(name+"/spilled", func(t *testing.T) {
				if _, spilled, _ := runJoin(t, mk, left, right, parts, limit, 0); spilled == 0 {
					t.Fatalf("no bytes spilled under a limit of %d", limit)
				}
				if _, spilled, _ := runJoin(t, mk, left, right, parts, 0, 0); spilled != 0 {
					t.Fatalf("%d bytes spilled without a limit", spilled)
				}
			})
			exectest.Run(t, exectest.Case{
				Name: name,
				Inputs: []exectest.Input{
					{Name: "l", Schema: gLeft, Rows: left, Partitions: 2},
					{Name: "r", Schema: gRight, Rows: right, Partitions: parts},
				},
				Plan:        mk,
				Want:        want,
				MemoryLimit: limit,
			})
		}
	}
}

// TestGraceJoinSplitsAgain: with a build side many times the limit, the
// partitions of the first split still do not fit and are split again
// (more is written than with a limit that needs one split), and the
// answer is still the in-memory one.
func TestGraceJoinSplitsAgain(t *testing.T) {
	left := graceRows(16000, 12000, false, 3, 200)
	right := graceRows(4000, 20000, true, 4, 4)
	for _, c := range []graceCase{graceCases[0], graceCases[4], graceCases[9]} { // inner, right, anti
		t.Run(c.name, func(t *testing.T) {
			mk := gracePlan(physical.CollectLeft, c, 1)
			want, _, _ := runJoin(t, mk, left, right, 1, 0, 0)
			once, spilledOnce, _ := runJoin(t, mk, left, right, 1, 8<<20, 0)
			twice, spilledTwice, _ := runJoin(t, mk, left, right, 1, 640<<10, 0)
			exectest.Compare(t, once, want, exectest.Unordered)
			exectest.Compare(t, twice, want, exectest.Unordered)
			if spilledOnce == 0 || spilledTwice < spilledOnce*3/2 {
				t.Fatalf("spilled %d bytes under 8 MiB and %d under 640 KiB: want a second split under the smaller limit", spilledOnce, spilledTwice)
			}
		})
	}
}

// TestGraceJoinOneKeyTooBig: a build side whose rows all share one key
// cannot be split; after graceMaxDepth splits the join fails with a
// Resources error that says why, leaving no file or byte behind.
func TestGraceJoinOneKeyTooBig(t *testing.T) {
	left := graceRows(12000, 1, false, 5, 60)
	right := graceRows(100, 1, true, 6, 4)
	mem := exectest.Allocator(t)
	tables := exectest.Tables{}
	for name, in := range map[string]struct {
		rows string
		sc   *arrow.Schema
	}{"l": {left, gLeft}, "r": {right, gRight}} {
		rec, _, err := array.RecordFromJSON(mem, in.sc, strings.NewReader(in.rows))
		if err != nil {
			t.Fatal(err)
		}
		var splits []int
		for at := 500; at < int(rec.NumRows()); at += 500 {
			splits = append(splits, at)
		}
		tables[name] = [][]arrow.RecordBatch{exectest.Split(rec, splits)}
		rec.Release()
	}
	defer tables.Release()
	tc := exec.NewTaskContext(execop.NewAccountingAllocator(mem, 256<<10), 0)
	tc.MemoryTables = tables.Lookup
	tc.WorkDir = t.TempDir()
	plan := gracePlan(physical.CollectLeft, graceCases[0], 1)([]physical.Plan{exectest.MemoryScan("l", gLeft, 1), exectest.MemoryScan("r", gRight, 1)})
	op, err := exec.Execute(context.Background(), tc, plan)
	if err != nil {
		t.Fatal(err)
	}
	err = op.Open(context.Background())
	for err == nil {
		var b arrow.RecordBatch
		if b, err = op.Next(context.Background()); err == nil {
			b.Release()
		}
	}
	op.Close()
	if !qerr.Is(err, qerr.Resources) || !strings.Contains(err.Error(), "splitting it 4 times by key hash") {
		t.Fatalf("want a Resources error about splitting, got %v", err)
	}
}
