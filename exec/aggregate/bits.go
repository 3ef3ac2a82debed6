package aggregate

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/quiverdb/quiver/exec/kernel"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
)

// bitAcc is bit_and, bit_or and bit_xor over an integer type, folded in
// 64 bits and returned in the argument's type (the bits of narrower
// values never leave their width). A group without values is NULL.
type bitAcc struct {
	fn   physical.AggFunc
	dt   arrow.DataType
	vals []uint64
	seen []bool
	buf  []uint64 // one batch's values, reused
}

func (a *bitAcc) resize(n int) {
	a.vals, a.seen = kernel.GrowSlice(a.vals, n), kernel.GrowSlice(a.seen, n)
}

func (a *bitAcc) bytesPerGroup() int64 { return 9 }

func (a *bitAcc) update(_ context.Context, groups []uint32, arg arrow.Array) error {
	if allNull(arg) {
		return nil
	}
	a.buf = kernel.Resize(a.buf, arg.Len())
	switch x := arg.(type) {
	case *array.Int8:
		toBits(x.Int8Values(), a.buf)
	case *array.Int16:
		toBits(x.Int16Values(), a.buf)
	case *array.Int32:
		toBits(x.Int32Values(), a.buf)
	case *array.Int64:
		toBits(x.Int64Values(), a.buf)
	case *array.Uint8:
		toBits(x.Uint8Values(), a.buf)
	case *array.Uint16:
		toBits(x.Uint16Values(), a.buf)
	case *array.Uint32:
		toBits(x.Uint32Values(), a.buf)
	case *array.Uint64:
		copy(a.buf, x.Uint64Values())
	default:
		return qerr.Internalf("exec/hashagg: %s over %s", a.fn, arg.DataType())
	}
	bits, off := kernel.ValidBits(arg)
	for i, g := range groups {
		if bits != nil && !bitutil.BitIsSet(bits, off+i) {
			continue
		}
		v := a.buf[i]
		switch {
		case !a.seen[g]:
			a.vals[g], a.seen[g] = v, true
		case a.fn == physical.AggBitAnd:
			a.vals[g] &= v
		case a.fn == physical.AggBitOr:
			a.vals[g] |= v
		default:
			a.vals[g] ^= v
		}
	}
	return nil
}

func toBits[T ~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32](vals []T, out []uint64) {
	for i, v := range vals {
		out[i] = uint64(v)
	}
}

func (a *bitAcc) merge(ctx context.Context, groups []uint32, state []arrow.Array) error {
	return a.update(ctx, groups, state[0])
}

func (a *bitAcc) final(m *kernel.ArrayMaker, start, end int) arrow.Array {
	v, seen := a.vals[start:end], a.seen[start:end]
	switch a.dt.ID() {
	case arrow.INT8:
		return kernel.MakeFixed(m, a.dt, narrowBits[int8](v), seen)
	case arrow.INT16:
		return kernel.MakeFixed(m, a.dt, narrowBits[int16](v), seen)
	case arrow.INT32:
		return kernel.MakeFixed(m, a.dt, narrowBits[int32](v), seen)
	case arrow.INT64:
		return kernel.MakeFixed(m, a.dt, narrowBits[int64](v), seen)
	case arrow.UINT8:
		return kernel.MakeFixed(m, a.dt, narrowBits[uint8](v), seen)
	case arrow.UINT16:
		return kernel.MakeFixed(m, a.dt, narrowBits[uint16](v), seen)
	case arrow.UINT32:
		return kernel.MakeFixed(m, a.dt, narrowBits[uint32](v), seen)
	}
	return kernel.MakeFixed(m, a.dt, v, seen)
}

func narrowBits[T ~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32](v []uint64) []T {
	out := make([]T, len(v))
	for i, x := range v {
		out[i] = T(x)
	}
	return out
}

func (a *bitAcc) state(m *kernel.ArrayMaker, start, end int) []arrow.Array {
	return []arrow.Array{a.final(m, start, end)}
}
