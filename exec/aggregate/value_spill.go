package aggregate

import (
	"context"
	"errors"
	"io"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/quiverdb/quiver/exec/kernel"
	"github.com/quiverdb/quiver/exec/spill"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
)

// Splitting DISTINCT sets by value. Splitting the groups by key frees
// nothing when the groups are few and their sets large: without GROUP BY
// there is one group, and one group's set may alone pass the limit. Then
// every value of a set goes to the spill file a hash of the value picks,
// and each group's plain states (with empty sets) to the file its keys
// pick. A file's re-aggregation unites the set pieces it holds, which are
// all of their values that hash to it, so its DISTINCT values are final:
// count, sum and avg (and any inner aggregate) over them give a partial
// state that merges with the other files' as plain states do. So each
// file is re-aggregated on its own into the inner aggregates' plain
// states (innerOut), and a second aggregate merges those states across
// the files into the result. The second one holds every group, but only
// their plain states, and spills by key if those do not fit; a file whose
// sets do not fit is split again by the value hash's next bits.

// valueMerge holds the plans of a split by value.
type valueMerge struct {
	// schema is a file's re-aggregation's output: the keys, then each
	// aggregate's plain state, the inner aggregate's for a set.
	schema *arrow.Schema
	// merge unites those rows across the files: in Final mode, or, when
	// this aggregate emits inner states itself, in Partial mode merging
	// states.
	merge *physical.HashAggregate
	// neutral, per aggregate not a set: an accumulator that saw no row,
	// whose state merges as nothing (the plain states beside set pieces).
	neutral []accumulator
}

// valueMerge makes the plans of a split by value, once.
func (h *hashAggregate) valueMerge() (*valueMerge, error) {
	if h.sp.inner != nil {
		return h.sp.inner, nil
	}
	fin := h.sp.final
	groups := make([]physical.Expr, len(fin.GroupBy))
	for i := range groups {
		groups[i] = &physical.Column{Index: i, Name: fin.GroupNames[i], Type: h.sp.stateSchema.Field(i).Type}
	}
	aggs := make([]physical.AggregateExpr, len(fin.Aggs))
	v := &valueMerge{neutral: make([]accumulator, len(fin.Aggs))}
	for i, a := range fin.Aggs {
		aggs[i] = a
		if h.sp.sets[i] {
			aggs[i].Distinct, aggs[i].SetState = false, false
			continue
		}
		acc, err := newAccumulator(a, h.argTypes[i], physical.AggPartial, h.tc.Mem)
		if err != nil {
			return nil, err
		}
		v.neutral[i] = acc
	}
	inner := &physical.HashAggregate{Input: fin.Input, Mode: physical.AggPartial, GroupBy: groups, GroupNames: fin.GroupNames, Aggs: aggs}
	v.schema = inner.Schema()
	mode := physical.AggFinal
	if h.sp.innerOut {
		mode = physical.AggPartial
	}
	v.merge = &physical.HashAggregate{Input: inner, Mode: mode, GroupBy: groups, GroupNames: fin.GroupNames, Aggs: aggs}
	h.sp.inner = v
	return v, nil
}

// neutralState returns n rows of aggregate i's state that merge as
// nothing.
func (v *valueMerge) neutralState(m *kernel.ArrayMaker, i, n int) []arrow.Array {
	v.neutral[i].resize(n)
	return v.neutral[i].state(m, 0, n)
}

// spillValues writes the groups held to the spill files split by value:
// the plain states by the keys' hash, the sets' values by their own, a
// slice of at most spillSetValues values at a time, and starts afresh.
func (h *hashAggregate) spillValues(ctx context.Context) error {
	defer h.dropSetStates(h.accs) // the accumulators written, not resetGroups' new ones
	g := len(h.n.GroupBy)
	for start, end := 0, 0; start < h.ngroups; start = end {
		end = min(start+h.tc.BatchRows(), h.ngroups)
		b := h.emitState(start, end, false)
		err := h.writeSplit(ctx, b, g)
		b.Release()
		if err != nil {
			return err
		}
	}
	for i, acc := range h.accs {
		if !h.sp.sets[i] {
			continue
		}
		s := acc.(setStater)
		off := s.setOffsets()
		total := int(off[h.ngroups])
		gs := 0
		for lo := 0; lo < total; {
			hi := min(lo+spillSetValues, total)
			for int(off[gs+1]) <= lo {
				gs++ // the group holding value lo
			}
			ge := gs + 1
			for ge < h.ngroups && int(off[ge]) < hi {
				ge++
			}
			if err := h.writeValues(ctx, i, s, off, lo, hi, gs, ge); err != nil {
				return err
			}
			lo = hi
		}
	}
	return h.resetGroups()
}

// writeValues appends set i's values [lo, hi) (in group order, held by
// groups [gs, ge); group g's are [off[g], off[g+1])) to the files their
// hash picks, each beside its group's keys, neutral plain states and empty
// other sets.
func (h *hashAggregate) writeValues(ctx context.Context, i int, s setStater, off []int32, lo, hi, gs, ge int) error {
	v, err := h.valueMerge()
	if err != nil {
		return err
	}
	col := h.stateCol(i)
	dt := h.sp.stateSchema.Field(col).Type.(*arrow.ListType).Elem()
	vals := s.setSlice(&h.m, dt, lo, hi)
	defer vals.Release()
	n := hi - lo
	h.sp.hashes = kernel.Resize(h.sp.hashes, n)
	kernel.HashColumns([]arrow.Array{vals}, h.sp.hashes)
	for p := range h.sp.rows {
		h.sp.rows[p] = h.sp.rows[p][:0]
	}
	shift := 60 - 4*uint(h.sp.level) // four bits a level, as writeSplit
	for r, x := range h.sp.hashes {
		p := ((x * 0x9E3779B97F4A7C15) >> shift) & (spillPartitions - 1)
		h.sp.rows[p] = append(h.sp.rows[p], int32(r))
	}
	var keys []arrow.Array // groups [gs, ge)'s keys
	if h.table != nil {
		for _, k := range h.table.Keys {
			keys = append(keys, k.Build(&h.m, gs, ge))
		}
	}
	defer kernel.ReleaseArrays(keys)
	var grp []int32 // per partition, scratch: the groups of its values
	var offs []int32
	for p, idx := range h.sp.rows {
		if len(idx) == 0 {
			continue
		}
		grp, offs = grp[:0], offs[:0]
		g := gs
		for k, r := range idx {
			for int(off[g+1]) <= lo+int(r) {
				g++
			}
			if len(grp) == 0 || grp[len(grp)-1] != int32(g-gs) {
				grp = append(grp, int32(g-gs))
				offs = append(offs, int32(k))
			}
		}
		offs = append(offs, int32(len(idx)))
		b, err := h.valueBatch(ctx, v, i, keys, grp, vals, idx, offs)
		if err != nil {
			return err
		}
		err = h.sp.files[p].Write(b)
		b.Release()
		if err != nil {
			return err
		}
	}
	return nil
}

// valueBatch builds the state rows of groups grp (indices into keys): set
// i's list r holds vals[idx[offs[r]:offs[r+1]]], the other aggregates'
// states merge as nothing.
func (h *hashAggregate) valueBatch(ctx context.Context, v *valueMerge, i int, keys []arrow.Array, grp []int32, vals arrow.Array, idx, offs []int32) (b arrow.RecordBatch, err error) {
	cols := make([]arrow.Array, 0, h.sp.stateSchema.NumFields())
	defer func() { kernel.ReleaseArrays(cols) }()
	for _, k := range keys {
		kc, err := kernel.TakeArray(ctx, h.tc.Mem, k, grp)
		if err != nil {
			return nil, err
		}
		cols = append(cols, kc)
	}
	for j := range h.accs {
		switch {
		case j == i:
			child, err := kernel.TakeArray(ctx, h.tc.Mem, vals, idx)
			if err != nil {
				return nil, err
			}
			cols = append(cols, listOf(&h.m, vals.DataType(), child, offs))
			child.Release()
		case h.sp.sets[j]:
			dt := h.sp.stateSchema.Field(len(cols)).Type.(*arrow.ListType).Elem()
			cols = append(cols, emptyLists(&h.m, dt, len(grp)))
		default:
			cols = append(cols, v.neutralState(&h.m, j, len(grp))...)
		}
	}
	return array.NewRecordBatch(h.sp.stateSchema, cols, int64(len(grp))), nil
}

// stateCol is the first state column of aggregate i.
func (h *hashAggregate) stateCol(i int) int {
	col := len(h.n.GroupBy)
	for _, a := range h.sp.final.Aggs[:i] {
		col += len(a.StateFields())
	}
	return col
}

// emptyLists is n empty lists of dt.
func emptyLists(m *kernel.ArrayMaker, dt arrow.DataType, n int) arrow.Array {
	child := array.MakeArrayOfNull(m.Mem, dt, 0)
	defer child.Release()
	return listOf(m, dt, child, make([]int32, n+1))
}

// startValueMerge starts the merge of the files split by value: each
// file re-aggregated into inner states (valueFiles) feeds the merge.
func (h *hashAggregate) startValueMerge(ctx context.Context) error {
	v, err := h.valueMerge()
	if err != nil {
		return err
	}
	h.sp.next = len(h.sp.files) // nextSpilled opens no file after the merge
	src := &valueFiles{h: h}
	sub, err := h.openSpilled(ctx, v.merge, src, h.sp.level, false, h.sp.innerOut)
	if err != nil {
		return err
	}
	h.sp.sub = sub
	return nil
}

// emitInner builds groups [start, end) of a file split by value: the keys,
// then each aggregate's state, the inner aggregate's for a set.
func (h *hashAggregate) emitInner(start, end int) arrow.RecordBatch {
	v, err := h.valueMerge()
	if err != nil {
		panic(err) // emit has no error; the operator recovers panics as errors
	}
	cols := make([]arrow.Array, 0, v.schema.NumFields())
	if h.table != nil {
		for _, k := range h.table.Keys {
			cols = append(cols, k.Build(&h.m, start, end))
		}
	}
	for i, acc := range h.accs {
		if h.sp.sets[i] {
			cols = append(cols, acc.(setStater).innerAcc().state(&h.m, start, end)...)
		} else {
			cols = append(cols, acc.state(&h.m, start, end)...)
		}
	}
	defer kernel.ReleaseArrays(cols)
	return array.NewRecordBatch(v.schema, cols, int64(end-start))
}

// valueFiles is the merge's input: the files split by value, one after
// the other, each re-aggregated on its own into inner states. Its
// aggregate h owns the files and removes them.
type valueFiles struct {
	h    *hashAggregate
	next int
	cur  *hashAggregate
}

func (f *valueFiles) Open(context.Context) error { return nil }

func (f *valueFiles) Next(ctx context.Context) (arrow.RecordBatch, error) {
	h := f.h
	for {
		if f.cur != nil {
			b, err := f.cur.Next(ctx)
			if err != io.EOF {
				return b, err
			}
			err = f.cur.Close()
			f.cur = nil
			if err != nil {
				return nil, err
			}
		}
		for f.next < len(h.sp.files) && h.sp.files[f.next].Rows() == 0 {
			f.next++
		}
		if f.next == len(h.sp.files) {
			return nil, io.EOF
		}
		file := h.sp.files[f.next]
		f.next++
		read, err := file.Reader()
		if err != nil {
			return nil, err
		}
		if f.cur, err = h.openSpilled(ctx, h.sp.final, spill.NewSource(read), h.sp.level+1, true, false); err != nil {
			return nil, err
		}
	}
}

func (f *valueFiles) Close() error {
	if f.cur == nil {
		return nil
	}
	err := f.cur.Close()
	f.cur = nil
	return err
}

// setOffsets, setSlice and innerAcc of the integer set (setStater).
func (d *distinctIntAcc) setOffsets() []int32 {
	if d.setOff == nil {
		d.setVals, d.setOff = d.pairsByGroup()
	}
	return d.setOff
}

func (d *distinctIntAcc) setSlice(m *kernel.ArrayMaker, dt arrow.DataType, lo, hi int) arrow.Array {
	d.setOffsets()
	return narrowInts(m, dt, d.setVals[lo:hi])
}

func (d *distinctIntAcc) heldValues() int       { return d.n }
func (d *distinctIntAcc) innerAcc() accumulator { return d.inner }

// setOffsets, setSlice and innerAcc of the generic set (setStater).
func (d *distinctAcc) setOffsets() []int32 {
	if d.setOff == nil {
		d.sortByGroup()
	}
	return d.setOff
}

func (d *distinctAcc) setSlice(m *kernel.ArrayMaker, dt arrow.DataType, lo, hi int) arrow.Array {
	d.setOffsets()
	if lo == hi {
		return array.MakeArrayOfNull(m.Mem, dt, 0)
	}
	out, ok := kernel.Gather(m.Mem, d.setVals, d.setPerm[lo:hi])
	if !ok {
		// setSpillType admits only types Gather copies.
		panic(qerr.Internalf("exec/hashagg: cannot gather DISTINCT values of %s", dt))
	}
	return out
}

func (d *distinctAcc) heldValues() int       { return d.table.Len() }
func (d *distinctAcc) innerAcc() accumulator { return d.inner }

// heldValues and setValues of a collecting aggregate (listHolder): its
// kept rows.
func (c *collectAcc) heldValues() int { return c.nrows }

func (c *collectAcc) setValues(start, end int) int {
	n := 0
	for _, rs := range c.refs[start:end] {
		n += len(rs)
	}
	return n
}

// pieceValues bounds the set values one row of a Final aggregate's input
// adds at once under a memory limit: a row holding more (a Partial
// aggregate's whole set of few groups) is folded in pieces.
const pieceValues = 4096

// bigSetRow says whether the one row of b carries more set values than a
// piece under a memory limit.
func (h *hashAggregate) bigSetRow(b arrow.RecordBatch) bool {
	if b.NumRows() != 1 || !h.sp.hasSets || h.n.Mode != physical.AggFinal || h.tc.Headroom() > math.MaxInt64/4 {
		return false
	}
	n := 0
	for i := range h.accs {
		if h.sp.sets[i] {
			s, e := b.Column(h.stateOff[i]).(*array.List).ValueOffsets(0)
			n += int(e - s)
		}
	}
	return n > pieceValues
}

// processPieces folds the one row of b as pieces: its keys and plain
// states with empty sets, then its sets pieceValues values at a time
// beside neutral plain states; sets unite, so the pieces add up to the row.
func (h *hashAggregate) processPieces(ctx context.Context, b arrow.RecordBatch) error {
	v, err := h.valueMerge()
	if err != nil {
		return err
	}
	owner := make([]int, b.NumCols()) // the aggregate of each state column, -1 for keys
	for c := range owner {
		owner[c] = -1
	}
	for i, off := range h.stateOff {
		for c := off; c < off+h.stateN[i]; c++ {
			owner[c] = i
		}
	}
	// piece builds one row: set agg i's list from values [lo, hi) of its
	// list, or with i < 0 the plain states and empty sets.
	piece := func(i int, lo, hi int64) arrow.RecordBatch {
		cols := make([]arrow.Array, 0, b.NumCols())
		for c := 0; c < int(b.NumCols()); c++ {
			j := owner[c]
			switch {
			case j < 0 || i < 0 && !h.sp.sets[j]:
				col := b.Column(c)
				col.Retain()
				cols = append(cols, col)
			case h.sp.sets[j] && j == i:
				l := b.Column(c).(*array.List)
				child := array.NewSlice(l.ListValues(), lo, hi)
				cols = append(cols, listOf(&h.m, l.DataType().(*arrow.ListType).Elem(), child, []int32{0, int32(hi - lo)}))
				child.Release()
			case h.sp.sets[j]:
				cols = append(cols, emptyLists(&h.m, b.Column(c).DataType().(*arrow.ListType).Elem(), 1))
			case c == h.stateOff[j]:
				cols = append(cols, v.neutralState(&h.m, j, 1)...)
			}
		}
		defer kernel.ReleaseArrays(cols)
		return array.NewRecordBatch(b.Schema(), cols, 1)
	}
	fold := func(p arrow.RecordBatch) error {
		defer p.Release()
		for {
			if err := ctx.Err(); err != nil {
				return err
			}
			_, err := h.process(ctx, p)
			if !errors.Is(err, errRechunk) {
				return err
			}
		}
	}
	if err := fold(piece(-1, 0, 0)); err != nil {
		return err
	}
	for i := range h.accs {
		if !h.sp.sets[i] {
			continue
		}
		s, e := b.Column(h.stateOff[i]).(*array.List).ValueOffsets(0)
		if b.Column(h.stateOff[i]).IsNull(0) {
			continue
		}
		for lo := s; lo < e; lo += pieceValues {
			if err := fold(piece(i, lo, min(lo+pieceValues, e))); err != nil {
				return err
			}
		}
	}
	return nil
}
