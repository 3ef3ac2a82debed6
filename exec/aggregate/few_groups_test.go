package aggregate

import (
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

// TestFewGroupLoops checks the lane loops against the row-at-a-time sum and
// count for every group count they take, lengths around the lane width, and
// values whose low words carry and borrow (negative, near 2^64).
func TestFewGroupLoops(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for ngroups := 1; ngroups <= fewGroups; ngroups++ {
		for _, n := range []int{0, 1, 3, 4, 5, 7, 8, 9, 63, 1000} {
			groups := make([]uint32, n)
			vals := make([]decimal128.Num, n)
			for i := range groups {
				// Runs of one group, as in sorted or joined data, and jumps.
				if i > 0 && rng.IntN(3) > 0 {
					groups[i] = groups[i-1]
				} else {
					groups[i] = uint32(rng.IntN(ngroups))
				}
				switch rng.IntN(3) {
				case 0:
					vals[i] = decimal128.FromI64(rng.Int64N(1<<50) - 1<<49)
				case 1:
					vals[i] = decimal128.New(0, ^uint64(0)-uint64(rng.IntN(5)))
				default:
					vals[i] = decimal128.New(rng.Int64N(7)-3, rng.Uint64())
				}
			}
			want := make([]decimal128.Num, ngroups)
			wantCount := make([]int64, ngroups)
			for i, g := range groups {
				want[g] = want[g].Add(vals[i])
				wantCount[g]++
			}
			// Start from non-zero sums and counts: the loops add to them.
			sums := make([]decimal128.Num, ngroups)
			counts := make([]int64, ngroups)
			counts2 := make([]int64, ngroups)
			seen := make([]bool, ngroups)
			for g := range sums {
				sums[g] = decimal128.FromI64(int64(g) - 5)
				counts[g], counts2[g] = int64(g), int64(g)
				want[g] = want[g].Add(sums[g])
			}
			addDecimalsFew(vals, groups, sums, seen, counts)
			countFew(groups, counts2)
			for g := range sums {
				if sums[g] != want[g] {
					t.Fatalf("groups=%d n=%d: sum of group %d = %v, want %v", ngroups, n, g, sums[g], want[g])
				}
				if counts[g] != wantCount[g]+int64(g) || counts2[g] != counts[g] {
					t.Fatalf("groups=%d n=%d: count of group %d = %d and %d, want %d", ngroups, n, g, counts[g], counts2[g], wantCount[g]+int64(g))
				}
				if seen[g] != (wantCount[g] > 0) {
					t.Fatalf("groups=%d n=%d: seen[%d] = %v, want %v", ngroups, n, g, seen[g], wantCount[g] > 0)
				}
			}
		}
	}
}
