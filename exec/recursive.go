package exec

import (
	"context"
	"errors"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/quiverdb/quiver/exec/execop"
	"github.com/quiverdb/quiver/exec/hashtable"
	"github.com/quiverdb/quiver/exec/kernel"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
)

// A recursive query runs its loop in one operator on one partition: the
// static term once, then the recursive term again and again. Each run of
// the recursive term is built afresh in a forked TaskContext
// (execop.TaskContext.Fork) whose shared state holds the working table —
// the rows the previous run added — under workTableKey, which the
// WorkTable operators of that build read. Rows stream out as they are
// added; only the current and the next working table are held, plus, for
// UNION, the set of every row added (a hashtable.Table).

// workTableKey is the shared-state key of a recursive query's working table.
type workTableKey struct{ name string }

// workTable is the rows one run of a recursive term reads.
type workTable struct {
	batches []arrow.RecordBatch
}

type recursiveOp struct {
	tc   *execop.TaskContext
	n    *physical.RecursiveQuery
	cur  execop.Operator // the running term, nil between runs
	runs int64           // runs of the recursive term started
	// work is the rows the current run added so far (the next working
	// table); prev the working table the current run reads.
	work, prev []arrow.RecordBatch
	held       int64 // bytes of work and prev reserved with tc.Grow
	seen       *hashtable.Table
	probe      hashtable.Probe
	ids        []uint32
	done       bool
}

func newRecursiveQuery(tc *execop.TaskContext, n *physical.RecursiveQuery, _ int) (execop.Operator, error) {
	op := &recursiveOp{tc: tc, n: n}
	if n.Distinct {
		types := make([]arrow.DataType, len(n.OutSchema.Fields()))
		for i, f := range n.OutSchema.Fields() {
			types[i] = f.Type
		}
		t, err := hashtable.New(types)
		if err != nil {
			return nil, err
		}
		op.seen = t
	}
	return op, nil
}

func (r *recursiveOp) Open(ctx context.Context) error {
	op, err := r.tc.Build(r.n.Static, 0)
	if err != nil {
		return err
	}
	if err := op.Open(ctx); err != nil {
		op.Close()
		return err
	}
	r.cur = op
	return nil
}

func (r *recursiveOp) Next(ctx context.Context) (arrow.RecordBatch, error) {
	for !r.done {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if r.cur == nil {
			if err := r.startRun(ctx); err != nil {
				return nil, err
			}
			continue
		}
		b, err := r.cur.Next(ctx)
		if errors.Is(err, io.EOF) {
			err = r.cur.Close()
			r.cur = nil
			if err != nil {
				return nil, err
			}
			continue
		}
		if err != nil {
			return nil, err
		}
		out, err := r.add(ctx, b)
		if err != nil {
			return nil, err
		}
		if out != nil {
			return out, nil
		}
	}
	return nil, io.EOF
}

// startRun ends the run that finished (its working table goes) and starts
// the next over the rows it added, or ends the query when it added none.
func (r *recursiveOp) startRun(ctx context.Context) error {
	execop.ReleaseAll(r.prev)
	r.prev, r.work = r.work, nil
	var bytes int64
	for _, b := range r.prev {
		bytes += batchBytes(b)
	}
	r.tc.Shrink(r.held - bytes)
	r.held = bytes
	if len(r.prev) == 0 {
		r.done = true
		return nil
	}
	r.runs++
	sub := r.tc.Fork()
	sub.Shared(workTableKey{r.n.Name}, func() any { return &workTable{batches: r.prev} })
	op, err := sub.Build(r.n.Recursive, 0)
	if err != nil {
		return err
	}
	if err := op.Open(ctx); err != nil {
		op.Close()
		return err
	}
	r.cur = op
	return nil
}

// add takes b (owned) from the running term: under UNION only its rows
// not added before; nil when none is left. The rows are put in the
// query's schema and kept for the next run's working table.
func (r *recursiveOp) add(ctx context.Context, b arrow.RecordBatch) (arrow.RecordBatch, error) {
	defer b.Release()
	n := int(b.NumRows())
	if n == 0 {
		return nil, nil
	}
	cols := b.Columns()
	var out arrow.RecordBatch
	if r.seen != nil {
		before := r.seen.Len()
		if cap(r.ids) < n {
			r.ids = make([]uint32, n)
		}
		ids := r.ids[:n]
		grow := r.seen.MemSize()
		r.seen.FindOrInsert(&r.probe, cols, n, nil, ids)
		if err := r.tc.Grow(r.seen.MemSize() - grow); err != nil {
			return nil, err
		}
		// Ids are dense: a row is new when it holds an id past before that
		// no earlier row of the batch took.
		taken := make([]bool, r.seen.Len()-before)
		keep := make([]int32, 0, len(taken))
		for i, id := range ids {
			if k := int(id) - before; k >= 0 && !taken[k] {
				taken[k] = true
				keep = append(keep, int32(i))
			}
		}
		if len(keep) == 0 {
			return nil, nil
		}
		if len(keep) < n {
			taken, err := kernel.TakeSome(ctx, r.tc.Mem, r.n.OutSchema, cols, nil, keep)
			if err != nil {
				return nil, err
			}
			out = array.NewRecordBatch(r.n.OutSchema, taken, int64(len(keep)))
			kernel.ReleaseArrays(taken)
		}
	}
	if out == nil {
		out = array.NewRecordBatch(r.n.OutSchema, cols, int64(n))
	}
	if r.n.MaxDepth > 0 && r.runs > r.n.MaxDepth {
		// A run past the limit fails only when it adds a row: a recursion
		// that ends right at the limit succeeds.
		out.Release()
		return nil, qerr.Execf("recursive query %q did not end within %d iterations of its recursive term (the limit quiver.max_recursion_depth; SET it higher, or make the recursive term stop adding rows)", r.n.Name, r.n.MaxDepth)
	}
	sz := batchBytes(out)
	if err := r.tc.Grow(sz); err != nil {
		out.Release()
		return nil, err
	}
	r.held += sz
	out.Retain()
	r.work = append(r.work, out)
	return out, nil
}

func (r *recursiveOp) Close() error {
	var err error
	if r.cur != nil {
		err = r.cur.Close()
		r.cur = nil
	}
	execop.ReleaseAll(r.prev)
	execop.ReleaseAll(r.work)
	r.prev, r.work = nil, nil
	r.tc.Shrink(r.held)
	if r.seen != nil {
		r.tc.Shrink(r.seen.MemSize())
		r.seen = nil
	}
	r.held = 0
	return err
}

func batchBytes(b arrow.RecordBatch) int64 {
	var n int64
	for _, c := range b.Columns() {
		for _, buf := range c.Data().Buffers() {
			if buf != nil {
				n += int64(buf.Len())
			}
		}
	}
	return n
}

// newWorkTable reads the working table its RecursiveQuery's run put in tc.
func newWorkTable(tc *execop.TaskContext, n *physical.WorkTable, _ int) (execop.Operator, error) {
	w, _ := tc.Shared(workTableKey{n.Name}, func() any { return (*workTable)(nil) }).(*workTable)
	if w == nil {
		return nil, qerr.Internalf("exec: working table of recursive query %q read outside its recursive term", n.Name)
	}
	return &workTableOp{schema: n.OutSchema, batches: w.batches}, nil
}

type workTableOp struct {
	schema  *arrow.Schema
	batches []arrow.RecordBatch
	next    int
}

func (w *workTableOp) Open(context.Context) error { return nil }

func (w *workTableOp) Next(context.Context) (arrow.RecordBatch, error) {
	if w.next >= len(w.batches) {
		return nil, io.EOF
	}
	b := w.batches[w.next]
	w.next++
	// The recursive query owns the batches; this reference is the reader's.
	return array.NewRecordBatch(w.schema, b.Columns(), b.NumRows()), nil
}

func (w *workTableOp) Close() error { return nil }
