package kernel

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestSelRuns checks the run split and its give-up rule.
func TestSelRuns(t *testing.T) {
	seq := func(lo, hi int32) []int32 {
		var s []int32
		for i := lo; i < hi; i++ {
			s = append(s, i)
		}
		return s
	}
	idx := append(append(seq(3, 40), seq(50, 90)...), seq(91, 120)...)
	runs := selRuns(idx, nil)
	want := []idxRun{{3, 37}, {50, 40}, {91, 29}}
	if fmt.Sprint(runs) != fmt.Sprint(want) {
		t.Fatalf("selRuns = %v, want %v", runs, want)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	perm := make([]int32, 1000)
	for i, p := range rng.Perm(len(perm)) {
		perm[i] = int32(p)
	}
	if r := selRuns(perm, nil); r != nil {
		t.Fatalf("selRuns of a random permutation = %d runs, want nil", len(r))
	}
	// descending indices are not runs
	if r := selRuns([]int32{20, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3}, nil); r != nil {
		t.Fatalf("selRuns of descending indices = %v, want nil", r)
	}
}

// TestGatherRunsMatchesTake checks the run-wise gather against Arrow's Take
// for every type gather handles, with and without NULLs, on sliced arrays,
// for selections of several densities (as a filter produces them), and
// through takeBatch.
func TestGatherRunsMatchesTake(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	rng := rand.New(rand.NewPCG(5, 6))
	const n = 2000
	types := []arrow.DataType{
		arrow.FixedWidthTypes.Boolean, arrow.PrimitiveTypes.Int8, arrow.PrimitiveTypes.Int16,
		arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Float64,
		arrow.FixedWidthTypes.Date32, &arrow.Decimal128Type{Precision: 15, Scale: 2},
		arrow.BinaryTypes.String, arrow.BinaryTypes.LargeString, arrow.BinaryTypes.Binary,
	}
	for _, dt := range types {
		for _, nulls := range []bool{false, true} {
			for _, keep := range []float64{0.999, 0.98, 0.9} {
				t.Run(fmt.Sprintf("%s/nulls=%v/keep=%v", dt, nulls, keep), func(t *testing.T) {
					full := testColumn(mem, rng, dt, n, nullEvery(nulls, 5), -7)
					defer full.Release()
					arr := array.NewSlice(full, 13, n-5)
					defer arr.Release()
					var idx []int32
					for i := range arr.Len() {
						if rng.Float64() < keep {
							idx = append(idx, int32(i))
						}
					}
					runs := selRuns(idx, nil)
					if runs == nil {
						t.Fatalf("no runs for a selection keeping %v of the rows", keep)
					}
					got, ok := gatherRuns(mem, arr, runs, len(idx))
					if !ok {
						t.Fatalf("gatherRuns does not handle %s", dt)
					}
					defer got.Release()
					ia := indexArray(idx)
					defer ia.Release()
					want, err := compute.TakeArray(compute.WithAllocator(context.Background(), mem), arr, ia)
					if err != nil {
						t.Fatal(err)
					}
					defer want.Release()
					if !array.Equal(got, want) {
						t.Fatalf("gatherRuns differs from Take:\ngot  %v\nwant %v", got, want)
					}
					if got.NullN() != want.NullN() {
						t.Fatalf("null count %d, want %d", got.NullN(), want.NullN())
					}

					sch := arrow.NewSchema([]arrow.Field{{Name: "c", Type: dt, Nullable: true}}, nil)
					rec := array.NewRecordBatch(sch, []arrow.Array{arr}, int64(arr.Len()))
					defer rec.Release()
					tb, err := TakeBatch(context.Background(), mem, sch, rec, idx)
					if err != nil {
						t.Fatal(err)
					}
					defer tb.Release()
					if !array.Equal(tb.Column(0), want) {
						t.Fatalf("takeBatch differs from Take")
					}
				})
			}
		}
	}
}
