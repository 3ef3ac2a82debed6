package aggregate

import (
	"context"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/quiverdb/quiver/exec/kernel"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
)

// covarAcc computes covar_pop, covar_samp and corr over (y, x) pairs where
// both are non-NULL, in float64, the bivariate form of varianceAcc: per
// group the count, both means, the co-moment c = Σ(x-x̄)(y-ȳ) and both
// m2 = Σ(v-v̄)², updated per pair as Welford's and merged by Chan's
// formulas, so no sum of products loses its digits to cancellation.
type covarAcc struct {
	fn             physical.AggFunc
	counts         []int64
	my, mx, c      []float64
	m2y, m2x       []float64
	validY, validX []byte
}

func (a *covarAcc) resize(n int) {
	a.counts = kernel.GrowSlice(a.counts, n)
	a.my, a.mx, a.c = kernel.GrowSlice(a.my, n), kernel.GrowSlice(a.mx, n), kernel.GrowSlice(a.c, n)
	a.m2y, a.m2x = kernel.GrowSlice(a.m2y, n), kernel.GrowSlice(a.m2x, n)
}

func (a *covarAcc) bytesPerGroup() int64 { return 48 }

func (a *covarAcc) update(_ context.Context, groups []uint32, arg arrow.Array) error {
	st, ok := arg.(*array.Struct)
	if !ok || st.NumField() != 2 {
		return qerr.Internalf("exec/hashagg: %s of %s", a.fn, arg.DataType())
	}
	ya, ok1 := st.Field(0).(*array.Float64)
	xa, ok2 := st.Field(1).(*array.Float64)
	if !ok1 || !ok2 {
		return qerr.Internalf("exec/hashagg: %s of %s", a.fn, arg.DataType())
	}
	ys, xs := ya.Float64Values(), xa.Float64Values()
	yb, yo := kernel.ValidBits(ya)
	xb, xo := kernel.ValidBits(xa)
	for i, g := range groups {
		if (yb != nil && !bitutil.BitIsSet(yb, yo+i)) || (xb != nil && !bitutil.BitIsSet(xb, xo+i)) {
			continue
		}
		y, x := ys[i], xs[i]
		a.counts[g]++
		n := float64(a.counts[g])
		dx := x - a.mx[g]
		a.mx[g] += dx / n
		dy := y - a.my[g]
		a.my[g] += dy / n
		a.c[g] += dx * (y - a.my[g])
		a.m2x[g] += dx * (x - a.mx[g])
		a.m2y[g] += dy * (y - a.my[g])
	}
	return nil
}

func (a *covarAcc) merge(_ context.Context, groups []uint32, state []arrow.Array) error {
	counts, ok := state[0].(*array.Int64)
	if !ok || len(state) != 6 {
		return qerr.Internalf("exec/hashagg: %s: partial state of %d columns", a.fn, len(state))
	}
	var f [5][]float64
	for k := range f {
		fa, ok := state[k+1].(*array.Float64)
		if !ok {
			return qerr.Internalf("exec/hashagg: %s: partial state column %d is %s", a.fn, k+1, state[k+1].DataType())
		}
		f[k] = fa.Float64Values()
	}
	for i, g := range groups {
		nb := counts.Value(i)
		if nb == 0 {
			continue
		}
		na := a.counts[g]
		n := na + nb
		w := float64(na) * float64(nb) / float64(n)
		dy, dx := f[0][i]-a.my[g], f[1][i]-a.mx[g]
		a.my[g] += dy * float64(nb) / float64(n)
		a.mx[g] += dx * float64(nb) / float64(n)
		a.c[g] += f[2][i] + dx*dy*w
		a.m2y[g] += f[3][i] + dy*dy*w
		a.m2x[g] += f[4][i] + dx*dx*w
		a.counts[g] = n
	}
	return nil
}

func (a *covarAcc) final(m *kernel.ArrayMaker, start, end int) arrow.Array {
	out := make([]float64, end-start)
	valid := make([]bool, end-start)
	for g := start; g < end; g++ {
		n := a.counts[g]
		var v float64
		switch a.fn {
		case physical.AggCovarPop:
			if n < 1 {
				continue
			}
			v = a.c[g] / float64(n)
		case physical.AggCovarSamp:
			if n < 2 {
				continue
			}
			v = a.c[g] / float64(n-1)
		default: // corr
			if n < 1 || a.m2x[g] == 0 || a.m2y[g] == 0 {
				continue // NULL: a constant side has no correlation
			}
			v = a.c[g] / math.Sqrt(a.m2x[g]*a.m2y[g])
			v = max(-1, min(1, v)) // rounding must not leave [-1, 1]
		}
		out[g-start], valid[g-start] = v, true
	}
	return kernel.MakeFixed(m, arrow.PrimitiveTypes.Float64, out, valid)
}

func (a *covarAcc) state(m *kernel.ArrayMaker, start, end int) []arrow.Array {
	f := func(v []float64) arrow.Array {
		return kernel.MakeFixed(m, arrow.PrimitiveTypes.Float64, v[start:end], nil)
	}
	return []arrow.Array{
		kernel.MakeFixed(m, arrow.PrimitiveTypes.Int64, a.counts[start:end], nil),
		f(a.my), f(a.mx), f(a.c), f(a.m2y), f(a.m2x),
	}
}
