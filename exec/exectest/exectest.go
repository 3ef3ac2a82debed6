package exectest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver/exec"
	"github.com/quiverdb/quiver/exec/execop"
	"github.com/quiverdb/quiver/exec/memcheck"
	"github.com/quiverdb/quiver/physical"
)

// Allocator returns a checked allocator and registers a cleanup that fails
// t unless every byte was freed.
func Allocator(t testing.TB) *memory.CheckedAllocator {
	t.Helper()
	return memcheck.New(t)
}

// DirtyPoison wraps an allocator with AllocateDirty (execop.Recycler) and
// fills every buffer it hands out through AllocateDirty with PoisonByte,
// so that a kernel which asks for unzeroed memory and then reads a byte it
// did not write fails its tests. Allocate, Reallocate and Free pass
// through.
type DirtyPoison struct {
	memory.Allocator
}

// PoisonByte is the value DirtyPoison fills dirty memory with.
const PoisonByte = 0xA5

// AllocateDirty implements the exec package's dirty allocation.
func (p DirtyPoison) AllocateDirty(size int) []byte {
	var b []byte
	if d, ok := p.Allocator.(interface{ AllocateDirty(int) []byte }); ok {
		b = d.AllocateDirty(size)
	} else {
		b = p.Allocator.Allocate(size)
	}
	for i := range b {
		b[i] = PoisonByte
	}
	return b
}

// Batches builds rows from a JSON array of objects and splits them into
// batches ending at the given row boundaries (ascending; 0 or a repeated
// boundary makes an empty batch). Without splits the boundaries are random
// and include some empty batches. The caller releases the batches.
func Batches(t testing.TB, mem memory.Allocator, schema *arrow.Schema, json string, splits ...int) []arrow.RecordBatch {
	t.Helper()
	rec, _, err := array.RecordFromJSON(mem, schema, strings.NewReader(json))
	if err != nil {
		t.Fatalf("exectest: bad JSON rows: %v", err)
	}
	defer rec.Release()
	n := int(rec.NumRows())
	if splits == nil {
		splits = RandomSplits(rand.New(rand.NewPCG(uint64(n), 7)), n, 0)
	}
	return Split(rec, splits)
}

// RandomSplits returns ascending row boundaries cutting n rows into
// batches of at most maxSize rows (random sizes if maxSize ≤ 0), with an
// occasional empty batch.
func RandomSplits(r *rand.Rand, n, maxSize int) []int {
	var out []int
	pos := 0
	for pos < n {
		if r.IntN(8) == 0 {
			out = append(out, pos) // empty batch
		}
		step := maxSize
		if step <= 0 {
			step = 1 + r.IntN(max(1, n/2+1))
		}
		pos = min(n, pos+step)
		out = append(out, pos)
	}
	return out
}

// Split cuts rec at the boundaries into new batches (the caller releases
// them; rec keeps its reference). Rows after the last boundary form a final batch.
func Split(rec arrow.RecordBatch, splits []int) []arrow.RecordBatch {
	var out []arrow.RecordBatch
	prev := int64(0)
	for _, s := range splits {
		s64 := min(int64(s), rec.NumRows())
		out = append(out, rec.NewSlice(prev, s64))
		prev = s64
	}
	if prev < rec.NumRows() {
		out = append(out, rec.NewSlice(prev, rec.NumRows()))
	}
	return out
}

// Tables is a set of memory tables for execop.TaskContext.MemoryTables.
// Close releases their batches.
type Tables map[string][][]arrow.RecordBatch

// Lookup implements TaskContext.MemoryTables: it returns retained copies.
func (ts Tables) Lookup(name string) ([][]arrow.RecordBatch, bool) {
	p, ok := ts[name]
	if !ok {
		return nil, false
	}
	out := make([][]arrow.RecordBatch, len(p))
	for i, bs := range p {
		out[i] = make([]arrow.RecordBatch, len(bs))
		for j, b := range bs {
			b.Retain()
			out[i][j] = b
		}
	}
	return out, true
}

// Release releases every batch of every table.
func (ts Tables) Release() {
	for _, parts := range ts {
		for _, bs := range parts {
			for _, b := range bs {
				b.Release()
			}
		}
	}
}

// MemoryScan is a scan of memory table name with the given schema and
// partition count.
func MemoryScan(name string, schema *arrow.Schema, partitions int) *physical.Scan {
	return &physical.Scan{Table: name, Format: physical.FormatMemory, FileSchema: schema,
		Partitions: make([][]string, partitions), Fetch: -1}
}

// Input is one memory table of a Case.
type Input struct {
	Name       string
	Schema     *arrow.Schema
	Rows       string // JSON array of objects
	Partitions int    // ≥ 1; rows are dealt out to partitions round robin by batch
}

// Order is how Run compares output rows.
type Order int

// Orders.
const (
	Unordered Order = iota // compare as multisets
	Ordered                // compare in order
)

// Case is one operator test: Plan builds the plan over scans of Inputs
// (in order); its output must equal Want (JSON rows of the plan's schema).
type Case struct {
	Name   string
	Inputs []Input
	Plan   func(scans []physical.Plan) physical.Plan
	Want   string
	Order  Order
	// Async delivers every scan batch from another goroutine with a small
	// delay, so consumers cannot rely on data being ready.
	Async bool
	// MemoryLimit is the task's memory limit in bytes (0: none), to drive
	// operators that spill; spill files go under a temporary work dir that
	// must be empty again when the run ends.
	MemoryLimit int64
}

// Run executes c at batch sizes 1, 7 and the default, each with fresh
// random splits of the inputs, and checks the output; then checks that
// closing after one batch, closing twice, and cancelling mid-stream leave
// no goroutine blocked and no memory held.
func Run(t *testing.T, c Case) {
	t.Helper()
	for _, bs := range []int{1, 7, execop.DefaultBatchSize} {
		for seed := range 2 {
			t.Run(fmt.Sprintf("%s/batch=%d/seed=%d", c.Name, bs, seed), func(t *testing.T) {
				mem := Allocator(t)
				r := rand.New(rand.NewPCG(uint64(seed), uint64(bs)))
				tc, plan, tables := setup(t, mem, c, bs, r)
				defer tables.Release()
				got := Collect(t, context.Background(), tc, plan)
				want := RowsFromJSON(t, mem, plan.Schema(), c.Want)
				Compare(t, got, want, c.Order)
			})
		}
	}
	t.Run(c.Name+"/early-close", func(t *testing.T) {
		mem := Allocator(t)
		tc, plan, tables := setup(t, mem, c, 3, rand.New(rand.NewPCG(1, 2)))
		defer tables.Release()
		op, err := exec.Execute(context.Background(), tc, plan)
		if err != nil {
			t.Fatal(err)
		}
		if err := op.Open(context.Background()); err != nil {
			t.Fatal(err)
		}
		if b, err := op.Next(context.Background()); err == nil {
			b.Release()
		} else if !errors.Is(err, io.EOF) {
			t.Fatal(err)
		}
		if err := op.Close(); err != nil {
			t.Fatal(err)
		}
		if err := op.Close(); err != nil {
			t.Fatalf("second Close: %v", err)
		}
	})
	t.Run(c.Name+"/cancel", func(t *testing.T) {
		mem := Allocator(t)
		tc, plan, tables := setup(t, mem, c, 2, rand.New(rand.NewPCG(3, 4)))
		defer tables.Release()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		op, err := exec.Execute(ctx, tc, plan)
		if err != nil {
			t.Fatal(err)
		}
		if err := op.Open(ctx); err != nil {
			t.Fatal(err)
		}
		switch b, err := op.Next(ctx); {
		case err == nil:
			b.Release()
		case errors.Is(err, io.EOF):
			// Nothing left to cancel; Next may not be called after the end.
			if err := op.Close(); err != nil {
				t.Fatal(err)
			}
			return
		default:
			t.Fatal(err)
		}
		cancel()
		for i := 0; ; i++ {
			b, err := op.Next(ctx)
			if err != nil {
				if !errors.Is(err, context.Canceled) && !errors.Is(err, io.EOF) {
					t.Fatalf("after cancel: want context.Canceled or EOF, got %v", err)
				}
				break
			}
			b.Release()
			if i > 1000 {
				t.Fatal("operator ignores cancellation")
			}
		}
		if err := op.Close(); err != nil && !errors.Is(err, context.Canceled) {
			t.Fatal(err)
		}
	})
}

func setup(t *testing.T, mem memory.Allocator, c Case, batchSize int, r *rand.Rand) (*execop.TaskContext, physical.Plan, Tables) {
	t.Helper()
	tables := Tables{}
	scans := make([]physical.Plan, len(c.Inputs))
	for i, in := range c.Inputs {
		parts := max(1, in.Partitions)
		rec, _, err := array.RecordFromJSON(mem, in.Schema, strings.NewReader(in.Rows))
		if err != nil {
			t.Fatalf("exectest: input %s: bad JSON rows: %v", in.Name, err)
		}
		bs := Split(rec, RandomSplits(r, int(rec.NumRows()), 0))
		rec.Release()
		tbl := make([][]arrow.RecordBatch, parts)
		for j, b := range bs {
			tbl[j%parts] = append(tbl[j%parts], b)
		}
		tables[in.Name] = tbl
		scans[i] = MemoryScan(in.Name, in.Schema, parts)
	}
	// Operators allocate as in a task: through a recycler (reused buffers,
	// unzeroed where kernels ask) over the checked allocator.
	rec := execop.NewRecycler(mem, 1<<20)
	t.Cleanup(rec.Close) // before the checked allocator's leak check
	tc := exec.NewTaskContext(execop.NewAccountingAllocator(DirtyPoison{rec}, c.MemoryLimit), batchSize)
	tc.MemoryTables = tables.Lookup
	tc.WorkDir = t.TempDir()
	t.Cleanup(func() { assertNoFiles(t, tc.WorkDir) })
	if c.Async {
		tc.WrapSource = func(_ *physical.Scan, _ int, op execop.Operator) execop.Operator {
			return NewAsync(op, 100*time.Microsecond)
		}
	}
	return tc, c.Plan(scans), tables
}

// Collect runs every partition of p through exec.Execute and returns the
// rows as strings (see Rows); it fails t on error.
func Collect(t testing.TB, ctx context.Context, tc *execop.TaskContext, p physical.Plan) []string {
	t.Helper()
	op, err := exec.Execute(ctx, tc, p)
	if err != nil {
		t.Fatal(err)
	}
	defer op.Close()
	if err := op.Open(ctx); err != nil {
		t.Fatal(err)
	}
	var rows []string
	for {
		b, err := op.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if !b.Schema().Equal(p.Schema()) {
			b.Release()
			t.Fatalf("batch schema %s, want %s", b.Schema(), p.Schema())
		}
		if bs := int64(tc.BatchSize); bs > 0 && b.NumRows() > bs {
			t.Errorf("batch of %d rows exceeds batch size %d", b.NumRows(), bs)
		}
		rows = append(rows, Rows(b)...)
		b.Release()
	}
	if err := op.Close(); err != nil {
		t.Fatal(err)
	}
	return rows
}

// Rows renders each row of b as "v1|v2|..." with NULL for nulls. Test code
// only: it formats value by value.
func Rows(b arrow.RecordBatch) []string {
	out := make([]string, b.NumRows())
	var sb strings.Builder
	for i := range out {
		sb.Reset()
		for c, col := range b.Columns() {
			if c > 0 {
				sb.WriteByte('|')
			}
			if col.IsNull(i) {
				sb.WriteString("NULL")
			} else {
				sb.WriteString(col.ValueStr(i))
			}
		}
		out[i] = sb.String()
	}
	return out
}

// RowsFromJSON renders JSON rows of schema like Rows.
func RowsFromJSON(t testing.TB, mem memory.Allocator, schema *arrow.Schema, json string) []string {
	t.Helper()
	if strings.TrimSpace(json) == "" {
		json = "[]"
	}
	rec, _, err := array.RecordFromJSON(mem, schema, strings.NewReader(json))
	if err != nil {
		t.Fatalf("exectest: bad expected JSON: %v", err)
	}
	defer rec.Release()
	return Rows(rec)
}

// Compare fails t unless got equals want (as multisets when Unordered).
func Compare(t testing.TB, got, want []string, order Order) {
	t.Helper()
	if order == Unordered {
		got, want = slices.Clone(got), slices.Clone(want)
		slices.Sort(got)
		slices.Sort(want)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("got %d rows:\n%s\nwant %d rows:\n%s", len(got), strings.Join(got, "\n"), len(want), strings.Join(want, "\n"))
	}
}

// assertNoFiles fails t if any regular file is left under dir (operators
// remove their spill files when closed).
func assertNoFiles(t testing.TB, dir string) {
	t.Helper()
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			t.Errorf("file left behind after the operator closed: %s", path)
		}
		return nil
	})
}
