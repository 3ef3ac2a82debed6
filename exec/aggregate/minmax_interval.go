package aggregate

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/quiverdb/quiver/exec/kernel"
	"github.com/quiverdb/quiver/temporal"
)

// minMaxIntervalAcc is min and max (and any_value) over intervals, which
// order as PostgreSQL and DuckDB order them: by length, a month counted as
// 30 days and a day as 24 hours (temporal.CompareIntervals). Of two equal
// lengths ('1 mon' and '30 days') the later seen is kept, as PostgreSQL
// keeps it.
type minMaxIntervalAcc struct {
	dt   arrow.DataType
	max  bool
	vals []arrow.MonthDayNanoInterval
	seen []bool
}

func (a *minMaxIntervalAcc) resize(n int) {
	a.vals, a.seen = kernel.GrowSlice(a.vals, n), kernel.GrowSlice(a.seen, n)
}
func (a *minMaxIntervalAcc) bytesPerGroup() int64 { return 17 }
func (a *minMaxIntervalAcc) update(_ context.Context, groups []uint32, arg arrow.Array) error {
	if allNull(arg) {
		return nil
	}
	vals := arrow.GetValues[arrow.MonthDayNanoInterval](arg.Data(), 1)
	bits, off := kernel.ValidBits(arg)
	want := -1
	if a.max {
		want = 1
	}
	for i, g := range groups {
		if (bits == nil || bitutil.BitIsSet(bits, off+i)) && (!a.seen[g] || temporal.CompareIntervals(vals[i], a.vals[g])*want >= 0) {
			a.vals[g], a.seen[g] = vals[i], true
		}
	}
	return nil
}
func (a *minMaxIntervalAcc) merge(ctx context.Context, groups []uint32, state []arrow.Array) error {
	return a.update(ctx, groups, state[0])
}
func (a *minMaxIntervalAcc) final(m *kernel.ArrayMaker, start, end int) arrow.Array {
	return kernel.MakeFixed(m, a.dt, a.vals[start:end], a.seen[start:end])
}
func (a *minMaxIntervalAcc) state(m *kernel.ArrayMaker, start, end int) []arrow.Array {
	return []arrow.Array{a.final(m, start, end)}
}
