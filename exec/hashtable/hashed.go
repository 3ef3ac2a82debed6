package hashtable

import (
	"math/bits"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/quiverdb/quiver/exec/kernel"
)

// The hashed integer layout: one integer-like key column whose values are
// too spread out for the direct layout. Open addressing (linear probing)
// indexed by a hash's HIGH bits and kept at most half full; each slot holds
// the key value itself beside its id, so a lookup touches one slot and
// compares the value in place, with no per-row call and no second memory
// access. A NULL key has its own id (nullID) outside the slots. Probes load
// the home slots of a chunk of rows before resolving them, and a row whose
// key repeats the row before takes its answer without touching the slots.

// hashedInts is the hashed integer layout.
type hashedInts struct {
	slots  []intSlot
	shift  uint   // 64 - log2(len(slots))
	nullID uint32 // id of the NULL key, NoID while none
}

// intSlot is one slot of the hashed integer layout; id is the key's id+1,
// 0 = empty.
type intSlot struct {
	key int64
	id  uint32
}

// newHashedInts returns an empty hashed layout of c slots (a power of two).
func newHashedInts(c int) *hashedInts {
	h := &hashedInts{nullID: NoID}
	h.grow(c)
	return h
}

func (h *hashedInts) lookup(t *Table, p *Probe, cols []arrow.Array, n int, sel []int32, out []uint32, insert bool) {
	lookupInt(t, p, cols[0], n, sel, out, insert)
}

func (h *hashedInts) memSize() int64 { return int64(len(h.slots)) * 16 }

func (h *hashedInts) worstCase(t *Table, _ []arrow.Array, n int) int64 {
	return slotGrowth(len(h.slots), t.n+n, 16)
}

// lookupInt is the lookup of the two layouts of one integer key column
// (directInts, hashedInts): one type switch per batch, then a typed loop,
// then the new keys stored.
func lookupInt(t *Table, p *Probe, arr arrow.Array, n int, sel []int32, out []uint32, insert bool) {
	switch a := arr.(type) {
	case *array.Int8:
		lookupIntsIn(t, &t.layout, p, a.Int8Values(), arr, n, sel, out, insert)
	case *array.Int16:
		lookupIntsIn(t, &t.layout, p, a.Int16Values(), arr, n, sel, out, insert)
	case *array.Int32:
		lookupIntsIn(t, &t.layout, p, a.Int32Values(), arr, n, sel, out, insert)
	case *array.Int64:
		lookupIntsIn(t, &t.layout, p, a.Int64Values(), arr, n, sel, out, insert)
	case *array.Uint8:
		lookupIntsIn(t, &t.layout, p, a.Uint8Values(), arr, n, sel, out, insert)
	case *array.Uint16:
		lookupIntsIn(t, &t.layout, p, a.Uint16Values(), arr, n, sel, out, insert)
	case *array.Uint32:
		lookupIntsIn(t, &t.layout, p, a.Uint32Values(), arr, n, sel, out, insert)
	case *array.Uint64:
		lookupIntsIn(t, &t.layout, p, a.Uint64Values(), arr, n, sel, out, insert)
	case *array.Date32:
		lookupIntsIn(t, &t.layout, p, a.Date32Values(), arr, n, sel, out, insert)
	case *array.Date64:
		lookupIntsIn(t, &t.layout, p, a.Date64Values(), arr, n, sel, out, insert)
	case *array.Timestamp:
		lookupIntsIn(t, &t.layout, p, a.TimestampValues(), arr, n, sel, out, insert)
	case *array.Time64:
		lookupIntsIn(t, &t.layout, p, a.Time64Values(), arr, n, sel, out, insert)
	default:
		panic("exec/hash: integer key table given " + arr.DataType().String())
	}
	if len(p.newRows) > 0 {
		t.Keys[0].appendRows(arr, p.newRows)
	}
}

type intLike interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32 | ~uint64
}

// ProbeChunk is how many rows lookupHashed resolves per pass pair: enough
// independent loads in flight to hide memory latency, few enough that their
// slots stay in cache until the second pass.
const ProbeChunk = 64

// lookupIntsIn resolves the rows of sel (nil: all n) in the integer layout
// *cur (directInts or hashedInts), first moving *cur from direct to hashed
// when inserting these rows would make the direct window too wide.
func lookupIntsIn[T intLike](t *Table, cur *layout, p *Probe, vals []T, arr arrow.Array, n int, sel []int32, out []uint32, insert bool) {
	rows := rowCount(n, sel)
	if d, ok := (*cur).(*directInts); ok {
		if insert && sel == nil && findDirectAll(d, vals[:n], arr, out) {
			p.newRows = p.newRows[:0]
			return
		}
		if !insert || coverDirect(d, t.n, vals, arr, n, sel) {
			lookupDirect(t, d, p, vals, arr, n, sel, out, insert)
			return
		}
		*cur = d.toHashed(SlotsFor(t.n + rows))
		t.changes++
	}
	h := (*cur).(*hashedInts)
	if insert {
		if c := SlotsFor(t.n + rows); c > len(h.slots) {
			h.grow(c)
		}
	}
	lookupHashed(t, h, p, vals, arr, n, sel, out, insert)
}

// intSlotHash places an integer key: a full-avalanche mix whose high bits
// index the slots.
func intSlotHash(v int64) uint64 { return kernel.Fmix64(uint64(v)*kernel.HashMulA + kernel.HashSeed) }

// lookupHashed resolves the rows of sel (nil: all n) against h. New keys
// get ids in row order; their rows are left in p.newRows for the caller to
// store. The caller has grown the slots for inserts.
func lookupHashed[T intLike](t *Table, h *hashedInts, p *Probe, vals []T, arr arrow.Array, n int, sel []int32, out []uint32, insert bool) {
	p.newRows = p.newRows[:0]
	bits, off := keyBits(arr)
	slots := h.slots
	mask := uint64(len(slots) - 1)
	shift := h.shift
	if sel == nil && bits == nil {
		// Two passes per chunk of rows: the first computes every row's home
		// slot and loads it, loads that do not depend on one another, so
		// the CPU overlaps their cache misses; the second probes, mostly
		// from cache. One pass would wait out a miss per row: the branch on
		// the loaded slot stops the CPU from running ahead. A row whose key
		// repeats the row before it (line items of one order sit together)
		// takes that row's answer without touching the table.
		var home [ProbeChunk]uint64
		var homeID [ProbeChunk]uint32
		for base := 0; base < n; base += ProbeChunk {
			m := min(ProbeChunk, n-base)
			for i := 0; i < m; i++ {
				r := base + i
				if r > 0 && vals[r] == vals[r-1] {
					continue
				}
				s := intSlotHash(int64(vals[r])) >> shift
				home[i] = s
				homeID[i] = slots[s].id
			}
			for i := 0; i < m; i++ {
				r := base + i
				v := int64(vals[r])
				if r > 0 && vals[r] == vals[r-1] {
					out[r] = out[r-1]
					continue
				}
				s := home[i]
				if !insert && homeID[i] == 0 {
					out[r] = NoID
					continue
				}
				for {
					sl := &slots[s]
					if sl.id == 0 {
						if insert {
							t.n++
							sl.key, sl.id = v, uint32(t.n)
							out[r] = uint32(t.n - 1)
							p.newRows = append(p.newRows, int32(r))
						} else {
							out[r] = NoID
						}
						break
					}
					if sl.key == v {
						out[r] = sl.id - 1
						break
					}
					s = (s + 1) & mask
				}
			}
		}
		return
	}
	for k := range rowCount(n, sel) {
		r := int32(rowAt(sel, k))
		if bits != nil && !bitutil.BitIsSet(bits, off+int(r)) {
			resolveNull(t, &h.nullID, p, r, out, insert)
			continue
		}
		v := int64(vals[r])
		s := intSlotHash(v) >> shift
		for {
			sl := &slots[s]
			if sl.id == 0 {
				if insert {
					t.n++
					sl.key, sl.id = v, uint32(t.n)
					out[r] = uint32(t.n - 1)
					p.newRows = append(p.newRows, r)
				} else {
					out[r] = NoID
				}
				break
			}
			if sl.key == v {
				out[r] = sl.id - 1
				break
			}
			s = (s + 1) & mask
		}
	}
}

// resolveNull gives row r, whose key is NULL, the NULL key's id (*nullID),
// first handing that id out when inserting (NULL groups with NULL).
func resolveNull(t *Table, nullID *uint32, p *Probe, r int32, out []uint32, insert bool) {
	if *nullID == NoID && insert {
		*nullID = uint32(t.n)
		t.n++
		p.newRows = append(p.newRows, r)
	}
	out[r] = *nullID
}

// SlotsFor is the slot count (a power of two) that keeps n keys at most
// half full.
func SlotsFor(n int) int {
	c := InitialSlots
	for n*2 > c {
		c *= 2
	}
	return c
}

// grow resizes h to c slots (a power of two larger than now) and
// reinserts every key, in one pass however large the step.
func (h *hashedInts) grow(c int) {
	old := h.slots
	h.slots = make([]intSlot, c)
	h.shift = uint(64 - bits.TrailingZeros(uint(c)))
	mask := uint64(len(h.slots) - 1)
	for _, sl := range old {
		if sl.id == 0 {
			continue
		}
		s := intSlotHash(sl.key) >> h.shift
		for h.slots[s].id != 0 {
			s = (s + 1) & mask
		}
		h.slots[s] = sl
	}
}
