package aggregate

import (
	"context"
	"math/bits"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver/exec/hashtable"
	"github.com/quiverdb/quiver/exec/kernel"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
)

// distinctIntAcc is DISTINCT over an integer-like argument (Int8..Int64,
// Uint8..Uint32, Date32): like distinctAcc it feeds inner only the first
// occurrence of each (group, value) pair, but keeps the pairs in a flat
// open-addressing set of (value, group) slots compared in place — one slot
// touched per probe, no key columns, no candidate rounds — and skips a row
// equal to the row before it (same group, same value) without probing:
// cached and joined data often holds runs of one key (an order's line
// items), which this makes nearly free. It starts in the direct layout (a
// paged bitmap per group, distinct_direct.go) and moves to the
// hashed set for good, even mid-batch, when the values are too wide or too
// sparse for it. Other types (strings, decimals, Uint64, ...) use
// distinctAcc.
type distinctIntAcc struct {
	inner   accumulator
	mem     memory.Allocator
	dir     *distinctDirect // the direct layout; nil once hashed
	ngroups int             // groups, from resize
	slots   []distinctSlot  // hashed set: len is a power of two, at most half full
	shift   uint            // 64 - log2(len(slots))
	n       int             // pairs held (in dir or slots)
	vals    []int64         // scratch: the batch's values widened
	rows    []int32         // scratch: rows with a new pair
	grps    []uint32        // scratch: their groups
	// setState's pairs by group (distinct_spill.go), kept between calls.
	setVals []int64
	setOff  []int32
	// srt is the ordered path's state (distinct_sorted.go).
	srt sortedDistinct
	// loaded keeps update's first-pass slot loads observable, so the
	// compiler does not drop them as dead; its value means nothing.
	loaded uint32
}

// distinctSlot holds one (value, group) pair; used is 0 for an empty slot.
type distinctSlot struct {
	val  int64
	grp  uint32
	used uint32
}

// distinctIntType reports whether distinctIntAcc handles arguments of dt:
// the types a DISTINCT aggregate can run by sets over.
func distinctIntType(dt arrow.DataType) bool { return physical.DistinctSetType(dt) }

func newDistinctIntAcc(inner accumulator, mem memory.Allocator) *distinctIntAcc {
	return &distinctIntAcc{inner: inner, mem: mem, dir: &distinctDirect{}, slots: make([]distinctSlot, hashtable.InitialSlots), shift: 64 - 4}
}

func (d *distinctIntAcc) resize(n int) {
	d.inner.resize(n)
	d.ngroups = max(d.ngroups, n)
}
func (d *distinctIntAcc) bytesPerGroup() int64 { return d.inner.bytesPerGroup() }

// memSize is the layout's bytes, for memory accounting.
func (d *distinctIntAcc) memSize() int64 {
	n := int64(len(d.slots))*16 + d.srt.sortedBytes()
	if d.dir != nil {
		n += d.dir.memSize()
	}
	return n
}

// worstCase bounds the bytes adding n rows can add to the layout. The
// direct layout may also move to a hashed set sized for every pair.
// On the ordered path the rows may add to the history (at most two
// 10-byte varints a pair, and the history may be reallocated), or the
// history and the rows may go into the set at once (settle).
func (d *distinctIntAcc) worstCase(n int) int64 {
	held, more, extra := d.n, n, int64(0)
	if s := &d.srt; !s.off {
		held, more = d.n-s.held, s.held+n
		extra = int64(max(d.ngroups-len(s.last), 0)) * 8
		if need := n * 20; len(s.hist)+need > cap(s.hist) {
			extra += int64(2*cap(s.hist) + need)
		}
	}
	if d.dir != nil {
		return extra + d.dir.worstCase(held, more) + int64(hashtable.SlotsFor(held+more))*16
	}
	grow := extra
	for c := len(d.slots); (held+more)*2 > c; c *= 2 {
		grow += int64(c) * 2 * 16
	}
	return grow
}

func (d *distinctIntAcc) merge(context.Context, []uint32, []arrow.Array) error {
	return qerr.Internalf("exec/hashagg: DISTINCT aggregates run in single mode, never merge")
}
func (d *distinctIntAcc) final(m *kernel.ArrayMaker, start, end int) arrow.Array {
	return d.inner.final(m, start, end)
}
func (d *distinctIntAcc) state(m *kernel.ArrayMaker, start, end int) []arrow.Array {
	return d.inner.state(m, start, end)
}

// widen copies arg's values into d.vals as int64: one type switch per batch.
func (d *distinctIntAcc) widen(arg arrow.Array) bool {
	n := arg.Len()
	d.vals = kernel.GrowSlice(d.vals[:0], n)[:n]
	switch a := arg.(type) {
	case *array.Int8:
		widenInto(d.vals, a.Int8Values())
	case *array.Int16:
		widenInto(d.vals, a.Int16Values())
	case *array.Int32:
		widenInto(d.vals, a.Int32Values())
	case *array.Int64:
		copy(d.vals, a.Int64Values())
	case *array.Uint8:
		widenInto(d.vals, a.Uint8Values())
	case *array.Uint16:
		widenInto(d.vals, a.Uint16Values())
	case *array.Uint32:
		widenInto(d.vals, a.Uint32Values())
	case *array.Date32:
		widenInto(d.vals, a.Date32Values())
	default:
		return false
	}
	return true
}

func widenInto[T ~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32](dst []int64, src []T) {
	for i, v := range src {
		dst[i] = int64(v)
	}
}

func (d *distinctIntAcc) update(ctx context.Context, groups []uint32, arg arrow.Array) error {
	if allNull(arg) {
		return nil
	}
	if !d.widen(arg) {
		return qerr.Internalf("exec/hashagg: DISTINCT over %s reached the integer set", arg.DataType())
	}
	n := arg.Len()
	valid, off := kernel.ValidBits(arg)
	vals := d.vals[:n]
	d.rows, d.grps = d.rows[:0], d.grps[:0]
	if !d.srt.off && (valid != nil || !d.updateSorted(groups, vals)) {
		d.settle(true)
	}
	if d.srt.off {
		d.updateSet(groups, valid, off, vals)
	}
	if len(d.rows) == 0 {
		return nil
	}
	first, ok := kernel.Gather(d.mem, arg, d.rows)
	if !ok {
		return qerr.Internalf("exec/hashagg: DISTINCT cannot gather values of %s", arg.DataType())
	}
	defer first.Release()
	return d.inner.update(ctx, d.grps, first)
}

// updateSet inserts the rows of vals into the set: the direct layout while
// it can take them, then the hashed one.
func (d *distinctIntAcc) updateSet(groups []uint32, valid []byte, off int, vals []int64) {
	n := len(vals)
	var run distinctRun
	start := 0
	if d.dir != nil {
		start = d.updateDirect(groups, valid, off, vals, &run)
		if start < n {
			d.toHashed(n - start)
		}
	}
	if start < n {
		d.updateHashed(groups, valid, off, vals, start, &run)
	}
}

// updateHashed inserts rows [start, len(vals)) into the hashed set, in row
// order, appending each row with a new pair to d.rows and d.grps.
func (d *distinctIntAcc) updateHashed(groups []uint32, valid []byte, off int, vals []int64, start int, run *distinctRun) {
	n := len(vals)
	if need := hashtable.SlotsFor(d.n + n - start); need > len(d.slots) {
		d.grow(need)
	}
	slots, shift, mask := d.slots, d.shift, uint64(len(d.slots)-1)
	// Two passes per chunk of rows, as in lookupInts: the first loads
	// every row's home slot (independent loads whose cache misses overlap),
	// the second inserts from cache.
	var home [hashtable.ProbeChunk]uint64
	var homeUsed [hashtable.ProbeChunk]uint32
	var loaded uint32 // reads homeUsed, so the first pass's loads are kept
	prevOK, prevVal, prevGrp := run.ok, run.val, run.grp
	for base := start; base < n; base += hashtable.ProbeChunk {
		m := min(hashtable.ProbeChunk, n-base)
		for j := 0; j < m; j++ {
			s := distinctHash(vals[base+j], groups[base+j]) >> shift
			home[j] = s
			homeUsed[j] = slots[s].used
		}
		for j := 0; j < m; j++ {
			i := base + j
			if valid != nil && !bitutil.BitIsSet(valid, off+i) {
				prevOK = false
				continue
			}
			v, g := vals[i], groups[i]
			if prevOK && v == prevVal && g == prevGrp {
				continue // a run of one pair: already in the set
			}
			prevOK, prevVal, prevGrp = true, v, g
			s := home[j]
			loaded += homeUsed[j]
			for {
				sl := &slots[s]
				if sl.used == 0 {
					*sl = distinctSlot{val: v, grp: g, used: 1}
					d.n++
					d.rows = append(d.rows, int32(i))
					d.grps = append(d.grps, g)
					break
				}
				if sl.val == v && sl.grp == g {
					break
				}
				s = (s + 1) & mask
			}
		}
	}
	d.loaded = loaded
	run.ok, run.val, run.grp = prevOK, prevVal, prevGrp
}

// distinctHash mixes a (value, group) pair; its HIGH bits pick the slot.
func distinctHash(v int64, g uint32) uint64 {
	return kernel.Fmix64(uint64(v)*kernel.HashPrime + uint64(g))
}

// grow rehashes the set into c slots.
func (d *distinctIntAcc) grow(c int) {
	old := d.slots
	d.slots = make([]distinctSlot, c)
	d.shift = uint(64 - bits.TrailingZeros(uint(c)))
	mask := uint64(c - 1)
	for _, sl := range old {
		if sl.used == 0 {
			continue
		}
		s := distinctHash(sl.val, sl.grp) >> d.shift
		for d.slots[s].used != 0 {
			s = (s + 1) & mask
		}
		d.slots[s] = sl
	}
}
