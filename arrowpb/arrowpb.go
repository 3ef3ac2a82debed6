package arrowpb

import (
	"bytes"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver/qerr"
	"github.com/quiverdb/quiver/rpc"
)

// simpleTypes are the parameter-free Arrow types encoded by id alone.
var simpleTypes = map[arrow.Type]arrow.DataType{
	arrow.NULL:                    arrow.Null,
	arrow.BOOL:                    arrow.FixedWidthTypes.Boolean,
	arrow.INT8:                    arrow.PrimitiveTypes.Int8,
	arrow.INT16:                   arrow.PrimitiveTypes.Int16,
	arrow.INT32:                   arrow.PrimitiveTypes.Int32,
	arrow.INT64:                   arrow.PrimitiveTypes.Int64,
	arrow.UINT8:                   arrow.PrimitiveTypes.Uint8,
	arrow.UINT16:                  arrow.PrimitiveTypes.Uint16,
	arrow.UINT32:                  arrow.PrimitiveTypes.Uint32,
	arrow.UINT64:                  arrow.PrimitiveTypes.Uint64,
	arrow.FLOAT16:                 arrow.FixedWidthTypes.Float16,
	arrow.FLOAT32:                 arrow.PrimitiveTypes.Float32,
	arrow.FLOAT64:                 arrow.PrimitiveTypes.Float64,
	arrow.STRING:                  arrow.BinaryTypes.String,
	arrow.BINARY:                  arrow.BinaryTypes.Binary,
	arrow.LARGE_STRING:            arrow.BinaryTypes.LargeString,
	arrow.LARGE_BINARY:            arrow.BinaryTypes.LargeBinary,
	arrow.STRING_VIEW:             arrow.BinaryTypes.StringView,
	arrow.BINARY_VIEW:             arrow.BinaryTypes.BinaryView,
	arrow.DATE32:                  arrow.FixedWidthTypes.Date32,
	arrow.DATE64:                  arrow.FixedWidthTypes.Date64,
	arrow.INTERVAL_MONTHS:         arrow.FixedWidthTypes.MonthInterval,
	arrow.INTERVAL_DAY_TIME:       arrow.FixedWidthTypes.DayTimeInterval,
	arrow.INTERVAL_MONTH_DAY_NANO: arrow.FixedWidthTypes.MonthDayNanoInterval,
}

// EncodeType encodes an Arrow data type (see rpc.ArrowType).
func EncodeType(t arrow.DataType) (*rpc.ArrowType, error) {
	if t == nil {
		return nil, qerr.Internalf("codec: missing Arrow type")
	}
	if d, ok := t.(*arrow.Decimal128Type); ok {
		return &rpc.ArrowType{Id: int32(arrow.DECIMAL128), Precision: d.Precision, Scale: d.Scale}, nil
	}
	if s, ok := simpleTypes[t.ID()]; ok && arrow.TypeEqual(s, t) {
		return &rpc.ArrowType{Id: int32(t.ID())}, nil
	}
	b, err := EncodeSchema(arrow.NewSchema([]arrow.Field{{Name: "t", Type: t, Nullable: true}}, nil))
	if err != nil {
		return nil, err
	}
	return &rpc.ArrowType{Id: int32(t.ID()), Field: b}, nil
}

// DecodeType decodes an Arrow data type; a missing type is an error.
func DecodeType(m *rpc.ArrowType) (arrow.DataType, error) {
	if m == nil {
		return nil, qerr.Internalf("codec: missing Arrow type")
	}
	if len(m.Field) > 0 {
		s, err := DecodeSchema(m.Field)
		if err != nil {
			return nil, err
		}
		if s.NumFields() != 1 {
			return nil, qerr.Internalf("codec: Arrow type schema has %d fields, want 1", s.NumFields())
		}
		return s.Field(0).Type, nil
	}
	id := arrow.Type(m.Id)
	if id == arrow.DECIMAL128 {
		if m.Precision < 1 || m.Precision > 38 || m.Scale < 0 || m.Scale > m.Precision {
			return nil, qerr.Internalf("codec: invalid DECIMAL(%d, %d)", m.Precision, m.Scale)
		}
		return &arrow.Decimal128Type{Precision: m.Precision, Scale: m.Scale}, nil
	}
	if t, ok := simpleTypes[id]; ok {
		return t, nil
	}
	return nil, qerr.Internalf("codec: unknown Arrow type id %d", m.Id)
}

// EncodeSchema serialises an Arrow schema as an Arrow IPC stream holding
// only the schema message.
func EncodeSchema(s *arrow.Schema) ([]byte, error) {
	if s == nil {
		return nil, qerr.Internalf("codec: missing schema")
	}
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(s), ipc.WithAllocator(memory.DefaultAllocator))
	if err := w.Close(); err != nil {
		return nil, qerr.Internalf("codec: encode schema: %w", err)
	}
	return buf.Bytes(), nil
}

// DecodeSchema reads a schema written by EncodeSchema. The bytes may come
// from anyone: they are checked (checkSchemaBytes) before arrow-go reads
// them, and arrow-go's own limits are set to their length.
func DecodeSchema(b []byte) (s *arrow.Schema, err error) {
	if len(b) == 0 {
		return nil, qerr.Internalf("codec: missing schema")
	}
	if err := checkSchemaBytes(b); err != nil {
		return nil, err
	}
	defer func() {
		if r := recover(); r != nil {
			s, err = nil, qerr.Internalf("codec: decode schema: %v", r)
		}
	}()
	r, err := ipc.NewReader(bytes.NewReader(b), ipc.WithAllocator(memory.DefaultAllocator),
		ipc.WithMetadataSizeLimit(int64(len(b))), ipc.WithBodySizeLimit(int64(len(b))))
	if err != nil {
		return nil, qerr.Internalf("codec: decode schema: %w", err)
	}
	defer r.Release()
	return r.Schema(), nil
}

// encodeLiteral encodes a typed constant; value follows the physical.Literal
// convention (nil, bool, int32, int64, float64, string, decimal128.Num,
// arrow.Date32, arrow.Timestamp, arrow.Time64, arrow.MonthDayNanoInterval).
func EncodeLiteral(t arrow.DataType, value any) (*rpc.Literal, error) {
	mt, err := EncodeType(t)
	if err != nil {
		return nil, err
	}
	m := &rpc.Literal{Type: mt}
	switch v := value.(type) {
	case nil:
	case bool:
		m.Value = &rpc.Literal_BoolValue{BoolValue: v}
	case int32:
		m.Value = &rpc.Literal_Int32Value{Int32Value: v}
	case int64:
		m.Value = &rpc.Literal_Int64Value{Int64Value: v}
	case float64:
		m.Value = &rpc.Literal_Float64Value{Float64Value: v}
	case string:
		m.Value = &rpc.Literal_StringValue{StringValue: v}
	case decimal128.Num:
		m.Value = &rpc.Literal_DecimalValue{DecimalValue: &rpc.Decimal128Value{Hi: v.HighBits(), Lo: v.LowBits()}}
	case arrow.Date32:
		m.Value = &rpc.Literal_Date32Value{Date32Value: int32(v)}
	case arrow.Timestamp: // microseconds, as an int64 of the timestamp type
		m.Value = &rpc.Literal_Int64Value{Int64Value: int64(v)}
	case arrow.Time64:
		m.Value = &rpc.Literal_Int64Value{Int64Value: int64(v)}
	case arrow.MonthDayNanoInterval:
		m.Value = &rpc.Literal_IntervalValue{IntervalValue: &rpc.IntervalValue{Months: v.Months, Days: v.Days, Nanoseconds: v.Nanoseconds}}
	default:
		return nil, qerr.Internalf("codec: literal of type %s holds unsupported Go value %T", t, value)
	}
	return m, nil
}

func DecodeLiteral(m *rpc.Literal) (arrow.DataType, any, error) {
	if m == nil {
		return nil, nil, qerr.Internalf("codec: missing literal")
	}
	t, err := DecodeType(m.Type)
	if err != nil {
		return nil, nil, err
	}
	if err := checkLiteralType(t, m.Value); err != nil {
		return nil, nil, err
	}
	switch v := m.Value.(type) {
	case nil:
		return t, nil, nil
	case *rpc.Literal_BoolValue:
		return t, v.BoolValue, nil
	case *rpc.Literal_Int32Value:
		return t, v.Int32Value, nil
	case *rpc.Literal_Int64Value:
		switch t.ID() {
		case arrow.TIMESTAMP:
			return t, arrow.Timestamp(v.Int64Value), nil
		case arrow.TIME64:
			return t, arrow.Time64(v.Int64Value), nil
		}
		return t, v.Int64Value, nil
	case *rpc.Literal_Float64Value:
		return t, v.Float64Value, nil
	case *rpc.Literal_StringValue:
		return t, v.StringValue, nil
	case *rpc.Literal_DecimalValue:
		if v.DecimalValue == nil {
			return nil, nil, qerr.Internalf("codec: empty decimal literal")
		}
		if t.ID() != arrow.DECIMAL128 {
			return nil, nil, qerr.Internalf("codec: decimal literal of type %s", t)
		}
		return t, decimal128.New(v.DecimalValue.Hi, v.DecimalValue.Lo), nil
	case *rpc.Literal_Date32Value:
		return t, arrow.Date32(v.Date32Value), nil
	case *rpc.Literal_IntervalValue:
		if v.IntervalValue == nil {
			return nil, nil, qerr.Internalf("codec: empty interval literal")
		}
		iv := v.IntervalValue
		return t, arrow.MonthDayNanoInterval{Months: iv.Months, Days: iv.Days, Nanoseconds: iv.Nanoseconds}, nil
	}
	return nil, nil, qerr.Internalf("codec: unknown literal value %T", m.Value)
}

// literalTypes are the Arrow types each kind of literal value may have (the
// pairs the planner makes). Operators take a literal's Go value by its
// type, so a forged pair (an INT64 literal holding a string) must not pass.
var literalTypes = map[string][]arrow.Type{
	"bool":     {arrow.BOOL},
	"int32":    {arrow.INT32},
	"int64":    {arrow.INT64, arrow.TIMESTAMP, arrow.TIME64},
	"float64":  {arrow.FLOAT64},
	"string":   {arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW},
	"decimal":  {arrow.DECIMAL128},
	"date32":   {arrow.DATE32},
	"interval": {arrow.INTERVAL_MONTH_DAY_NANO},
}

func checkLiteralType(t arrow.DataType, v any) error {
	var kind string
	switch v.(type) {
	case nil:
		return nil // NULL of any type
	case *rpc.Literal_BoolValue:
		kind = "bool"
	case *rpc.Literal_Int32Value:
		kind = "int32"
	case *rpc.Literal_Int64Value:
		kind = "int64"
	case *rpc.Literal_Float64Value:
		kind = "float64"
	case *rpc.Literal_StringValue:
		kind = "string"
	case *rpc.Literal_DecimalValue:
		kind = "decimal"
	case *rpc.Literal_Date32Value:
		kind = "date32"
	case *rpc.Literal_IntervalValue:
		kind = "interval"
	default:
		return nil // unknown kinds are refused by the caller
	}
	for _, id := range literalTypes[kind] {
		if t.ID() == id {
			return nil
		}
	}
	return qerr.Internalf("codec: %s literal of type %s", kind, t)
}
