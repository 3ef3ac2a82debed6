package aggregate

import (
	"math/bits"
	"slices"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/quiverdb/quiver/exec/kernel"
	"github.com/quiverdb/quiver/qerr"
)

// Lazy sets of a Partial DISTINCT by sets. A Partial aggregate's DISTINCT
// set is read once, as its groups' sets, when the state is emitted; no row
// needs to know on arrival whether its pair is new (the inner aggregate's
// state is not emitted). So once values come out of order (the ordered
// path of distinct_sorted.go is left), distinctSetAcc stops probing the
// set: each row's (group, value) pair is appended to the recorded pairs
// (a run of one pair once), and the list is sorted and deduplicated, a
// radix sort over packed keys, when it doubles and when the state is read.
// Sorting reads and writes memory in order; probing a set of pairs over a
// key range wider than the CPU caches (customers per nation and year)
// costs a cache miss a row.
//
// When the pairs a compaction added dedupe to less than lazyLeaveShare of
// themselves, the rows repeat pairs the set would hold in little memory
// and answer from cache: the pairs move into the set and the accumulator
// goes on probing, for good. The answer never depends on the path.

// lazyMinPairs is when the first compaction runs, and the least growth
// between two: enough that a Partial aggregate of a few million rows sorts
// its pairs once, when its state is read. (A variable for tests:
// SetLazyDistinctPairs.)
var lazyMinPairs atomic.Int64

func init() { lazyMinPairs.Store(1 << 19) }

// SetLazyDistinctPairs sets when lazy sets compact (lazyMinPairs) and
// returns a function restoring the old value; for tests that drive the
// compactions and the switch back to the set through SQL.
func SetLazyDistinctPairs(n int) (restore func()) {
	old := lazyMinPairs.Swap(int64(n))
	return func() { lazyMinPairs.Store(old) }
}

const (
	// lazyLeaveShare: a compaction that keeps fewer than one in this many
	// of the pairs added since the last one leaves the lazy path.
	lazyLeaveShare = 4
	// radixBits is the digit of the compaction's radix sort.
	radixBits = 11
)

// lazyRows and lazyLeft count the rows lazy sets took and the sets that
// left the lazy path (LazyDistinctRows, LazyDistinctLeft).
var lazyRows, lazyLeft atomic.Int64

// LazyDistinctRows is the number of rows Partial DISTINCT aggregates have
// recorded without probing a set since the process started (for tests).
func LazyDistinctRows() int64 { return lazyRows.Load() }

// LazyDistinctLeft is the number of lazy sets that moved to the set since
// the process started (for tests).
func LazyDistinctLeft() int64 { return lazyLeft.Load() }

// lazySet is distinctSetAcc's lazy path state.
type lazySet struct {
	off   bool        // left for good (or never taken: Final mode)
	next  int         // compact when the recorded pairs reach this many
	clean int         // the first clean pairs are sorted and distinct
	run   distinctRun // the last row's pair
}

// updateLazy records the pairs of arg's rows; false, doing nothing, when
// the lazy path is not (or no longer) taken.
func (d *distinctSetAcc) updateLazy(groups []uint32, arg arrow.Array) (bool, error) {
	if d.lazy.off || !d.srt.off {
		return false, nil
	}
	if allNull(arg) {
		return true, nil
	}
	if !d.widen(arg) {
		return true, qerr.Internalf("exec/hashagg: DISTINCT over %s reached the integer set", arg.DataType())
	}
	n := arg.Len()
	valid, off := kernel.ValidBits(arg)
	vals := d.vals[:n]
	groups = groups[:n]
	cnt := len(d.pairV)
	pv := growTo(d.pairV, cnt+n)
	pg := growTo(d.pairG, cnt+n)
	r := d.lazy.run
	for i, v := range vals {
		if valid != nil && !bitutil.BitIsSet(valid, off+i) {
			r.ok = false
			continue
		}
		g := groups[i]
		// Written unconditionally, kept only for a new run.
		pv[cnt], pg[cnt] = v, g
		if !r.ok || v != r.val || g != r.grp {
			cnt++
		}
		r = distinctRun{ok: true, val: v, grp: g}
	}
	d.lazy.run = r
	d.pairV, d.pairG = pv[:cnt], pg[:cnt]
	lazyRows.Add(int64(n))
	if d.lazy.next == 0 {
		d.lazy.next = int(lazyMinPairs.Load())
	}
	if len(d.pairV) >= d.lazy.next {
		d.compact()
	}
	return true, nil
}

// compact sorts the recorded pairs by (group, value), drops repeats, and
// decides whether the lazy path goes on. Only the pairs recorded since the
// last compaction are sorted; they are then merged with the earlier ones,
// which are sorted and distinct already.
func (d *distinctSetAcc) compact() {
	before, clean := len(d.pairV), d.lazy.clean
	gs, vs := d.pairG[clean:], d.pairV[clean:]
	sortPairsByKey(gs, vs)
	fresh := dedupeSorted(gs, vs)
	if clean == 0 {
		d.pairG, d.pairV = d.pairG[:fresh], d.pairV[:fresh]
	} else {
		d.pairG, d.pairV = mergePairs(d.pairG[:clean], d.pairV[:clean], gs[:fresh], vs[:fresh])
	}
	after := len(d.pairV)
	d.lazy.clean = after
	d.lazy.next = after + max(after, int(lazyMinPairs.Load()))
	if added, kept := before-clean, after-clean; added > 0 && kept*lazyLeaveShare < added {
		d.leaveLazy()
	}
}

// leaveLazy moves the recorded pairs, just compacted, into the set, where
// later rows are probed.
func (d *distinctSetAcc) leaveLazy() {
	d.lazy.off = true
	lazyLeft.Add(1)
	for lo := 0; lo < len(d.pairV); lo += settleChunk {
		hi := min(lo+settleChunk, len(d.pairV))
		d.rows, d.grps = d.rows[:0], d.grps[:0]
		d.updateSet(d.pairG[lo:hi], nil, 0, d.pairV[lo:hi])
	}
	d.rows, d.grps = d.rows[:0], d.grps[:0]
}

// sortPairsByKey sorts the pairs (gs[i], vs[i]) by group, then value.
func sortPairsByKey(gs []uint32, vs []int64) {
	n := len(vs)
	if n < 2 {
		return
	}
	var gmax uint32
	bmin, bmax := ^uint64(0), uint64(0)
	for i, v := range vs {
		b := uint64(v) ^ dirSignBit
		bmin, bmax = min(bmin, b), max(bmax, b)
		gmax = max(gmax, gs[i])
	}
	vbits := bits.Len64(bmax - bmin)
	if vbits+bits.Len32(gmax) > 64 {
		sortPairsCompare(gs, vs)
		return
	}
	keys := make([]uint64, n)
	for i, v := range vs {
		keys[i] = uint64(gs[i])<<vbits | ((uint64(v) ^ dirSignBit) - bmin)
	}
	keys = radixSort(keys, vbits+bits.Len32(gmax))
	mask := uint64(1)<<vbits - 1
	for i, k := range keys {
		gs[i] = uint32(k >> vbits)
		vs[i] = int64((k&mask + bmin) ^ dirSignBit)
	}
}

// sortPairsCompare is sortPairsByKey for pairs whose packed keys would not
// fit 64 bits.
func sortPairsCompare(gs []uint32, vs []int64) {
	type pair struct {
		g uint32
		v int64
	}
	ps := make([]pair, len(vs))
	for i := range vs {
		ps[i] = pair{gs[i], vs[i]}
	}
	slices.SortFunc(ps, func(a, b pair) int {
		if a.g != b.g {
			if a.g < b.g {
				return -1
			}
			return 1
		}
		if a.v != b.v {
			if a.v < b.v {
				return -1
			}
			return 1
		}
		return 0
	})
	for i, p := range ps {
		gs[i], vs[i] = p.g, p.v
	}
}

// radixSort sorts keys whose set bits are all below width (LSD, radixBits
// a pass) and returns the sorted slice, keys or a buffer of its length.
func radixSort(keys []uint64, width int) []uint64 {
	buf := make([]uint64, len(keys))
	var count [1 << radixBits]int
	for shift := 0; shift < width; shift += radixBits {
		clear(count[:])
		for _, k := range keys {
			count[(k>>shift)&(1<<radixBits-1)]++
		}
		pos := 0
		for i, c := range count {
			count[i] = pos
			pos += c
		}
		for _, k := range keys {
			d := (k >> shift) & (1<<radixBits - 1)
			buf[count[d]] = k
			count[d]++
		}
		keys, buf = buf, keys
	}
	return keys
}

// mergePairs merges two sorted runs of distinct pairs into new slices,
// keeping a pair both hold once.
func mergePairs(ag []uint32, av []int64, bg []uint32, bv []int64) ([]uint32, []int64) {
	n := len(av) + len(bv)
	gs, vs := make([]uint32, 0, n+n/2), make([]int64, 0, n+n/2) // room for the next records
	i, j := 0, 0
	for i < len(av) && j < len(bv) {
		switch {
		case ag[i] < bg[j] || ag[i] == bg[j] && av[i] < bv[j]:
			gs, vs = append(gs, ag[i]), append(vs, av[i])
			i++
		case ag[i] == bg[j] && av[i] == bv[j]:
			gs, vs = append(gs, ag[i]), append(vs, av[i])
			i, j = i+1, j+1
		default:
			gs, vs = append(gs, bg[j]), append(vs, bv[j])
			j++
		}
	}
	gs, vs = append(gs, ag[i:]...), append(vs, av[i:]...)
	gs, vs = append(gs, bg[j:]...), append(vs, bv[j:]...)
	return gs, vs
}

// dedupeSorted drops adjacent repeats of sorted pairs in place and
// returns how many are left.
func dedupeSorted(gs []uint32, vs []int64) int {
	if len(vs) == 0 {
		return 0
	}
	w := 1
	for i := 1; i < len(vs); i++ {
		if vs[i] != vs[w-1] || gs[i] != gs[w-1] {
			gs[w], vs[w] = gs[i], vs[i]
			w++
		}
	}
	return w
}
