package aggregate

import (
	"context"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/quiverdb/quiver/exec/execop"
	"github.com/quiverdb/quiver/exec/hashtable"
	"github.com/quiverdb/quiver/exec/kernel"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
)

// hashAggregate runs one partition of a physical.HashAggregate.
//
// It drains its input on the first Next: per batch it hashes the group keys
// (HashColumns), maps every row to a dense group id in a hashTable (keys
// stored columnar), then updates each aggregate's flat typed state over the
// (group id, value) pairs. After the input ends it emits the groups in id
// order, BatchSize rows at a time. Without GROUP BY there is exactly one
// group, so even empty input yields one row in every mode.
//
// Memory: before each input batch it reserves (tc.Grow) the worst case the
// batch can add (every row a new group) and returns the unused part after;
// everything is returned on Close.
type hashAggregate struct {
	tc    *execop.TaskContext
	n     *physical.HashAggregate
	input execop.Operator
	m     kernel.ArrayMaker

	keys     []kernel.ExprRunner
	args     []kernel.ExprRunner // Partial/Single: per aggregate (col -1 and ev nil: COUNT(*))
	hasArg   []bool
	stateOff []int // Final: first input column of each aggregate's state
	stateN   []int
	table    *hashtable.Table // nil without GROUP BY
	probe    hashtable.Probe
	accs     []accumulator
	ngroups  int
	groupIDs []uint32
	reserved int64
	perGroup int64

	consumed bool
	emitted  int
	closed   bool
}

func NewHashAggregate(tc *execop.TaskContext, n *physical.HashAggregate, partition int) (execop.Operator, error) {
	h := &hashAggregate{tc: tc, n: n, m: kernel.ArrayMaker{Mem: tc.Mem}}
	var err error
	if h.keys, err = kernel.CompileExprs(n.GroupBy); err != nil {
		return nil, err
	}
	if len(n.GroupBy) > 0 {
		types := make([]arrow.DataType, len(n.GroupBy))
		for i, g := range n.GroupBy {
			types[i] = g.DataType()
		}
		if h.table, err = hashtable.New(types); err != nil {
			return nil, err
		}
	} else {
		h.ngroups = 1
	}
	inSchema := n.Input.Schema()
	off := len(n.GroupBy)
	for _, a := range n.Aggs {
		var argType arrow.DataType
		switch {
		case n.Mode == physical.AggFinal:
			k := len(a.StateFields())
			if off+k > inSchema.NumFields() {
				return nil, qerr.Internalf("exec/hashagg: final aggregate %s: input has %d columns, state needs %d from column %d", a.Name, inSchema.NumFields(), k, off)
			}
			h.stateOff = append(h.stateOff, off)
			h.stateN = append(h.stateN, k)
			off += k
			if a.Arg != nil {
				argType = a.Arg.DataType()
			}
			h.args = append(h.args, kernel.ExprRunner{Col: -1})
			h.hasArg = append(h.hasArg, false)
		case a.Arg != nil:
			r, err := kernel.CompileExpr(a.Arg)
			if err != nil {
				return nil, err
			}
			argType = a.Arg.DataType()
			h.args = append(h.args, r)
			h.hasArg = append(h.hasArg, true)
		default:
			h.args = append(h.args, kernel.ExprRunner{Col: -1})
			h.hasArg = append(h.hasArg, false)
		}
		acc, err := newAccumulator(a, argType, n.Mode, tc.Mem)
		if err != nil {
			return nil, err
		}
		h.accs = append(h.accs, acc)
		h.perGroup += acc.bytesPerGroup()
	}
	for _, acc := range h.accs {
		acc.resize(h.ngroups)
	}
	input, err := tc.Build(n.Input, partition)
	if err != nil {
		return nil, err
	}
	h.input = input
	return h, nil
}

func (h *hashAggregate) Open(ctx context.Context) error { return h.input.Open(ctx) }

func (h *hashAggregate) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if h.closed {
		return nil, qerr.Internalf("exec/hashagg: Next after Close")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !h.consumed {
		if err := h.consume(ctx); err != nil {
			return nil, err
		}
		h.consumed = true
	}
	if h.emitted >= h.ngroups {
		return nil, io.EOF
	}
	end := min(h.emitted+h.tc.BatchRows(), h.ngroups)
	b := h.emit(h.emitted, end)
	h.emitted = end
	return b, nil
}

func (h *hashAggregate) consume(ctx context.Context) error {
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		b, err := h.input.Next(ctx)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := h.processReleasing(ctx, b); err != nil {
			return err
		}
	}
}

// processReleasing is process that then releases b, also when process
// panics (a memory limit crossed in an expression panics up to the
// operator boundary).
func (h *hashAggregate) processReleasing(ctx context.Context, b arrow.RecordBatch) error {
	defer b.Release()
	return h.process(ctx, b)
}

// size is the non-Arrow memory the aggregate holds now.
func (h *hashAggregate) size() int64 {
	n := int64(h.ngroups)*h.perGroup + int64(cap(h.groupIDs))*4
	if h.table != nil {
		n += h.table.MemSize()
	}
	for _, a := range h.accs {
		if l, ok := a.(layoutSizer); ok {
			n += l.memSize()
		}
	}
	return n
}

// layoutSizer is an accumulator holding memory besides bytesPerGroup a
// group (a DISTINCT set), accounted by the aggregate after each batch.
type layoutSizer interface{ memSize() int64 }

// worstCaser is an accumulator that can bound what a batch of n more
// values adds to its layout, reserved before the batch runs.
type worstCaser interface{ worstCase(n int) int64 }

// reserveTo adjusts the reservation to exactly want bytes.
func (h *hashAggregate) reserveTo(want int64) error {
	if want > h.reserved {
		if err := h.tc.Grow(want - h.reserved); err != nil {
			return qerr.Resourcesf("exec/hashagg: %s: %w", h.n, err)
		}
	} else if want < h.reserved {
		h.tc.Shrink(h.reserved - want)
	}
	h.reserved = want
	return nil
}

func (h *hashAggregate) process(ctx context.Context, b arrow.RecordBatch) error {
	n := int(b.NumRows())
	if n == 0 {
		return nil
	}
	keys, err := kernel.EvalAll(ctx, h.tc.Mem, h.keys, b)
	if err != nil {
		return err
	}
	defer kernel.ReleaseArrays(keys)

	// Reserve the worst case first: every row a new group.
	worst := int64(n)*(h.perGroup+4) + int64(n)*64*int64(len(h.accs))
	if h.table != nil {
		worst += h.table.WorstCase(keys, n)
	}
	for i, a := range h.accs {
		if w, ok := a.(worstCaser); ok {
			worst += w.worstCase(h.values(i, b))
		}
	}
	if err := h.reserveTo(h.size() + worst); err != nil {
		return err
	}

	h.groupIDs = kernel.GrowSlice(h.groupIDs[:0], n)
	gids := h.groupIDs[:n]
	if h.table != nil {
		h.table.FindOrInsert(&h.probe, keys, n, nil, gids)
		h.ngroups = h.table.Len()
	} else {
		clear(gids)
	}
	for _, acc := range h.accs {
		acc.resize(h.ngroups)
	}
	for i, acc := range h.accs {
		if h.n.Mode == physical.AggFinal {
			off := h.stateOff[i]
			if err := acc.merge(ctx, gids, b.Columns()[off:off+h.stateN[i]]); err != nil {
				return err
			}
			continue
		}
		if !h.hasArg[i] {
			if err := acc.update(ctx, gids, nil); err != nil {
				return err
			}
			continue
		}
		arg, err := h.args[i].Eval(ctx, h.tc.Mem, b)
		if err != nil {
			return err
		}
		err = acc.update(ctx, gids, arg)
		arg.Release()
		if err != nil {
			return err
		}
	}
	return h.reserveTo(h.size())
}

// values is how many values aggregate i takes from b: its rows, or in
// Final mode with a list state (DISTINCT sets) the lists' values.
func (h *hashAggregate) values(i int, b arrow.RecordBatch) int {
	n := int(b.NumRows())
	if h.n.Mode != physical.AggFinal || n == 0 {
		return n
	}
	if l, ok := b.Column(h.stateOff[i]).(*array.List); ok {
		lo, _ := l.ValueOffsets(0)
		_, hi := l.ValueOffsets(n - 1)
		return max(n, int(hi-lo))
	}
	return n
}

// emit builds the output batch of groups [start, end).
func (h *hashAggregate) emit(start, end int) arrow.RecordBatch {
	schema := h.n.Schema()
	cols := make([]arrow.Array, 0, schema.NumFields())
	if h.table != nil {
		for _, k := range h.table.Keys {
			cols = append(cols, k.Build(&h.m, start, end))
		}
	}
	for _, acc := range h.accs {
		if h.n.Mode == physical.AggPartial {
			cols = append(cols, acc.state(&h.m, start, end)...)
		} else {
			cols = append(cols, acc.final(&h.m, start, end))
		}
	}
	defer kernel.ReleaseArrays(cols)
	return array.NewRecordBatch(schema, cols, int64(end-start))
}

func (h *hashAggregate) Close() error {
	if h.closed {
		return nil
	}
	h.closed = true
	h.tc.Shrink(h.reserved)
	h.reserved = 0
	h.table, h.accs = nil, nil
	return h.input.Close()
}
