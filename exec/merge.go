package exec

import (
	"context"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/quiverdb/quiver/exec/execop"
	"github.com/quiverdb/quiver/exec/kernel"
	"github.com/quiverdb/quiver/exec/sort"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
	"golang.org/x/sync/errgroup"
)

// mergeOp merges the sorted partitions of its input into one sorted
// stream (k-way merge with a binary heap of input cursors; ties go to the
// lower input partition, so the merge is deterministic):
//
//	in0 (sorted) ─► chan ─┐
//	in1 (sorted) ─► chan ─┼─ heap of cursors ─► runs ─► batch
//	in2 (sorted) ─► chan ─┘
//
// Open starts one producer goroutine per input partition, owned by the
// operator; each sends into its own bounded channel, selecting on the
// group's context, and closes it when done. Close cancels the group,
// drains the channels and waits for every producer.
type mergeOp struct {
	tc     *execop.TaskContext
	n      *physical.SortPreservingMerge
	schema *arrow.Schema
	keys   *sort.SortKeyExprs
	spec   sort.SortSpec

	ins       []*mergeInput
	heap      []int
	cancel    context.CancelFunc
	groupDone chan struct{}
	groupErr  error // written before groupDone is closed
	started   bool
	emitted   int64
	closed    bool
}

type mergeInput struct {
	ch      chan arrow.RecordBatch
	err     error // the producer's error, written before ch is closed
	batch   arrow.RecordBatch
	keyArrs []arrow.Array
	keys    []sort.SortKeyCol
	row     int
	done    bool
}

// mergeRun is rows [start, end) of one input batch, in output order.
type mergeRun struct {
	batch      arrow.RecordBatch
	start, end int64
}

func newSortPreservingMerge(tc *execop.TaskContext, n *physical.SortPreservingMerge, partition int) (execop.Operator, error) {
	keys, err := sort.CompileSortKeys(n.Keys)
	if err != nil {
		return nil, err
	}
	return &mergeOp{tc: tc, n: n, schema: n.Schema(), keys: keys, spec: sort.NewSortSpec(n.Keys)}, nil
}

func (m *mergeOp) Open(ctx context.Context) error {
	k := m.n.Input.OutputPartitions()
	gctx, cancel := context.WithCancel(ctx)
	m.cancel = cancel
	g, gctx := errgroup.WithContext(gctx)
	m.ins = make([]*mergeInput, k)
	m.groupDone = make(chan struct{})
	for i := range k {
		in := &mergeInput{ch: make(chan arrow.RecordBatch, 2)}
		m.ins[i] = in
		g.Go(func() (err error) {
			defer func() {
				in.err = err
				close(in.ch)
			}()
			defer execop.RecoverRoot(&err, fmt.Sprintf("partition %d of %s", i, m.n.Input))
			return produce(gctx, m.tc, m.n.Input, i, in.ch)
		})
	}
	go func() {
		m.groupErr = g.Wait()
		close(m.groupDone)
	}()
	return nil
}

// advance replaces in's current batch by the next non-empty one, or marks
// in done.
func (m *mergeOp) advance(ctx context.Context, in *mergeInput) error {
	m.releaseCursor(in)
	for {
		var b arrow.RecordBatch
		var ok bool
		select {
		case b, ok = <-in.ch:
		case <-ctx.Done():
			return ctx.Err()
		}
		if !ok {
			in.done = true
			if in.err != nil {
				// Report the group's first error, not a sibling's cancellation.
				<-m.groupDone
				return m.groupErr
			}
			return nil
		}
		if b.NumRows() == 0 {
			b.Release()
			continue
		}
		arrs, keys, err := m.keys.Eval(ctx, m.tc.Mem, b)
		if err != nil {
			b.Release()
			return err
		}
		in.batch, in.keyArrs, in.keys, in.row = b, arrs, keys, 0
		return nil
	}
}

func (m *mergeOp) releaseCursor(in *mergeInput) {
	if in.batch != nil {
		in.batch.Release()
		in.batch = nil
	}
	kernel.ReleaseArrays(in.keyArrs)
	in.keyArrs, in.keys = nil, nil
}

// less orders cursors a and b by their current rows.
func (m *mergeOp) less(a, b int) bool {
	x, y := m.ins[a], m.ins[b]
	if c := m.spec.Compare(x.keys, x.row, y.keys, y.row); c != 0 {
		return c < 0
	}
	return a < b
}

func (m *mergeOp) down(i int) {
	h := m.heap
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		j := l
		if r := l + 1; r < len(h) && m.less(h[r], h[l]) {
			j = r
		}
		if !m.less(h[j], h[i]) {
			return
		}
		h[i], h[j] = h[j], h[i]
		i = j
	}
}

func (m *mergeOp) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !m.started {
		m.started = true
		for i, in := range m.ins {
			if err := m.advance(ctx, in); err != nil {
				return nil, err
			}
			if !in.done {
				m.heap = append(m.heap, i)
			}
		}
		for i := len(m.heap)/2 - 1; i >= 0; i-- {
			m.down(i)
		}
	}
	want := int64(m.tc.BatchRows())
	if m.n.Fetch >= 0 {
		want = min(want, m.n.Fetch-m.emitted)
	}
	var runs []mergeRun
	defer func() {
		for _, r := range runs {
			r.batch.Release()
		}
	}()
	var rows int64
	for rows < want && len(m.heap) > 0 {
		top := m.heap[0]
		in := m.ins[top]
		row := int64(in.row)
		if n := len(runs); n > 0 && runs[n-1].batch == in.batch && runs[n-1].end == row {
			runs[n-1].end++
		} else {
			in.batch.Retain()
			runs = append(runs, mergeRun{batch: in.batch, start: row, end: row + 1})
		}
		rows++
		in.row++
		if int64(in.row) >= in.batch.NumRows() {
			if err := m.advance(ctx, in); err != nil {
				return nil, err
			}
			if in.done {
				last := len(m.heap) - 1
				m.heap[0] = m.heap[last]
				m.heap = m.heap[:last]
			}
		}
		if len(m.heap) > 0 {
			m.down(0)
		}
	}
	if rows == 0 {
		return nil, io.EOF
	}
	m.emitted += rows
	return m.assemble(runs, rows)
}

// assemble concatenates the runs into one batch.
func (m *mergeOp) assemble(runs []mergeRun, rows int64) (arrow.RecordBatch, error) {
	if len(runs) == 1 {
		r := runs[0]
		return r.batch.NewSlice(r.start, r.end), nil
	}
	cols := make([]arrow.Array, m.schema.NumFields())
	defer kernel.ReleaseArrays(cols)
	parts := make([]arrow.Array, len(runs))
	defer kernel.ReleaseArrays(parts)
	for c := range cols {
		for i, r := range runs {
			parts[i] = array.NewSlice(r.batch.Column(c), r.start, r.end)
		}
		out, err := array.Concatenate(parts, m.tc.Mem)
		kernel.ReleaseArrays(parts)
		clear(parts)
		if err != nil {
			return nil, execop.LimitErr(qerr.Execf("exec: merge: concatenate column %q: %w", m.schema.Field(c).Name, err))
		}
		cols[c] = out
	}
	return array.NewRecordBatch(m.schema, cols, rows), nil
}

func (m *mergeOp) Close() error {
	if m.closed {
		return nil
	}
	m.closed = true
	if m.cancel == nil {
		return nil
	}
	m.cancel()
	for _, in := range m.ins {
		m.releaseCursor(in)
		for b := range in.ch {
			b.Release()
		}
	}
	<-m.groupDone
	return nil
}
