package aggregate

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// sortedDistinctBatches makes batches of non-decreasing values (runs of a
// value over several groups, as an order's lines over one customer), the
// first value start; each batch goes on from the last one's largest value.
func sortedDistinctBatches(rng *rand.Rand, batches, ngroups int, start int64) []distinctBatch {
	var out []distinctBatch
	v := start
	for range batches {
		n := 1 + rng.IntN(3000)
		b := distinctBatch{groups: make([]uint32, n), vals: make([]int64, n), null: make([]bool, n), ngroups: ngroups}
		for i := range n {
			if rng.IntN(3) == 0 {
				v += int64(rng.IntN(3)) // 0: the value repeats in the next row
			}
			b.vals[i], b.groups[i] = v, uint32(rng.IntN(ngroups))
		}
		out = append(out, b)
	}
	return out
}

// TestDistinctIntSorted drives the ordered path of distinctIntAcc and its
// one switch to the set: values in order throughout; in order, then a
// batch out of order, then random batches with NULLs; in order, then a
// batch with a NULL; a first value of math.MinInt64; and the set read
// (pairsByGroup, as a spill or a partial state does) while in order, which
// must not end the path. In each, inner must be fed exactly the first
// occurrence of each pair in row order, as a Go map says, the set must
// hold exactly the pairs seen, and worstCase must bound the growth.
func TestDistinctIntSorted(t *testing.T) {
	cases := []struct {
		name     string
		batches  func(rng *rand.Rand) []distinctBatch
		readAt   int  // batch after which pairsByGroup is read (-1: never)
		inOrder  bool // still on the ordered path at the end
		minOrder int  // rows the ordered path must have taken, at least
	}{
		{"in_order", func(rng *rand.Rand) []distinctBatch { return sortedDistinctBatches(rng, 40, 5, -500) }, -1, true, 1},
		{"out_of_order", func(rng *rand.Rand) []distinctBatch {
			b := sortedDistinctBatches(rng, 10, 4, 1000)
			b = append(b, sortedDistinctBatches(rng, 1, 4, 900)...) // starts below the last batch's end
			for range 5 {
				b = append(b, randomDistinctBatch(rng, 2000, 4, func() int64 { return 900 + rng.Int64N(4000) }))
			}
			return b
		}, -1, false, 1},
		{"null", func(rng *rand.Rand) []distinctBatch {
			b := sortedDistinctBatches(rng, 6, 3, 0)
			last := sortedDistinctBatches(rng, 1, 3, 1<<20)[0]
			last.null[len(last.null)/2] = true
			return append(b, last)
		}, -1, false, 1},
		{"min_int64", func(rng *rand.Rand) []distinctBatch {
			return sortedDistinctBatches(rng, 3, 2, math.MinInt64)
		}, -1, false, 0},
		{"read_while_in_order", func(rng *rand.Rand) []distinctBatch { return sortedDistinctBatches(rng, 12, 6, 7) }, 5, true, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
			t.Cleanup(func() { mem.AssertSize(t, 0) })
			ctx := context.Background()
			rng := rand.New(rand.NewPCG(3, 5))
			rec := &recordingAcc{}
			d := newDistinctIntAcc(rec, mem)
			seen := map[distinctPair]bool{}
			var want []distinctPair
			before := SortedDistinctRows()
			for bi, b := range c.batches(rng) {
				d.resize(b.ngroups)
				arr := b.array(mem, seen, &want)
				size, worst := d.memSize(), d.worstCase(len(b.vals))
				err := d.update(ctx, b.groups, arr)
				arr.Release()
				if err != nil {
					t.Fatal(err)
				}
				if grew := d.memSize() - size; grew > worst {
					t.Errorf("batch %d: grew %d bytes, worst case said %d", bi, grew, worst)
				}
				if bi == c.readAt {
					checkPairsByGroup(t, d, seen)
				}
			}
			if on := !d.srt.off; on != c.inOrder {
				t.Errorf("on the ordered path at the end = %v, want %v", on, c.inOrder)
			}
			if took := SortedDistinctRows() - before; took < int64(c.minOrder) || (c.minOrder == 0 && took != 0) {
				t.Errorf("the ordered path took %d rows, want at least %d (exactly 0 when 0)", took, c.minOrder)
			}
			if d.n != len(want) {
				t.Errorf("holds %d pairs, want %d", d.n, len(want))
			}
			if !slices.Equal(rec.got, want) {
				t.Fatalf("fed %d pairs, want %d (first difference at %d)", len(rec.got), len(want), firstDiff(rec.got, want))
			}
			checkPairsByGroup(t, d, seen)
		})
	}
}

// checkPairsByGroup checks that the set d holds is exactly seen.
func checkPairsByGroup(t *testing.T, d *distinctIntAcc, seen map[distinctPair]bool) {
	t.Helper()
	vals, off := d.pairsByGroup()
	got := 0
	for g := range len(off) - 1 {
		for _, v := range vals[off[g]:off[g+1]] {
			if !seen[distinctPair{uint32(g), v}] {
				t.Fatalf("the set holds (%d, %d), never fed", g, v)
			}
			got++
		}
	}
	if got != len(seen) {
		t.Fatalf("the set holds %d pairs, want %d", got, len(seen))
	}
}

func firstDiff(a, b []distinctPair) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
