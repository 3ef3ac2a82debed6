package aggregate

import (
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestAddDecimalsRuns checks the decimal sum by group against a plain
// per-row loop, for few and many groups, with rows in runs of one group and
// scattered, with and without NULLs.
func TestAddDecimalsRuns(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	r := rand.New(rand.NewPCG(5, 6))
	for _, ngroups := range []int{3, fewGroups + 1, 5000} {
		for _, runs := range []bool{true, false} {
			for _, nulls := range []bool{false, true} {
				n := 10000
				b := array.NewDecimal128Builder(mem, &arrow.Decimal128Type{Precision: 38, Scale: 2})
				groups := make([]uint32, n)
				g := uint32(0)
				for i := range n {
					if !runs || r.IntN(4) == 0 {
						g = uint32(r.IntN(ngroups))
					}
					groups[i] = g
					if nulls && r.IntN(7) == 0 {
						b.AppendNull()
					} else {
						b.Append(decimal128.FromI64(r.Int64N(1e15) - 5e14))
					}
				}
				arr := b.NewArray()
				b.Release()
				sums := make([]decimal128.Num, ngroups)
				seen := make([]bool, ngroups)
				counts := make([]int64, ngroups)
				addDecimals(arr, groups, sums, seen, counts)
				want := make([]decimal128.Num, ngroups)
				wantSeen := make([]bool, ngroups)
				wantCounts := make([]int64, ngroups)
				vals := arr.(*array.Decimal128)
				for i, g := range groups {
					if vals.IsNull(i) {
						continue
					}
					want[g] = want[g].Add(vals.Value(i))
					wantSeen[g] = true
					wantCounts[g]++
				}
				for k := range ngroups {
					if sums[k] != want[k] || seen[k] != wantSeen[k] || counts[k] != wantCounts[k] {
						t.Fatalf("groups=%d runs=%v nulls=%v: group %d: sum %v seen %v count %d, want %v %v %d",
							ngroups, runs, nulls, k, sums[k], seen[k], counts[k], want[k], wantSeen[k], wantCounts[k])
					}
				}
				arr.Release()
			}
		}
	}
}
