package eval

import (
	"context"
	"math"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver/qerr"
	"github.com/quiverdb/quiver/temporal"
)

// castNode converts its child's values to another type. Semantics: integer
// narrowing and decimal precision overflow are errors; reducing a decimal's
// scale or converting to an integer rounds half away from zero; strings
// parse strictly and a bad value is an execution error naming it.
type castNode struct {
	child    node
	from, to arrow.DataType
}

// newCast wraps n (of type from) in a conversion to to.
func newCast(n node, from, to arrow.DataType) (node, error) {
	if arrow.TypeEqual(from, to) {
		return n, nil
	}
	if !castSupported(from, to) {
		return nil, qerr.NotImplementedf("eval: cast from %s to %s is not supported", from, to)
	}
	return &castNode{child: n, from: from, to: to}, nil
}

func isIntID(id arrow.Type) bool {
	switch id {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64:
		return true
	}
	return false
}

func castSupported(from, to arrow.DataType) bool {
	f, t := from.ID(), to.ID()
	if f == arrow.NULL || temporalCastSupported(f, t) || f == arrow.TIMESTAMP && t == arrow.TIMESTAMP {
		return true
	}
	if t == arrow.STRING || t == arrow.LARGE_STRING {
		return true
	}
	num := func(id arrow.Type) bool {
		return isIntID(id) || id == arrow.FLOAT32 || id == arrow.FLOAT64 || id == arrow.DECIMAL128
	}
	switch {
	case num(f) && num(t):
		return true
	case f == arrow.STRING || f == arrow.LARGE_STRING:
		return num(t) || t == arrow.DATE32 || t == arrow.BOOL
	case f == arrow.BOOL && (isIntID(t) || t == arrow.FLOAT64):
		return true
	case isIntID(f) && t == arrow.BOOL:
		return true
	case f == arrow.DATE32 && t == arrow.DATE64, f == arrow.DATE32 && t == arrow.TIMESTAMP:
		return true
	}
	return false
}

func (c *castNode) eval(ctx context.Context, mem memory.Allocator, in *input) (arrow.Array, error) {
	a, err := c.child.eval(ctx, mem, in)
	if err != nil {
		return nil, err
	}
	defer a.Release()
	return castArray(ctx, mem, a, c.to)
}

// castArray converts a to type to; the caller owns the result.
func castArray(ctx context.Context, mem memory.Allocator, a arrow.Array, to arrow.DataType) (arrow.Array, error) {
	from := a.DataType()
	n := a.Len()
	if arrow.TypeEqual(from, to) {
		a.Retain()
		return a, nil
	}
	if from.ID() == arrow.NULL || (n > 0 && a.NullN() == n) {
		return array.MakeArrayOfNull(mem, to, n), nil
	}
	valid := andValidity(mem, n, a)
	if valid != nil {
		defer valid.Release()
	}
	tid := to.ID()
	if out, ok, err := castZoned(mem, a, to, valid); ok || err != nil {
		return out, err
	}
	if out, ok, err := castTemporal(mem, a, to, valid); ok || err != nil {
		return out, err
	}
	switch {
	case tid == arrow.STRING:
		return toString(mem, a)
	case tid == arrow.LARGE_STRING:
		s, err := toString(mem, a)
		if err != nil {
			return nil, err
		}
		defer s.Release()
		return computeCast(ctx, mem, s, to)
	}
	switch from.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.UINT8, arrow.UINT16, arrow.UINT32:
		i64, err := widenInt(ctx, mem, a)
		if err != nil {
			return nil, err
		}
		defer i64.Release()
		return castFromInt64(ctx, mem, values[int64](i64), a, to, valid)
	case arrow.FLOAT32, arrow.FLOAT64:
		f := a
		if from.ID() == arrow.FLOAT32 {
			var err error
			if f, err = computeCast(ctx, mem, a, arrow.PrimitiveTypes.Float64); err != nil {
				return nil, err
			}
			defer f.Release()
		}
		return castFromFloat(mem, values[float64](f), a, to, valid)
	case arrow.DECIMAL128:
		return castFromDecimal(ctx, mem, a, to, valid)
	case arrow.STRING, arrow.LARGE_STRING:
		return castFromString(ctx, mem, a, to, valid)
	case arrow.BOOL:
		if tid == arrow.FLOAT64 || isIntID(tid) {
			b := a.(*array.Boolean)
			buf, out := newFixed[int64](mem, n)
			defer buf.Release()
			for i := range out {
				if b.Value(i) {
					out[i] = 1
				}
			}
			return castFromInt64(ctx, mem, out, a, to, valid)
		}
	}
	return computeCast(ctx, mem, a, to)
}

// computeCast falls back to arrow's safe cast kernels.
func computeCast(ctx context.Context, mem memory.Allocator, a arrow.Array, to arrow.DataType) (arrow.Array, error) {
	out, err := compute.CastArray(compute.WithAllocator(ctx, mem), a, compute.SafeCastOptions(to))
	if err != nil {
		return nil, qerr.Execf("cannot cast %s to %s: %w", a.DataType(), to, err)
	}
	return out, nil
}

func widenInt(ctx context.Context, mem memory.Allocator, a arrow.Array) (arrow.Array, error) {
	if a.DataType().ID() == arrow.INT64 {
		a.Retain()
		return a, nil
	}
	n := a.Len()
	buf, out := newFixed[int64](mem, n)
	defer buf.Release()
	switch a.DataType().ID() {
	case arrow.INT32:
		for i, x := range values[int32](a) {
			out[i] = int64(x)
		}
	case arrow.INT16:
		for i, x := range values[int16](a) {
			out[i] = int64(x)
		}
	case arrow.INT8:
		for i, x := range values[int8](a) {
			out[i] = int64(x)
		}
	default:
		return computeCast(ctx, mem, a, arrow.PrimitiveTypes.Int64)
	}
	valid := andValidity(mem, n, a)
	if valid != nil {
		defer valid.Release()
	}
	return makeArray(arrow.PrimitiveTypes.Int64, n, valid, buf), nil
}

func typeName(t arrow.DataType) string {
	switch t.ID() {
	case arrow.STRING, arrow.LARGE_STRING:
		return "Utf8"
	case arrow.DECIMAL128:
		d := t.(*arrow.Decimal128Type)
		return "Decimal128(" + strconv.Itoa(int(d.Precision)) + ", " + strconv.Itoa(int(d.Scale)) + ")"
	case arrow.DATE32:
		return "Date32"
	case arrow.TIMESTAMP:
		return "Timestamp"
	case arrow.TIME64:
		return "Time"
	case arrow.INTERVAL_MONTH_DAY_NANO:
		return "Interval"
	case arrow.BOOL:
		return "Boolean"
	}
	s := t.String()
	if len(s) > 0 {
		return strings.ToUpper(s[:1]) + s[1:]
	}
	return s
}

func castFromInt64(ctx context.Context, mem memory.Allocator, v []int64, src arrow.Array, to arrow.DataType, valid *memory.Buffer) (arrow.Array, error) {
	n := len(v)
	switch to.ID() {
	case arrow.INT64:
		buf, out := newFixed[int64](mem, n)
		defer buf.Release()
		copy(out, v)
		return makeArray(to, n, valid, buf), nil
	case arrow.INT32:
		return narrowInt[int32](mem, v, src, to, valid, math.MinInt32, math.MaxInt32)
	case arrow.INT16:
		return narrowInt[int16](mem, v, src, to, valid, math.MinInt16, math.MaxInt16)
	case arrow.INT8:
		return narrowInt[int8](mem, v, src, to, valid, math.MinInt8, math.MaxInt8)
	case arrow.FLOAT64:
		buf, out := newFixed[float64](mem, n)
		defer buf.Release()
		for i, x := range v {
			out[i] = float64(x)
		}
		return makeArray(to, n, valid, buf), nil
	case arrow.FLOAT32:
		buf, out := newFixed[float32](mem, n)
		defer buf.Release()
		for i, x := range v {
			out[i] = float32(x)
		}
		return makeArray(to, n, valid, buf), nil
	case arrow.DECIMAL128:
		dt := to.(*arrow.Decimal128Type)
		buf, out := newFixed[decimal128.Num](mem, n)
		defer buf.Release()
		for i, x := range v {
			d, ok := scaleUp(decimal128.FromI64(x), dt.Scale)
			if (!ok || !fitsPrecision(d, dt.Precision)) && src.IsValid(i) {
				return nil, qerr.Execf("cannot cast %d to %s: value out of range", x, typeName(to))
			}
			out[i] = d
		}
		return makeArray(to, n, valid, buf), nil
	case arrow.BOOL:
		bm := newBitmap(mem, n, false)
		defer bm.Release()
		b := bm.Bytes()
		for i, x := range v {
			setBit(b, i, x != 0)
		}
		return makeArray(to, n, valid, bm), nil
	}
	i64 := makeInt64(mem, v, valid)
	defer i64.Release()
	return computeCast(ctx, mem, i64, to)
}

func makeInt64(mem memory.Allocator, v []int64, valid *memory.Buffer) arrow.Array {
	buf, out := newFixed[int64](mem, len(v))
	defer buf.Release()
	copy(out, v)
	return makeArray(arrow.PrimitiveTypes.Int64, len(v), valid, buf)
}

func narrowInt[T int8 | int16 | int32](mem memory.Allocator, v []int64, src arrow.Array, to arrow.DataType, valid *memory.Buffer, lo, hi int64) (arrow.Array, error) {
	buf, out := newFixed[T](mem, len(v))
	defer buf.Release()
	bad := false
	for i, x := range v {
		out[i] = T(x)
		bad = bad || x < lo || x > hi
	}
	if bad {
		for i, x := range v {
			if (x < lo || x > hi) && src.IsValid(i) {
				return nil, qerr.Execf("cannot cast %d to %s: value out of range", x, typeName(to))
			}
		}
	}
	return makeArray(to, len(v), valid, buf), nil
}

// castFromFloat converts Float64 values; integers round half away from zero.
func castFromFloat(mem memory.Allocator, v []float64, src arrow.Array, to arrow.DataType, valid *memory.Buffer) (arrow.Array, error) {
	n := len(v)
	switch to.ID() {
	case arrow.FLOAT64:
		buf, out := newFixed[float64](mem, n)
		defer buf.Release()
		copy(out, v)
		return makeArray(to, n, valid, buf), nil
	case arrow.FLOAT32:
		buf, out := newFixed[float32](mem, n)
		defer buf.Release()
		for i, x := range v {
			out[i] = float32(x)
		}
		return makeArray(to, n, valid, buf), nil
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64:
		iv := make([]int64, n)
		for i, x := range v {
			r := math.Round(x)
			if (math.IsNaN(r) || r < -9.223372036854775808e18 || r >= 9.223372036854775808e18) && src.IsValid(i) {
				return nil, qerr.Execf("cannot cast %s to %s: value out of range", strconv.FormatFloat(x, 'g', -1, 64), typeName(to))
			}
			if !math.IsNaN(r) && r >= -9.223372036854775808e18 && r < 9.223372036854775808e18 {
				iv[i] = int64(r)
			}
		}
		return castFromInt64(context.Background(), mem, iv, src, to, valid)
	case arrow.DECIMAL128:
		dt := to.(*arrow.Decimal128Type)
		buf, out := newFixed[decimal128.Num](mem, n)
		defer buf.Release()
		for i, x := range v {
			if !src.IsValid(i) {
				continue
			}
			d, ok := floatToDecimal(x, dt.Precision, dt.Scale)
			if !ok {
				return nil, qerr.Execf("cannot cast %s to %s: value out of range", strconv.FormatFloat(x, 'g', -1, 64), typeName(to))
			}
			out[i] = d
		}
		return makeArray(to, n, valid, buf), nil
	}
	return nil, qerr.NotImplementedf("eval: cast from Float64 to %s is not supported", to)
}

// floatToDecimal converts x to an unscaled value at scale, rounding half away
// from zero; ok is false for NaN, infinities and precision overflow.
func floatToDecimal(x float64, prec, scale int32) (decimal128.Num, bool) {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return decimal128.Num{}, false
	}
	// Go through the shortest decimal representation so 0.1 stays 0.1.
	var tmp [64]byte
	s := strconv.AppendFloat(tmp[:0], x, 'f', -1, 64)
	return parseDecimal(string(s), prec, scale)
}

func castFromDecimal(ctx context.Context, mem memory.Allocator, a arrow.Array, to arrow.DataType, valid *memory.Buffer) (arrow.Array, error) {
	st := a.DataType().(*arrow.Decimal128Type)
	v := values[decimal128.Num](a)
	n := len(v)
	switch to.ID() {
	case arrow.DECIMAL128:
		dt := to.(*arrow.Decimal128Type)
		buf, out := newFixed[decimal128.Num](mem, n)
		defer buf.Release()
		for i, x := range v {
			d, ok := rescale(x, st.Scale, dt.Scale)
			if (!ok || !fitsPrecision(d, dt.Precision)) && a.IsValid(i) {
				return nil, qerr.Execf("cannot cast %s to %s: value out of range", x.ToString(st.Scale), typeName(to))
			}
			out[i] = d
		}
		return makeArray(to, n, valid, buf), nil
	case arrow.FLOAT64, arrow.FLOAT32:
		f := make([]float64, n)
		for i, x := range v {
			f[i] = x.ToFloat64(st.Scale)
		}
		return castFromFloat(mem, f, a, to, valid)
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64:
		iv := make([]int64, n)
		for i, x := range v {
			d := scaleDown(x, st.Scale)
			if st.Scale < 0 {
				d, _ = scaleUp(x, -st.Scale)
			}
			if !fits64(d) && a.IsValid(i) {
				return nil, qerr.Execf("cannot cast %s to %s: value out of range", x.ToString(st.Scale), typeName(to))
			}
			iv[i] = int64(d.LowBits())
		}
		return castFromInt64(ctx, mem, iv, a, to, valid)
	}
	return nil, qerr.NotImplementedf("eval: cast from %s to %s is not supported", typeName(a.DataType()), to)
}

func castFromString(ctx context.Context, mem memory.Allocator, a arrow.Array, to arrow.DataType, valid *memory.Buffer) (arrow.Array, error) {
	sv := stringView(a)
	n := len(sv)
	bad := func(s string) error {
		return qerr.Execf("cannot cast '%s' to %s", s, typeName(to))
	}
	switch to.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64:
		iv := make([]int64, n)
		for i, s := range sv {
			if !a.IsValid(i) {
				continue
			}
			x, err := strconv.ParseInt(trimSpace(s), 10, 64)
			if err != nil {
				return nil, bad(s)
			}
			iv[i] = x
		}
		return castFromInt64(ctx, mem, iv, a, to, valid)
	case arrow.FLOAT64, arrow.FLOAT32:
		f := make([]float64, n)
		for i, s := range sv {
			if !a.IsValid(i) {
				continue
			}
			x, err := strconv.ParseFloat(trimSpace(s), 64)
			if err != nil {
				return nil, bad(s)
			}
			f[i] = x
		}
		return castFromFloat(mem, f, a, to, valid)
	case arrow.DECIMAL128:
		dt := to.(*arrow.Decimal128Type)
		buf, out := newFixed[decimal128.Num](mem, n)
		defer buf.Release()
		for i, s := range sv {
			if !a.IsValid(i) {
				continue
			}
			d, ok := parseDecimal(s, dt.Precision, dt.Scale)
			if !ok {
				// exponent forms: parse as float first
				f, err := strconv.ParseFloat(trimSpace(s), 64)
				if err != nil {
					return nil, bad(s)
				}
				if d, ok = floatToDecimal(f, dt.Precision, dt.Scale); !ok {
					return nil, bad(s)
				}
			}
			out[i] = d
		}
		return makeArray(to, n, valid, buf), nil
	case arrow.DATE32:
		buf, out := newFixed[int32](mem, n)
		defer buf.Release()
		for i, s := range sv {
			if !a.IsValid(i) {
				continue
			}
			d, ok := temporal.ParseDate(s)
			if !ok {
				return nil, bad(s)
			}
			out[i] = d
		}
		return makeArray(to, n, valid, buf), nil
	case arrow.BOOL:
		bm := newBitmap(mem, n, false)
		defer bm.Release()
		b := bm.Bytes()
		for i, s := range sv {
			if !a.IsValid(i) {
				continue
			}
			switch strings.ToLower(trimSpace(s)) {
			case "true", "t", "yes", "y", "on", "1":
				setBit(b, i, true)
			case "false", "f", "no", "n", "off", "0":
			default:
				return nil, bad(s)
			}
		}
		return makeArray(to, n, valid, bm), nil
	}
	return nil, qerr.NotImplementedf("eval: cast from Utf8 to %s is not supported", to)
}

// toString formats any supported array as Utf8: decimals at their scale,
// dates YYYY-MM-DD, floats in shortest round-trip form.
func toString(mem memory.Allocator, a arrow.Array) (arrow.Array, error) {
	n := a.Len()
	b := array.NewStringBuilder(mem)
	defer b.Release()
	b.Reserve(n)
	var scratch []byte
	switch a.DataType().ID() {
	case arrow.LARGE_STRING:
		s := a.(*array.LargeString)
		for i := 0; i < n; i++ {
			if s.IsNull(i) {
				b.AppendNull()
			} else {
				b.Append(s.Value(i))
			}
		}
		return b.NewArray(), nil
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64:
		i64, err := widenInt(context.Background(), mem, a)
		if err != nil {
			return nil, err
		}
		defer i64.Release()
		b.ReserveData(n * 8)
		for i, x := range values[int64](i64) {
			if a.IsNull(i) {
				b.AppendNull()
				continue
			}
			scratch = strconv.AppendInt(scratch[:0], x, 10)
			b.BinaryBuilder.Append(scratch)
		}
	case arrow.FLOAT64, arrow.FLOAT32:
		var f []float64
		if a.DataType().ID() == arrow.FLOAT32 {
			for _, x := range values[float32](a) {
				f = append(f, float64(x))
			}
		} else {
			f = values[float64](a)
		}
		for i, x := range f {
			if a.IsNull(i) {
				b.AppendNull()
				continue
			}
			scratch = appendFloat(scratch[:0], x)
			b.BinaryBuilder.Append(scratch)
		}
	case arrow.DECIMAL128:
		sc := a.DataType().(*arrow.Decimal128Type).Scale
		b.ReserveData(n * 8)
		for i, x := range values[decimal128.Num](a) {
			if a.IsNull(i) {
				b.AppendNull()
				continue
			}
			scratch = appendDecimal(scratch[:0], x, sc)
			b.BinaryBuilder.Append(scratch)
		}
	case arrow.DATE32:
		b.ReserveData(n * 10)
		for i, x := range values[int32](a) {
			if a.IsNull(i) {
				b.AppendNull()
				continue
			}
			scratch = temporal.AppendDate(scratch[:0], x)
			b.BinaryBuilder.Append(scratch)
		}
	case arrow.BOOL:
		v := a.(*array.Boolean)
		for i := 0; i < n; i++ {
			switch {
			case v.IsNull(i):
				b.AppendNull()
			case v.Value(i):
				b.Append("true")
			default:
				b.Append("false")
			}
		}
	case arrow.TIMESTAMP, arrow.TIME64, arrow.INTERVAL_MONTH_DAY_NANO:
		for i := 0; i < n; i++ {
			if a.IsNull(i) {
				b.AppendNull()
				continue
			}
			scratch, _ = appendTemporal(scratch[:0], a, i)
			b.BinaryBuilder.Append(scratch)
		}
	default:
		for i := 0; i < n; i++ {
			if a.IsNull(i) {
				b.AppendNull()
			} else {
				b.Append(a.ValueStr(i))
			}
		}
	}
	return b.NewArray(), nil
}

// appendFloat writes the shortest round-trip form, in plain notation for
// ordinary magnitudes (1234.5, 0.001) and exponent notation otherwise.
func appendFloat(dst []byte, x float64) []byte {
	switch {
	case math.IsNaN(x):
		return append(dst, "NaN"...)
	case math.IsInf(x, 1):
		return append(dst, "inf"...)
	case math.IsInf(x, -1):
		return append(dst, "-inf"...)
	}
	ax := math.Abs(x)
	if ax != 0 && (ax < 1e-6 || ax >= 1e21) {
		return strconv.AppendFloat(dst, x, 'e', -1, 64)
	}
	return strconv.AppendFloat(dst, x, 'f', -1, 64)
}
