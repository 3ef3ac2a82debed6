package aggregate

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSortPairsByKey checks the compaction's sort, dedupe and merge
// against a plain sort: values in a narrow range (the radix sort), values
// at both ends of int64 with many groups (keys too wide to pack: the
// comparison sort), and merges of sorted runs that share pairs.
func TestSortPairsByKey(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	type pair struct {
		g uint32
		v int64
	}
	cmp := func(a, b pair) int {
		if a.g != b.g {
			return int(a.g) - int(b.g)
		}
		if a.v < b.v {
			return -1
		}
		if a.v > b.v {
			return 1
		}
		return 0
	}
	// reference is the sorted distinct pairs of ps.
	reference := func(ps []pair) []pair {
		ps = slices.Clone(ps)
		slices.SortFunc(ps, cmp)
		return slices.Compact(ps)
	}
	gen := func(n int, wide bool) []pair {
		ps := make([]pair, n)
		for i := range ps {
			if wide {
				vs := []int64{math.MinInt64, math.MaxInt64, -1, 0, rng.Int64(), -rng.Int64()}
				ps[i] = pair{uint32(rng.IntN(1 << 20)), vs[rng.IntN(len(vs))]}
			} else {
				ps[i] = pair{uint32(rng.IntN(5)), int64(rng.IntN(3000)) - 1500}
			}
		}
		return ps
	}
	split := func(ps []pair) ([]uint32, []int64) {
		gs, vs := make([]uint32, len(ps)), make([]int64, len(ps))
		for i, p := range ps {
			gs[i], vs[i] = p.g, p.v
		}
		return gs, vs
	}
	join := func(gs []uint32, vs []int64) []pair {
		ps := make([]pair, len(vs))
		for i := range vs {
			ps[i] = pair{gs[i], vs[i]}
		}
		return ps
	}
	for _, wide := range []bool{false, true} {
		for _, n := range []int{0, 1, 2, 100, 20000} {
			ps := gen(n, wide)
			gs, vs := split(ps)
			sortPairsByKey(gs, vs)
			k := dedupeSorted(gs, vs)
			if got, want := join(gs[:k], vs[:k]), reference(ps); !slices.Equal(got, want) {
				t.Fatalf("wide=%v n=%d: sorted %d pairs, want %d (or in another order)", wide, n, len(got), len(want))
			}
			// Merge with another sorted run sharing some pairs.
			qs := append(gen(n/2, wide), ps[:n/3]...)
			a, b := reference(ps), reference(qs)
			ag, av := split(a)
			bg, bv := split(b)
			mg, mv := mergePairs(ag, av, bg, bv)
			if got, want := join(mg, mv), reference(append(slices.Clone(ps), qs...)); !slices.Equal(got, want) {
				t.Fatalf("wide=%v n=%d: merged %d pairs, want %d (or in another order)", wide, n, len(got), len(want))
			}
		}
	}
}
