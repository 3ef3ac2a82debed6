package aggregate

import (
	"context"
	"math"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/quiverdb/quiver/exec/kernel"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
)

// percentileAcc is percentile_cont and percentile_disc (and so median):
// each group keeps its non-NULL values, sorted once at the end. The values
// are the partial state (a list per group) and are accounted after each
// batch (memSize). The fraction is a planning-time constant, carried with
// every row.
type percentileAcc struct {
	fn    physical.AggFunc
	vals  [][]float64
	frac  float64
	bytes int64
}

func (a *percentileAcc) resize(n int)         { a.vals = kernel.GrowSlice(a.vals, n) }
func (a *percentileAcc) bytesPerGroup() int64 { return 24 }
func (a *percentileAcc) memSize() int64       { return a.bytes }

func (a *percentileAcc) add(g uint32, v float64) {
	before := cap(a.vals[g])
	a.vals[g] = append(a.vals[g], v)
	a.bytes += int64(cap(a.vals[g])-before) * 8
}

func (a *percentileAcc) update(_ context.Context, groups []uint32, arg arrow.Array) error {
	st, ok := arg.(*array.Struct)
	if !ok || st.NumField() != 2 {
		return qerr.Internalf("exec/hashagg: %s of %s", a.fn, arg.DataType())
	}
	va, ok1 := st.Field(0).(*array.Float64)
	fa, ok2 := st.Field(1).(*array.Float64)
	if !ok1 || !ok2 {
		return qerr.Internalf("exec/hashagg: %s of %s", a.fn, arg.DataType())
	}
	if fa.Len() > 0 && fa.IsValid(0) {
		a.frac = fa.Value(0)
	}
	vs := va.Float64Values()
	bits, off := kernel.ValidBits(va)
	for i, g := range groups {
		if bits != nil && !bitutil.BitIsSet(bits, off+i) {
			continue
		}
		a.add(g, vs[i])
	}
	return nil
}

func (a *percentileAcc) merge(_ context.Context, groups []uint32, state []arrow.Array) error {
	l, ok1 := state[0].(*array.List)
	fa, ok2 := state[1].(*array.Float64)
	if len(state) != 2 || !ok1 || !ok2 {
		return qerr.Internalf("exec/hashagg: %s: partial state of %d columns", a.fn, len(state))
	}
	child, ok := l.ListValues().(*array.Float64)
	if !ok {
		return qerr.Internalf("exec/hashagg: %s: partial values of %s", a.fn, l.ListValues().DataType())
	}
	vs := child.Float64Values()
	offs := l.Offsets()
	for i, g := range groups {
		if fa.IsValid(i) {
			a.frac = fa.Value(i)
		}
		if l.IsNull(i) {
			continue
		}
		for k := offs[i]; k < offs[i+1]; k++ {
			a.add(g, vs[k])
		}
	}
	return nil
}

func (a *percentileAcc) final(m *kernel.ArrayMaker, start, end int) arrow.Array {
	out := make([]float64, end-start)
	valid := make([]bool, end-start)
	for g := start; g < end; g++ {
		v := a.vals[g]
		if len(v) == 0 {
			continue
		}
		slices.Sort(v)
		n := float64(len(v))
		if a.fn == physical.AggPercentileDisc {
			// The first value whose cumulative share reaches the fraction.
			k := int(math.Ceil(a.frac*n)) - 1
			out[g-start] = v[max(0, min(k, len(v)-1))]
		} else {
			pos := a.frac * (n - 1)
			lo := math.Floor(pos)
			hi := math.Ceil(pos)
			x := v[int(lo)]
			out[g-start] = x + (v[int(hi)]-x)*(pos-lo)
		}
		valid[g-start] = true
	}
	return kernel.MakeFixed(m, arrow.PrimitiveTypes.Float64, out, valid)
}

func (a *percentileAcc) state(m *kernel.ArrayMaker, start, end int) []arrow.Array {
	b := array.NewListBuilder(m.Mem, arrow.PrimitiveTypes.Float64)
	defer b.Release()
	vb := b.ValueBuilder().(*array.Float64Builder)
	for g := start; g < end; g++ {
		b.Append(true)
		vb.AppendValues(a.vals[g], nil)
	}
	fr := make([]float64, end-start)
	for i := range fr {
		fr[i] = a.frac
	}
	return []arrow.Array{b.NewArray(), kernel.MakeFixed(m, arrow.PrimitiveTypes.Float64, fr, nil)}
}
