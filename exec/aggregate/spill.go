package aggregate

import (
	"context"
	"errors"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/quiverdb/quiver/exec/execop"
	"github.com/quiverdb/quiver/exec/hashtable"
	"github.com/quiverdb/quiver/exec/kernel"
	"github.com/quiverdb/quiver/exec/spill"
	"github.com/quiverdb/quiver/physical"
)

// Memory pressure. Before each input batch the aggregate compares what the
// batch can add plus what emitting its groups will take with the room left
// in its fair share of the task's and the executor's limits (an
// execop.Spiller: an aggregate that can flush or spill is a spillable
// consumer while it reads its input); when it would not fit:
//
//   - a Partial aggregate emits the partial states of the groups it holds,
//     starts afresh and goes on: the Final phase merges states whatever
//     their number, so nothing is written to disk;
//   - a Final or Single aggregate writes its groups' partial states to
//     spillPartitions files, split by a hash of the group keys, starts
//     afresh and goes on; at the end it writes the rest too, then
//     aggregates each file on its own in Final mode (each holds about
//     1/spillPartitions of the groups), emitting as it would have; a file
//     whose groups still do not fit is spilled again the same way, split
//     by the next bits of the hash, up to spillLevels levels.
//
// A DISTINCT aggregate's state is the set of its group's values, written
// as a list and united again by the Final re-aggregation (as in the plan
// by sets, docs/design/distinct-sets.md); a collecting aggregate's state
// is its group's rows as a list, which merges as it is. Splitting by group
// keeps each group's set whole in one file. When the groups are too few
// for that to free anything (no GROUP BY, or one group's set larger than
// the limit), the sets are split by a hash of their values instead
// (value_spill.go). A Partial aggregate over disjoint DISTINCT values
// does neither, as its plain states must each cover all of a group's
// values.

// errRechunk: process spilled the groups before folding its batch, or
// could not reserve its worst case with nothing to free; the caller sizes
// the batch's slices again and retries.
var errRechunk = errors.New("exec/hashagg: spilled; fold the batch again")

// spillPartitions is how many files a spilling aggregate splits its
// groups into.
const spillPartitions = 16

// spillLevels is how many times a spilled file may be split again when
// re-aggregating it does not fit either.
const spillLevels = 4

// minSpillGroups: an aggregate holding fewer groups does not flush or
// spill (it would free next to nothing).
const minSpillGroups = 1024

// minSpillSetGroups: an aggregate whose state holds lists (DISTINCT sets,
// collected rows) spills from this many groups on, as its groups can each
// hold many values.
const minSpillSetGroups = 2 * spillPartitions

// minSpillSetValues: with fewer groups, an aggregate whose sets hold this
// many values splits them by value (value_spill.go), or a Partial one
// flushes them.
const minSpillSetValues = 256

// aggSpill is the spilling state of one hashAggregate.
type aggSpill struct {
	ok       bool   // the aggregate can flush or spill at all
	sets     []bool // per aggregate: its spilled state is a DISTINCT set
	lists    []bool // per aggregate: its state is a list per group (a set, or collected rows)
	hasSets  bool
	hasLists bool
	// byValue: the files split the sets by value, not the groups by key
	// (value_spill.go), decided at the first spill.
	byValue bool
	// innerOut: the aggregate re-aggregates a file split by value and
	// emits, for its sets, the inner aggregates' plain states over the
	// file's values (value_spill.go).
	innerOut bool
	inner    *valueMerge // the plans of a split by value, made when first needed
	flushing bool        // Partial: emitting held groups before going on
	pending  arrow.RecordBatch

	stateSchema *arrow.Schema           // group keys then each aggregate's state
	final       *physical.HashAggregate // merges stateSchema rows into the output
	files       []*spill.File
	hashes      []uint64
	rows        [][]int32 // per file, scratch
	next        int       // the next file to re-aggregate
	level       int       // 0, or how many splits made the file this aggregate reads
	sub         *hashAggregate
	// worstPerRow is the last batch's worst case over its rows: chunkRows
	// measures a batch only when that says it might not fit.
	worstPerRow int64
	// maxChunk, when set, caps the next slice: a reservation failed
	// (other operators of the task took the memory) with nothing held to
	// free, so the slice is halved until it fits or is one row.
	maxChunk int64
	// mem is the aggregate's registration as a spillable consumer (when ok),
	// told what it holds at every reservation.
	mem *execop.Spiller
}

// initSpill decides whether h can spill and prepares the plans it needs.
// DISTINCT aggregates spill their sets (distinct_spill.go): the state of a
// DISTINCT aggregate is each group's distinct values as a list, which the
// Final re-aggregation unites, as in the plan by sets.
func (h *hashAggregate) initSpill() {
	aggs := make([]physical.AggregateExpr, len(h.n.Aggs))
	h.sp.sets = make([]bool, len(h.n.Aggs))
	h.sp.lists = make([]bool, len(h.n.Aggs))
	for i, a := range h.n.Aggs {
		aggs[i] = a
		switch {
		case a.Collects():
			// Every row is kept: the list merges as it is, and the
			// final phase applies DISTINCT and ORDER BY.
			h.sp.lists[i] = true
		case a.SetState:
			// By sets: a Partial one flushes its sets, a Final one spills
			// them.
			h.sp.sets[i] = h.n.Mode == physical.AggFinal
			h.sp.lists[i] = true
		case a.Distinct && a.Arg != nil:
			_, isSet := h.accs[i].(setStater)
			if h.n.Mode != physical.AggSingle || isSet && !setSpillType(h.argTypes[i]) {
				// A Partial aggregate over disjoint values passes plain
				// states that must each cover a group's every value.
				return
			}
			if isSet {
				aggs[i].SetState, h.sp.sets[i], h.sp.lists[i] = true, true, true
			} else {
				aggs[i].Distinct = false // DISTINCT changes nothing (min, max, ...)
			}
		}
	}
	for i := range h.sp.sets {
		h.sp.hasSets = h.sp.hasSets || h.sp.sets[i]
		h.sp.hasLists = h.sp.hasLists || h.sp.lists[i]
	}
	if h.table == nil && !h.sp.hasSets && (h.n.Mode != physical.AggPartial || !h.sp.hasLists) {
		// One group: only its sets can be split (by value), or a Partial
		// one's lists flushed.
		return
	}
	h.sp.ok = true
	h.sp.mem = h.tc.NewSpiller()
	switch h.n.Mode {
	case physical.AggFinal:
		h.sp.stateSchema = h.n.Input.Schema()
		h.sp.final = h.n
	case physical.AggSingle:
		partial := &physical.HashAggregate{Input: h.n.Input, Mode: physical.AggPartial, GroupBy: h.n.GroupBy, GroupNames: h.n.GroupNames, Aggs: aggs}
		h.sp.stateSchema = partial.Schema()
		groups := make([]physical.Expr, len(h.n.GroupBy))
		for i := range groups {
			groups[i] = &physical.Column{Index: i, Name: h.n.GroupNames[i], Type: h.sp.stateSchema.Field(i).Type}
		}
		h.sp.final = &physical.HashAggregate{Input: partial, Mode: physical.AggFinal, GroupBy: groups, GroupNames: h.n.GroupNames, Aggs: aggs}
	}
}

// underPressure reports whether folding a batch that can add worst bytes
// should wait for the groups held to be flushed or spilled.
func (h *hashAggregate) underPressure(worst int64) bool {
	return h.canSpill() && h.room() < worst+h.size()
}

// room is how much more the aggregate may take: what is left of its share
// when it can spill, else the headroom under the limits.
func (h *hashAggregate) room() int64 {
	if h.sp.mem == nil {
		return h.tc.Headroom()
	}
	return h.sp.mem.Room()
}

// canSpill reports whether h holds groups enough to flush or spill, or
// sets large enough to split by value.
func (h *hashAggregate) canSpill() bool {
	if !h.sp.ok {
		return false
	}
	if h.ngroups >= minSpillGroups || h.sp.hasLists && h.ngroups >= minSpillSetGroups {
		return true
	}
	return (h.sp.hasSets || h.n.Mode == physical.AggPartial) && h.heldValues() >= minSpillSetValues
}

// heldValues is how many values the aggregates' lists hold.
func (h *hashAggregate) heldValues() int {
	n := 0
	for i, acc := range h.accs {
		if h.sp.lists[i] {
			n += acc.(listHolder).heldValues()
		}
	}
	return n
}

// holdsNothing says whether spilling or flushing would free nothing.
func (h *hashAggregate) holdsNothing() bool {
	return h.ngroups == 0 || h.table == nil && h.heldValues() == 0
}

// chunkRows is how many rows of b to fold at once: all of them unless a
// memory limit applies and b's worst case would take more than half of
// what is left; then the largest halving of b whose worst case fits (at
// least one row). Worst cases do not grow linearly (a hash table doubles),
// so each candidate is measured.
func (h *hashAggregate) chunkRows(ctx context.Context, b arrow.RecordBatch) (int64, error) {
	rows, err := h.fitRows(ctx, b)
	if h.sp.maxChunk > 0 {
		rows = min(rows, h.sp.maxChunk)
	}
	return rows, err
}

// fitRows is chunkRows before the cap a failed reservation set.
func (h *hashAggregate) fitRows(ctx context.Context, b arrow.RecordBatch) (int64, error) {
	n := b.NumRows()
	room := h.room()
	// Without a limit, or with room for many times what recent batches'
	// rows could add, fold it whole without evaluating the keys twice.
	perRow := h.sp.worstPerRow
	if perRow == 0 {
		perRow = 4 << 10
	}
	if n <= 1 || room > math.MaxInt64/4 || 4*n*perRow < room {
		return n, nil
	}
	keys, err := h.evalKeys(ctx, b)
	if err != nil {
		return 0, err
	}
	defer kernel.ReleaseArrays(keys)
	rows := n
	for rows > 1 {
		part := b.NewSlice(0, rows)
		pkeys := make([]arrow.Array, len(keys))
		for i, k := range keys {
			pkeys[i] = array.NewSlice(k, 0, rows)
		}
		worst := h.worstCase(pkeys, part)
		kernel.ReleaseArrays(pkeys)
		part.Release()
		if worst <= room/2 {
			break
		}
		rows /= 2
	}
	return rows, nil
}

// resetGroups drops every group and starts a new table and accumulators.
func (h *hashAggregate) resetGroups() error {
	var t *hashtable.Table
	ngroups := 1 // without GROUP BY, the one group
	if h.table != nil {
		var err error
		if t, err = hashtable.New(h.types); err != nil {
			return err
		}
		// Under memory pressure an integer key takes hashed slots: the
		// direct layout's worst case reserves a window of pages ahead,
		// far above what a batch adds, and chunkRows would cut every
		// batch into slivers to fit it in the little room left.
		t.PreferHashed()
		ngroups = 0
	}
	accs := make([]accumulator, len(h.accs))
	for i, a := range h.n.Aggs {
		var err error
		if accs[i], err = newAccumulator(a, h.argTypes[i], h.n.Mode, h.tc.Mem); err != nil {
			return err
		}
		accs[i].resize(ngroups)
	}
	preferHashedDistinct(accs) // under pressure, as the keys
	h.table, h.accs, h.ngroups, h.emitted = t, accs, ngroups, 0
	h.probe = hashtable.Probe{}
	return h.reserveTo(h.size())
}

// spillGroups writes the partial states of every group held to the spill
// files, each group to the file its keys hash to, and starts afresh.
func (h *hashAggregate) spillGroups(ctx context.Context) error {
	if h.fs != nil {
		// The spilled states carry every key: group on all of them from here.
		if err := h.leaveDepStrings(); err != nil {
			return err
		}
	}
	if h.sp.files == nil && h.sp.hasSets && h.ngroups < minSpillSetGroups {
		h.sp.byValue = true // too few groups to split (value_spill.go)
	}
	if err := h.createSpillFiles(); err != nil {
		return err
	}
	if h.sp.byValue {
		return h.spillValues(ctx)
	}
	defer h.dropSetStates(h.accs) // the accumulators written, not resetGroups' new ones
	g := len(h.n.GroupBy)
	for start, end := 0, 0; start < h.ngroups; start = end {
		end = h.spillEnd(start)
		b := h.emitState(start, end, true)
		err := h.writeSplit(ctx, b, g)
		b.Release()
		if err != nil {
			return err
		}
	}
	return h.resetGroups()
}

// createSpillFiles makes the spill files at the first spill.
func (h *hashAggregate) createSpillFiles() error {
	if h.sp.files == nil {
		for range spillPartitions {
			f, err := spill.Create(h.tc, h.n, h.sp.stateSchema, "aggregate")
			if err != nil {
				return err
			}
			h.sp.files = append(h.sp.files, f) // closeSpill removes them
		}
		h.sp.rows = make([][]int32, spillPartitions)
	}
	return nil
}

// spillEnd is where the spilled batch of groups from start ends: a batch of
// groups, fewer when their lists hold more than spillSetValues values (one
// group at least).
func (h *hashAggregate) spillEnd(start int) int {
	end := min(start+h.tc.BatchRows(), h.ngroups)
	for i, acc := range h.accs {
		if !h.sp.lists[i] {
			continue
		}
		s := acc.(listHolder)
		for end > start+1 && s.setValues(start, end) > spillSetValues {
			end = start + (end-start)/2
		}
	}
	return end
}

// emitEnd is where the emitted batch of groups from start ends: a batch
// of groups, fewer when collecting aggregates' lists (which the batch
// copies, as states or results) hold more than spillSetValues values.
func (h *hashAggregate) emitEnd(start int) int {
	end := min(start+h.tc.BatchRows(), h.ngroups)
	for _, acc := range h.accs {
		if c, ok := acc.(*collectAcc); ok {
			for end > start+1 && c.setValues(start, end) > spillSetValues {
				end = start + (end-start)/2
			}
		}
	}
	return end
}

// writeSplit appends each row of b to the file its first g columns hash
// to. The exchange before a Final aggregate split its input by the same
// hash modulo the partition count, so the file is chosen by the hash's
// top bits, which that split did not use, four more at each level of
// re-splitting.
func (h *hashAggregate) writeSplit(ctx context.Context, b arrow.RecordBatch, g int) error {
	n := int(b.NumRows())
	h.sp.hashes = kernel.Resize(h.sp.hashes, n)
	kernel.HashColumns(b.Columns()[:g], h.sp.hashes)
	for p := range h.sp.rows {
		h.sp.rows[p] = h.sp.rows[p][:0]
	}
	shift := 60 - 4*uint(h.sp.level) // spillPartitions = 16: four bits a level
	for r, x := range h.sp.hashes {
		p := ((x * 0x9E3779B97F4A7C15) >> shift) & (spillPartitions - 1)
		h.sp.rows[p] = append(h.sp.rows[p], int32(r))
	}
	for p, rows := range h.sp.rows {
		if len(rows) == 0 {
			continue
		}
		part, err := kernel.TakeBatch(ctx, h.tc.Mem, h.sp.stateSchema, b, rows)
		if err != nil {
			return err
		}
		err = h.sp.files[p].Write(part)
		part.Release()
		if err != nil {
			return err
		}
	}
	return nil
}

// emitState builds the partial states of groups [start, end): the keys
// then each aggregate's StateFields; without sets, empty lists stand for
// the DISTINCT sets.
func (h *hashAggregate) emitState(start, end int, sets bool) arrow.RecordBatch {
	cols := make([]arrow.Array, 0, h.sp.stateSchema.NumFields())
	if h.table != nil {
		for _, k := range h.table.Keys {
			cols = append(cols, k.Build(&h.m, start, end))
		}
	}
	for i, acc := range h.accs {
		if h.sp.sets[i] {
			dt := h.sp.stateSchema.Field(len(cols)).Type.(*arrow.ListType).Elem()
			if sets {
				cols = append(cols, acc.(setStater).setState(&h.m, dt, start, end))
			} else {
				cols = append(cols, emptyLists(&h.m, dt, end-start))
			}
			continue
		}
		cols = append(cols, acc.state(&h.m, start, end)...)
	}
	defer kernel.ReleaseArrays(cols)
	return array.NewRecordBatch(h.sp.stateSchema, cols, int64(end-start))
}

// dropSetStates frees what the DISTINCT sets' setState kept.
func (h *hashAggregate) dropSetStates(accs []accumulator) {
	for i, acc := range accs {
		if h.sp.sets[i] {
			acc.(setStater).dropSetState()
		}
	}
}

// startSpilled writes the groups still held and starts re-aggregating the
// spill files one by one.
func (h *hashAggregate) startSpilled(ctx context.Context) error {
	if h.ngroups > 0 {
		if err := h.spillGroups(ctx); err != nil {
			return err
		}
	}
	for _, f := range h.sp.files {
		if err := f.Finish(); err != nil {
			return err
		}
	}
	// The in-memory state is gone; give back what it reserved.
	h.table, h.accs = nil, nil
	h.reserveTo(0)
	if h.sp.byValue {
		return h.startValueMerge(ctx)
	}
	return h.nextSpilled(ctx)
}

// nextSpilled closes the aggregate of the previous file and opens the next
// non-empty one's; sp.sub is nil when none is left.
func (h *hashAggregate) nextSpilled(ctx context.Context) error {
	if h.sp.sub != nil {
		err := h.sp.sub.Close()
		h.sp.sub = nil
		if err != nil {
			return err
		}
	}
	for h.sp.next < len(h.sp.files) {
		f := h.sp.files[h.sp.next]
		h.sp.next++
		if f.Rows() == 0 {
			continue
		}
		read, err := f.Reader()
		if err != nil {
			return err
		}
		sub, err := h.openSpilled(ctx, h.sp.final, spill.NewSource(read), h.sp.level+1, h.sp.innerOut, false)
		if err != nil {
			return err
		}
		h.sp.sub = sub
		return nil
	}
	return nil
}

// openSpilled builds and opens the aggregate n over input, at the given
// level of splitting, emitting inner states when innerOut is set (and
// with mergeStates reading states in Partial mode).
func (h *hashAggregate) openSpilled(ctx context.Context, n *physical.HashAggregate, input execop.Operator, level int, innerOut, mergeStates bool) (*hashAggregate, error) {
	sub, err := newAggregate(h.tc, n, 0, input, mergeStates)
	if err != nil {
		input.Close()
		return nil, err
	}
	// A file that does not fit spills again, split by the hash's next
	// bits; past the last level it fails at the limit.
	if sub.table != nil {
		sub.table.PreferHashed() // the file holds one hash partition of the keys
	}
	sub.sp.level = level
	sub.sp.ok = sub.sp.ok && level < spillLevels
	if !sub.sp.ok {
		sub.doneSpilling() // what cannot spill takes no spiller's share
	}
	sub.sp.innerOut = innerOut
	if err := sub.Open(ctx); err != nil {
		sub.Close()
		return nil, err
	}
	return sub, nil
}

// doneSpilling deregisters the aggregate as a spillable consumer: past its
// input, the groups it emits from count as unspillable.
func (h *hashAggregate) doneSpilling() {
	if h.sp.mem != nil {
		h.sp.mem.Close()
	}
}

// closeSpill ends any re-aggregation and removes the spill files.
func (h *hashAggregate) closeSpill() error {
	h.doneSpilling()
	if h.sp.pending != nil {
		h.sp.pending.Release()
		h.sp.pending = nil
	}
	var subErr error
	if h.sp.sub != nil {
		subErr = h.sp.sub.Close()
		h.sp.sub = nil
	}
	if err := spill.RemoveAll(h.sp.files); err != nil {
		return err
	}
	return subErr
}
