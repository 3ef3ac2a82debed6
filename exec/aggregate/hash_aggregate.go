package aggregate

import (
	"context"
	"errors"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/quiverdb/quiver/exec/execop"
	"github.com/quiverdb/quiver/exec/filemap"
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
	stateOff []int // Final, mergeStates: first input column of each aggregate's state
	stateN   []int
	table    *hashtable.Table // nil without GROUP BY
	probe    hashtable.Probe
	accs     []accumulator
	ngroups  int
	groupIDs []uint32
	reserved int64
	perGroup int64

	// mergeStates: a Partial aggregate whose input is partial states
	// (rollup.go).
	mergeStates bool

	// dk groups string keys on file dictionary codes (dict_keys.go); nil
	// when no key can be.
	dk *dictKeys
	// fd groups on one integer key while the others, on ids, follow from
	// it (dep_keys.go); nil when off or left.
	fd *depKeys
	// fs groups a Final aggregate on one integer key while the string
	// keys follow from it (dep_keys.go); nil when off or left.
	fs *depStrings

	consumed bool
	emitted  int
	closed   bool

	// Spilling under memory pressure (spill.go).
	types    []arrow.DataType // group key types, to start a new table
	argTypes []arrow.DataType // per aggregate, to start new accumulators
	sp       aggSpill

	skip skipPartial // passing rows through (skip_partial.go)
}

func NewHashAggregate(tc *execop.TaskContext, n *physical.HashAggregate, partition int) (execop.Operator, error) {
	if src, ok := rollupSources(n); ok {
		return newRollup(tc, n, partition, src)
	}
	h, err := newHashAggregate(tc, n, partition, nil)
	if err != nil {
		return nil, err
	}
	h.initSkip() // skip_partial.go
	return h, nil
}

// newHashAggregate builds the aggregate over input, or over partition of
// n.Input when input is nil.
func newHashAggregate(tc *execop.TaskContext, n *physical.HashAggregate, partition int, input execop.Operator) (*hashAggregate, error) {
	return newAggregate(tc, n, partition, input, false)
}

// newAggregate is newHashAggregate; with mergeStates a Partial aggregate
// whose input rows are partial states (n.Input's schema is a Partial
// aggregate's) folds them as a Final one does and emits states.
func newAggregate(tc *execop.TaskContext, n *physical.HashAggregate, partition int, input execop.Operator, mergeStates bool) (*hashAggregate, error) {
	h := &hashAggregate{tc: tc, n: n, m: kernel.ArrayMaker{Mem: tc.Mem}, mergeStates: mergeStates}
	var err error
	if h.keys, err = kernel.CompileExprs(n.GroupBy); err != nil {
		return nil, err
	}
	if len(n.GroupBy) > 0 {
		types := make([]arrow.DataType, len(n.GroupBy))
		for i, g := range n.GroupBy {
			types[i] = g.DataType()
		}
		stats, rows := physical.KeyStats(n.Input, n.GroupBy)
		tableTypes := types
		if n.Mode == physical.AggFinal && !mergeStates {
			if h.fs = newDepStrings(types); h.fs != nil {
				tableTypes = h.fs.leadTypes()
				if len(stats) == len(types) {
					stats = stats[h.fs.lead : h.fs.lead+1]
				}
			}
		}
		if h.table, err = hashtable.NewWithStats(tableTypes, stats, rows); err != nil {
			return nil, err
		}
		h.types = tableTypes
	} else {
		h.ngroups = 1
	}
	inSchema := n.Input.Schema()
	off := len(n.GroupBy)
	for _, a := range n.Aggs {
		var argType arrow.DataType
		switch {
		case h.readsStates():
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
		h.argTypes = append(h.argTypes, argType)
		h.accs = append(h.accs, acc)
		h.perGroup += acc.bytesPerGroup()
	}
	for _, acc := range h.accs {
		acc.resize(h.ngroups)
	}
	if tc.Headroom() < directDistinctRoom {
		preferHashedDistinct(h.accs)
	}
	if h.table != nil {
		h.dk = newDictKeys(n, mergeStates)
	}
	h.initSpill()
	if input == nil {
		if input, err = tc.Build(n.Input, partition); err != nil {
			return nil, err
		}
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
	for {
		switch {
		case h.sp.sub != nil:
			// Re-aggregating a spilled partition (spill.go).
			b, err := h.sp.sub.Next(ctx)
			if err != io.EOF {
				return b, err
			}
			if err := h.nextSpilled(ctx); err != nil {
				return nil, err
			}
			if h.sp.sub == nil {
				return nil, io.EOF
			}
		case h.sp.flushing:
			// A partial aggregate under memory pressure emits the groups
			// it has, starts afresh, and goes on (spill.go).
			if h.emitted < h.ngroups {
				return h.emitNext(), nil
			}
			if err := h.resetGroups(); err != nil {
				return nil, err
			}
			h.sp.flushing = false
		case h.skip.on && !h.consumed:
			return h.nextPassed(ctx) // skip_partial.go
		case !h.consumed:
			flush, err := h.consume(ctx)
			if err != nil {
				return nil, err
			}
			if flush {
				h.sp.flushing = true
				continue
			}
			h.consumed = true
			h.doneSpilling()
			if len(h.sp.files) > 0 {
				if err := h.startSpilled(ctx); err != nil {
					return nil, err
				}
				if h.sp.sub == nil {
					return nil, io.EOF
				}
			}
		default:
			if h.emitted >= h.ngroups {
				return nil, io.EOF
			}
			return h.emitNext(), nil
		}
	}
}

// emitNext emits the next batch of groups.
func (h *hashAggregate) emitNext() arrow.RecordBatch {
	end := h.emitEnd(h.emitted) // spill.go
	b := h.emit(h.emitted, end)
	h.emitted = end
	return b
}

// consume processes input to its end, or until a partial aggregate under
// memory pressure must flush its groups first (flush true; the batch that
// found the pressure waits in sp.pending).
func (h *hashAggregate) consume(ctx context.Context) (flush bool, err error) {
	for {
		if err := ctx.Err(); err != nil {
			return false, err
		}
		b := h.sp.pending
		h.sp.pending = nil
		if b == nil {
			if b, err = h.input.Next(ctx); err == io.EOF {
				return false, nil
			}
			if err != nil {
				return false, err
			}
		}
		rows := b.NumRows()
		if flush, err := h.processChunks(ctx, b); err != nil || flush {
			return flush, err
		}
		if h.decideSkip(rows) {
			return true, nil // flush the groups, then pass rows through
		}
	}
}

// processChunks folds b (which it takes over) in slices small enough that
// each one's worst case fits in half the memory left (spill.go: chunkRows,
// measured again for every slice, as spilling changes it), so that a limit
// smaller than one batch's worst case slows the aggregate down instead of
// failing it. A flush leaves the unprocessed rest of b in sp.pending.
func (h *hashAggregate) processChunks(ctx context.Context, b arrow.RecordBatch) (flush bool, err error) {
	defer b.Release()
	n := b.NumRows()
	for off := int64(0); off < n; {
		rows, flush, err := h.processChunk(ctx, b, off)
		if errors.Is(err, errRechunk) {
			continue // spilled, or the slice did not fit: size it again
		}
		h.sp.maxChunk = 0
		if flush {
			h.sp.pending = b.NewSlice(off, n)
			return true, nil
		}
		if err != nil {
			return false, err
		}
		off += rows
	}
	return false, nil
}

// processChunk folds the first chunkRows rows of b from row off on and
// says how many that was. Every slice it makes is released, also when a
// memory limit crossed inside panics up to the operator boundary.
func (h *hashAggregate) processChunk(ctx context.Context, b arrow.RecordBatch, off int64) (rows int64, flush bool, err error) {
	part := b
	if off > 0 {
		part = b.NewSlice(off, b.NumRows())
	} else {
		part.Retain()
	}
	defer func() { part.Release() }()
	if rows, err = h.chunkRows(ctx, part); err != nil {
		return 0, false, err
	}
	if rows < part.NumRows() {
		whole := part
		part = whole.NewSlice(0, rows)
		whole.Release()
	}
	if h.bigSetRow(part) {
		return rows, false, h.processPieces(ctx, part) // value_spill.go
	}
	flush, err = h.process(ctx, part)
	return rows, flush, err
}

// size is the non-Arrow memory the aggregate holds now.
func (h *hashAggregate) size() int64 {
	n := int64(h.ngroups)*h.perGroup + int64(cap(h.groupIDs))*4
	if h.table != nil {
		n += h.table.MemSize()
	}
	if h.dk != nil && h.dk.decided {
		n += h.dk.memSize()
	}
	if h.fd != nil {
		n += h.fd.memSize()
	}
	if h.fs != nil {
		n += h.fs.memSize()
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
	if h.sp.mem != nil {
		h.sp.mem.SetHeld(want)
	}
	return nil
}

// process folds b into the groups. Under memory pressure a partial
// aggregate asks to flush first (flush true, b untouched), and a final or
// single one spills its groups and goes on (spill.go).
func (h *hashAggregate) process(ctx context.Context, b arrow.RecordBatch) (flush bool, err error) {
	n := int(b.NumRows())
	if n == 0 {
		return false, nil
	}
	keys, err := h.evalKeys(ctx, b)
	if err != nil {
		return false, err
	}
	defer kernel.ReleaseArrays(keys)

	// Reserve the worst case first: every row a new group.
	worst := h.worstCase(keys, b)
	h.sp.worstPerRow = max(1, worst/int64(n))
	if h.underPressure(worst) {
		if h.n.Mode == physical.AggPartial {
			return true, nil
		}
		if err := h.spillGroups(ctx); err != nil {
			return false, err
		}
		// A fresh table's worst case differs from the full one's.
		return false, errRechunk
	}
	if err := h.reserveTo(h.size() + worst); err != nil {
		// Other operators of the task took the memory: spill or flush
		// what is held, if anything, and try once more.
		if !h.sp.ok || h.holdsNothing() {
			if n > 1 {
				// Nothing held to free: fold the batch in smaller slices.
				h.sp.maxChunk = int64(n / 2)
				return false, errRechunk
			}
			return false, err
		}
		if h.n.Mode == physical.AggPartial {
			return true, nil
		}
		if err := h.spillGroups(ctx); err != nil {
			return false, err
		}
		return false, errRechunk
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
		if h.readsStates() {
			off := h.stateOff[i]
			if err := acc.merge(ctx, gids, b.Columns()[off:off+h.stateN[i]]); err != nil {
				return false, err
			}
			continue
		}
		if !h.hasArg[i] {
			if err := acc.update(ctx, gids, nil); err != nil {
				return false, err
			}
			continue
		}
		arg, err := h.args[i].Eval(ctx, h.tc.Mem, b)
		if err != nil {
			return false, err
		}
		err = acc.update(ctx, gids, arg)
		arg.Release()
		if err != nil {
			return false, err
		}
	}
	if err := h.reserveTo(h.size()); err != nil {
		// A generic DISTINCT set's worst case is an estimate: when the
		// batch took more, a Final or Single aggregate spills its groups,
		// the batch's included, which gives the memory back.
		if h.n.Mode == physical.AggPartial || !h.canSpill() {
			return false, err
		}
		return false, h.spillGroups(ctx)
	}
	return false, nil
}

// evalKeys evaluates b's group keys as the table takes them: the keys
// grouped on dictionary codes as Int32 ids (dict_keys.go), decided at the
// first batch while the table is still empty; while the other keys follow
// from an integer key, that key alone (dep_keys.go).
func (h *hashAggregate) evalKeys(ctx context.Context, b arrow.RecordBatch) ([]arrow.Array, error) {
	if h.dk == nil {
		keys, err := kernel.EvalAll(ctx, h.tc.Mem, h.keys, b)
		if err != nil || h.fs == nil {
			return keys, err
		}
		return h.leadKey(keys)
	}
	keys, err := h.dk.evalKeys(ctx, h.tc.Mem, h.keys, b)
	if err != nil {
		return nil, err
	}
	if !h.dk.decided {
		types := append([]arrow.DataType(nil), h.types...)
		if h.table.Len() != 0 || !h.dk.decide(keys, types) {
			cases := h.dk.hasCases()
			h.dk = nil
			if !cases {
				return keys, nil
			}
			kernel.ReleaseArrays(keys) // a CASE key may be ids: evaluate every key as it is
			return kernel.EvalAll(ctx, h.tc.Mem, h.keys, b)
		}
		h.fd = newDepKeys(h.dk.on, types)
		tableTypes := types
		if h.fd != nil {
			tableTypes = h.fd.leadTypes()
		}
		t, err := hashtable.New(tableTypes)
		if err != nil {
			kernel.ReleaseArrays(keys)
			return nil, err
		}
		h.table, h.types = t, tableTypes
	}
	var fds []*filemap.FileDep
	if h.fd != nil {
		fds = h.fd.fileDeps(keys) // before the strings become ids
	}
	h.dk.encode(keys)
	if h.fd == nil {
		return keys, nil
	}
	var recorded bool
	if fds != nil && h.dk.idsAreCodes(fds) {
		recorded = h.fd.mergeFile(fds, int(b.NumRows()))
	} else {
		recorded = h.fd.record(keys)
	}
	if !recorded {
		t, err := h.fd.leave(&h.m, h.table)
		if err != nil {
			kernel.ReleaseArrays(keys)
			return nil, err
		}
		h.table, h.types, h.fd = t, h.fd.full, nil
		h.probe = hashtable.Probe{}
		return keys, nil
	}
	lead := keys[h.fd.lead]
	for i, k := range keys {
		if i != h.fd.lead {
			k.Release()
		}
	}
	return []arrow.Array{lead}, nil
}

// leadKey returns the lead of keys (every key) while the string keys
// follow from it, else keys, after moving the groups to a table of every
// key (dep_keys.go).
func (h *hashAggregate) leadKey(keys []arrow.Array) ([]arrow.Array, error) {
	if !h.fs.record(keys) {
		if err := h.leaveDepStrings(); err != nil {
			kernel.ReleaseArrays(keys)
			return nil, err
		}
		return keys, nil
	}
	lead := keys[h.fs.lead]
	for i, k := range keys {
		if i != h.fs.lead {
			k.Release()
		}
	}
	return []arrow.Array{lead}, nil
}

// leaveDepStrings moves the groups to a table of every key and stops
// grouping on the lead alone.
func (h *hashAggregate) leaveDepStrings() error {
	t, err := h.fs.leave(&h.m, h.table)
	if err != nil {
		return err
	}
	h.table, h.types, h.fs = t, h.fs.full, nil
	h.probe = hashtable.Probe{}
	return nil
}

// worstCase is what folding b (with group keys keys) can add: every row a
// new group.
func (h *hashAggregate) worstCase(keys []arrow.Array, b arrow.RecordBatch) int64 {
	n := int(b.NumRows())
	worst := int64(n)*(h.perGroup+4) + int64(n)*64*int64(len(h.accs))
	if h.table != nil {
		worst += h.table.WorstCase(keys, n)
	}
	for i, a := range h.accs {
		if w, ok := a.(worstCaser); ok {
			worst += w.worstCase(h.values(i, b))
		}
	}
	return worst
}

// values is how many values aggregate i takes from b: its rows, or in
// Final mode with a list state (DISTINCT sets) the lists' values.
func (h *hashAggregate) values(i int, b arrow.RecordBatch) int {
	n := int(b.NumRows())
	if !h.readsStates() || n == 0 {
		return n
	}
	if l, ok := b.Column(h.stateOff[i]).(*array.List); ok {
		lo, _ := l.ValueOffsets(0)
		_, hi := l.ValueOffsets(n - 1)
		return max(n, int(hi-lo))
	}
	return n
}

// readsStates says whether the input rows are partial states, not rows.
func (h *hashAggregate) readsStates() bool {
	return h.n.Mode == physical.AggFinal || h.mergeStates
}

// emit builds the output batch of groups [start, end).
func (h *hashAggregate) emit(start, end int) arrow.RecordBatch {
	if h.sp.innerOut {
		return h.emitInner(start, end) // a file split by value (value_spill.go)
	}
	schema := h.n.Schema()
	cols := make([]arrow.Array, 0, schema.NumFields())
	if h.table != nil {
		for _, k := range h.table.Keys {
			cols = append(cols, k.Build(&h.m, start, end))
		}
		if h.fd != nil {
			cols = h.fd.expand(h.tc.Mem, cols[0])
		}
		if h.fs != nil {
			cols = h.fs.expand(h.tc.Mem, cols[0])
		}
		if h.dk != nil && h.dk.decided {
			h.dk.decode(h.tc.Mem, cols)
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
	if m := h.tc.NodeMetrics(h.n); m != nil && h.table != nil {
		m.AddTables(h.table.Figures())
	}
	spillErr := h.closeSpill()
	h.tc.Shrink(h.reserved)
	h.reserved = 0
	h.table, h.accs = nil, nil
	return errors.Join(h.input.Close(), spillErr)
}
