package aggregate

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver/exec/kernel"
	"github.com/quiverdb/quiver/qerr"
)

// distinctSetAcc is a DISTINCT aggregate run in two phases by sets
// (physical.AggregateExpr.SetState) over an integer-like argument. Both
// phases dedupe (group, value) pairs as distinctIntAcc does. In Partial
// mode it also records every new pair, and state returns each group's
// values as a list; in Final mode merge feeds the lists' values, each
// with its row's group, to the same dedupe, so the inner accumulator sees
// each group's union of values once. Only the sets cross the exchange,
// not the rows, which pays when rows repeat pairs (an order's line items
// of one customer) or groups are few.
type distinctSetAcc struct {
	*distinctIntAcc
	argType arrow.DataType
	keep    bool     // Partial: record the pairs for state
	pairG   []uint32 // the pairs, in the order found (Partial, until state)
	pairV   []int64
	// Set by the first state call, which sorts the pairs by group: group
	// g's values are sorted[off[g]:off[g+1]].
	sorted []int64
	off    []int32
	exp    []uint32 // merge's scratch: a group per list value
	// lazy is the Partial mode's lazy path (distinct_lazy.go).
	lazy lazySet
}

func newDistinctSetAcc(inner accumulator, argType arrow.DataType, partial bool, mem memory.Allocator) *distinctSetAcc {
	return &distinctSetAcc{distinctIntAcc: newDistinctIntAcc(inner, mem), argType: argType, keep: partial, lazy: lazySet{off: !partial}}
}

func (d *distinctSetAcc) update(ctx context.Context, groups []uint32, arg arrow.Array) error {
	if done, err := d.updateLazy(groups, arg); done || err != nil {
		return err
	}
	d.rows = d.rows[:0] // distinctIntAcc.update returns early, leaving them, on an all-NULL arg
	if err := d.distinctIntAcc.update(ctx, groups, arg); err != nil {
		return err
	}
	if d.keep {
		for k, r := range d.rows {
			d.pairG = append(d.pairG, d.grps[k])
			d.pairV = append(d.pairV, d.vals[r])
		}
	}
	return nil
}

// merge unites the lists of state[0] into the groups.
func (d *distinctSetAcc) merge(ctx context.Context, groups []uint32, state []arrow.Array) error {
	l, ok := state[0].(*array.List)
	if !ok {
		return qerr.Internalf("exec/hashagg: DISTINCT set state is %s, not a list", state[0].DataType())
	}
	if l.Len() == 0 {
		return nil
	}
	lo, _ := l.ValueOffsets(0)
	_, hi := l.ValueOffsets(l.Len() - 1)
	d.exp = d.exp[:0]
	for i := range l.Len() {
		s, e := l.ValueOffsets(i)
		if l.IsNull(i) {
			s = e // no set (never written): nothing to add
		}
		for range e - s {
			d.exp = append(d.exp, groups[i])
		}
	}
	if int64(len(d.exp)) != hi-lo {
		return qerr.Internalf("exec/hashagg: DISTINCT set state has NULL lists over values")
	}
	vals := array.NewSlice(l.ListValues(), lo, hi)
	defer vals.Release()
	return d.distinctIntAcc.update(ctx, d.exp, vals)
}

// state returns groups [start, end)'s sets as a list of the argument type.
func (d *distinctSetAcc) state(m *kernel.ArrayMaker, start, end int) []arrow.Array {
	if d.off == nil {
		d.sortPairs()
	}
	base := d.off[start]
	offs := make([]int32, end-start+1)
	for i := range offs {
		offs[i] = d.off[start+i] - base
	}
	child := narrowInts(m, d.argType, d.sorted[base:d.off[end]])
	defer child.Release()
	ob := m.NewBuffer(arrow.Int32Traits.CastToBytes(offs))
	defer ob.Release()
	data := array.NewData(arrow.ListOf(d.argType), end-start, []*memory.Buffer{nil, ob}, []arrow.ArrayData{child.Data()}, 0, 0)
	defer data.Release()
	return []arrow.Array{array.MakeFromData(data)}
}

// sortPairs orders the recorded pairs by group (a counting sort, stable)
// into sorted and off, and drops the pairs.
func (d *distinctSetAcc) sortPairs() {
	if !d.keep {
		// Final mode records nothing: its sets are the dedupe's layout.
		d.sorted, d.off = d.pairsByGroup()
		return
	}
	if d.lazyActive() {
		d.compact() // the recorded pairs may repeat: dedupe them first
	}
	n := max(d.ngroups, 0)
	d.off = make([]int32, n+1)
	for _, g := range d.pairG {
		d.off[g+1]++
	}
	for g := range n {
		d.off[g+1] += d.off[g]
	}
	pos := make([]int32, n)
	copy(pos, d.off[:n])
	d.sorted = make([]int64, len(d.pairV))
	for k, g := range d.pairG {
		d.sorted[pos[g]] = d.pairV[k]
		pos[g]++
	}
	d.pairG, d.pairV = nil, nil
}

// memSize adds the recorded pairs to the dedupe's layout.
func (d *distinctSetAcc) memSize() int64 {
	return d.distinctIntAcc.memSize() + int64(cap(d.pairG))*4 + int64(cap(d.pairV))*8 +
		int64(cap(d.sorted))*8 + int64(cap(d.off))*4 + int64(cap(d.exp))*4
}

// worstCase bounds the bytes n more values can add: the dedupe's, and a
// recorded pair (or a merge scratch group) each; on the lazy path, the
// compaction's sort buffers (two keys a pair) when it may run, and the
// set all pairs may move into.
func (d *distinctSetAcc) worstCase(n int) int64 {
	w := d.distinctIntAcc.worstCase(n) + int64(n)*12
	if d.lazyActive() {
		held := len(d.pairV) + n
		w += int64(held) * 16
		w += d.distinctIntAcc.worstCase(held)
	}
	return w
}

// lazyActive reports whether the lazy path is taken (distinct_lazy.go).
func (d *distinctSetAcc) lazyActive() bool { return !d.lazy.off && d.srt.off }

// heldValues bounds the values the sets hold: on the lazy path the
// recorded pairs, which may repeat until compacted.
func (d *distinctSetAcc) heldValues() int {
	if d.lazyActive() {
		return len(d.pairV)
	}
	return d.distinctIntAcc.heldValues()
}

// setValues is how many values groups [start, end) hold: in Partial mode
// its recorded pairs (the set's own layout may lack the lazy path's).
func (d *distinctSetAcc) setValues(start, end int) int {
	if !d.keep {
		return d.distinctIntAcc.setValues(start, end)
	}
	if d.off == nil {
		d.sortPairs()
	}
	return int(d.off[end] - d.off[start])
}

// narrowInts returns vals as an array of dt, one of the integer-like types
// distinctIntType accepts: one type switch, then a typed loop.
func narrowInts(m *kernel.ArrayMaker, dt arrow.DataType, vals []int64) arrow.Array {
	switch dt.ID() {
	case arrow.INT8:
		return kernel.MakeFixed(m, dt, narrowed[int8](vals), nil)
	case arrow.INT16:
		return kernel.MakeFixed(m, dt, narrowed[int16](vals), nil)
	case arrow.INT32:
		return kernel.MakeFixed(m, dt, narrowed[int32](vals), nil)
	case arrow.UINT8:
		return kernel.MakeFixed(m, dt, narrowed[uint8](vals), nil)
	case arrow.UINT16:
		return kernel.MakeFixed(m, dt, narrowed[uint16](vals), nil)
	case arrow.UINT32:
		return kernel.MakeFixed(m, dt, narrowed[uint32](vals), nil)
	case arrow.DATE32:
		return kernel.MakeFixed(m, dt, narrowed[arrow.Date32](vals), nil)
	}
	return kernel.MakeFixed(m, dt, vals, nil) // INT64
}

func narrowed[T ~int8 | ~int16 | ~int32 | ~uint8 | ~uint16 | ~uint32](vals []int64) []T {
	out := make([]T, len(vals))
	for i, v := range vals {
		out[i] = T(v)
	}
	return out
}
