package format

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/quiverdb/quiver/temporal"
)

// Column renders every value of one column as text; nulls[i] is true for NULL.
// The type switch runs once per column.
func Column(a arrow.Array) (vals []string, nulls []bool) {
	n := a.Len()
	vals, nulls = make([]string, n), make([]bool, n)
	for i := 0; i < n; i++ {
		nulls[i] = a.IsNull(i)
	}
	set := func(f func(i int) string) {
		for i := 0; i < n; i++ {
			if !nulls[i] {
				vals[i] = f(i)
			}
		}
	}
	switch a := a.(type) {
	case *array.Boolean:
		set(func(i int) string { return strconv.FormatBool(a.Value(i)) })
	case *array.Int8:
		set(func(i int) string { return strconv.FormatInt(int64(a.Value(i)), 10) })
	case *array.Int16:
		set(func(i int) string { return strconv.FormatInt(int64(a.Value(i)), 10) })
	case *array.Int32:
		set(func(i int) string { return strconv.FormatInt(int64(a.Value(i)), 10) })
	case *array.Int64:
		set(func(i int) string { return strconv.FormatInt(a.Value(i), 10) })
	case *array.Uint64:
		set(func(i int) string { return strconv.FormatUint(a.Value(i), 10) })
	case *array.Float32:
		set(func(i int) string { return Float(float64(a.Value(i))) })
	case *array.Float64:
		set(func(i int) string { return Float(a.Value(i)) })
	case *array.Decimal128:
		scale := a.DataType().(*arrow.Decimal128Type).Scale
		set(func(i int) string { return a.Value(i).ToString(scale) })
	case *array.String:
		set(a.Value)
	case *array.LargeString:
		set(a.Value)
	case *array.Date32:
		set(func(i int) string { return a.Value(i).FormattedString() })
	case *array.Timestamp:
		t := a.DataType().(*arrow.TimestampType)
		if t.TimeZone != "" {
			// A TIMESTAMPTZ prints in its zone with the offset; a zone the
			// database does not know prints as UTC.
			loc, ok := temporal.LoadZone(t.TimeZone)
			if !ok {
				loc = time.UTC
			}
			set(func(i int) string {
				return temporal.FormatTimestampTZ(temporal.ToMicros(int64(a.Value(i)), t.Unit), loc)
			})
			break
		}
		set(func(i int) string { return temporal.FormatTimestamp(temporal.ToMicros(int64(a.Value(i)), t.Unit)) })
	case *array.Time64:
		unit := a.DataType().(*arrow.Time64Type).Unit
		set(func(i int) string { return temporal.FormatTime(temporal.ToMicros(int64(a.Value(i)), unit)) })
	case *array.MonthDayNanoInterval:
		set(func(i int) string { return temporal.FormatInterval(a.Value(i)) })
	case *array.List:
		listText(a, a.Offsets(), vals, nulls)
	case *array.LargeList:
		listText(a, a.Offsets(), vals, nulls)
	case *array.Null:
		// A Null array has no validity bitmap, so IsNull reports false; every value is NULL.
		for i := range nulls {
			nulls[i] = true
		}
	default:
		set(a.ValueStr)
	}
	return vals, nulls
}

// listText renders each non-NULL list as DuckDB prints one: "[1, NULL, 3]",
// its elements in their own text form; the elements are rendered once, as
// one column.
func listText[O int32 | int64](a array.ListLike, offs []O, vals []string, nulls []bool) {
	ev, en := Column(a.ListValues())
	var b strings.Builder
	for i := range vals {
		if nulls[i] {
			continue
		}
		b.Reset()
		b.WriteByte('[')
		for j := offs[i]; j < offs[i+1]; j++ {
			if j > offs[i] {
				b.WriteString(", ")
			}
			if en[j] {
				b.WriteString("NULL")
			} else {
				b.WriteString(ev[j])
			}
		}
		b.WriteByte(']')
		vals[i] = b.String()
	}
}

// Float is the shortest text that reads back as v, always with a decimal
// point or exponent so it reads as a float ("1.0", "0.05", "1e+20").
func Float(v float64) string {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "inf"
	case math.IsInf(v, -1):
		return "-inf"
	}
	abs := math.Abs(v)
	var s string
	if abs != 0 && (abs < 1e-4 || abs >= 1e16) {
		s = strconv.FormatFloat(v, 'e', -1, 64)
	} else {
		s = strconv.FormatFloat(v, 'f', -1, 64)
	}
	if !strings.ContainsAny(s, ".e") {
		s += ".0"
	}
	return s
}

// IsNumeric reports whether values of t are numbers (right-aligned in
// tables, unquoted in JSON).
func IsNumeric(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64,
		arrow.FLOAT32, arrow.FLOAT64, arrow.DECIMAL128:
		return true
	}
	return false
}
