package stage_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver/exec"
	"github.com/quiverdb/quiver/exec/execop"
	"github.com/quiverdb/quiver/exec/shuffle"
	"github.com/quiverdb/quiver/format"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/physical/stage"
)

// cluster simulates executors in one process: each has its own work dir,
// and every task gets its own TaskContext, as on a real executor. Files of
// other executors are "fetched" by reading their work dir.
type cluster struct {
	mem  memory.Allocator
	dirs map[string]string
}

func (c *cluster) task(id string) *execop.TaskContext {
	tc := exec.NewTaskContext(c.mem, 0)
	tc.WorkDir = c.dirs[id]
	tc.ExecutorID = id
	tc.Fetcher = c
	tc.SinglePartition = true
	return tc
}

// Fetch serves a remote location as a Flight client would: a stream of
// the file's batches, with the schema the file carries.
func (c *cluster) Fetch(ctx context.Context, loc physical.PartitionLocation) (execop.Operator, error) {
	return &fileStream{mem: c.mem, path: shuffle.FilePath(c.dirs[loc.Executor.ID], loc.JobID, loc.StageID, loc.OutputPartition, loc.MapPartition)}, nil
}

type fileStream struct {
	mem  memory.Allocator
	path string
	f    *os.File
	r    *ipc.Reader
}

func (s *fileStream) Open(ctx context.Context) (err error) {
	if s.f, err = os.Open(s.path); err != nil {
		return err
	}
	s.r, err = ipc.NewReader(s.f, ipc.WithAllocator(s.mem))
	return err
}

func (s *fileStream) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if !s.r.Next() {
		if err := s.r.Err(); err != nil {
			return nil, err
		}
		return nil, io.EOF
	}
	b := s.r.RecordBatch()
	b.Retain()
	return b, nil
}

func (s *fileStream) Close() error {
	if s.r != nil {
		s.r.Release()
		s.r = nil
	}
	if s.f != nil {
		s.f.Close()
		s.f = nil
	}
	return nil
}

// run executes g stage by stage: task p of a stage runs on executor
// e{p%2}; it returns the result rows of the final stage.
func (c *cluster) run(t *testing.T, g *stage.Graph) []arrow.RecordBatch {
	t.Helper()
	out := map[int][][]physical.PartitionLocation{}
	for _, s := range g.Stages {
		var plan physical.Plan = s.Plan
		for _, in := range s.Inputs {
			plan = stage.Resolve(plan, in, out[in])
		}
		if len(stage.Inputs(plan)) != 0 {
			t.Fatalf("stage %d unresolved after resolving %v", s.ID, s.Inputs)
		}
		w := plan.(*physical.ShuffleWriter)
		locs := make([][]physical.PartitionLocation, w.OutputN())
		for p := range w.OutputPartitions() {
			id := fmt.Sprintf("e%d", p%2)
			for _, st := range c.runTask(t, c.task(id), w, p) {
				st.Executor.ID = id
				locs[st.OutputPartition] = append(locs[st.OutputPartition], st)
			}
		}
		out[s.ID] = locs
	}
	final := g.Final()
	rd := &physical.ShuffleReader{StageID: final.ID, OutSchema: final.Plan.Input.Schema(), Locations: out[final.ID]}
	var res []arrow.RecordBatch
	for p := range rd.OutputPartitions() {
		res = append(res, c.drain(t, c.task("client"), rd, p)...)
	}
	return res
}

// runTask runs map partition p of w and returns its locations (without executor).
func (c *cluster) runTask(t *testing.T, tc *execop.TaskContext, w *physical.ShuffleWriter, p int) []physical.PartitionLocation {
	t.Helper()
	var locs []physical.PartitionLocation
	for _, b := range c.drain(t, tc, w, p) {
		cols := make([]*array.Int64, 4)
		for i := range cols {
			cols[i] = b.Column(i).(*array.Int64)
		}
		for r := range int(b.NumRows()) {
			locs = append(locs, physical.PartitionLocation{JobID: w.JobID, StageID: w.StageID, OutputPartition: int(cols[0].Value(r)),
				MapPartition: p, Rows: cols[1].Value(r), Batches: cols[2].Value(r), Bytes: cols[3].Value(r)})
		}
		b.Release()
	}
	return locs
}

func (c *cluster) drain(t *testing.T, tc *execop.TaskContext, p physical.Plan, part int) []arrow.RecordBatch {
	t.Helper()
	ctx := context.Background()
	op, err := exec.Build(tc, p, part)
	if err != nil {
		t.Fatal(err)
	}
	defer op.Close()
	if err := op.Open(ctx); err != nil {
		t.Fatal(err)
	}
	var out []arrow.RecordBatch
	for {
		b, err := op.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			for _, b := range out {
				b.Release()
			}
			t.Fatal(err)
		}
		out = append(out, b)
	}
	if err := op.Close(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestTPCHDistributed runs the 22 TPC-H queries stage by stage through
// shuffle files on two simulated executors and checks the answers.
func TestTPCHDistributed(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the 22 TPC-H queries")
	}
	cat := tpchCatalog(t)
	for q := 1; q <= 22; q++ {
		t.Run(fmt.Sprintf("q%02d", q), func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
			defer mem.AssertSize(t, 0)
			c := &cluster{mem: mem, dirs: map[string]string{"e0": t.TempDir(), "e1": t.TempDir(), "client": t.TempDir()}}
			pp := tpchPlan(t, cat, q)
			g, err := stage.Split(fmt.Sprintf("q%02d", q), pp, stage.Options{Compression: physical.CompressZstd})
			if err != nil {
				t.Fatal(err)
			}
			res := c.run(t, g)
			defer func() {
				for _, b := range res {
					b.Release()
				}
			}()
			want, err := os.ReadFile(filepath.Join(tpchDir, "answers", fmt.Sprintf("q%02d.csv", q)))
			if err != nil {
				t.Fatal(err)
			}
			if err := compareAnswer(pp.Schema(), res, string(want)); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// compareAnswer checks batches against an answer file ('|'-delimited,
// header first, NULL empty): names, row count, every cell exactly except
// floats (1e-9 relative).
func compareAnswer(schema *arrow.Schema, batches []arrow.RecordBatch, answer string) error {
	lines := strings.Split(strings.TrimSuffix(answer, "\n"), "\n")
	names := make([]string, schema.NumFields())
	for i, f := range schema.Fields() {
		names[i] = f.Name
	}
	if got := strings.Join(names, "|"); got != lines[0] {
		return fmt.Errorf("columns %s, want %s", got, lines[0])
	}
	var got [][]string
	for _, b := range batches {
		cols := make([][]string, b.NumCols())
		for i := range cols {
			vals, nulls := format.Column(b.Column(i))
			for r, null := range nulls {
				if null {
					vals[r] = ""
				}
			}
			cols[i] = vals
		}
		for r := range int(b.NumRows()) {
			row := make([]string, len(cols))
			for i := range cols {
				row[i] = cols[i][r]
			}
			got = append(got, row)
		}
	}
	want := lines[1:]
	if len(got) != len(want) {
		return fmt.Errorf("%d rows, want %d", len(got), len(want))
	}
	for r, line := range want {
		cells := strings.Split(line, "|")
		for c, w := range cells {
			g := got[r][c]
			if g == w {
				continue
			}
			if id := schema.Field(c).Type.ID(); id == arrow.FLOAT64 || id == arrow.FLOAT32 {
				gf, err1 := strconv.ParseFloat(g, 64)
				wf, err2 := strconv.ParseFloat(w, 64)
				if err1 == nil && err2 == nil && math.Abs(gf-wf) <= 1e-9*math.Max(math.Abs(wf), 1e-300) {
					continue
				}
			}
			return fmt.Errorf("row %d column %s: got %q, want %q", r+1, names[c], g, w)
		}
	}
	return nil
}

// TestTPCHWholeStage runs the 22 TPC-H queries as the whole stages of
// Options.InMemory (one, or one more per shared CTE: q15), the way an
// executor runs each: every partition of the stage in its own goroutine,
// sharing one TaskContext (not SinglePartition), then reads the result
// files back.
func TestTPCHWholeStage(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the 22 TPC-H queries")
	}
	cat := tpchCatalog(t)
	for q := 1; q <= 22; q++ {
		t.Run(fmt.Sprintf("q%02d", q), func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
			defer mem.AssertSize(t, 0)
			c := &cluster{mem: mem, dirs: map[string]string{"e0": t.TempDir(), "client": t.TempDir()}}
			pp := tpchPlan(t, cat, q)
			g, err := stage.Split(fmt.Sprintf("q%02d", q), pp, stage.Options{InMemory: true})
			if err != nil {
				t.Fatal(err)
			}
			out := map[int][][]physical.PartitionLocation{}
			for _, s := range g.Stages {
				var plan physical.Plan = s.Plan
				for _, in := range s.Inputs {
					plan = stage.Resolve(plan, in, out[in])
				}
				out[s.ID] = c.runWhole(t, plan.(*physical.ShuffleWriter))
			}
			w := g.Final().Plan
			locs := out[w.StageID]
			rd := &physical.ShuffleReader{StageID: w.StageID, OutSchema: w.Input.Schema(), Locations: locs}
			var res []arrow.RecordBatch
			for p := range rd.OutputPartitions() {
				res = append(res, c.drain(t, c.task("client"), rd, p)...)
			}
			defer func() {
				for _, b := range res {
					b.Release()
				}
			}()
			want, err := os.ReadFile(filepath.Join(tpchDir, "answers", fmt.Sprintf("q%02d.csv", q)))
			if err != nil {
				t.Fatal(err)
			}
			if err := compareAnswer(pp.Schema(), res, string(want)); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// runPartition runs map partition p of w in tc (from any goroutine) and
// returns its locations (without executor).
// runWhole runs whole stage w as an executor does: every partition in its
// own goroutine, sharing one TaskContext; it returns the stage's locations.
func (c *cluster) runWhole(t *testing.T, w *physical.ShuffleWriter) [][]physical.PartitionLocation {
	t.Helper()
	tc := exec.NewTaskContext(c.mem, 0)
	tc.WorkDir = c.dirs["e0"]
	tc.ExecutorID = "e0"
	tc.Fetcher = c
	n := w.OutputPartitions()
	parts := make([][]physical.PartitionLocation, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for p := range n {
		wg.Go(func() { parts[p], errs[p] = runPartition(tc, w, p) })
	}
	wg.Wait()
	locs := make([][]physical.PartitionLocation, w.OutputN())
	for p := range n {
		if errs[p] != nil {
			t.Fatalf("stage %d partition %d: %v", w.StageID, p, errs[p])
		}
		for _, l := range parts[p] {
			l.Executor.ID = "e0"
			locs[l.OutputPartition] = append(locs[l.OutputPartition], l)
		}
	}
	return locs
}

func runPartition(tc *execop.TaskContext, w *physical.ShuffleWriter, p int) (locs []physical.PartitionLocation, err error) {
	ctx := context.Background()
	op, err := exec.Build(tc, w, p)
	if err != nil {
		return nil, err
	}
	defer func() {
		if cerr := op.Close(); err == nil {
			err = cerr
		}
	}()
	if err := op.Open(ctx); err != nil {
		return nil, err
	}
	for {
		b, err := op.Next(ctx)
		if errors.Is(err, io.EOF) {
			return locs, nil
		}
		if err != nil {
			return nil, err
		}
		cols := make([]*array.Int64, 4)
		for i := range cols {
			cols[i] = b.Column(i).(*array.Int64)
		}
		for r := range int(b.NumRows()) {
			locs = append(locs, physical.PartitionLocation{JobID: w.JobID, StageID: w.StageID, OutputPartition: int(cols[0].Value(r)),
				MapPartition: p, Rows: cols[1].Value(r), Batches: cols[2].Value(r), Bytes: cols[3].Value(r)})
		}
		b.Release()
	}
}
