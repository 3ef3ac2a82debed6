package aggregate

import (
	"context"
	"math/bits"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver/exec/kernel"
	"github.com/quiverdb/quiver/qerr"
)

// listHolder is an accumulator whose state is a list per group (a
// DISTINCT set, a collecting aggregate's rows): what it holds is counted
// in values, and a spilled batch is sized by them.
type listHolder interface {
	// heldValues is how many values all groups hold (cheap).
	heldValues() int
	// setValues is how many values groups [start, end) hold.
	setValues(start, end int) int
}

// setStater is a DISTINCT accumulator that can give each group's distinct
// values as a list, the by-sets state (physical.AggregateExpr.SetState):
// a spilling aggregate writes that state for its DISTINCT aggregates and
// merges it again in Final mode (spill.go), or splits it by value
// (value_spill.go).
type setStater interface {
	listHolder
	// setState returns the sets of groups [start, end) as a list of dt.
	setState(m *kernel.ArrayMaker, dt arrow.DataType, start, end int) arrow.Array
	// setOffsets orders the values by group: group g's are at positions
	// [off[g], off[g+1]) of that order.
	setOffsets() []int32
	// setSlice returns the values at positions [lo, hi) of that order.
	setSlice(m *kernel.ArrayMaker, dt arrow.DataType, lo, hi int) arrow.Array
	// innerAcc is the aggregate over each group's distinct values.
	innerAcc() accumulator
	// dropSetState frees what setState kept between calls.
	dropSetState()
}

// spillSetValues bounds the set values one spilled batch carries, so that
// writing sets out takes little memory beside what they hold.
const spillSetValues = 16 << 10

// setSpillType reports whether a DISTINCT aggregate over dt can spill its
// sets: the integer-like types and the types kernel.Gather copies.
func setSpillType(dt arrow.DataType) bool {
	if distinctIntType(dt) {
		return true
	}
	switch dt.ID() {
	case arrow.BOOL, arrow.STRING, arrow.BINARY, arrow.LARGE_STRING, arrow.LARGE_BINARY:
		return true
	case arrow.DICTIONARY, arrow.EXTENSION, arrow.NULL, arrow.LIST:
		return false
	}
	fw, ok := dt.(arrow.FixedWidthDataType)
	if !ok {
		return false
	}
	switch fw.BitWidth() {
	case 8, 16, 32, 64, 128:
		return true
	}
	return false
}

// listOf builds a list array of dt over child, whose list i holds child
// values [offs[i]-offs[0], offs[i+1]-offs[0]).
func listOf(m *kernel.ArrayMaker, dt arrow.DataType, child arrow.Array, offs []int32) arrow.Array {
	rel := make([]int32, len(offs))
	for i, o := range offs {
		rel[i] = o - offs[0]
	}
	ob := m.NewBuffer(arrow.Int32Traits.CastToBytes(rel))
	defer ob.Release()
	data := array.NewData(arrow.ListOf(dt), len(offs)-1, []*memory.Buffer{nil, ob}, []arrow.ArrayData{child.Data()}, 0, 0)
	defer data.Release()
	return array.MakeFromData(data)
}

// expandLists returns, for the values of list l, the group of the row
// each belongs to (in exp, reused), and the values as one slice of l's
// child (the caller releases it).
func expandLists(l *array.List, groups, exp []uint32) ([]uint32, arrow.Array, error) {
	lo, _ := l.ValueOffsets(0)
	_, hi := l.ValueOffsets(l.Len() - 1)
	exp = exp[:0]
	for i := range l.Len() {
		s, e := l.ValueOffsets(i)
		if l.IsNull(i) {
			s = e // no set (never written): nothing to add
		}
		for range e - s {
			exp = append(exp, groups[i])
		}
	}
	if int64(len(exp)) != hi-lo {
		return exp, nil, qerr.Internalf("exec/hashagg: DISTINCT set state has NULL lists over values")
	}
	return exp, array.NewSlice(l.ListValues(), lo, hi), nil
}

// pairsByGroup returns the pairs the layout holds with each group's values
// together: group g's are vals[off[g]:off[g+1]]. Its slices are Go memory
// outside the limit, a transient copy dropped once the groups are written.
func (d *distinctIntAcc) pairsByGroup() (vals []int64, off []int32) {
	d.settle(false)
	n := max(d.ngroups, 0)
	off = make([]int32, n+1)
	vals = make([]int64, 0, d.n)
	if t := d.dir; t != nil {
		// Group-major pages: the values come out grouped.
		for g := range n {
			if g < t.ngroups {
				for pi := range t.pagesPerGroup {
					p := t.ptrs[g*t.pagesPerGroup+pi]
					if p == nil {
						continue
					}
					base := (t.loPage + uint64(pi)) << pageBits
					for wi, w := range p {
						for w != 0 {
							b := uint64(bits.TrailingZeros64(w))
							w &= w - 1
							vals = append(vals, int64((base+uint64(wi)*64+b)^dirSignBit))
						}
					}
				}
			}
			off[g+1] = int32(len(vals))
		}
		return vals, off
	}
	// The hashed set: a counting sort of the slots by group.
	for _, sl := range d.slots {
		if sl.used != 0 {
			off[sl.grp+1]++
		}
	}
	for g := range n {
		off[g+1] += off[g]
	}
	pos := make([]int32, n)
	copy(pos, off[:n])
	vals = vals[:off[n]]
	for _, sl := range d.slots {
		if sl.used != 0 {
			vals[pos[sl.grp]] = sl.val
			pos[sl.grp]++
		}
	}
	return vals, off
}

func (d *distinctIntAcc) setState(m *kernel.ArrayMaker, dt arrow.DataType, start, end int) arrow.Array {
	if d.setOff == nil {
		d.setVals, d.setOff = d.pairsByGroup()
	}
	child := narrowInts(m, dt, d.setVals[d.setOff[start]:d.setOff[end]])
	defer child.Release()
	return listOf(m, dt, child, d.setOff[start:end+1])
}

func (d *distinctIntAcc) setValues(start, end int) int {
	if d.setOff == nil {
		d.setVals, d.setOff = d.pairsByGroup()
	}
	return int(d.setOff[end] - d.setOff[start])
}

func (d *distinctIntAcc) dropSetState() { d.setVals, d.setOff = nil, nil }

// setState of the generic set: its table's (group id, value) keys sorted
// by group id once, then each range of groups gathered.
func (d *distinctAcc) setState(m *kernel.ArrayMaker, dt arrow.DataType, start, end int) arrow.Array {
	if d.setOff == nil {
		d.sortByGroup()
	}
	idx := d.setPerm[d.setOff[start]:d.setOff[end]]
	var child arrow.Array
	if len(idx) == 0 {
		child = array.NewSlice(d.setVals, 0, 0)
	} else {
		var ok bool
		if child, ok = kernel.Gather(m.Mem, d.setVals, idx); !ok {
			// setSpillType admits only types Gather copies.
			panic(qerr.Internalf("exec/hashagg: cannot gather DISTINCT values of %s", dt))
		}
	}
	defer child.Release()
	return listOf(m, dt, child, d.setOff[start:end+1])
}

// sortByGroup orders the table's pairs by group (a counting sort). The
// values are copied out of the table in Go memory, outside the limit, as
// the hash table's own re-layouts do: a transient copy dropped once the
// groups are written.
func (d *distinctAcc) sortByGroup() {
	gm := kernel.ArrayMaker{Mem: memory.DefaultAllocator}
	n := d.table.Len()
	gids := d.table.Keys[0].Build(&gm, 0, n)
	defer gids.Release()
	d.setVals = d.table.Keys[1].Build(&gm, 0, n)
	ng := d.ngroups
	d.setOff = make([]int32, ng+1)
	g32 := gids.(*array.Uint32).Uint32Values()
	for _, g := range g32 {
		d.setOff[g+1]++
	}
	for g := range ng {
		d.setOff[g+1] += d.setOff[g]
	}
	pos := make([]int32, ng)
	copy(pos, d.setOff[:ng])
	d.setPerm = make([]int32, n)
	for id, g := range g32 {
		d.setPerm[pos[g]] = int32(id)
		pos[g]++
	}
}

func (d *distinctAcc) setValues(start, end int) int {
	if d.setOff == nil {
		d.sortByGroup()
	}
	return int(d.setOff[end] - d.setOff[start])
}

func (d *distinctAcc) dropSetState() {
	if d.setVals != nil {
		d.setVals.Release()
	}
	d.setVals, d.setOff, d.setPerm = nil, nil, nil
}

// worstCase bounds the bytes n more values can add to the set: its slots
// doubling and each pair's key bytes, at twice the average pair so far.
func (d *distinctAcc) worstCase(n int) int64 {
	per := int64(64)
	if l := d.table.Len(); l > 0 {
		per += 2 * d.table.MemSize() / int64(l)
	}
	return int64(n) * per
}

// distinctListAcc is the generic DISTINCT set in Final mode, which only a
// spilling aggregate runs (the planner runs by sets only integer-like
// arguments, distinctSetAcc): merge unites the lists of values into each
// group's set, and the inner accumulator sees each value of a union once.
type distinctListAcc struct {
	*distinctAcc
	argType arrow.DataType
	exp     []uint32 // merge's scratch: a group per list value
}

func (d *distinctListAcc) merge(ctx context.Context, groups []uint32, state []arrow.Array) error {
	l, ok := state[0].(*array.List)
	if !ok {
		return qerr.Internalf("exec/hashagg: DISTINCT set state is %s, not a list", state[0].DataType())
	}
	if l.Len() == 0 {
		return nil
	}
	exp, vals, err := expandLists(l, groups, d.exp)
	d.exp = exp
	if err != nil {
		return err
	}
	defer vals.Release()
	return d.distinctAcc.update(ctx, exp, vals)
}

func (d *distinctListAcc) state(m *kernel.ArrayMaker, start, end int) []arrow.Array {
	return []arrow.Array{d.setState(m, d.argType, start, end)}
}

func (d *distinctListAcc) memSize() int64 {
	return d.distinctAcc.memSize() + int64(cap(d.exp))*4
}

func (d *distinctListAcc) worstCase(n int) int64 {
	return d.distinctAcc.worstCase(n) + int64(n)*4
}

// directDistinctRoom: with less headroom than this when its accumulators
// are made, an aggregate keeps integer DISTINCT pairs in the hashed set
// from the start: the direct layout's worst case reserves megabytes of
// pages and pointers before its first row.
const directDistinctRoom = 32 << 20

// preferHashed leaves the direct layout before it holds any pair.
func (d *distinctIntAcc) preferHashed() {
	if d.dir != nil && d.n == 0 {
		d.dir = nil
	}
}

// preferHashedDistinct makes accs' integer DISTINCT sets start hashed.
func preferHashedDistinct(accs []accumulator) {
	for _, acc := range accs {
		if p, ok := acc.(interface{ preferHashed() }); ok {
			p.preferHashed()
		}
	}
}
