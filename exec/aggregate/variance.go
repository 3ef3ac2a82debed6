package aggregate

import (
	"context"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/quiverdb/quiver/exec/kernel"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
)

// varianceAcc computes var_samp, var_pop, stddev_samp and stddev_pop in
// float64 with Welford's update per value (count, mean and m2, the sum of
// squared deviations from the mean) and Chan's formula to merge partial
// states: both stay accurate where the textbook sum-of-squares form loses
// every digit to cancellation (values far from zero with a small spread).
type varianceAcc struct {
	fn     physical.AggFunc
	counts []int64
	means  []float64
	m2s    []float64
	vals   []float64 // one batch's values as float64, reused
}

func (a *varianceAcc) resize(n int) {
	a.counts = kernel.GrowSlice(a.counts, n)
	a.means = kernel.GrowSlice(a.means, n)
	a.m2s = kernel.GrowSlice(a.m2s, n)
}

func (a *varianceAcc) bytesPerGroup() int64 { return 24 }

func (a *varianceAcc) update(_ context.Context, groups []uint32, arg arrow.Array) error {
	if allNull(arg) {
		return nil
	}
	vals, err := floatValues(arg, a.vals)
	if err != nil {
		return err
	}
	a.vals = vals
	hasNulls := arg.NullN() > 0
	for i, g := range groups {
		if hasNulls && arg.IsNull(i) {
			continue
		}
		x := vals[i]
		a.counts[g]++
		d := x - a.means[g]
		a.means[g] += d / float64(a.counts[g])
		a.m2s[g] += d * (x - a.means[g])
	}
	return nil
}

func (a *varianceAcc) merge(_ context.Context, groups []uint32, state []arrow.Array) error {
	counts, ok1 := state[0].(*array.Int64)
	means, ok2 := state[1].(*array.Float64)
	m2s, ok3 := state[2].(*array.Float64)
	if !ok1 || !ok2 || !ok3 {
		return qerr.Internalf("exec/hashagg: %s: partial state of types %s, %s, %s", a.fn, state[0].DataType(), state[1].DataType(), state[2].DataType())
	}
	for i, g := range groups {
		nb := counts.Value(i)
		if nb == 0 {
			continue
		}
		na := a.counts[g]
		n := na + nb
		d := means.Value(i) - a.means[g]
		a.means[g] += d * float64(nb) / float64(n)
		a.m2s[g] += m2s.Value(i) + d*d*float64(na)*float64(nb)/float64(n)
		a.counts[g] = n
	}
	return nil
}

func (a *varianceAcc) final(m *kernel.ArrayMaker, start, end int) arrow.Array {
	out := make([]float64, end-start)
	valid := make([]bool, end-start)
	for g := start; g < end; g++ {
		n := a.counts[g]
		div := float64(n)
		if a.fn == physical.AggVarSamp || a.fn == physical.AggStddevSamp {
			div = float64(n - 1)
		}
		if div <= 0 {
			continue // NULL: too few values
		}
		v := a.m2s[g] / div
		if a.fn == physical.AggStddevSamp || a.fn == physical.AggStddevPop {
			v = math.Sqrt(v)
		}
		out[g-start], valid[g-start] = v, true
	}
	return kernel.MakeFixed(m, arrow.PrimitiveTypes.Float64, out, valid)
}

func (a *varianceAcc) state(m *kernel.ArrayMaker, start, end int) []arrow.Array {
	return []arrow.Array{
		kernel.MakeFixed(m, arrow.PrimitiveTypes.Int64, a.counts[start:end], nil),
		kernel.MakeFixed(m, arrow.PrimitiveTypes.Float64, a.means[start:end], nil),
		kernel.MakeFixed(m, arrow.PrimitiveTypes.Float64, a.m2s[start:end], nil),
	}
}

// floatValues returns arr's values as float64 (NULL slots hold garbage),
// reusing buf.
func floatValues(arr arrow.Array, buf []float64) ([]float64, error) {
	buf = kernel.Resize(buf, arr.Len())
	switch a := arr.(type) {
	case *array.Int8:
		widen(a.Int8Values(), buf)
	case *array.Int16:
		widen(a.Int16Values(), buf)
	case *array.Int32:
		widen(a.Int32Values(), buf)
	case *array.Int64:
		widen(a.Int64Values(), buf)
	case *array.Uint8:
		widen(a.Uint8Values(), buf)
	case *array.Uint16:
		widen(a.Uint16Values(), buf)
	case *array.Uint32:
		widen(a.Uint32Values(), buf)
	case *array.Uint64:
		widen(a.Uint64Values(), buf)
	case *array.Float32:
		widen(a.Float32Values(), buf)
	case *array.Float64:
		copy(buf, a.Float64Values())
	case *array.Decimal128:
		scale := a.DataType().(*arrow.Decimal128Type).Scale
		for i := range buf {
			buf[i] = a.Value(i).ToFloat64(scale)
		}
	default:
		return nil, qerr.Internalf("exec/hashagg: variance of %s", arr.DataType())
	}
	return buf, nil
}

// widen converts vals to float64 into out (as long as vals).
func widen[T ~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~float32](vals []T, out []float64) {
	for i, v := range vals {
		out[i] = float64(v)
	}
}
