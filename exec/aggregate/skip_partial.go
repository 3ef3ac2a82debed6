package aggregate

import (
	"context"
	"io"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/quiverdb/quiver/exec/kernel"
	"github.com/quiverdb/quiver/physical"
)

// Skipping the partial phase. A Partial aggregate whose groups turn out
// nearly as many as its rows saves the Final one nothing and costs a hash
// of every row: after its first probeRows input rows, when its groups
// exceed ratio × those rows, it emits the groups it holds (as a flush
// does) and from then on turns each input batch straight into partial
// states, one per row, through fresh accumulators given the identity group
// ids, so every state (counts, sums, NULL handling) is exactly the one a
// group of that single row would have had. DISTINCT and collecting
// aggregates never skip, nor do aggregates without GROUP BY, over partial
// states, or folding grouping sets.

// skipPartial is the pass-through state of one hashAggregate.
type skipPartial struct {
	ratio     float64 // groups/rows above which it skips; 0: never
	probeRows int64   // input rows seen before deciding
	seen      int64   // input rows folded so far
	decided   bool
	on        bool     // passing rows through
	ids       []uint32 // identity group ids
}

// passedRows counts rows passed through as partial states (PassedRows).
var passedRows atomic.Int64

// PassedRows is the number of input rows partial aggregates have passed
// through without aggregating since the process started (for tests and
// profiles).
func PassedRows() int64 { return passedRows.Load() }

// initSkip arms skipping when the aggregate may skip and the task's
// settings ask.
func (h *hashAggregate) initSkip() {
	if p := h.tc.SkipPartial.Percent; p > 0 && p < 100 && h.canSkip() {
		h.skip.ratio, h.skip.probeRows = float64(p)/100, max(1, h.tc.SkipPartial.ProbeRows)
	}
}

// canSkip says whether the aggregate may pass rows through at all.
func (h *hashAggregate) canSkip() bool {
	if h.n.Mode != physical.AggPartial || h.mergeStates || h.table == nil {
		return false
	}
	for _, a := range h.n.Aggs {
		if a.Distinct || a.SetState || a.Collects() {
			return false
		}
	}
	return true
}

// decideSkip counts rows more input rows folded and, once probeRows are
// in, decides whether to skip; true means flush the groups and skip.
func (h *hashAggregate) decideSkip(rows int64) bool {
	s := &h.skip
	if s.ratio == 0 || s.decided {
		return false
	}
	s.seen += rows
	if s.seen < s.probeRows {
		return false
	}
	s.decided = true
	s.on = float64(h.ngroups) > s.ratio*float64(s.seen)
	return s.on
}

// passNext turns the next input batch into one partial state per row;
// io.EOF at the input's end.
func (h *hashAggregate) passNext(ctx context.Context) (arrow.RecordBatch, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		b := h.sp.pending
		h.sp.pending = nil
		if b == nil {
			var err error
			if b, err = h.input.Next(ctx); err != nil {
				return nil, err
			}
		}
		if b.NumRows() == 0 {
			b.Release()
			continue
		}
		out, err := h.passBatch(ctx, b)
		b.Release()
		return out, err
	}
}

// passBatch is b's rows as partial states.
func (h *hashAggregate) passBatch(ctx context.Context, b arrow.RecordBatch) (arrow.RecordBatch, error) {
	n := int(b.NumRows())
	if err := h.reserveTo(h.size() + int64(n)*h.perGroup); err != nil {
		return nil, err
	}
	if len(h.skip.ids) < n {
		h.skip.ids = make([]uint32, n)
		for i := range h.skip.ids {
			h.skip.ids[i] = uint32(i)
		}
	}
	gids := h.skip.ids[:n]
	cols, err := kernel.EvalAll(ctx, h.tc.Mem, h.keys, b)
	if err != nil {
		return nil, err
	}
	for i, a := range h.n.Aggs {
		acc, err := newAccumulator(a, h.argTypes[i], h.n.Mode, h.tc.Mem)
		if err != nil {
			kernel.ReleaseArrays(cols)
			return nil, err
		}
		acc.resize(n)
		var arg arrow.Array
		if h.hasArg[i] {
			if arg, err = h.args[i].Eval(ctx, h.tc.Mem, b); err != nil {
				kernel.ReleaseArrays(cols)
				return nil, err
			}
		}
		err = acc.update(ctx, gids, arg)
		if arg != nil {
			arg.Release()
		}
		if err != nil {
			kernel.ReleaseArrays(cols)
			return nil, err
		}
		cols = append(cols, acc.state(&h.m, 0, n)...)
	}
	defer kernel.ReleaseArrays(cols)
	if err := h.reserveTo(h.size()); err != nil {
		return nil, err
	}
	passedRows.Add(int64(n))
	return array.NewRecordBatch(h.n.Schema(), cols, int64(n)), nil
}

// nextPassed is Next while passing rows through: io.EOF ends the input,
// after which nothing is left to emit.
func (h *hashAggregate) nextPassed(ctx context.Context) (arrow.RecordBatch, error) {
	b, err := h.passNext(ctx)
	if err == io.EOF {
		h.consumed = true
		h.emitted = h.ngroups
		h.doneSpilling()
	}
	return b, err
}
