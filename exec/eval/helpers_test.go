package eval

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/temporal"
)

// checkedMem returns an allocator that must be empty when the test ends.
// Kernels that ask it for unzeroed memory get bytes set to 0xA5, so one
// that reads a byte it did not write fails.
func checkedMem(t testing.TB) *testMem {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	return &testMem{mem}
}

type testMem struct{ *memory.CheckedAllocator }

func (m *testMem) AllocateDirty(size int) []byte {
	b := m.Allocate(size)
	for i := range b {
		b[i] = 0xA5
	}
	return b
}

var (
	tI64  = arrow.PrimitiveTypes.Int64
	tI32  = arrow.PrimitiveTypes.Int32
	tF64  = arrow.PrimitiveTypes.Float64
	tStr  = arrow.BinaryTypes.String
	tDate = arrow.FixedWidthTypes.Date32
	tBool = arrow.FixedWidthTypes.Boolean
	tIvl  = arrow.FixedWidthTypes.MonthDayNanoInterval
	tTs   = &arrow.TimestampType{Unit: arrow.Microsecond}
	tNull = arrow.Null
)

func tDec(p, s int32) arrow.DataType { return &arrow.Decimal128Type{Precision: p, Scale: s} }

// buildArray builds an array of dt from Go values (nil for NULL): int64 for
// integers, float64, string, bool, decimal128.Num (unscaled), int32 days for dates.
func buildArray(mem memory.Allocator, dt arrow.DataType, vals []any) arrow.Array {
	b := array.NewBuilder(mem, dt)
	defer b.Release()
	for _, v := range vals {
		if v == nil {
			b.AppendNull()
			continue
		}
		switch b := b.(type) {
		case *array.Int64Builder:
			b.Append(v.(int64))
		case *array.Int32Builder:
			b.Append(int32(v.(int64)))
		case *array.Float64Builder:
			b.Append(v.(float64))
		case *array.StringBuilder:
			b.Append(v.(string))
		case *array.BooleanBuilder:
			b.Append(v.(bool))
		case *array.Decimal128Builder:
			b.Append(v.(decimal128.Num))
		case *array.Date32Builder:
			b.Append(arrow.Date32(v.(int32)))
		case *array.NullBuilder:
			b.AppendNull()
		default:
			panic("unsupported builder")
		}
	}
	return b.NewArray()
}

// rowValue reads row i of a as a Go value (see buildArray), nil for NULL.
func rowValue(a arrow.Array, i int) any {
	if a.IsNull(i) {
		return nil
	}
	switch a := a.(type) {
	case *array.Int64:
		return a.Value(i)
	case *array.Int32:
		return int64(a.Value(i))
	case *array.Float64:
		return a.Value(i)
	case *array.String:
		return a.Value(i)
	case *array.Boolean:
		return a.Value(i)
	case *array.Decimal128:
		return a.Value(i)
	case *array.Date32:
		return int32(a.Value(i))
	case *array.Timestamp:
		return a.Value(i)
	}
	return nil
}

// show formats a value of type dt for comparisons in tests.
func show(dt arrow.DataType, v any) string {
	if v == nil {
		return "NULL"
	}
	switch v := v.(type) {
	case decimal128.Num:
		return string(appendDecimal(nil, v, dt.(*arrow.Decimal128Type).Scale))
	case int32:
		return string(temporal.AppendDate(nil, v))
	case arrow.Timestamp:
		return temporal.FormatTimestamp(int64(v))
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	case int64:
		return strconv.FormatInt(v, 10)
	case string:
		return "'" + v + "'"
	case bool:
		return strconv.FormatBool(v)
	}
	return "?"
}

func showArray(a arrow.Array) string {
	parts := make([]string, a.Len())
	for i := range parts {
		parts[i] = show(a.DataType(), rowValue(a, i))
	}
	return strings.Join(parts, "|")
}

func dec(s string, scale int32) decimal128.Num {
	n, ok := parseDecimal(s, 38, scale)
	if !ok {
		panic("bad decimal " + s)
	}
	return n
}

func date(s string) int32 {
	d, ok := temporal.ParseDate(s)
	if !ok {
		panic("bad date " + s)
	}
	return d
}

// Expression builders for tests.
func col(i int, name string, t arrow.DataType) *physical.Column {
	return &physical.Column{Index: i, Name: name, Type: t}
}
func lit(t arrow.DataType, v any) *physical.Literal { return &physical.Literal{Type: t, Value: v} }
func bin(op physical.BinaryOp, l, r physical.Expr, t arrow.DataType) *physical.Binary {
	return &physical.Binary{Op: op, Left: l, Right: r, Type: t}
}
func fn(name string, t arrow.DataType, args ...physical.Expr) *physical.ScalarFunc {
	return &physical.ScalarFunc{Name: name, Args: args, Type: t}
}

// testBatch is a fixed batch with one column per type.
type testBatch struct {
	schema *arrow.Schema
	cols   [][]any
}

var fixture = func() testBatch {
	types := []arrow.DataType{tI64, tI32, tF64, tDec(10, 2), tStr, tDate, tBool, tDec(12, 4)}
	names := []string{"i", "j", "f", "d", "s", "dt", "b", "e"}
	fields := make([]arrow.Field, len(types))
	for k := range types {
		fields[k] = arrow.Field{Name: names[k], Type: types[k], Nullable: true}
	}
	return testBatch{
		schema: arrow.NewSchema(fields, nil),
		cols: [][]any{
			{int64(1), int64(-2), nil, int64(10), int64(0)},
			{int64(3), nil, int64(5), int64(-7), int64(0)},
			{1.5, nil, -0.5, 2.0, 0.0},
			{dec("1.25", 2), dec("2.50", 2), nil, dec("-3.75", 2), dec("0", 2)},
			{"apple", "Banana", nil, "cherry pie", ""},
			{date("1994-01-31"), date("1995-06-15"), nil, date("2000-02-29"), date("1970-01-01")},
			{true, false, nil, true, false},
			{dec("1.2500", 4), dec("-2.0001", 4), dec("7", 4), nil, dec("0.0049", 4)},
		},
	}
}()

func (tb testBatch) record(mem memory.Allocator) arrow.RecordBatch {
	arrs := make([]arrow.Array, len(tb.cols))
	for k, c := range tb.cols {
		arrs[k] = buildArray(mem, tb.schema.Field(k).Type, c)
	}
	rec := array.NewRecordBatch(tb.schema, arrs, int64(len(tb.cols[0])))
	for _, a := range arrs {
		a.Release()
	}
	return rec
}

// fx are columns of the fixture by name.
var (
	cI  = col(0, "i", tI64)
	cJ  = col(1, "j", tI32)
	cF  = col(2, "f", tF64)
	cD  = col(3, "d", tDec(10, 2))
	cS  = col(4, "s", tStr)
	cDt = col(5, "dt", tDate)
	cB  = col(6, "b", tBool)
	cE  = col(7, "e", tDec(12, 4))
)

func evalString(t *testing.T, mem memory.Allocator, rec arrow.RecordBatch, e physical.Expr) (string, error) {
	t.Helper()
	ev, err := Compile(e)
	if err != nil {
		return "", err
	}
	out, err := ev.Eval(context.Background(), mem, rec)
	if err != nil {
		return "", err
	}
	defer out.Release()
	if !arrow.TypeEqual(out.DataType(), e.DataType()) {
		t.Errorf("%s: result type %s, want %s", e, out.DataType(), e.DataType())
	}
	if out.Len() != int(rec.NumRows()) {
		t.Errorf("%s: %d rows, want %d", e, out.Len(), rec.NumRows())
	}
	return showArray(out), nil
}
