package logical

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver/qerr"
)

// The Arrow types Quiver's SQL uses. Integer literals are Int64, literals with
// a decimal point are exact decimals, DATE is Date32, TIMESTAMP is a
// timestamp of microseconds without time zone, TIME is Time64 of
// microseconds, INTERVAL is a MonthDayNano interval.
var (
	Bool     arrow.DataType = arrow.FixedWidthTypes.Boolean
	Int32    arrow.DataType = arrow.PrimitiveTypes.Int32
	Int64    arrow.DataType = arrow.PrimitiveTypes.Int64
	Float64  arrow.DataType = arrow.PrimitiveTypes.Float64
	String   arrow.DataType = arrow.BinaryTypes.String
	Date     arrow.DataType = arrow.FixedWidthTypes.Date32
	Interval arrow.DataType = arrow.FixedWidthTypes.MonthDayNanoInterval
	// Timestamp has no time zone (arrow.FixedWidthTypes.Timestamp_us is UTC).
	Timestamp arrow.DataType = &arrow.TimestampType{Unit: arrow.Microsecond}
	// TimestampUTC is TIMESTAMPTZ in the time zone UTC.
	TimestampUTC arrow.DataType = &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
	Time         arrow.DataType = arrow.FixedWidthTypes.Time64us
	Null         arrow.DataType = arrow.Null
)

// MaxDecimalPrecision is the largest precision of a Decimal128.
const MaxDecimalPrecision = 38

// Decimal returns DECIMAL(p, s), capping p at 38.
func Decimal(p, s int32) arrow.DataType {
	if p > MaxDecimalPrecision {
		p = MaxDecimalPrecision
	}
	if p < s {
		p = s
	}
	if p < 1 {
		p = 1
	}
	return &arrow.Decimal128Type{Precision: p, Scale: s}
}

// TypeString is the SQL spelling of an Arrow type, as EXPLAIN and DESCRIBE show it.
func TypeString(t arrow.DataType) string {
	switch t := t.(type) {
	case *arrow.Decimal128Type:
		return fmt.Sprintf("Decimal128(%d, %d)", t.Precision, t.Scale)
	case *arrow.ListType:
		return "List(" + TypeString(t.Elem()) + ")"
	case nil:
		return "<nil>"
	}
	switch t.ID() {
	case arrow.BOOL:
		return "Boolean"
	case arrow.INT8:
		return "Int8"
	case arrow.INT16:
		return "Int16"
	case arrow.INT32:
		return "Int32"
	case arrow.INT64:
		return "Int64"
	case arrow.FLOAT32:
		return "Float32"
	case arrow.FLOAT64:
		return "Float64"
	case arrow.STRING, arrow.LARGE_STRING:
		return "Utf8"
	case arrow.DATE32:
		return "Date32"
	case arrow.NULL:
		return "Null"
	case arrow.INTERVAL_MONTH_DAY_NANO:
		return "Interval"
	case arrow.TIMESTAMP:
		if arrow.TypeEqual(t, Timestamp) {
			return "Timestamp"
		}
		if ts := t.(*arrow.TimestampType); ts.Unit == arrow.Microsecond && ts.TimeZone != "" {
			return "TimestampTZ(" + ts.TimeZone + ")"
		}
	case arrow.TIME64:
		if arrow.TypeEqual(t, Time) {
			return "Time"
		}
	}
	return t.String()
}

// numeric class, ordered by how operands are widened: int < decimal < float.
type numClass int

const (
	notNumeric numClass = iota
	classInt
	classDecimal
	classFloat
)

func classOf(t arrow.DataType) numClass {
	switch t.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64:
		return classInt
	case arrow.DECIMAL128:
		return classDecimal
	case arrow.FLOAT32, arrow.FLOAT64:
		return classFloat
	}
	return notNumeric
}

// IsNumeric reports whether t is an integer, decimal or float type.
func IsNumeric(t arrow.DataType) bool { return classOf(t) != notNumeric }

// IsInteger reports whether t is an integer type.
func IsInteger(t arrow.DataType) bool { return classOf(t) == classInt }

// IsDecimal reports whether t is a Decimal128.
func IsDecimal(t arrow.DataType) bool { return t.ID() == arrow.DECIMAL128 }

// IsString reports whether t is a string type.
func IsString(t arrow.DataType) bool { return t.ID() == arrow.STRING || t.ID() == arrow.LARGE_STRING }

// DecimalOf returns the decimal an integer or decimal type widens to without loss.
func DecimalOf(t arrow.DataType) *arrow.Decimal128Type {
	switch t.ID() {
	case arrow.DECIMAL128:
		return t.(*arrow.Decimal128Type)
	case arrow.INT8:
		return &arrow.Decimal128Type{Precision: 3}
	case arrow.INT16:
		return &arrow.Decimal128Type{Precision: 5}
	case arrow.INT32:
		return &arrow.Decimal128Type{Precision: 10}
	default:
		return &arrow.Decimal128Type{Precision: 20}
	}
}

// CommonNumeric returns the type two numeric operands are widened to before a
// comparison or an arithmetic operator: Int32 with Int32 stays Int32, other
// integers are Int64, an integer with a decimal becomes the decimal the integer
// widens to (see DecimalOf; the operator kernels accept decimals of different
// scales), anything with a float is Float64.
func CommonNumeric(l, r arrow.DataType) (arrow.DataType, bool) {
	cl, cr := classOf(l), classOf(r)
	if cl == notNumeric || cr == notNumeric {
		return nil, false
	}
	c := max(cl, cr)
	switch c {
	case classFloat:
		return Float64, true
	case classDecimal:
		// The operands keep their own precision and scale; callers cast integers with DecimalOf.
		return nil, true
	default:
		if l.ID() == arrow.INT32 && r.ID() == arrow.INT32 {
			return Int32, true
		}
		return Int64, true
	}
}

// ArithmeticType returns the result type of l op r for + - * / %, where l and r
// are already coerced (both the same integer type, both Float64, or both
// decimals of any precision and scale), or a date with an interval, an
// integer or a date. A date ± an interval is a timestamp (PostgreSQL,
// DuckDB): the interval may carry hours; a date ± an integer stays a date.
//
// Decimal rules (SQL / DataFusion): + and - give scale max(s1,s2) and precision
// max(p1-s1, p2-s2) + max(s1,s2) + 1; * gives (p1+p2, s1+s2); / gives Float64
// (as DuckDB, whose answers the TPC-H files hold); % gives the + rule.
// Precision caps at 38. Int / Int is integer division (truncating toward zero).
func ArithmeticType(op BinaryOp, l, r arrow.DataType) (arrow.DataType, error) {
	if t, ok := temporalArithmetic(op, l, r); ok {
		return t, nil
	}
	if l.ID() == arrow.DATE32 {
		switch {
		case r.ID() == arrow.INTERVAL_MONTH_DAY_NANO && (op == OpAdd || op == OpSub):
			return Timestamp, nil
		case r.ID() == arrow.DATE32 && op == OpSub:
			return Int64, nil
		case IsInteger(r) && (op == OpAdd || op == OpSub):
			return Date, nil
		}
	}
	if l.ID() == arrow.INTERVAL_MONTH_DAY_NANO && r.ID() == arrow.DATE32 && op == OpAdd {
		return Timestamp, nil
	}
	if l.ID() == arrow.NULL {
		return r, nil
	}
	if r.ID() == arrow.NULL {
		return l, nil
	}
	if IsDecimal(l) && IsDecimal(r) {
		a, b := l.(*arrow.Decimal128Type), r.(*arrow.Decimal128Type)
		switch op {
		case OpMul:
			return Decimal(a.Precision+b.Precision, a.Scale+b.Scale), nil
		case OpDiv:
			return Float64, nil
		default:
			s := max(a.Scale, b.Scale)
			return Decimal(max(a.Precision-a.Scale, b.Precision-b.Scale)+s+1, s), nil
		}
	}
	if classOf(l) == classFloat && classOf(r) == classFloat {
		return Float64, nil
	}
	if IsInteger(l) && IsInteger(r) && arrow.TypeEqual(l, r) {
		return l, nil
	}
	return nil, qerr.Planf("cannot apply %s to %s and %s", op, TypeString(l), TypeString(r))
}

// AggregateType returns the result type of an aggregate function over an
// argument of type t: count → Int64; sum of integers → Int64, of
// DECIMAL(p,s) → DECIMAL(38,s), of floats → Float64; avg → Float64 (also for
// decimals, as DuckDB); min and max keep t.
func AggregateType(fn AggFunc, t arrow.DataType) (arrow.DataType, error) {
	switch fn {
	case AggCount:
		return Int64, nil
	case AggSum:
		switch classOf(t) {
		case classInt:
			return Int64, nil
		case classDecimal:
			return Decimal(MaxDecimalPrecision, t.(*arrow.Decimal128Type).Scale), nil
		case classFloat:
			return Float64, nil
		}
		if t.ID() == arrow.NULL {
			return Int64, nil
		}
	case AggAvg:
		if IsNumeric(t) || t.ID() == arrow.NULL {
			return Float64, nil
		}
	case AggMin, AggMax, AggAnyValue:
		return t, nil
	case AggStringAgg:
		return String, nil
	case AggArrayAgg:
		if t.ID() == arrow.NULL {
			t = Int64
		}
		return arrow.ListOf(t), nil
	case AggBoolAnd, AggBoolOr:
		if t.ID() == arrow.BOOL || t.ID() == arrow.NULL {
			return Bool, nil
		}
	case AggBitAnd, AggBitOr, AggBitXor:
		if IsInteger(t) {
			return t, nil
		}
		if t.ID() == arrow.NULL {
			return Int64, nil
		}
	case AggVarSamp, AggVarPop, AggStddevSamp, AggStddevPop, AggCovarPop, AggCovarSamp, AggCorr, AggPercentileCont, AggPercentileDisc:
		if IsNumeric(t) || t.ID() == arrow.NULL {
			return Float64, nil
		}
	}
	return nil, qerr.Planf("function %s does not accept %s", fn, TypeString(t))
}
