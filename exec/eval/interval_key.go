package eval

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
	"github.com/quiverdb/quiver/temporal"
)

// intervalKeyNode is physical.IntervalKeyFunc: each interval's length in
// nanoseconds (temporal.IntervalLength) as a Decimal128, NULL for NULL.
type intervalKeyNode struct{ x node }

func compileIntervalKey(f *physical.ScalarFunc) (node, error) {
	if len(f.Args) != 1 || f.Args[0].DataType().ID() != arrow.INTERVAL_MONTH_DAY_NANO || !arrow.TypeEqual(f.Type, physical.IntervalKeyType) {
		return nil, qerr.Internalf("eval: malformed %s over %d arguments of type %s", physical.IntervalKeyFunc, len(f.Args), f.Type)
	}
	x, err := compile(f.Args[0])
	if err != nil {
		return nil, err
	}
	return &intervalKeyNode{x: x}, nil
}

var dayNanos = decimal128.FromI64(temporal.MicrosPerDay * temporal.NanosPerMicro)

func (k *intervalKeyNode) eval(ctx context.Context, mem memory.Allocator, in *input) (arrow.Array, error) {
	a, err := k.x.eval(ctx, mem, in)
	if err != nil {
		return nil, err
	}
	defer a.Release()
	ivs, ok := a.(*array.MonthDayNanoInterval)
	if !ok {
		return nil, qerr.Internalf("eval: %s of %s", physical.IntervalKeyFunc, a.DataType())
	}
	b := array.NewDecimal128Builder(mem, physical.IntervalKeyType)
	defer b.Release()
	b.Reserve(ivs.Len())
	for i, iv := range ivs.MonthDayNanoIntervalValues() {
		if ivs.IsNull(i) {
			b.UnsafeAppendBoolToBitmap(false)
			continue
		}
		days, nanos := temporal.IntervalLength(iv)
		b.UnsafeAppend(decimal128.FromI64(days).Mul(dayNanos).Add(decimal128.FromI64(nanos)))
	}
	return b.NewArray(), nil
}
