package sort

import (
	"context"
	"errors"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver/exec/execop"
	"github.com/quiverdb/quiver/exec/kernel"
	"github.com/quiverdb/quiver/qerr"
)

// Source yields the batches of one sorted stream: each call returns the
// next batch (the caller owns it) or io.EOF at the end.
type Source func(ctx context.Context) (arrow.RecordBatch, error)

// Merger merges sorted streams into one sorted stream: a k-way merge with
// a binary heap of cursors, one per source. Ties go to the lower source,
// so merging the runs of a stable sort in their order is stable. The
// sort-preserving merge exchange and the spilling sort share it. Not safe
// for concurrent use.
type Merger struct {
	mem     memory.Allocator
	schema  *arrow.Schema
	keys    *SortKeyExprs
	spec    SortSpec
	sources []Source
	curs    []mergeCursor
	heap    []int
	started bool
}

type mergeCursor struct {
	batch   arrow.RecordBatch
	keyArrs []arrow.Array
	keys    []SortKeyCol
	row     int
	done    bool
}

// mergeRun is rows [start, end) of one source batch, in output order.
type mergeRun struct {
	batch      arrow.RecordBatch
	start, end int64
}

// NewMerger returns a Merger over sources, whose batches have schema and
// are each sorted by keys.
func NewMerger(mem memory.Allocator, schema *arrow.Schema, keys *SortKeyExprs, spec SortSpec, sources []Source) *Merger {
	return &Merger{mem: mem, schema: schema, keys: keys, spec: spec, sources: sources, curs: make([]mergeCursor, len(sources))}
}

// advance replaces source i's current batch by its next non-empty one, or
// marks it done.
func (m *Merger) advance(ctx context.Context, i int) error {
	c := &m.curs[i]
	c.release()
	for {
		b, err := m.sources[i](ctx)
		if errors.Is(err, io.EOF) {
			c.done = true
			return nil
		}
		if err != nil {
			return err
		}
		if b.NumRows() == 0 {
			b.Release()
			continue
		}
		arrs, keys, err := m.keys.Eval(ctx, m.mem, b)
		if err != nil {
			b.Release()
			return err
		}
		c.batch, c.keyArrs, c.keys, c.row = b, arrs, keys, 0
		return nil
	}
}

func (c *mergeCursor) release() {
	if c.batch != nil {
		c.batch.Release()
		c.batch = nil
	}
	kernel.ReleaseArrays(c.keyArrs)
	c.keyArrs, c.keys = nil, nil
}

// less orders sources a and b by their current rows.
func (m *Merger) less(a, b int) bool {
	x, y := &m.curs[a], &m.curs[b]
	if c := m.spec.Compare(x.keys, x.row, y.keys, y.row); c != 0 {
		return c < 0
	}
	return a < b
}

func (m *Merger) down(i int) {
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

// Next returns the next at most want (> 0) rows in order, or io.EOF once
// every source is done.
func (m *Merger) Next(ctx context.Context, want int64) (arrow.RecordBatch, error) {
	if !m.started {
		m.started = true
		for i := range m.sources {
			if err := m.advance(ctx, i); err != nil {
				return nil, err
			}
			if !m.curs[i].done {
				m.heap = append(m.heap, i)
			}
		}
		for i := len(m.heap)/2 - 1; i >= 0; i-- {
			m.down(i)
		}
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
		c := &m.curs[top]
		row := int64(c.row)
		if n := len(runs); n > 0 && runs[n-1].batch == c.batch && runs[n-1].end == row {
			runs[n-1].end++
		} else {
			c.batch.Retain()
			runs = append(runs, mergeRun{batch: c.batch, start: row, end: row + 1})
		}
		rows++
		c.row++
		if int64(c.row) >= c.batch.NumRows() {
			if err := m.advance(ctx, top); err != nil {
				return nil, err
			}
			if c.done {
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
	return m.assemble(runs, rows)
}

// assemble concatenates the runs into one batch.
func (m *Merger) assemble(runs []mergeRun, rows int64) (arrow.RecordBatch, error) {
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
		out, err := array.Concatenate(parts, m.mem)
		kernel.ReleaseArrays(parts)
		clear(parts)
		if err != nil {
			return nil, execop.LimitErr(qerr.Execf("exec: merge: concatenate column %q: %w", m.schema.Field(c).Name, err))
		}
		cols[c] = out
	}
	return array.NewRecordBatch(m.schema, cols, rows), nil
}

// Close releases the cursors' batches; the sources are the caller's.
func (m *Merger) Close() {
	for i := range m.curs {
		m.curs[i].release()
	}
}
