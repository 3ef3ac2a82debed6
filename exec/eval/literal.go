package eval

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
)

// litVal is a literal decoded once at compile time into typed fields, so that
// kernels take scalar operands without boxing per row.
type litVal struct {
	typ  arrow.DataType
	null bool
	b    bool
	i64  int64 // Int8..Int64, Date32 (days), Timestamp and Time64 (microseconds)
	f64  float64
	dec  decimal128.Num
	s    string
	iv   arrow.MonthDayNanoInterval
}

func newLit(l *physical.Literal) (litVal, error) {
	v := litVal{typ: l.Type}
	if l.Type == nil {
		return v, qerr.Internalf("eval: literal %v has no type", l.Value)
	}
	if l.Value == nil {
		v.null = true
		return v, nil
	}
	bad := func() (litVal, error) {
		return v, qerr.Internalf("eval: literal of type %s holds a %T", l.Type, l.Value)
	}
	switch l.Type.ID() {
	case arrow.BOOL:
		x, ok := l.Value.(bool)
		if !ok {
			return bad()
		}
		v.b = x
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64:
		switch x := l.Value.(type) {
		case int8:
			v.i64 = int64(x)
		case int16:
			v.i64 = int64(x)
		case int32:
			v.i64 = int64(x)
		case int64:
			v.i64 = x
		case int:
			v.i64 = int64(x)
		default:
			return bad()
		}
	case arrow.FLOAT32, arrow.FLOAT64:
		switch x := l.Value.(type) {
		case float64:
			v.f64 = x
		case float32:
			v.f64 = float64(x)
		default:
			return bad()
		}
	case arrow.DECIMAL128:
		x, ok := l.Value.(decimal128.Num)
		if !ok {
			return bad()
		}
		v.dec = x
	case arrow.STRING, arrow.LARGE_STRING:
		x, ok := l.Value.(string)
		if !ok {
			return bad()
		}
		v.s = x
	case arrow.DATE32:
		switch x := l.Value.(type) {
		case arrow.Date32:
			v.i64 = int64(x)
		case int32:
			v.i64 = int64(x)
		default:
			return bad()
		}
	case arrow.TIMESTAMP:
		x, ok := l.Value.(arrow.Timestamp)
		if !ok {
			return bad()
		}
		v.i64 = int64(x)
	case arrow.TIME64:
		x, ok := l.Value.(arrow.Time64)
		if !ok {
			return bad()
		}
		v.i64 = int64(x)
	case arrow.INTERVAL_MONTH_DAY_NANO:
		x, ok := l.Value.(arrow.MonthDayNanoInterval)
		if !ok {
			return bad()
		}
		v.iv = x
	default:
		return v, qerr.NotImplementedf("eval: literals of type %s are not supported", l.Type)
	}
	return v, nil
}

// Literal returns an array of n copies of l (all NULL when l.Value is nil).
// The caller owns the result.
func Literal(mem memory.Allocator, l *physical.Literal, n int) (arrow.Array, error) {
	v, err := newLit(l)
	if err != nil {
		return nil, err
	}
	return broadcast(mem, &v, n)
}

// broadcast materialises a scalar as an array of n values.
func broadcast(mem memory.Allocator, v *litVal, n int) (arrow.Array, error) {
	if v.null || v.typ.ID() == arrow.NULL {
		return array.MakeArrayOfNull(mem, v.typ, n), nil
	}
	switch v.typ.ID() {
	case arrow.BOOL:
		buf := newBitmap(mem, n, v.b)
		defer buf.Release()
		return makeArray(v.typ, n, nil, buf), nil
	case arrow.INT8:
		return fillFixed(mem, v.typ, n, int8(v.i64)), nil
	case arrow.INT16:
		return fillFixed(mem, v.typ, n, int16(v.i64)), nil
	case arrow.INT32, arrow.DATE32:
		return fillFixed(mem, v.typ, n, int32(v.i64)), nil
	case arrow.INT64, arrow.TIMESTAMP, arrow.TIME64:
		return fillFixed(mem, v.typ, n, v.i64), nil
	case arrow.FLOAT32:
		return fillFixed(mem, v.typ, n, float32(v.f64)), nil
	case arrow.FLOAT64:
		return fillFixed(mem, v.typ, n, v.f64), nil
	case arrow.DECIMAL128:
		return fillFixed(mem, v.typ, n, v.dec), nil
	case arrow.INTERVAL_MONTH_DAY_NANO:
		return fillFixed(mem, v.typ, n, v.iv), nil
	case arrow.STRING:
		b := array.NewStringBuilder(mem)
		defer b.Release()
		b.Reserve(n)
		b.ReserveData(n * len(v.s))
		for i := 0; i < n; i++ {
			b.Append(v.s)
		}
		return b.NewArray(), nil
	case arrow.LARGE_STRING:
		b := array.NewLargeStringBuilder(mem)
		defer b.Release()
		b.Reserve(n)
		b.ReserveData(n * len(v.s))
		for i := 0; i < n; i++ {
			b.Append(v.s)
		}
		return b.NewArray(), nil
	}
	return nil, qerr.NotImplementedf("eval: literals of type %s are not supported", v.typ)
}

func fillFixed[T arrow.FixedWidthType](mem memory.Allocator, dt arrow.DataType, n int, x T) arrow.Array {
	buf, vals := newFixed[T](mem, n)
	defer buf.Release()
	for i := range vals {
		vals[i] = x
	}
	return makeArray(dt, n, nil, buf)
}
