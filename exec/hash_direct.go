package exec

import (
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
)

// The direct integer layout. Keys of joins and groupings are very often
// dense integers (surrogate keys 1..N, dates): then an array indexed by
// key-directLo holding id+1 is both smaller than hashed slots (4 bytes a
// value in the window against 16 a slot at half load) and far cheaper to
// probe: one load, no hash, no compare loop, and keys that arrive in order
// touch memory in order. A table stays direct while its window — every
// value from the smallest to the largest key, plus growth slack — is at
// most directLimit(keys) values wide.

const (
	// directMin is a window small enough (256 KiB) to allow for any count.
	directMin = 1 << 16
	// directPerKey bounds the window per key, so a direct table never
	// takes much more memory than the hashed one would.
	directPerKey = 16
	// directMax caps the window (128 MiB) whatever the key count.
	directMax = 1 << 25
)

// directLimit is the widest window a table of n keys may have.
func directLimit(n int) uint64 {
	return min(directMax, max(directMin, directPerKey*uint64(n)))
}

// keyRange returns the smallest and largest value of the rows of sel (nil:
// all n) that are not NULL, compared as int64; ok is false when there is
// none.
func keyRange[T intLike](vals []T, arr arrow.Array, n int, sel []int32) (lo, hi int64, ok bool) {
	bits, off := validBits(arr)
	lo, hi = math.MaxInt64, math.MinInt64
	if sel == nil && bits == nil {
		for _, v := range vals[:n] {
			lo = min(lo, int64(v))
			hi = max(hi, int64(v))
		}
		return lo, hi, n > 0
	}
	for i := 0; ; i++ {
		var r int
		if sel == nil {
			if i >= n {
				break
			}
			r = i
		} else {
			if i >= len(sel) {
				break
			}
			r = int(sel[i])
		}
		if bits != nil && !bitutil.BitIsSet(bits, off+r) {
			continue
		}
		v := int64(vals[r])
		lo, hi, ok = min(lo, v), max(hi, v), true
	}
	return lo, hi, ok
}

// coverDirect widens the direct window so that it holds [lo, hi], before
// rows more keys are inserted; it reports false, changing nothing, when the
// window would grow past directLimit.
func (t *hashTable) coverDirect(lo, hi int64, rows int) bool {
	if len(t.direct) > 0 {
		// The window never wraps past MaxInt64 (see below), so curHi holds.
		curHi := t.directLo + int64(len(t.direct)-1)
		if lo >= t.directLo && hi <= curHi {
			return true
		}
		lo, hi = min(lo, t.directLo), max(hi, curHi)
	}
	limit := directLimit(t.n + rows)
	span := uint64(hi) - uint64(lo) // values in [lo, hi] minus one; no overflow in uint64
	if span >= limit {
		return false
	}
	// Grow geometrically so a growing key range is copied O(log) times; the
	// slack goes above hi, where ascending keys will arrive.
	size := min(max(span+1, 2*uint64(len(t.direct))), limit)
	if room := uint64(math.MaxInt64) - uint64(lo); size-1 > room {
		size = room + 1 // keep directLo+size-1 a valid int64
	}
	nd := make([]uint32, size)
	if len(t.direct) > 0 {
		copy(nd[uint64(t.directLo)-uint64(lo):], t.direct)
	}
	t.direct, t.directLo = nd, lo
	return true
}

// toHashed moves every key of the direct window into c hashed slots (a
// power of two at least twice the key count) and leaves the direct layout
// for good.
func (t *hashTable) toHashed(c int) {
	t.hashed = true
	t.growInt(c)
	mask := uint64(c - 1)
	for i, id := range t.direct {
		if id == 0 {
			continue
		}
		key := int64(uint64(t.directLo) + uint64(i))
		s := intSlotHash(key) >> t.shift
		for t.intSlots[s].id != 0 {
			s = (s + 1) & mask
		}
		t.intSlots[s] = intSlot{key: key, id: id}
	}
	t.direct = nil
}

// lookupDirect is lookupInts for the direct layout. For inserts the caller
// has made the window cover every non-NULL key of the rows (coverDirect);
// for finds a key outside the window is absent.
func lookupDirect[T intLike](t *hashTable, p *probe, vals []T, arr arrow.Array, n int, sel []int32, out []uint32, insert bool) {
	p.newRows = p.newRows[:0]
	bits, off := validBits(arr)
	d := t.direct
	lo := uint64(t.directLo)
	size := uint64(len(d))
	if sel == nil && bits == nil {
		if !insert {
			// No branch waits on a load, so the CPU keeps many in flight;
			// an empty entry holds 0, and 0-1 is noID.
			for r, v := range vals[:n] {
				i := uint64(int64(v)) - lo
				id := uint32(0)
				if i < size {
					id = d[i]
				}
				out[r] = id - 1
			}
			return
		}
		for r, v := range vals[:n] {
			i := uint64(int64(v)) - lo
			id := d[i]
			if id == 0 {
				t.n++
				id = uint32(t.n)
				d[i] = id
				p.newRows = append(p.newRows, int32(r))
			}
			out[r] = id - 1
		}
		return
	}
	for k := 0; ; k++ {
		var r int32
		if sel == nil {
			if k >= n {
				break
			}
			r = int32(k)
		} else {
			if k >= len(sel) {
				break
			}
			r = sel[k]
		}
		if bits != nil && !bitutil.BitIsSet(bits, off+int(r)) {
			if t.nullID == noID && insert {
				t.nullID = uint32(t.n)
				t.n++
				p.newRows = append(p.newRows, r)
			}
			out[r] = t.nullID
			continue
		}
		i := uint64(int64(vals[r])) - lo
		id := uint32(0)
		if i < size {
			id = d[i]
		}
		if id == 0 && insert {
			t.n++
			id = uint32(t.n)
			d[i] = id
			p.newRows = append(p.newRows, r)
		}
		out[r] = id - 1
	}
}
