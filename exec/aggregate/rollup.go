package aggregate

import (
	"context"
	"errors"
	"io"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver/exec/execop"
	"github.com/quiverdb/quiver/exec/kernel"
	"github.com/quiverdb/quiver/physical"
)

// rollup runs one partition of a Partial aggregate grouped by an Expand's
// keys and set ordinal, when the Expand's first set holds every key: the
// input rows are hashed once, for the first set, and every later set folds
// the partial states of the groups of an earlier set that contains it
// (rollupSources), so each set costs its source's groups, not the input's
// rows. The output is the rows the plain aggregate gives, in another order.
//
// The Expand still runs below; its batches of the other sets are dropped
// unread, and its filler rows (the empty sets' groups over no input) go
// through a plain aggregate of their own, so they are never folded into a
// later set.
type rollup struct {
	tc        *execop.TaskContext
	n         *physical.HashAggregate
	ex        *physical.Expand
	partition int
	src       []int // per set, the set whose groups it folds (-1: the input)
	lastUse   []int // per set, the last set that folds it (-1: none)

	input   *firstSet
	fillers []arrow.RecordBatch
	outs    [][]arrow.RecordBatch // per set, its output while a later set folds it
	pending []arrow.RecordBatch   // output not yet returned
	cur     int                   // the next set to compute
	filled  bool                  // the filler rows' groups are computed
	closed  bool
}

// rollupSources says whether n, a Partial aggregate, can be run as a rollup
// and if so returns, per grouping set, the set it is folded from: the set
// of fewest keys among the earlier ones holding all of its keys (the first
// set, which holds every key, for set 0 -1).
func rollupSources(n *physical.HashAggregate) ([]int, bool) {
	ex, ok := n.Input.(*physical.Expand)
	if !ok || n.Mode != physical.AggPartial || len(ex.Sets) < 2 || len(ex.Sets[0]) != len(ex.Keys) {
		return nil, false
	}
	w, k := ex.Input.Schema().NumFields(), len(ex.Keys)
	if len(n.GroupBy) != k+1 {
		return nil, false
	}
	for i, g := range n.GroupBy {
		if c, ok := g.(*physical.Column); !ok || c.Index != w+i {
			return nil, false
		}
	}
	for _, a := range n.Aggs {
		if a.Distinct || a.SetState {
			return nil, false
		}
	}
	src := make([]int, len(ex.Sets))
	src[0] = -1
	for s := 1; s < len(ex.Sets); s++ {
		src[s] = 0
		for t := 1; t < s; t++ {
			if len(ex.Sets[t]) <= len(ex.Sets[src[s]]) && containsAll(ex.Sets[t], ex.Sets[s]) {
				src[s] = t
			}
		}
	}
	return src, true
}

func containsAll(set, sub []int) bool {
	for _, k := range sub {
		if !slices.Contains(set, k) {
			return false
		}
	}
	return true
}

func newRollup(tc *execop.TaskContext, n *physical.HashAggregate, partition int, src []int) (*rollup, error) {
	ex := n.Input.(*physical.Expand)
	r := &rollup{tc: tc, n: n, ex: ex, partition: partition, src: src,
		lastUse: make([]int, len(src)), outs: make([][]arrow.RecordBatch, len(src))}
	for s := range r.lastUse {
		r.lastUse[s] = -1
	}
	for s, t := range src {
		if t >= 0 {
			r.lastUse[t] = s
		}
	}
	in, err := tc.Build(ex, partition)
	if err != nil {
		return nil, err
	}
	w, k := ex.Input.Schema().NumFields(), len(ex.Keys)
	r.input = &firstSet{input: in, ordinal: w + k, marker: -1, fillers: &r.fillers}
	if ex.HasEmptySet() {
		r.input.marker = w + k + 1
	}
	return r, nil
}

func (r *rollup) Open(ctx context.Context) error { return r.input.Open(ctx) }

func (r *rollup) Next(ctx context.Context) (arrow.RecordBatch, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if len(r.pending) > 0 {
			b := r.pending[0]
			r.pending[0] = nil
			r.pending = r.pending[1:]
			return b, nil
		}
		switch {
		case r.cur < len(r.src):
			if err := r.compute(ctx, r.cur); err != nil {
				return nil, err
			}
			r.cur++
		case !r.filled:
			r.filled = true
			if len(r.fillers) == 0 {
				continue
			}
			src := &batches{list: r.fillers}
			r.fillers = nil
			agg, err := newHashAggregate(r.tc, r.n, r.partition, src)
			if err != nil {
				src.Close()
				return nil, err
			}
			if err := r.drain(ctx, agg, false, nil); err != nil {
				return nil, err
			}
		default:
			return nil, io.EOF
		}
	}
}

// compute runs set s's aggregate to its end, queueing its output (and
// keeping it while a later set folds it), then drops the outputs no later
// set folds.
func (r *rollup) compute(ctx context.Context, s int) error {
	var agg *hashAggregate
	var err error
	if r.src[s] < 0 {
		if agg, err = newHashAggregate(r.tc, r.n, r.partition, r.input); err == nil {
			r.input = nil // the aggregate closes it
		}
	} else {
		agg, err = r.folder(s)
	}
	if err != nil {
		return err
	}
	if err := r.drain(ctx, agg, r.lastUse[s] > s, &r.outs[s]); err != nil {
		return err
	}
	for t := range r.outs {
		if r.lastUse[t] <= s && r.outs[t] != nil {
			releaseBatches(r.outs[t])
			r.outs[t] = nil
		}
	}
	return nil
}

// folder builds the aggregate of set s over the partial states of its
// source set's groups, recast as set s's groups.
func (r *rollup) folder(s int) (*hashAggregate, error) {
	k := len(r.ex.Keys)
	schema := r.n.Schema()
	groups := make([]physical.Expr, k+1)
	for i := range groups {
		groups[i] = &physical.Column{Index: i, Name: r.n.GroupNames[i], Type: schema.Field(i).Type}
	}
	keep := make([]bool, k)
	for _, key := range r.ex.Sets[s] {
		keep[key] = true
	}
	node := &physical.HashAggregate{Input: r.n, Mode: physical.AggPartial, GroupBy: groups, GroupNames: r.n.GroupNames, Aggs: r.n.Aggs}
	in := &recast{list: r.outs[r.src[s]], schema: schema, keep: keep, ordinal: int32(s), mem: r.tc.Mem}
	return newAggregate(r.tc, node, r.partition, in, true)
}

// drain opens agg, queues all its output (keeping a reference in *keep
// when hold), and closes it.
func (r *rollup) drain(ctx context.Context, agg *hashAggregate, hold bool, keep *[]arrow.RecordBatch) error {
	err := agg.Open(ctx)
	for err == nil {
		var b arrow.RecordBatch
		if b, err = agg.Next(ctx); err != nil {
			break
		}
		if hold {
			b.Retain()
			*keep = append(*keep, b)
		}
		r.pending = append(r.pending, b)
	}
	if err == io.EOF {
		err = nil
	}
	return errors.Join(err, agg.Close())
}

func (r *rollup) Close() error {
	if r.closed {
		return nil
	}
	r.closed = true
	var err error
	if r.input != nil {
		err = r.input.Close()
	}
	releaseBatches(r.pending)
	releaseBatches(r.fillers)
	for _, o := range r.outs {
		releaseBatches(o)
	}
	r.pending, r.fillers, r.outs = nil, nil, nil
	return err
}

// firstSet passes on the Expand's batches of set 0 and sets aside its
// filler rows; the batches of the other sets it drops. The Expand emits
// each batch for one set, so the ordinal and marker of its first row tell.
type firstSet struct {
	input   execop.Operator
	opened  bool // Open reached the input: the aggregate over firstSet opens it again
	ordinal int  // the ordinal column
	marker  int  // the row marker column, -1 without
	fillers *[]arrow.RecordBatch
}

func (f *firstSet) Open(ctx context.Context) error {
	if f.opened {
		return nil
	}
	f.opened = true
	return f.input.Open(ctx)
}

func (f *firstSet) Next(ctx context.Context) (arrow.RecordBatch, error) {
	for {
		b, err := f.input.Next(ctx)
		if err != nil {
			return nil, err
		}
		switch {
		case b.NumRows() == 0:
			b.Release()
		case f.marker >= 0 && b.Column(f.marker).IsNull(0):
			*f.fillers = append(*f.fillers, b)
		case b.Column(f.ordinal).(*array.Int32).Value(0) == 0:
			return b, nil
		default:
			b.Release()
		}
	}
}

func (f *firstSet) Close() error { return f.input.Close() }

// recast yields a set's output batches as another set's input: the keys
// that set does not group by NULL, and its ordinal.
type recast struct {
	list    []arrow.RecordBatch // not owned
	schema  *arrow.Schema
	keep    []bool // per key
	ordinal int32
	mem     memory.Allocator
	next    int
}

func (c *recast) Open(context.Context) error { return nil }

func (c *recast) Next(context.Context) (arrow.RecordBatch, error) {
	if c.next >= len(c.list) {
		return nil, io.EOF
	}
	b := c.list[c.next]
	c.next++
	n := int(b.NumRows())
	cols := slices.Clone(b.Columns())
	var made []arrow.Array
	defer func() { kernel.ReleaseArrays(made) }()
	for i, keep := range c.keep {
		if !keep {
			cols[i] = array.MakeArrayOfNull(c.mem, c.schema.Field(i).Type, n)
			made = append(made, cols[i])
		}
	}
	ob := array.NewInt32Builder(c.mem)
	defer ob.Release()
	ob.Reserve(n)
	for range n {
		ob.UnsafeAppend(c.ordinal)
	}
	ord := ob.NewArray()
	made = append(made, ord)
	cols[len(c.keep)] = ord
	// NewRecordBatch retains every column.
	return array.NewRecordBatch(c.schema, cols, int64(n)), nil
}

func (c *recast) Close() error { return nil }

// batches yields a list of batches it owns.
type batches struct {
	list []arrow.RecordBatch
}

func (s *batches) Open(context.Context) error { return nil }

func (s *batches) Next(context.Context) (arrow.RecordBatch, error) {
	if len(s.list) == 0 {
		return nil, io.EOF
	}
	b := s.list[0]
	s.list[0] = nil
	s.list = s.list[1:]
	return b, nil
}

func (s *batches) Close() error {
	releaseBatches(s.list)
	s.list = nil
	return nil
}

func releaseBatches(bs []arrow.RecordBatch) {
	for _, b := range bs {
		if b != nil {
			b.Release()
		}
	}
}
