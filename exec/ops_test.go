package exec_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver/exec"
	"github.com/quiverdb/quiver/exec/execop"
	"github.com/quiverdb/quiver/exec/exectest"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
	"golang.org/x/sync/errgroup"
)

var abSchema = arrow.NewSchema([]arrow.Field{
	{Name: "a", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "b", Type: arrow.BinaryTypes.String, Nullable: true},
}, nil)

const abRows = `[
	{"a": 3, "b": "x"}, {"a": null, "b": "y"}, {"a": 1, "b": null}, {"a": 2, "b": "x"},
	{"a": 3, "b": "a"}, {"a": 1, "b": "z"}, {"a": null, "b": null}, {"a": 5, "b": "q"},
	{"a": 4, "b": "x"}, {"a": 2, "b": "b"}, {"a": 0, "b": "c"}, {"a": 7, "b": "d"}
]`

func opCol(i int, name string, t arrow.DataType) *physical.Column {
	return &physical.Column{Index: i, Name: name, Type: t}
}

var (
	colA = opCol(0, "a", arrow.PrimitiveTypes.Int64)
	colB = opCol(1, "b", arrow.BinaryTypes.String)
)

func abInput(parts int) []exectest.Input {
	return []exectest.Input{{Name: "t", Schema: abSchema, Rows: abRows, Partitions: parts}}
}

func TestScanMemory(t *testing.T) {
	exectest.Run(t, exectest.Case{
		Name: "all", Inputs: abInput(3), Async: true,
		Plan: func(s []physical.Plan) physical.Plan { return s[0] },
		Want: abRows,
	})
	exectest.Run(t, exectest.Case{
		Name: "projection", Inputs: abInput(2),
		Plan: func(s []physical.Plan) physical.Plan {
			sc := *s[0].(*physical.Scan)
			sc.Projection = []int{1}
			return &sc
		},
		Want: `[{"b":"x"},{"b":"y"},{"b":null},{"b":"x"},{"b":"a"},{"b":"z"},{"b":null},{"b":"q"},{"b":"x"},{"b":"b"},{"b":"c"},{"b":"d"}]`,
	})
}

func TestSort(t *testing.T) {
	// a ASC NULLS LAST, b DESC NULLS FIRST
	keys := []physical.SortKey{{Expr: colA, Asc: true}, {Expr: colB, Asc: false, NullsFirst: true}}
	want := `[
		{"a": 0, "b": "c"}, {"a": 1, "b": null}, {"a": 1, "b": "z"}, {"a": 2, "b": "x"}, {"a": 2, "b": "b"},
		{"a": 3, "b": "x"}, {"a": 3, "b": "a"}, {"a": 4, "b": "x"}, {"a": 5, "b": "q"}, {"a": 7, "b": "d"},
		{"a": null, "b": null}, {"a": null, "b": "y"}
	]`
	exectest.Run(t, exectest.Case{
		Name: "full", Inputs: abInput(3), Order: exectest.Ordered, Async: true,
		Plan: func(s []physical.Plan) physical.Plan { return &physical.Sort{Input: s[0], Keys: keys, Fetch: -1} },
		Want: want,
	})
	exectest.Run(t, exectest.Case{
		Name: "topk", Inputs: abInput(2), Order: exectest.Ordered,
		Plan: func(s []physical.Plan) physical.Plan { return &physical.Sort{Input: s[0], Keys: keys, Fetch: 4} },
		Want: `[{"a": 0, "b": "c"}, {"a": 1, "b": null}, {"a": 1, "b": "z"}, {"a": 2, "b": "x"}]`,
	})
	exectest.Run(t, exectest.Case{
		Name: "merge", Inputs: abInput(3), Order: exectest.Ordered,
		Plan: func(s []physical.Plan) physical.Plan {
			return &physical.SortPreservingMerge{
				Input: &physical.Sort{Input: s[0], Keys: keys, Fetch: -1, PreservePartitioning: true},
				Keys:  keys, Fetch: -1}
		},
		Want: want,
	})
	exectest.Run(t, exectest.Case{
		Name: "merge-fetch", Inputs: abInput(3), Order: exectest.Ordered,
		Plan: func(s []physical.Plan) physical.Plan {
			return &physical.SortPreservingMerge{
				Input: &physical.Sort{Input: s[0], Keys: keys, Fetch: 3, PreservePartitioning: true},
				Keys:  keys, Fetch: 3}
		},
		Want: `[{"a": 0, "b": "c"}, {"a": 1, "b": null}, {"a": 1, "b": "z"}]`,
	})
	// Stability: equal keys keep input order (one partition, so input order is defined).
	exectest.Run(t, exectest.Case{
		Name: "stable-desc-nullsfirst", Inputs: abInput(1), Order: exectest.Ordered,
		Plan: func(s []physical.Plan) physical.Plan {
			return &physical.Sort{Input: s[0], Keys: []physical.SortKey{{Expr: colB, NullsFirst: true}}, Fetch: -1}
		},
		Want: `[
			{"a": 1, "b": null}, {"a": null, "b": null}, {"a": 1, "b": "z"}, {"a": null, "b": "y"},
			{"a": 3, "b": "x"}, {"a": 2, "b": "x"}, {"a": 4, "b": "x"}, {"a": 5, "b": "q"}, {"a": 7, "b": "d"},
			{"a": 0, "b": "c"}, {"a": 2, "b": "b"}, {"a": 3, "b": "a"}
		]`,
	})
}

func TestLimitUnionValuesEmpty(t *testing.T) {
	exectest.Run(t, exectest.Case{
		Name: "limit", Inputs: abInput(1), Order: exectest.Ordered,
		Plan: func(s []physical.Plan) physical.Plan { return &physical.Limit{Input: s[0], Skip: 2, Fetch: 3} },
		Want: `[{"a": 1, "b": null}, {"a": 2, "b": "x"}, {"a": 3, "b": "a"}]`,
	})
	exectest.Run(t, exectest.Case{
		Name: "limit-skip-all", Inputs: abInput(3),
		Plan: func(s []physical.Plan) physical.Plan { return &physical.Limit{Input: s[0], Skip: 20, Fetch: -1} },
		Want: `[]`,
	})
	exectest.Run(t, exectest.Case{
		Name: "local-limit", Inputs: abInput(1), Order: exectest.Ordered,
		Plan: func(s []physical.Plan) physical.Plan { return &physical.LocalLimit{Input: s[0], Fetch: 2} },
		Want: `[{"a": 3, "b": "x"}, {"a": null, "b": "y"}]`,
	})
	exectest.Run(t, exectest.Case{
		Name: "union", Inputs: append(abInput(2), exectest.Input{Name: "u", Schema: abSchema, Rows: `[{"a": 9, "b": "u"}]`, Partitions: 1}),
		Plan: func(s []physical.Plan) physical.Plan { return &physical.Union{Inputs: s} },
		Want: strings.Replace(abRows, `{"a": 7, "b": "d"}`, `{"a": 7, "b": "d"}, {"a": 9, "b": "u"}`, 1),
	})
	exectest.Run(t, exectest.Case{
		Name: "values", Order: exectest.Ordered,
		Plan: func([]physical.Plan) physical.Plan {
			return &physical.Values{OutSchema: abSchema, Rows: [][]*physical.Literal{
				{{Type: arrow.PrimitiveTypes.Int64, Value: int64(1)}, {Type: arrow.BinaryTypes.String, Value: "one"}},
				{{Type: arrow.PrimitiveTypes.Int64, Value: nil}, {Type: arrow.BinaryTypes.String, Value: "two"}},
			}}
		},
		Want: `[{"a": 1, "b": "one"}, {"a": null, "b": "two"}]`,
	})
	t.Run("empty", func(t *testing.T) {
		mem := exectest.Allocator(t)
		tc := exec.NewTaskContext(mem, 0)
		one := &physical.Empty{OutSchema: arrow.NewSchema(nil, nil), ProduceOneRow: true}
		bs, err := execop.CollectAll(context.Background(), tc, one)
		if err != nil {
			t.Fatal(err)
		}
		if len(bs) != 1 || bs[0].NumRows() != 1 || bs[0].NumCols() != 0 {
			t.Fatalf("ProduceOneRow: got %d batches", len(bs))
		}
		bs[0].Release()
		bs, err = execop.CollectAll(context.Background(), tc, &physical.Empty{OutSchema: abSchema})
		if err != nil || len(bs) != 0 {
			t.Fatalf("empty: %d batches, %v", len(bs), err)
		}
	})
}

func TestRepartitionCoalesce(t *testing.T) {
	for _, keys := range [][]physical.Expr{nil, {colA}, {colA, colB}} {
		exectest.Run(t, exectest.Case{
			Name: "repartition", Inputs: abInput(3), Async: true,
			Plan: func(s []physical.Plan) physical.Plan {
				return &physical.Coalesce{Input: &physical.Repartition{Input: s[0], Keys: keys, N: 4}}
			},
			Want: abRows,
		})
	}
	// Rows with equal keys meet in one partition: a per-partition sort
	// merged back gives every key's rows contiguous, and an ordered result.
	exectest.Run(t, exectest.Case{
		Name: "hash-then-sort", Inputs: abInput(3), Order: exectest.Ordered,
		Plan: func(s []physical.Plan) physical.Plan {
			keys := []physical.SortKey{{Expr: colA, Asc: true}, {Expr: colB, Asc: true}}
			return &physical.SortPreservingMerge{Keys: keys, Fetch: -1, Input: &physical.Sort{Keys: keys, Fetch: -1, PreservePartitioning: true,
				Input: &physical.Repartition{Input: s[0], Keys: []physical.Expr{colA}, N: 3}}}
		},
		Want: `[
			{"a": 0, "b": "c"}, {"a": 1, "b": "z"}, {"a": 1, "b": null}, {"a": 2, "b": "b"}, {"a": 2, "b": "x"},
			{"a": 3, "b": "a"}, {"a": 3, "b": "x"}, {"a": 4, "b": "x"}, {"a": 5, "b": "q"}, {"a": 7, "b": "d"},
			{"a": null, "b": "y"}, {"a": null, "b": null}
		]`,
	})
}

// Closing one consumer of an exchange early must not block the others:
// batches routed to it are discarded.
func TestRepartitionEarlyCloseOneConsumer(t *testing.T) {
	for _, keys := range [][]physical.Expr{nil, {colA}} {
		mem := exectest.Allocator(t)
		tables := exectest.Tables{"t": {
			exectest.Batches(t, mem, abSchema, abRows, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11),
			exectest.Batches(t, mem, abSchema, abRows, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11),
		}}
		tc := exec.NewTaskContext(mem, 1)
		tc.MemoryTables = tables.Lookup
		rep := &physical.Repartition{Input: exectest.MemoryScan("t", abSchema, 2), Keys: keys, N: 3}
		ctx := context.Background()
		ops := make([]execop.Operator, 3)
		for i := range ops {
			op, err := exec.Build(tc, rep, i)
			if err != nil {
				t.Fatal(err)
			}
			if err := op.Open(ctx); err != nil {
				t.Fatal(err)
			}
			ops[i] = op
		}
		if err := ops[0].Close(); err != nil {
			t.Fatal(err)
		}
		// Consumers of an exchange must be read concurrently (as partitions
		// run); consumer 0 is closed and never read.
		var rows atomic.Int64
		g, gctx := errgroup.WithContext(ctx)
		for _, op := range ops[1:] {
			g.Go(func() error {
				for {
					b, err := op.Next(gctx)
					if errors.Is(err, io.EOF) {
						return nil
					}
					if err != nil {
						return err
					}
					rows.Add(b.NumRows())
					b.Release()
				}
			})
		}
		if err := g.Wait(); err != nil {
			t.Fatal(err)
		}
		if n := rows.Load(); n == 0 || n > 24 {
			t.Errorf("keys=%v: consumers 1 and 2 got %d rows", keys, n)
		}
		for _, op := range ops {
			if err := op.Close(); err != nil {
				t.Fatal(err)
			}
		}
		tables.Release()
	}
}

func TestMemoryLimit(t *testing.T) {
	mem := exectest.Allocator(t)
	acct := execop.NewAccountingAllocator(mem, 64<<10)
	tables := exectest.Tables{}
	defer tables.Release()
	rows := jsonRows(20000, func(int) string { return `{"a": 1, "b": "some longer string value"}` })
	tables["t"] = [][]arrow.RecordBatch{exectest.Batches(t, mem, abSchema, rows, 5000, 10000, 15000)}
	tc := exec.NewTaskContext(acct, 1024)
	tc.MemoryTables = tables.Lookup
	plan := &physical.Sort{Input: exectest.MemoryScan("t", abSchema, 1), Keys: []physical.SortKey{{Expr: colB, Asc: true}}, Fetch: -1}
	bs, err := execop.CollectAll(context.Background(), tc, plan)
	for _, b := range bs {
		b.Release()
	}
	if !qerr.Is(err, qerr.Resources) {
		t.Fatalf("want a resources error, got %v", err)
	}
	if !strings.Contains(err.Error(), "memory limit of 64.0 KiB exceeded") {
		t.Errorf("unexpected message: %v", err)
	}
	if acct.Current() != 0 {
		t.Errorf("accounting allocator holds %d bytes after the failure", acct.Current())
	}
	if acct.Peak() > 64<<10 {
		t.Errorf("peak %d out of range", acct.Peak())
	}
	if err := tc.Grow(1 << 20); !qerr.Is(err, qerr.Resources) {
		t.Errorf("Grow over the limit: %v", err)
	}
	if err := tc.Grow(100); err != nil {
		t.Errorf("Grow under the limit: %v", err)
	}
	tc.Shrink(100)
}

func TestPanicAndErrorInPartition(t *testing.T) {
	for _, panics := range []bool{false, true} {
		mem := exectest.Allocator(t)
		tables := exectest.Tables{"t": {
			exectest.Batches(t, mem, abSchema, abRows, 3, 6),
			exectest.Batches(t, mem, abSchema, abRows, 4),
		}}
		tc := exec.NewTaskContext(mem, 2)
		tc.MemoryTables = tables.Lookup
		tc.WrapSource = func(_ *physical.Scan, p int, op execop.Operator) execop.Operator {
			if p != 1 {
				return op
			}
			return &failing{Operator: op, panics: panics}
		}
		plan := &physical.Coalesce{Input: &physical.Repartition{Input: exectest.MemoryScan("t", abSchema, 2), Keys: []physical.Expr{colA}, N: 3}}
		bs, err := execop.CollectAll(context.Background(), tc, plan)
		for _, b := range bs {
			b.Release()
		}
		want := qerr.Execution
		if panics {
			want = qerr.Internal
		}
		if err == nil || qerr.KindOf(err) != want {
			t.Errorf("panics=%v: want %v, got %v", panics, want, err)
		}
		tables.Release()
	}
}

type failing struct {
	execop.Operator
	panics bool
	n      int
}

func (f *failing) Next(ctx context.Context) (arrow.RecordBatch, error) {
	f.n++
	if f.n == 2 {
		if f.panics {
			panic("boom")
		}
		return nil, qerr.Execf("test: injected failure")
	}
	return f.Operator.Next(ctx)
}

func TestFormatAnalyze(t *testing.T) {
	mem := exectest.Allocator(t)
	tables := exectest.Tables{"t": {exectest.Batches(t, mem, abSchema, abRows, 5), exectest.Batches(t, mem, abSchema, abRows, 2)}}
	defer tables.Release()
	tc := exec.NewTaskContext(mem, 4)
	tc.MemoryTables = tables.Lookup
	tc.EnableMetrics()
	plan := &physical.Limit{Fetch: 5, Input: &physical.Sort{Keys: []physical.SortKey{{Expr: colA, Asc: true}}, Fetch: -1,
		Input: exectest.MemoryScan("t", abSchema, 2)}}
	got := exectest.Collect(t, context.Background(), tc, plan)
	if len(got) != 5 {
		t.Fatalf("got %d rows", len(got))
	}
	out := tc.FormatAnalyze(plan)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 {
		t.Fatalf("want 3 lines:\n%s", out)
	}
	for i, want := range []string{"output_rows=5, output_batches=2", "output_rows=8, output_batches=2", "output_rows=24, output_batches="} {
		if !strings.Contains(lines[i], want) || !strings.Contains(lines[i], "elapsed=") {
			t.Errorf("line %d = %q, want it to contain %q", i, lines[i], want)
		}
	}
	if !strings.HasPrefix(lines[2], "03)----MemoryScan: t") {
		t.Errorf("line 3 = %q", lines[2])
	}
}

// TestMemoryLimitInExpressions: a memory limit crossed while an expression
// is evaluated (in a projection, and in a filter's AND operands) is a
// Resources error, not an internal one: eval lets the limit's panic through
// to the operator boundary.
func TestMemoryLimitInExpressions(t *testing.T) {
	boolT := arrow.FixedWidthTypes.Boolean
	for _, name := range []string{"projection", "filter", "aggregate", "sort", "repartition", "join-probe"} {
		t.Run(name, func(t *testing.T) {
			mem := exectest.Allocator(t)
			tables := exectest.Tables{}
			defer tables.Release()
			rows := jsonRows(20000, func(i int) string { return fmt.Sprintf(`{"a": %d, "b": "x"}`, i) })
			tables["t"] = [][]arrow.RecordBatch{exectest.Batches(t, mem, abSchema, rows, 10000)}
			// The input batches are already allocated; the limit leaves no room
			// for one output column of a 10000-row batch (80 KB).
			acct := execop.NewAccountingAllocator(mem, 16<<10)
			tc := exec.NewTaskContext(acct, 10000)
			tc.MemoryTables = tables.Lookup
			scan := exectest.MemoryScan("t", abSchema, 1)
			var plan physical.Plan
			a1 := opBin(physical.OpAdd, colA, i64Lit(1), arrow.PrimitiveTypes.Int64)
			switch name {
			case "projection":
				plan = &physical.Projection{Input: scan, Exprs: []physical.Expr{a1}, Names: []string{"a1"}}
			case "aggregate":
				plan = &physical.HashAggregate{Input: scan, Mode: physical.AggSingle, GroupBy: []physical.Expr{a1}, GroupNames: []string{"a1"}}
			case "sort":
				plan = &physical.Sort{Input: scan, Keys: []physical.SortKey{{Expr: a1, Asc: true}}, Fetch: -1}
			case "repartition":
				plan = &physical.Repartition{Input: scan, Keys: []physical.Expr{a1}, N: 2}
			case "join-probe":
				// A one-row build side; the probe keys a+1 cross the limit.
				tables["one"] = [][]arrow.RecordBatch{exectest.Batches(t, mem, abSchema, `[{"a": 5, "b": "y"}]`)}
				plan = &physical.HashJoin{Left: exectest.MemoryScan("one", abSchema, 1), Right: scan,
					Mode: physical.CollectLeft, Type: physical.InnerJoin, On: []physical.JoinOn{{Left: colA, Right: a1}}}
			default:
				plan = &physical.Filter{Input: scan, Predicate: opBin(physical.OpAnd,
					opBin(physical.OpGtEq, colA, i64Lit(0), boolT),
					opBin(physical.OpEq, opBin(physical.OpAdd, colA, i64Lit(1), arrow.PrimitiveTypes.Int64), i64Lit(5), boolT), boolT)}
			}
			bs, err := execop.CollectAll(context.Background(), tc, plan)
			for _, b := range bs {
				b.Release()
			}
			if !qerr.Is(err, qerr.Resources) {
				t.Fatalf("want a resources error, got %v", err)
			}
			if acct.Current() != 0 {
				t.Errorf("accounting allocator holds %d bytes after the failure", acct.Current())
			}
		})
	}
}

// jsonRows is a JSON array of n objects, row(i) the i-th.
func jsonRows(n int, row func(i int) string) string {
	var b strings.Builder
	b.WriteString("[")
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(row(i))
	}
	b.WriteString("]")
	return b.String()
}

// TestSortTopKAgainstStableSort checks top-k, whose kept rows also drop
// later rows on arrival, against the prefix of a stable sort of the same
// rows: keys with many ties and NULLs, so that rows tying with the worst
// kept row must lose to it, at every fetch from 1 to past the row count.
func TestSortTopKAgainstStableSort(t *testing.T) {
	type row struct {
		a *int64
		b *string
	}
	rnd := rand.New(rand.NewPCG(7, 11))
	rows := make([]row, 150)
	var js strings.Builder
	js.WriteString("[")
	for i := range rows {
		if rnd.IntN(10) > 0 {
			v := int64(rnd.IntN(9))
			rows[i].a = &v
		}
		if rnd.IntN(8) > 0 {
			v := fmt.Sprintf("s%02d", i) // unique: rows stay tellable apart
			rows[i].b = &v
		}
		if i > 0 {
			js.WriteString(",")
		}
		fmt.Fprintf(&js, "%s", rowJSON(rows[i].a, rows[i].b))
	}
	js.WriteString("]")
	// Key: a DESC NULLS FIRST only; b is the payload that shows the order.
	ref := slices.Clone(rows)
	slices.SortStableFunc(ref, func(x, y row) int {
		switch {
		case x.a == nil && y.a == nil:
			return 0
		case x.a == nil:
			return -1
		case y.a == nil:
			return 1
		}
		return cmp.Compare(*y.a, *x.a)
	})
	keys := []physical.SortKey{{Expr: colA, Asc: false, NullsFirst: true}}
	for _, fetch := range []int{1, 3, 10, 40, 200} {
		var want strings.Builder
		want.WriteString("[")
		for i, r := range ref[:min(fetch, len(ref))] {
			if i > 0 {
				want.WriteString(",")
			}
			want.WriteString(rowJSON(r.a, r.b))
		}
		want.WriteString("]")
		exectest.Run(t, exectest.Case{
			Name: fmt.Sprintf("fetch=%d", fetch), Order: exectest.Ordered,
			Inputs: []exectest.Input{{Name: "t", Schema: abSchema, Rows: js.String(), Partitions: 1}},
			Plan: func(s []physical.Plan) physical.Plan {
				return &physical.Sort{Input: s[0], Keys: keys, Fetch: int64(fetch)}
			},
			Want: want.String(),
		})
	}
}

func rowJSON(a *int64, b *string) string {
	as, bs := "null", "null"
	if a != nil {
		as = fmt.Sprint(*a)
	}
	if b != nil {
		bs = fmt.Sprintf("%q", *b)
	}
	return fmt.Sprintf(`{"a": %s, "b": %s}`, as, bs)
}
