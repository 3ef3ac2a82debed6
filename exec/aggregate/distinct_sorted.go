package aggregate

import (
	"math"
	"sync/atomic"
)

// Integer DISTINCT over values that arrive in order. A cache entry built
// from a join on an order key holds each partition's rows sorted by that
// key, and a scan of a table stored in key order reads them so: then a
// (value, group) pair is new exactly when the value differs from the last
// one its group saw, because an earlier equal value would sit before
// every value in between, which are all equal to it. No set is probed and
// nothing is looked up at random. While every value so far is
// non-decreasing (and none is NULL), update takes this path and keeps the
// pairs it finds in a history; the first batch that breaks the order moves
// the history into the set (settle) and the accumulator goes on as
// without this, for good. Whatever reads the set settles first, so the
// answer never depends on the path.

// sortedRows counts the rows a DISTINCT took in order (SortedDistinctRows).
var sortedRows atomic.Int64

// SortedDistinctRows is the number of rows integer DISTINCT aggregates have
// deduplicated by order alone since the process started (for tests).
func SortedDistinctRows() int64 { return sortedRows.Load() }

// sortedDistinct is distinctIntAcc's state while its values come in order.
type sortedDistinct struct {
	off  bool        // left (or settled) for good
	any  bool        // a value seen
	max  int64       // the last value seen, the largest
	last []int64     // per group: the last value it saw, math.MinInt64 for none
	hist []histChunk // the pairs found in order, to settle
	held int         // pairs in hist
}

// histChunk is a run of the history's pairs. The history grows by chunks,
// never copied as the pairs of a large key (an order key's half million per
// partition) would be at every doubling; each chunk holds as many pairs as
// the history before it (from 1024 to histChunkPairs).
type histChunk struct {
	v []int64
	g []uint32
}

const histChunkPairs = 1 << 16

// add appends a pair to the history.
func (s *sortedDistinct) add(v int64, g uint32) {
	if len(s.hist) == 0 || len(s.hist[len(s.hist)-1].v) == cap(s.hist[len(s.hist)-1].v) {
		c := s.nextChunk()
		s.hist = append(s.hist, histChunk{v: make([]int64, 0, c), g: make([]uint32, 0, c)})
	}
	c := &s.hist[len(s.hist)-1]
	c.v, c.g = append(c.v, v), append(c.g, g)
	s.held++
}

// nextChunk is the pairs the history's next chunk holds.
func (s *sortedDistinct) nextChunk() int { return min(max(1024, s.held), histChunkPairs) }

// worstCase bounds the bytes n more rows can add to the history.
func (s *sortedDistinct) worstCase(n int) int64 {
	return int64(n+s.nextChunk()) * 12
}

// growTo returns s with length n, keeping its first len(s) elements; the
// rest is left as it was (scratch the caller overwrites).
func growTo[T any](s []T, n int) []T {
	if n <= cap(s) {
		return s[:n]
	}
	g := make([]T, n, max(n, 2*cap(s)))
	copy(g, s)
	return g
}

// updateSorted dedupes the rows of vals (no NULLs) in order, appending
// each row with a new pair to d.rows and d.grps, and reports whether it
// did; false, changing nothing, when the values are out of order (or hold
// math.MinInt64, the no-value mark).
func (d *distinctIntAcc) updateSorted(groups []uint32, vals []int64) bool {
	s := &d.srt
	if len(vals) == 0 {
		return true
	}
	prev := vals[0]
	if prev == math.MinInt64 || (s.any && prev < s.max) {
		return false
	}
	for _, v := range vals {
		if v < prev {
			return false
		}
		prev = v
	}
	for len(s.last) < d.ngroups {
		s.last = append(s.last, math.MinInt64)
	}
	last := s.last
	groups = groups[:len(vals)]
	cnt := len(d.rows)
	rows := growTo(d.rows, cnt+len(vals))
	grps := growTo(d.grps, cnt+len(vals))
	for i, v := range vals {
		g := groups[i]
		old := last[g]
		last[g] = v
		// Written unconditionally and kept only for a new pair: a branch
		// on the comparison would mispredict at every group change.
		rows[cnt], grps[cnt] = int32(i), g
		if old != v {
			cnt++
		}
	}
	added := cnt - len(d.rows)
	for k := len(d.rows); k < cnt; k++ {
		s.add(vals[rows[k]], grps[k])
	}
	d.rows, d.grps = rows[:cnt], grps[:cnt]
	d.n += added
	s.any, s.max = true, prev
	sortedRows.Add(int64(len(vals)))
	return true
}

// settle leaves the ordered path for good, moving the pairs it found into
// the set.
func (d *distinctIntAcc) settle() {
	s := &d.srt
	if s.off {
		return
	}
	s.off = true
	hist := s.hist
	d.n -= s.held // the inserts count them again
	s.hist, s.held, s.last = nil, 0, nil
	rows, grps := d.rows, d.grps
	for _, c := range hist {
		d.rows, d.grps = d.rows[:0], d.grps[:0]
		d.updateSet(c.g, nil, 0, c.v)
	}
	d.rows, d.grps = rows[:0], grps[:0]
}

// sortedBytes is what the ordered path holds.
func (s *sortedDistinct) sortedBytes() int64 {
	n := int64(cap(s.last)) * 8
	for _, c := range s.hist {
		n += int64(cap(c.v)) * 12
	}
	return n
}
