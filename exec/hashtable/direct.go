package hashtable

import (
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
)

// The direct integer layout. Keys of joins and groupings are very often
// dense integers (surrogate keys 1..N, dates): then an array indexed by the
// key minus the window's first value (lo), holding id+1, is both smaller
// than hashed slots (4 bytes a value against 16 a slot at half load) and far
// cheaper to probe: one load, no hash, no compare loop, and keys that arrive
// in order touch memory in order.
//
// The array is paged: a window of up to directMax values is split into
// pages of pageSize, and only pages holding a key are allocated (the others
// share the read-only zeroPage), so keys clustered in a few places of a
// wide range — two scan partitions each feeding ascending order keys — cost
// only the pages they touch. A table stays direct while its allocated pages
// hold at most directLimit(keys) values.

const (
	pageBits = 16
	pageSize = 1 << pageBits
	pageMask = pageSize - 1

	// directMin values (one page, 256 KiB) are allowed for any key count.
	directMin = pageSize
	// directSmall values (32 MiB) are allowed at up to 256 per key (a
	// filtered build side of order keys keeps its fast probe); beyond that
	// 16 per key, so a large direct table never takes much more memory than
	// the hashed one would.
	directSmall = 1 << 23
	// directMax is the widest window (1024 pages), whatever the key count.
	directMax = 1 << 26
)

// directInts is the direct layout: the entry of key v is
// pages[(v-lo)>>pageBits][(v-lo)&pageMask].
type directInts struct {
	pages  []*directPage
	lo     int64
	used   int    // pages allocated (not zeroPage)
	nullID uint32 // id of the NULL key, NoID while none
	// allow is how many values the pages may hold whatever the key count:
	// the window the keys' statistics guarantee (choose.go), 0 without.
	allow uint64
}

func newDirectInts() *directInts { return &directInts{nullID: NoID} }

func (d *directInts) lookup(t *Table, p *Probe, cols []arrow.Array, n int, sel []int32, out []uint32, insert bool) {
	lookupInt(t, p, cols[0], n, sel, out, insert)
}

func (d *directInts) memSize() int64 { return int64(d.used)*pageSize*4 + int64(len(d.pages))*8 }

// worstCase counts both new direct pages and the move to hashed slots;
// within a window the statistics allow, the n rows add at most n pages.
func (d *directInts) worstCase(t *Table, _ []arrow.Array, n int) int64 {
	need := t.n + n
	pages := directLimit(need)
	if free := d.allow - min(d.allow, uint64(d.used)*pageSize); free > pages {
		pages = max(pages, min(free, uint64(n)*pageSize))
	}
	return 4*int64(pages) + 16*int64(SlotsFor(need))
}

// directPage holds id+1 of each of pageSize consecutive key values; 0 = absent.
type directPage = [pageSize]uint32

// zeroPage stands for every page without a key; it is never written.
var zeroPage directPage

// directLimit is how many values the allocated pages of a table of n keys
// may hold.
func directLimit(n int) uint64 {
	u := uint64(n)
	return max(directMin, min(256*u, directSmall), min(16*u, directMax))
}

// keyRange returns the smallest and largest value of the rows of sel (nil:
// all n) that are not NULL, compared as int64; ok is false when there is
// none.
func keyRange[T intLike](vals []T, arr arrow.Array, n int, sel []int32) (lo, hi int64, ok bool) {
	bits, off := keyBits(arr)
	lo, hi = math.MaxInt64, math.MinInt64
	if sel == nil && bits == nil {
		for _, v := range vals[:n] {
			lo = min(lo, int64(v))
			hi = max(hi, int64(v))
		}
		return lo, hi, n > 0
	}
	for k := range rowCount(n, sel) {
		r := rowAt(sel, k)
		if bits == nil || bitutil.BitIsSet(bits, off+r) {
			v := int64(vals[r])
			lo, hi, ok = min(lo, v), max(hi, v), true
		}
	}
	return lo, hi, ok
}

// rowCount is how many rows sel (nil: all n) selects.
func rowCount(n int, sel []int32) int {
	if sel == nil {
		return n
	}
	return len(sel)
}

// rowAt is the k-th selected row.
func rowAt(sel []int32, k int) int {
	if sel == nil {
		return k
	}
	return int(sel[k])
}

// coverDirect widens d's window and allocates the pages so that every
// non-NULL key of the rows of sel (nil: all n) has its entry, before they
// are inserted into a table of keys keys. It reports false, changing nothing, when the window would
// grow past directMax or the pages past directLimit.
func coverDirect[T intLike](d *directInts, keys int, vals []T, arr arrow.Array, n int, sel []int32) bool {
	lo, hi, ok := keyRange(vals, arr, n, sel)
	if !ok {
		return true
	}
	rows := rowCount(n, sel)
	if len(d.pages) > 0 && lo >= d.lo {
		// Within the window and every page of [lo, hi] present (the common
		// case once a table has seen its keys): nothing to allocate, and no
		// pass over the rows. Bounded by the rows' own pass in cost.
		first := (uint64(lo) - uint64(d.lo)) >> pageBits
		last := (uint64(hi) - uint64(d.lo)) >> pageBits
		if last < uint64(len(d.pages)) && last-first < uint64(rows) {
			all := true
			for _, pg := range d.pages[first : last+1] {
				if pg == &zeroPage {
					all = false
					break
				}
			}
			if all {
				return true
			}
		}
	}
	// Windows start on a page boundary, so a page never straddles MaxInt64
	// (MaxInt64+1 is a multiple of pageSize) and the window's last key is a
	// valid int64.
	newLo := lo &^ pageMask
	if len(d.pages) > 0 {
		curHi := int64(uint64(d.lo) + uint64(len(d.pages))<<pageBits - 1)
		newLo, hi = min(newLo, d.lo), max(hi, curHi)
	}
	numPages := (uint64(hi)-uint64(newLo))>>pageBits + 1
	if numPages > directMax>>pageBits {
		return false
	}
	shift := 0 // the old pages' place in the new table
	if len(d.pages) > 0 {
		shift = int((uint64(d.lo) - uint64(newLo)) >> pageBits)
	}
	// Mark the absent pages these rows need.
	mark := make([]bool, numPages)
	fresh := 0
	base := uint64(newLo)
	bits, off := keyBits(arr)
	for k := range rows {
		r := rowAt(sel, k)
		if bits != nil && !bitutil.BitIsSet(bits, off+r) {
			continue
		}
		pi := int((uint64(int64(vals[r])) - base) >> pageBits)
		if mark[pi] {
			continue
		}
		if old := pi - shift; old >= 0 && old < len(d.pages) && d.pages[old] != &zeroPage {
			continue
		}
		mark[pi] = true
		fresh++
	}
	if uint64(d.used+fresh)*pageSize > max(directLimit(keys+rows), d.allow) {
		return false
	}
	pages := d.pages
	if uint64(len(pages)) != numPages {
		pages = make([]*directPage, numPages)
		for i := range pages {
			pages[i] = &zeroPage
		}
		copy(pages[shift:], d.pages)
	}
	for pi, m := range mark {
		if m {
			pages[pi] = new(directPage)
		}
	}
	d.pages, d.lo, d.used = pages, newLo, d.used+fresh
	return true
}

// toHashed returns a hashed layout of c slots (a power of two at least
// twice the key count) holding every key of d, the NULL key's id included;
// d is left behind for good.
func (d *directInts) toHashed(c int) *hashedInts {
	h := newHashedInts(c)
	h.nullID = d.nullID
	mask := uint64(c - 1)
	for pi, pg := range d.pages {
		if pg == &zeroPage {
			continue
		}
		for i, id := range pg {
			if id == 0 {
				continue
			}
			key := int64(uint64(d.lo) + uint64(pi)<<pageBits + uint64(i))
			s := intSlotHash(key) >> h.shift
			for h.slots[s].id != 0 {
				s = (s + 1) & mask
			}
			h.slots[s] = intSlot{key: key, id: id}
		}
	}
	d.pages, d.used = nil, 0
	return h
}

// findDirectAll resolves every row of vals (no NULLs) against d when each
// key is already in the table, and reports whether it did. An insert whose
// keys are all known (a grouping once it has seen its few keys) then costs
// one pass of loads, without the window check and the insert loop's branch
// on every entry; a false leaves out to be overwritten by the insert.
func findDirectAll[T intLike](d *directInts, vals []T, arr arrow.Array, out []uint32) bool {
	if bits, _ := keyBits(arr); bits != nil || len(vals) == 0 {
		return false
	}
	pages := d.pages
	lo := uint64(d.lo)
	size := uint64(len(pages)) << pageBits
	out = out[:len(vals)]
	least := uint32(math.MaxUint32)
	for r, v := range vals {
		i := uint64(int64(v)) - lo
		id := uint32(0)
		if i < size {
			id = pages[i>>pageBits][i&pageMask]
		}
		least = min(least, id)
		out[r] = id - 1
	}
	return least != 0
}

// lookupDirect resolves the rows of sel (nil: all n) against d, as
// lookupHashed does. For inserts the caller has allocated the page of every
// non-NULL key of the rows (coverDirect); for finds a key outside the
// window or on an absent page is absent.
func lookupDirect[T intLike](t *Table, d *directInts, p *Probe, vals []T, arr arrow.Array, n int, sel []int32, out []uint32, insert bool) {
	p.newRows = p.newRows[:0]
	bits, off := keyBits(arr)
	pages := d.pages
	lo := uint64(d.lo)
	size := uint64(len(pages)) << pageBits
	if sel == nil && bits == nil {
		if !insert {
			// No branch waits on a load, so the CPU keeps many in flight;
			// an absent entry holds 0, and 0-1 is noID.
			for r, v := range vals[:n] {
				i := uint64(int64(v)) - lo
				id := uint32(0)
				if i < size {
					id = pages[i>>pageBits][i&pageMask]
				}
				out[r] = id - 1
			}
			return
		}
		for r, v := range vals[:n] {
			i := uint64(int64(v)) - lo
			pg := pages[i>>pageBits]
			id := pg[i&pageMask]
			if id == 0 {
				t.n++
				id = uint32(t.n)
				pg[i&pageMask] = id
				p.newRows = append(p.newRows, int32(r))
			}
			out[r] = id - 1
		}
		return
	}
	for k := range rowCount(n, sel) {
		r := int32(rowAt(sel, k))
		if bits != nil && !bitutil.BitIsSet(bits, off+int(r)) {
			resolveNull(t, &d.nullID, p, r, out, insert)
			continue
		}
		i := uint64(int64(vals[r])) - lo
		id := uint32(0)
		if i < size {
			id = pages[i>>pageBits][i&pageMask]
		}
		if id == 0 && insert {
			t.n++
			id = uint32(t.n)
			pages[i>>pageBits][i&pageMask] = id
			p.newRows = append(p.newRows, r)
		}
		out[r] = id - 1
	}
}

// IntegerRange returns the smallest and largest value (as int64) of an
// integer-like array (see isIntLike), for the planner's partition ranges.
// ok is false when arr has another type or holds a NULL; an empty array
// gives ok with lo > hi.
func IntegerRange(arr arrow.Array) (lo, hi int64, ok bool) {
	if !isIntLike(arr.DataType()) || arr.NullN() != 0 {
		return 0, 0, false
	}
	r := intColRange(arr, arr.Len(), nil)
	if !r.ok {
		return math.MaxInt64, math.MinInt64, true
	}
	return r.lo, r.hi, true
}
