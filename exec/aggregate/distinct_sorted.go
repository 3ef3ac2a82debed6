package aggregate

import (
	"encoding/binary"
	"math"
	"sync/atomic"
)

// Integer DISTINCT over values that arrive in order. A cache entry built
// from a join on an order key holds each partition's rows sorted by that
// key, and a scan of a table stored in key order reads them so: then a
// (value, group) pair is new exactly when the value differs from the last
// one its group saw, because an earlier equal value would sit before
// every value in between, which are all equal to it. While every value so
// far is non-decreasing (and none is NULL), update finds the new pairs so,
// from a small per-group array, and the set is not touched: the pairs go
// to a history, a byte stream of each pair's value step from the pair
// before (small: the values ascend) and its group. The first batch out of
// order, and anything that reads the set, moves the history into the set
// (settle); a batch out of order also leaves this path for good. So the
// answer never depends on it.

// sortedRows counts the rows a DISTINCT took in order (SortedDistinctRows).
var sortedRows atomic.Int64

// SortedDistinctRows is the number of rows integer DISTINCT aggregates have
// deduplicated by order since the process started (for tests).
func SortedDistinctRows() int64 { return sortedRows.Load() }

// sortedDistinct is distinctIntAcc's state while its values come in order.
type sortedDistinct struct {
	off   bool    // left for good
	any   bool    // a value seen
	max   int64   // the last value seen, the largest
	last  []int64 // per group: the last value it saw, math.MinInt64 for none
	hist  []byte  // per pair found: uvarint(value - the pair before's value), uvarint(group)
	first int64   // the value the history's first step starts from
	histV int64   // the value of the history's last pair
	held  int     // pairs in hist
}

// updateSorted dedupes the rows of vals (no NULLs) in order, appending
// each row with a new pair to d.rows and d.grps and the pair to the
// history, and reports whether it did; false, changing nothing, when the
// values are out of order (or hold math.MinInt64, the no-value mark).
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
	hist, hv := s.hist, s.histV
	if s.held == 0 {
		s.first, hv = vals[0], vals[0] // no pair below: the steps start at the batch's first value
	}
	for k := len(d.rows); k < cnt; k++ {
		v := vals[rows[k]]
		hist = binary.AppendUvarint(hist, uint64(v-hv))
		hist = binary.AppendUvarint(hist, uint64(grps[k]))
		hv = v
	}
	s.held += cnt - len(d.rows)
	d.n += cnt - len(d.rows)
	d.rows, d.grps = rows[:cnt], grps[:cnt]
	s.hist, s.histV = hist, hv
	s.any, s.max = true, prev
	sortedRows.Add(int64(len(vals)))
	return true
}

// settle moves the history into the set. With leave it also leaves the
// ordered path for good; without, the path goes on with an empty history.
func (d *distinctIntAcc) settle(leave bool) {
	s := &d.srt
	if s.held > 0 {
		var vals []int64
		var grps []uint32
		d.n -= s.held // the inserts count them again
		hist := s.hist
		v := s.first
		for len(hist) > 0 {
			vals, grps = vals[:0], grps[:0]
			for len(hist) > 0 && len(vals) < settleChunk {
				step, n := binary.Uvarint(hist)
				g, m := binary.Uvarint(hist[n:])
				hist = hist[n+m:]
				v += int64(step)
				vals, grps = append(vals, v), append(grps, uint32(g))
			}
			d.rows, d.grps = d.rows[:0], d.grps[:0]
			d.updateSet(grps, nil, 0, vals)
		}
		// The inserts left the history's rows there; the caller's come next.
		d.rows, d.grps = d.rows[:0], d.grps[:0]
		s.hist, s.held = s.hist[:0], 0
	}
	if leave {
		d.srt = sortedDistinct{off: true}
	}
}

// settleChunk is how many history pairs settle inserts at a time.
const settleChunk = 4096

// sortedBytes is what the ordered path holds besides the set.
func (s *sortedDistinct) sortedBytes() int64 {
	return int64(cap(s.last))*8 + int64(cap(s.hist))
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
