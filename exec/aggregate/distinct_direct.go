package aggregate

import (
	"math"
	"math/bits"

	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/quiverdb/quiver/exec/hashtable"
	"github.com/quiverdb/quiver/exec/kernel"
)

// The direct layout of distinctIntAcc. DISTINCT arguments are very often
// dense integer keys (order keys, customer keys) over few groups: then a
// bitmap per group over a window of values answers "first time this
// (group, value)?" with one bit test in a few megabytes, where the hashed
// set needs 32-64 bytes a pair and a cache miss a probe.
//
// Values are biased (v ^ 1<<63, so unsigned order is signed order and no
// arithmetic overflows) and split into pages of dpSize values. The window
// is a run of np pages from loPage; group g's pages are ptrs[g*np : g*np+np]
// (group-major, so new groups only append), and only the pages holding a
// value are allocated: keys spread over a wide range by few groups cost
// only the pages they touch. The window grows geometrically towards new
// values (a re-layout of the pointers, never of the bits). The layout is
// left for the hashed set for good when the pointers would pass dirMaxPtrs
// or the allocated bits dirLimit(pairs).

const (
	dpBits  = 12
	dpSize  = 1 << dpBits // values a page
	dpWords = dpSize / 64

	// dirMinBits of pages (2 MiB) are allowed for any pair count: the
	// first batches of keys interleaved from several partitions touch a
	// wide range before they have filled it.
	dirMinBits = 1 << 24
	// dirBitsPerPair: beyond dirMinBits the pages may hold 256 bits a pair
	// (32 bytes), no more than the hashed set's 16-byte slots at half load.
	dirBitsPerPair = 256
	// dirMaxBits (32 MiB of pages) caps the layout whatever the pair count.
	dirMaxBits = 1 << 28
	// dirMaxPtrs caps the pointer table (groups x window pages, 2 MiB).
	dirMaxPtrs = 1 << 18
	// dirSlabPages is the most pages one slab allocation carves.
	dirSlabPages = 256

	dirSignBit = uint64(1) << 63
	// dirLastPage is the page of the largest biased value.
	dirLastPage = math.MaxUint64 >> dpBits
)

type dirPage = [dpWords]uint64

// distinctDirect is the paged bitmap of (group, value) pairs seen.
type distinctDirect struct {
	loPage  uint64     // the window's first page (biased value >> dpBits)
	np      int        // pages per group in the window; 0 = no window yet
	ngroups int        // groups ptrs has rows for
	ptrs    []*dirPage // ptrs[g*np+pi]: page pi of group g, nil = no value
	used    int        // pages handed out
	slab    []uint64   // the current slab's words not handed out yet
	slabs   int64      // bytes of every slab allocated
}

// dirLimit is how many pages a layout holding pairs pairs may allocate.
func dirLimit(pairs int) int {
	n := max(dirMinBits, min(dirBitsPerPair*uint64(pairs), dirMaxBits))
	return int(n / dpSize)
}

// memSize is the layout's bytes, for memory accounting.
func (t *distinctDirect) memSize() int64 { return int64(cap(t.ptrs))*8 + t.slabs }

// worstCase bounds the bytes n more rows can add to a layout holding
// pairs pairs: a page a row up to the limit, one slab carved beyond that,
// and a new pointer table at its cap (the old one is dropped after).
func (t *distinctDirect) worstCase(pairs, n int) int64 {
	pages := int64(max(0, min(n, dirLimit(pairs+n)-t.used)))
	return (pages+dirSlabPages)*dpWords*8 + dirMaxPtrs*8
}

// setGroups gives the pointer table rows for n groups; false when the
// table would pass dirMaxPtrs.
func (t *distinctDirect) setGroups(n int) bool {
	if n <= t.ngroups {
		return true
	}
	if n*max(t.np, 1) > dirMaxPtrs {
		return false
	}
	if t.np > 0 {
		add := (n - t.ngroups) * t.np
		t.ptrs = append(t.ptrs, make([]*dirPage, add)...)
	}
	t.ngroups = n
	return true
}

// cover widens the window to hold every biased value in [bmin, bmax], at
// least doubling it so a drifting range re-lays the pointers only
// logarithmically often; false, changing nothing, when the pointers would
// pass dirMaxPtrs.
func (t *distinctDirect) cover(bmin, bmax uint64) bool {
	pmin, pmax := bmin>>dpBits, bmax>>dpBits
	if t.np > 0 {
		hi := t.loPage + uint64(t.np) - 1
		if pmin >= t.loPage && pmax <= hi {
			return true
		}
		pmin, pmax = min(pmin, t.loPage), max(pmax, hi)
	}
	maxPages := uint64(dirMaxPtrs / max(t.ngroups, 1))
	req := pmax - pmin + 1
	if pmax-pmin >= maxPages { // req > maxPages, without req overflowing
		return false
	}
	target := min(max(req, 2*uint64(t.np)), maxPages)
	newLo := pmin
	if t.np > 0 && pmin < t.loPage { // grew downwards: spend the slack below
		newLo -= min(target-req, pmin)
	}
	if newLo > dirLastPage-(target-1) {
		newLo = dirLastPage - (target - 1)
	}
	np := int(target)
	ptrs := make([]*dirPage, t.ngroups*np)
	if t.np > 0 {
		shift := int(t.loPage - newLo)
		for g := range t.ngroups {
			copy(ptrs[g*np+shift:], t.ptrs[g*t.np:(g+1)*t.np])
		}
	}
	t.ptrs, t.loPage, t.np = ptrs, newLo, np
	return true
}

// alloc hands out a zeroed page, or nil when a layout holding pairs pairs
// may not take another. Pages come from slabs that grow with the layout,
// so a small DISTINCT does not pay for a large slab.
func (t *distinctDirect) alloc(pairs int) *dirPage {
	if t.used+1 > dirLimit(pairs) {
		return nil
	}
	if len(t.slab) == 0 {
		pages := min(dirSlabPages, max(4, t.used))
		t.slab = make([]uint64, pages*dpWords)
		t.slabs += int64(pages) * dpWords * 8
	}
	p := (*dirPage)(t.slab[:dpWords])
	t.slab = t.slab[dpWords:]
	t.used++
	return p
}

// biasedRange returns the smallest and largest biased value of the
// non-NULL rows; ok is false when there is none.
func biasedRange(vals []int64, valid []byte, off int) (lo, hi uint64, ok bool) {
	lo, hi = math.MaxUint64, 0
	if valid == nil {
		for _, v := range vals {
			b := uint64(v) ^ dirSignBit
			lo, hi = min(lo, b), max(hi, b)
		}
		return lo, hi, len(vals) > 0
	}
	for i, v := range vals {
		if bitutil.BitIsSet(valid, off+i) {
			b := uint64(v) ^ dirSignBit
			lo, hi, ok = min(lo, b), max(hi, b), true
		}
	}
	return lo, hi, ok
}

// distinctRun is the pair of the row before, for skipping runs of one
// pair; ok is false when that row was NULL or not yet seen.
type distinctRun struct {
	ok  bool
	val int64
	grp uint32
}

// updateDirect inserts the rows of vals into the direct layout, in row
// order, appending each row with a new pair to d.rows and d.grps. It
// returns how many rows it consumed: less than len(vals) when the layout
// cannot take the rest, which the caller then moves to the hashed set.
func (d *distinctIntAcc) updateDirect(groups []uint32, valid []byte, off int, vals []int64, run *distinctRun) int {
	t := d.dir
	if !t.setGroups(d.ngroups) {
		return 0
	}
	bmin, bmax, ok := biasedRange(vals, valid, off)
	if !ok {
		return len(vals)
	}
	if !t.cover(bmin, bmax) {
		return 0
	}
	ptrs, np := t.ptrs, t.np
	lo := t.loPage << dpBits
	groups = groups[:len(vals)]
	// The run state and output count live in locals: through pointers the
	// compiler would reload them after every store.
	prevOK, prevVal, prevGrp := run.ok, run.val, run.grp
	// rows and grps get room for every row, so a new pair is written
	// without a branch on the bit just loaded (half the probes of
	// scattered keys would mispredict it).
	cnt := len(d.rows)
	rows := kernel.GrowSlice(d.rows, cnt+len(vals))
	grps := kernel.GrowSlice(d.grps, cnt+len(vals))
	stop := len(vals)
	for i, v := range vals {
		if valid != nil && !bitutil.BitIsSet(valid, off+i) {
			prevOK = false
			continue
		}
		g := groups[i]
		if prevOK && v == prevVal && g == prevGrp {
			continue // a run of one pair: already set
		}
		x := (uint64(v) ^ dirSignBit) - lo
		k := int(g)*np + int(x>>dpBits)
		p := ptrs[k]
		if p == nil {
			if p = t.alloc(d.n + cnt - len(d.rows)); p == nil {
				prevOK = false // row i is not in the layout: the caller inserts it
				stop = i
				break
			}
			ptrs[k] = p
		}
		prevOK, prevVal, prevGrp = true, v, g
		w := &p[(x>>6)&(dpWords-1)]
		old := *w
		*w = old | uint64(1)<<(x&63)
		rows[cnt], grps[cnt] = int32(i), g
		cnt += int(^old>>(x&63)) & 1 // 1 when the bit was clear: a new pair
	}
	run.ok, run.val, run.grp = prevOK, prevVal, prevGrp
	d.n += cnt - len(d.rows)
	d.rows, d.grps = rows[:cnt], grps[:cnt]
	return stop
}

// toHashed moves every pair of the direct layout into a hashed set sized
// for them and extra more, and leaves the direct layout for good.
func (d *distinctIntAcc) toHashed(extra int) {
	t := d.dir
	d.dir = nil
	c := hashtable.SlotsFor(d.n + extra)
	d.grow(c) // rehashes the (empty) slots into c
	mask := uint64(c - 1)
	for g := range t.ngroups {
		for pi := range t.np {
			p := t.ptrs[g*t.np+pi]
			if p == nil {
				continue
			}
			base := (t.loPage + uint64(pi)) << dpBits
			for wi, w := range p {
				for w != 0 {
					b := uint64(bits.TrailingZeros64(w))
					w &= w - 1
					v := int64((base + uint64(wi)*64 + b) ^ dirSignBit)
					s := distinctHash(v, uint32(g)) >> d.shift
					for d.slots[s].used != 0 {
						s = (s + 1) & mask
					}
					d.slots[s] = distinctSlot{val: v, grp: uint32(g), used: 1}
				}
			}
		}
	}
}
