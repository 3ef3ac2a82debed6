package aggregate

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver/exec/kernel"
	"github.com/quiverdb/quiver/exec/memcheck"
	"github.com/quiverdb/quiver/physical"
)

// TestCollectAgainstReference feeds random (group, value, key) rows in
// several batches to array_agg(v ORDER BY k DESC NULLS FIRST) FILTER
// (WHERE v <> 3), split over partial accumulators whose states a final one
// merges, and checks every group's list against a row-at-a-time reference:
// a stable sort of the kept rows in arrival order. With DISTINCT (keys =
// the value) equal values appear once.
func TestCollectAgainstReference(t *testing.T) {
	i64 := arrow.PrimitiveTypes.Int64
	for _, distinct := range []bool{false, true} {
		t.Run(fmt.Sprint("distinct=", distinct), func(t *testing.T) {
			mem := memcheck.New(t)
			rng := rand.New(rand.NewPCG(3, uint64(len(fmt.Sprint(distinct)))))
			const ngroups, nbatches = 5, 6
			a := physical.AggregateExpr{Func: physical.AggArrayAgg, Distinct: distinct, Filter: true, Type: arrow.ListOf(i64), Name: "a",
				Order: []physical.AggOrder{{Desc: true, NullsFirst: true}},
				Arg:   &physical.ScalarFunc{Name: physical.PairFunc, Type: physical.RowType(i64, i64, arrow.FixedWidthTypes.Boolean)}}
			type row struct {
				v, k   int64
				vn, kn bool
			}
			ref := make([][]row, ngroups) // kept rows in arrival order, per group
			final, err := newAccumulator(a, a.Arg.DataType(), physical.AggFinal, mem)
			if err != nil {
				t.Fatal(err)
			}
			final.resize(ngroups)
			m := &kernel.ArrayMaker{Mem: mem}
			for p := 0; p < 2; p++ { // two partial accumulators, as two partitions
				part, err := newAccumulator(a, a.Arg.DataType(), physical.AggPartial, mem)
				if err != nil {
					t.Fatal(err)
				}
				part.resize(ngroups)
				for b := 0; b < nbatches; b++ {
					n := rng.IntN(9)
					vb, kb, cb := array.NewInt64Builder(mem), array.NewInt64Builder(mem), array.NewBooleanBuilder(mem)
					groups := make([]uint32, n)
					for i := range groups {
						groups[i] = uint32(rng.IntN(ngroups - 1)) // the last group stays empty
						r := row{v: rng.Int64N(6), k: rng.Int64N(4), vn: rng.IntN(5) == 0, kn: rng.IntN(5) == 0}
						if distinct {
							r.k, r.kn = r.v, r.vn
						}
						for _, x := range []struct {
							b    *array.Int64Builder
							v    int64
							null bool
						}{{vb, r.v, r.vn}, {kb, r.k, r.kn}} {
							if x.null {
								x.b.AppendNull()
							} else {
								x.b.Append(x.v)
							}
						}
						keep := r.vn || r.v != 3
						if rng.IntN(7) == 0 {
							cb.AppendNull() // a NULL condition drops the row
							keep = false
						} else {
							cb.Append(keep)
						}
						if keep {
							ref[groups[i]] = append(ref[groups[i]], r)
						}
					}
					cols := []arrow.Array{vb.NewArray(), kb.NewArray(), cb.NewArray()}
					st, err := array.NewStructArrayWithFields(cols, a.Arg.DataType().(*arrow.StructType).Fields())
					if err != nil {
						t.Fatal(err)
					}
					if err := part.update(context.Background(), groups, st); err != nil {
						t.Fatal(err)
					}
					st.Release()
					kernel.ReleaseArrays(cols)
					vb.Release()
					kb.Release()
					cb.Release()
				}
				if part.(*collectAcc).memSize() <= 0 {
					t.Fatal("kept rows are not accounted")
				}
				state := part.state(m, 0, ngroups)
				all := make([]uint32, ngroups)
				for g := range all {
					all[g] = uint32(g)
				}
				if err := final.merge(context.Background(), all, state); err != nil {
					t.Fatal(err)
				}
				kernel.ReleaseArrays(state)
			}
			out := final.final(m, 0, ngroups)
			defer out.Release()
			l := out.(*array.List)
			for g := 0; g < ngroups; g++ {
				rs := slices.Clone(ref[g])
				slices.SortStableFunc(rs, func(x, y row) int {
					switch {
					case x.kn && y.kn:
						return 0
					case x.kn:
						return -1
					case y.kn:
						return 1
					}
					return int(y.k - x.k)
				})
				var want []string
				for i, r := range rs {
					if distinct && i > 0 && r.vn == rs[i-1].vn && (r.vn || r.v == rs[i-1].v) {
						continue
					}
					if r.vn {
						want = append(want, "NULL")
					} else {
						want = append(want, fmt.Sprint(r.v))
					}
				}
				var got []string
				if l.IsValid(g) {
					lo, hi := l.ValueOffsets(g)
					vs := l.ListValues().(*array.Int64)
					for i := lo; i < hi; i++ {
						if vs.IsNull(int(i)) {
							got = append(got, "NULL")
						} else {
							got = append(got, fmt.Sprint(vs.Value(int(i))))
						}
					}
				}
				if len(rs) == 0 && l.IsValid(g) {
					t.Errorf("group %d: no rows, got %v, want NULL", g, got)
				}
				if strings.Join(got, ",") != strings.Join(want, ",") {
					t.Errorf("group %d: got %v, want %v", g, got, want)
				}
			}
		})
	}
}

// TestCollectMergesSlicedState: a final array_agg merging a slice of a
// partial state (a batch folded in parts under a memory limit) takes each
// row's own list, not the lists of the rows before the slice.
func TestCollectMergesSlicedState(t *testing.T) {
	i64 := arrow.PrimitiveTypes.Int64
	mem := memcheck.New(t)
	m := &kernel.ArrayMaker{Mem: mem}
	a := physical.AggregateExpr{Func: physical.AggArrayAgg, Type: arrow.ListOf(i64), Name: "a",
		Arg: &physical.ScalarFunc{Name: physical.PairFunc, Type: physical.RowType(i64)}}
	part, err := newAccumulator(a, a.Arg.DataType(), physical.AggPartial, mem)
	if err != nil {
		t.Fatal(err)
	}
	part.resize(3)
	vb := array.NewInt64Builder(mem)
	vb.AppendValues([]int64{10, 11, 20, 30, 31, 32}, nil)
	vals := vb.NewArray()
	vb.Release()
	d := array.NewData(physical.RowType(i64), 6, []*memory.Buffer{nil}, []arrow.ArrayData{vals.Data()}, 0, 0)
	rows := array.NewStructData(d)
	d.Release()
	vals.Release()
	if err := part.update(context.Background(), []uint32{0, 0, 1, 2, 2, 2}, rows); err != nil {
		t.Fatal(err)
	}
	rows.Release()
	state := part.state(m, 0, 3)
	defer kernel.ReleaseArrays(state)
	sliced := array.NewSlice(state[0], 1, 3) // groups 1 and 2
	defer sliced.Release()
	final, err := newAccumulator(a, a.Arg.DataType(), physical.AggFinal, mem)
	if err != nil {
		t.Fatal(err)
	}
	final.resize(2)
	if err := final.merge(context.Background(), []uint32{0, 1}, []arrow.Array{sliced}); err != nil {
		t.Fatal(err)
	}
	out := final.final(m, 0, 2)
	defer out.Release()
	if got, want := fmt.Sprint(out), "[[20] [30 31 32]]"; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}
