package aggregate

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver/exec/kernel"
	"github.com/quiverdb/quiver/qerr"
)

// recordingAcc is an inner accumulator that records the (group, value)
// pairs it is fed, in order.
type recordingAcc struct{ got []distinctPair }

type distinctPair struct {
	g uint32
	v int64
}

func (r *recordingAcc) resize(int) {}
func (r *recordingAcc) update(_ context.Context, groups []uint32, arg arrow.Array) error {
	a := arg.(*array.Int64)
	for i := range a.Len() {
		if a.IsNull(i) {
			return qerr.Internalf("test: DISTINCT fed a NULL")
		}
		r.got = append(r.got, distinctPair{groups[i], a.Value(i)})
	}
	return nil
}
func (r *recordingAcc) merge(context.Context, []uint32, []arrow.Array) error { return nil }
func (r *recordingAcc) final(*kernel.ArrayMaker, int, int) arrow.Array       { return nil }
func (r *recordingAcc) state(*kernel.ArrayMaker, int, int) []arrow.Array     { return nil }
func (r *recordingAcc) bytesPerGroup() int64                                 { return 0 }

// distinctBatch is one update's input: groups, values, and which are NULL.
type distinctBatch struct {
	groups  []uint32
	vals    []int64
	null    []bool
	ngroups int
}

// array returns b's values as an Int64 array, appending each pair not in
// seen to want (and to seen), in row order: the reference answer.
func (b distinctBatch) array(mem memory.Allocator, seen map[distinctPair]bool, want *[]distinctPair) arrow.Array {
	bl := array.NewInt64Builder(mem)
	defer bl.Release()
	for i, v := range b.vals {
		if b.null[i] {
			bl.AppendNull()
			continue
		}
		bl.Append(v)
		if p := (distinctPair{b.groups[i], v}); !seen[p] {
			seen[p] = true
			*want = append(*want, p)
		}
	}
	return bl.NewArray()
}

// TestDistinctIntDirect drives distinctIntAcc through scenarios that keep
// it direct (windows drifting up and down, negative values, groups
// growing) and that move it to the hashed set (too sparse mid-batch, too
// wide, too many groups), and checks that inner is fed exactly the first
// occurrence of each (group, value) pair in row order, as a Go map says,
// that the layout is the one expected, and that worstCase bounds growth.
func TestDistinctIntDirect(t *testing.T) {
	cases := []struct {
		name       string
		batches    func(rng *rand.Rand) []distinctBatch
		direct     bool // still direct at the end
		switchedAt int  // batch after which it must be hashed (-1: never)
	}{
		{"drift", driftBatches, true, -1},
		{"sparse_mid_batch", sparseBatches, false, 2},
		{"too_wide", wideBatches, false, 3},
		{"too_many_groups", manyGroupBatches, false, 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
			t.Cleanup(func() { mem.AssertSize(t, 0) })
			ctx := context.Background()
			rng := rand.New(rand.NewPCG(7, 11))
			rec := &recordingAcc{}
			d := newDistinctIntAcc(rec, mem)
			seen := map[distinctPair]bool{}
			var want []distinctPair
			var lowered, raised int // window moves seen, direct only
			for bi, b := range c.batches(rng) {
				var lo, hi uint64
				if d.dir != nil {
					lo, hi = d.dir.loPage, d.dir.loPage+uint64(d.dir.pagesPerGroup)
				}
				d.resize(b.ngroups)
				arr := b.array(mem, seen, &want)
				before, worst := d.memSize(), d.worstCase(len(b.vals))
				err := d.update(ctx, b.groups, arr)
				arr.Release()
				if err != nil {
					t.Fatal(err)
				}
				if d.dir != nil && bi > 0 {
					if d.dir.loPage < lo {
						lowered++
					}
					if d.dir.loPage+uint64(d.dir.pagesPerGroup) > hi {
						raised++
					}
				}
				if grew := d.memSize() - before; grew > worst {
					t.Errorf("batch %d: grew %d bytes, worst case said %d", bi, grew, worst)
				}
				if c.switchedAt >= 0 && bi == c.switchedAt-1 && d.dir == nil {
					t.Fatalf("batch %d: hashed before the batch meant to switch", bi)
				}
				if c.switchedAt >= 0 && bi == c.switchedAt && d.dir != nil {
					t.Fatalf("batch %d: still direct", bi)
				}
			}
			if (d.dir != nil) != c.direct {
				t.Errorf("direct at the end = %v, want %v", d.dir != nil, c.direct)
			}
			if c.direct && (lowered < 2 || raised < 2) {
				t.Errorf("window lowered %d and raised %d times; the scenario means both, several times", lowered, raised)
			}
			if d.n != len(want) {
				t.Errorf("holds %d pairs, want %d", d.n, len(want))
			}
			if len(rec.got) != len(want) {
				t.Fatalf("fed %d pairs, want %d", len(rec.got), len(want))
			}
			for i := range want {
				if rec.got[i] != want[i] {
					t.Fatalf("pair %d: fed %v, want %v", i, rec.got[i], want[i])
				}
			}
		})
	}
}

// randomDistinctBatch fills n rows: runs of one pair, NULLs, groups below ngroups
// and values from val.
func randomDistinctBatch(rng *rand.Rand, n, ngroups int, val func() int64) distinctBatch {
	b := distinctBatch{groups: make([]uint32, n), vals: make([]int64, n), null: make([]bool, n), ngroups: ngroups}
	var g uint32
	var v int64
	for i := range n {
		if i == 0 || rng.IntN(3) != 0 { // else repeat the pair: a run
			g, v = uint32(rng.IntN(ngroups)), val()
		}
		b.groups[i], b.vals[i], b.null[i] = g, v, rng.IntN(13) == 0
	}
	return b
}

// driftBatches: a window of values moving up, then down past zero, then
// up again, with the group count growing.
func driftBatches(rng *rand.Rand) []distinctBatch {
	var out []distinctBatch
	centre := int64(100000)
	for b := range 60 {
		switch {
		case b < 20:
			centre += 5000
		case b < 45:
			centre -= 12000
		default:
			centre += 8000
		}
		width := int64(1000 + rng.IntN(20000))
		out = append(out, randomDistinctBatch(rng, rng.IntN(4000), 2+b/8, func() int64 { return centre + rng.Int64N(width) - width/2 }))
	}
	return out
}

// sparseBatches: two dense batches, then one batch whose values a page
// apart each take a page of their own until the limit, then hashed
// batches repeating old values and adding new ones.
func sparseBatches(rng *rand.Rand) []distinctBatch {
	out := []distinctBatch{
		randomDistinctBatch(rng, 3000, 3, func() int64 { return rng.Int64N(5000) }),
		randomDistinctBatch(rng, 3000, 3, func() int64 { return rng.Int64N(5000) }),
	}
	n := dirLimit(0) + 3000 // past the page limit within the batch
	b := distinctBatch{groups: make([]uint32, n), vals: make([]int64, n), null: make([]bool, n), ngroups: 3}
	for i := range n {
		b.vals[i] = int64(i) * pageValues
		b.null[i] = rng.IntN(50) == 0
		if i > 0 && rng.IntN(4) == 0 {
			b.vals[i] = b.vals[i-1] // a run
		}
	}
	out = append(out, b)
	for range 3 {
		out = append(out, randomDistinctBatch(rng, 3000, 3, func() int64 { return rng.Int64N(int64(n)) * pageValues / 4 }))
	}
	return out
}

// wideBatches: three dense batches, then values at both ends of int64.
func wideBatches(rng *rand.Rand) []distinctBatch {
	var out []distinctBatch
	for range 3 {
		out = append(out, randomDistinctBatch(rng, 2000, 5, func() int64 { return rng.Int64N(3000) - 1500 }))
	}
	extremes := []int64{math.MinInt64, math.MaxInt64, 0, -1, math.MinInt64 + 1, math.MaxInt64 - 1, 7}
	out = append(out, randomDistinctBatch(rng, 2000, 5, func() int64 { return extremes[rng.IntN(len(extremes))] }))
	out = append(out, randomDistinctBatch(rng, 2000, 5, func() int64 { return rng.Int64N(3000) - 1500 }))
	return out
}

// manyGroupBatches: a window of 64 pages, then groups past what the
// pointer table may hold for it.
func manyGroupBatches(rng *rand.Rand) []distinctBatch {
	var out []distinctBatch
	for range 3 {
		out = append(out, randomDistinctBatch(rng, 3000, 10, func() int64 { return rng.Int64N(64 * pageValues) }))
	}
	out = append(out, randomDistinctBatch(rng, 3000, dirMaxPtrs/64+1, func() int64 { return rng.Int64N(64 * pageValues) }))
	out = append(out, randomDistinctBatch(rng, 3000, dirMaxPtrs/64+1, func() int64 { return rng.Int64N(64 * pageValues) }))
	return out
}

// BenchmarkDistinctInt feeds 2.7M rows shaped like the cached dashboard's
// DISTINCT inputs (line items in order-key order, runs of one order's
// lines) through the direct layout and, for comparison, the hashed set.
func BenchmarkDistinctInt(b *testing.B) {
	const rows, batch = 1 << 21, 8192
	shapes := []struct {
		name    string
		groups  int
		val     func(rng *rand.Rand, order int64) int64
		groupOf func(rng *rand.Rand, v int64) uint32
	}{
		// count(DISTINCT o_orderkey) by year: sparse ascending keys, 3 groups.
		{"orderkey", 3, func(_ *rand.Rand, o int64) int64 { return o*4 - o%3 }, func(_ *rand.Rand, v int64) uint32 { return uint32(kernel.Fmix64(uint64(v)) % 3) }},
		// count(DISTINCT c_custkey) by nation, year: random keys, 75 groups.
		{"custkey", 75, func(rng *rand.Rand, _ int64) int64 { return 1 + rng.Int64N(150000) }, func(rng *rand.Rand, v int64) uint32 { return uint32(v%25)*3 + uint32(rng.IntN(3)) }},
	}
	for _, sh := range shapes {
		rng := rand.New(rand.NewPCG(1, 2))
		mem := memory.NewGoAllocator()
		var arrs []arrow.Array
		var grps [][]uint32
		order := int64(0)
		var v int64
		var g uint32
		for done := 0; done < rows; done += batch {
			bl := array.NewInt64Builder(mem)
			gs := make([]uint32, batch)
			for i := range batch {
				if rng.IntN(4) == 0 || (done == 0 && i == 0) { // a new order
					order++
					v = sh.val(rng, order)
					g = sh.groupOf(rng, v)
				}
				bl.Append(v)
				gs[i] = g
			}
			arrs = append(arrs, bl.NewArray())
			grps = append(grps, gs)
			bl.Release()
		}
		for _, mode := range []string{"direct", "hashed"} {
			b.Run(sh.name+"/"+mode, func(b *testing.B) {
				ctx := context.Background()
				for b.Loop() {
					d := newDistinctIntAcc(&countingAcc{}, mem)
					if mode == "hashed" {
						d.dir = nil
					}
					d.resize(sh.groups)
					for i, a := range arrs {
						if err := d.update(ctx, grps[i], a); err != nil {
							b.Fatal(err)
						}
					}
					if (d.dir != nil) != (mode == "direct") {
						b.Fatalf("%s run ended direct=%v", mode, d.dir != nil)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/rows, "ns/row")
			})
		}
		for _, a := range arrs {
			a.Release()
		}
	}
}

// countingAcc is an inner accumulator that only counts what it is fed.
type countingAcc struct{ n int }

func (c *countingAcc) resize(int) {}
func (c *countingAcc) update(_ context.Context, _ []uint32, arg arrow.Array) error {
	c.n += arg.Len()
	return nil
}
func (c *countingAcc) merge(context.Context, []uint32, []arrow.Array) error { return nil }
func (c *countingAcc) final(*kernel.ArrayMaker, int, int) arrow.Array       { return nil }
func (c *countingAcc) state(*kernel.ArrayMaker, int, int) []arrow.Array     { return nil }
func (c *countingAcc) bytesPerGroup() int64                                 { return 0 }
