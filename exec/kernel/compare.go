package kernel

import (
	"bytes"
	"cmp"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// RowComparator returns a three-way comparison of two non-NULL rows of a,
// typed once, in the order SQL sorts them (NaN above every other float, as
// PostgreSQL); false for a type it cannot order.
func RowComparator(a arrow.Array) (func(i, j int) int, bool) {
	switch a := a.(type) {
	case *array.Int8:
		return cmpOrdered(a.Int8Values()), true
	case *array.Int16:
		return cmpOrdered(a.Int16Values()), true
	case *array.Int32:
		return cmpOrdered(a.Int32Values()), true
	case *array.Int64:
		return cmpOrdered(a.Int64Values()), true
	case *array.Uint8:
		return cmpOrdered(a.Uint8Values()), true
	case *array.Uint16:
		return cmpOrdered(a.Uint16Values()), true
	case *array.Uint32:
		return cmpOrdered(a.Uint32Values()), true
	case *array.Uint64:
		return cmpOrdered(a.Uint64Values()), true
	case *array.Float32:
		return cmpFloats(a.Float32Values()), true
	case *array.Float64:
		return cmpFloats(a.Float64Values()), true
	case *array.Date32:
		return cmpOrdered(a.Date32Values()), true
	case *array.Date64:
		return cmpOrdered(a.Date64Values()), true
	case *array.Timestamp:
		return cmpOrdered(a.TimestampValues()), true
	case *array.Time32:
		return cmpOrdered(a.Time32Values()), true
	case *array.Time64:
		return cmpOrdered(a.Time64Values()), true
	case *array.Duration:
		return cmpOrdered(a.DurationValues()), true
	case *array.Decimal128:
		vs := a.Values()
		return func(i, j int) int { return vs[i].Cmp(vs[j]) }, true
	case *array.Boolean:
		return func(i, j int) int {
			x, y := a.Value(i), a.Value(j)
			switch {
			case x == y:
				return 0
			case y:
				return -1
			}
			return 1
		}, true
	case *array.String:
		return func(i, j int) int { return cmp.Compare(a.Value(i), a.Value(j)) }, true
	case *array.LargeString:
		return func(i, j int) int { return cmp.Compare(a.Value(i), a.Value(j)) }, true
	case *array.Binary:
		return func(i, j int) int { return bytes.Compare(a.Value(i), a.Value(j)) }, true
	case *array.Null:
		return func(int, int) int { return 0 }, true
	}
	return nil, false
}

func cmpOrdered[T cmp.Ordered](vs []T) func(i, j int) int {
	return func(i, j int) int { return cmp.Compare(vs[i], vs[j]) }
}

func cmpFloats[T float32 | float64](vs []T) func(i, j int) int {
	return func(i, j int) int {
		x, y := vs[i], vs[j]
		xn, yn := x != x, y != y
		switch {
		case xn && yn:
			return 0
		case xn:
			return 1
		case yn:
			return -1
		}
		return cmp.Compare(x, y)
	}
}
