package aggregate

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver/exec/kernel"
	"github.com/quiverdb/quiver/physical"
)

// TestDistinctIntAgainstMap drives COUNT(DISTINCT) and SUM(DISTINCT) over
// integer-like arguments through distinctIntAcc with batches of random
// groups, values, NULLs, runs of repeated pairs (which it skips without
// probing) and many growths, and checks every group against Go maps.
func TestDistinctIntAgainstMap(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	ctx := context.Background()
	for _, dt := range []arrow.DataType{arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Int32, arrow.FixedWidthTypes.Date32, arrow.PrimitiveTypes.Uint8} {
		for _, fn := range []physical.AggFunc{physical.AggCount, physical.AggSum} {
			t.Run(fmt.Sprintf("%s/%s", dt, fn), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(3, 5))
				a := physical.AggregateExpr{Func: fn, Arg: &physical.Column{Index: 0, Name: "v", Type: dt}, Distinct: true, Type: arrow.PrimitiveTypes.Int64, Name: "x"}
				if fn == physical.AggSum && dt.ID() == arrow.DATE32 {
					t.Skip("no SUM of dates")
				}
				acc, err := newAccumulator(a, dt, physical.AggSingle, mem)
				if err != nil {
					t.Fatal(err)
				}
				if _, ok := acc.(*distinctIntAcc); !ok {
					t.Fatalf("DISTINCT over %s uses %T", dt, acc)
				}
				const groups = 13
				seen := make([]map[int64]bool, groups)
				for g := range seen {
					seen[g] = map[int64]bool{}
				}
				acc.resize(groups)
				for batch := range 40 {
					n := rng.IntN(3000)
					gs := make([]uint32, n)
					b := array.NewBuilder(mem, dt)
					var g uint32
					var v int64
					for i := range n {
						if i == 0 || rng.IntN(3) == 0 { // else repeat the pair: a run
							g = uint32(rng.IntN(groups))
							v = int64(rng.IntN(200 * (batch + 1)))
							if dt.ID() == arrow.UINT8 {
								v %= 256
							}
						}
						gs[i] = g
						if rng.IntN(17) == 0 {
							b.AppendNull()
							continue
						}
						switch bb := b.(type) {
						case *array.Int64Builder:
							bb.Append(v)
						case *array.Int32Builder:
							bb.Append(int32(v))
						case *array.Date32Builder:
							bb.Append(arrow.Date32(v))
						case *array.Uint8Builder:
							bb.Append(uint8(v))
						}
						seen[g][v] = true
					}
					arr := b.NewArray()
					b.Release()
					if err := acc.update(ctx, gs, arr); err != nil {
						t.Fatal(err)
					}
					arr.Release()
				}
				m := &kernel.ArrayMaker{Mem: mem}
				out := acc.final(m, 0, groups)
				defer out.Release()
				for g := range groups {
					var want int64
					for v := range seen[g] {
						if fn == physical.AggCount {
							want++
						} else {
							want += v
						}
					}
					got := out.(*array.Int64).Value(g)
					if fn == physical.AggSum && len(seen[g]) == 0 {
						if !out.IsNull(g) {
							t.Errorf("group %d: sum of nothing is %d, want NULL", g, got)
						}
						continue
					}
					if got != want {
						t.Errorf("group %d: got %d, want %d", g, got, want)
					}
				}
			})
		}
	}
}
