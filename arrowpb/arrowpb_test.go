package arrowpb

import (
	"encoding/binary"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/quiverdb/quiver/qerr"
	"github.com/quiverdb/quiver/rpc"
	"google.golang.org/protobuf/proto"
)

// testSchemas are schemas of the shapes plans carry: flat TPC-H-like
// columns, nested types, a time zone, a union, a dictionary and metadata.
func testSchemas() []*arrow.Schema {
	md := arrow.NewMetadata([]string{"k", "origin"}, []string{"v", "quiver"})
	return []*arrow.Schema{
		arrow.NewSchema(nil, nil),
		arrow.NewSchema([]arrow.Field{
			{Name: "l_orderkey", Type: arrow.PrimitiveTypes.Int64},
			{Name: "l_extendedprice", Type: &arrow.Decimal128Type{Precision: 15, Scale: 2}, Nullable: true},
			{Name: "l_shipdate", Type: arrow.FixedWidthTypes.Date32},
			{Name: "l_comment", Type: arrow.BinaryTypes.String, Nullable: true},
		}, nil),
		arrow.NewSchema([]arrow.Field{
			{Name: "l", Type: arrow.ListOf(arrow.StructOf(arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Float64}))},
			{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "Europe/Paris"}, Metadata: md},
			{Name: "u", Type: arrow.SparseUnionOf([]arrow.Field{{Name: "i", Type: arrow.PrimitiveTypes.Int32}, {Name: "s", Type: arrow.BinaryTypes.String}}, []arrow.UnionTypeCode{3, 7})},
			{Name: "d", Type: &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: arrow.BinaryTypes.String}},
			{Name: "m", Type: arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int64)},
		}, &md),
	}
}

func TestSchemaRoundTrip(t *testing.T) {
	for _, s := range testSchemas() {
		b, err := EncodeSchema(s)
		if err != nil {
			t.Fatal(err)
		}
		got, err := DecodeSchema(b)
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		if !got.Equal(s) {
			t.Fatalf("got %s, want %s", got, s)
		}
	}
}

// schemaVector returns the position in b of the length word of the vector
// at slot of the table reached by following slots from the message root
// (each a sub-table, the last a vector).
func schemaVector(t *testing.T, b []byte, path ...int) int {
	t.Helper()
	v := &fbVerifier{buf: b[8:]}
	tb, err := v.root()
	if err != nil {
		t.Fatal(err)
	}
	for _, slot := range path[:len(path)-1] {
		var ok bool
		if slot < 0 { // first element of a vector of tables at -slot
			start, n, err := v.vector(tb, -slot, 4)
			if err != nil || n == 0 {
				t.Fatalf("no vector at %d: %v", -slot, err)
			}
			tb, err = v.tableAt(int64(start) + int64(binary.LittleEndian.Uint32(v.buf[start:])))
			if err != nil {
				t.Fatal(err)
			}
			continue
		}
		if tb, ok, err = v.table(tb, slot); err != nil || !ok {
			t.Fatalf("no table at %d: %v", slot, err)
		}
	}
	pos, ok, err := v.target(tb, path[len(path)-1])
	if err != nil || !ok {
		t.Fatalf("no vector at %d: %v", path[len(path)-1], err)
	}
	return int(pos) + 8
}

// TestDecodeSchemaForgedCounts is the regression test of the crash where
// a forged field count made arrow-go ask for ~377 GB (a fatal error, not a
// panic): every count and length of the schema message, forged, is an
// error naming the malformed schema.
func TestDecodeSchemaForgedCounts(t *testing.T) {
	s := testSchemas()[2]
	good, err := EncodeSchema(s)
	if err != nil {
		t.Fatal(err)
	}
	forge := func(pos int, v uint32) []byte {
		b := append([]byte(nil), good...)
		binary.LittleEndian.PutUint32(b[pos:], v)
		return b
	}
	cases := map[string][]byte{
		"field count":       forge(schemaVector(t, good, msgHeader, schemaFields), 0xFFFFFFF0),
		"schema metadata":   forge(schemaVector(t, good, msgHeader, schemaMetadata), 1<<30),
		"children count":    forge(schemaVector(t, good, msgHeader, -schemaFields, fieldChildren), 0x7FFFFFFF),
		"field name length": forge(schemaVector(t, good, msgHeader, -schemaFields, fieldName), 0xFFFFFFFF),
		"message length":    forge(4, 0x7FFFFFF0),
		"negative length":   forge(4, 0x80000000),
		"no continuation":   forge(0, 0x12345678),
		"root offset":       forge(8, 0xFFFFFF00),
		"truncated":         good[:len(good)/2],
		"short":             good[:6],
	}
	// The message table's scalars: the header type and the body length.
	scalar := func(slot int, put func(b []byte)) []byte {
		v := &fbVerifier{buf: append([]byte(nil), good[8:]...)}
		root, err := v.root()
		if err != nil {
			t.Fatal(err)
		}
		p, ok, err := v.field(root, slot, 1)
		if err != nil || !ok {
			return nil
		}
		put(v.buf[p:])
		return append(append([]byte(nil), good[:8]...), v.buf...)
	}
	cases["not a schema"] = scalar(msgHeaderType, func(b []byte) { b[0] = 3 }) // a record batch
	if b := scalar(msgBodyLength, func(b []byte) { binary.LittleEndian.PutUint64(b, 1<<40) }); b != nil {
		cases["body length"] = b
	}
	for name, b := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := DecodeSchema(b)
			if err == nil {
				t.Fatalf("decoded %s, want an error", got)
			}
			if qerr.KindOf(err) != qerr.Internal || !strings.Contains(err.Error(), "codec:") {
				t.Fatalf("error %v: want a codec error", err)
			}
		})
	}
}

// TestDecodeSchemaPrefixesAndFlips decodes every prefix and every single
// byte change of valid schemas: each is a schema or an error, never a crash.
func TestDecodeSchemaPrefixesAndFlips(t *testing.T) {
	for _, s := range testSchemas() {
		good, err := EncodeSchema(s)
		if err != nil {
			t.Fatal(err)
		}
		for i := range good {
			DecodeSchema(good[:i])
			for _, x := range []byte{0xFF, 0x80, 0x01} {
				b := append([]byte(nil), good...)
				b[i] ^= x
				DecodeSchema(b)
			}
		}
	}
}

func TestDecodeSchemaDepth(t *testing.T) {
	typ := arrow.DataType(arrow.PrimitiveTypes.Int32)
	for range MaxSchemaDepth + 1 {
		typ = arrow.ListOf(typ)
	}
	b, err := EncodeSchema(arrow.NewSchema([]arrow.Field{{Name: "deep", Type: typ}}, nil))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := DecodeSchema(b); err == nil || !strings.Contains(err.Error(), "nest more than") {
		t.Fatalf("got %v, want a nesting error", err)
	}
}

func TestTypeAndLiteralRoundTrip(t *testing.T) {
	cases := []struct {
		t arrow.DataType
		v any
	}{
		{arrow.PrimitiveTypes.Int64, int64(7)},
		{arrow.PrimitiveTypes.Int32, int32(-1)},
		{arrow.FixedWidthTypes.Boolean, true},
		{arrow.BinaryTypes.String, "x"},
		{&arrow.Decimal128Type{Precision: 12, Scale: 2}, decimal128.FromI64(1234)},
		{arrow.FixedWidthTypes.Date32, arrow.Date32(9000)},
		{arrow.FixedWidthTypes.MonthDayNanoInterval, arrow.MonthDayNanoInterval{Months: 1, Days: 2, Nanoseconds: 3}},
		{&arrow.TimestampType{Unit: arrow.Second}, nil},
	}
	for _, c := range cases {
		m, err := EncodeLiteral(c.t, c.v)
		if err != nil {
			t.Fatal(err)
		}
		b, err := proto.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		var back rpc.Literal
		if err := proto.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		gt, gv, err := DecodeLiteral(&back)
		if err != nil {
			t.Fatalf("%s %v: %v", c.t, c.v, err)
		}
		if !arrow.TypeEqual(gt, c.t) || gv != c.v {
			t.Fatalf("got %s %v, want %s %v", gt, gv, c.t, c.v)
		}
	}
}

// checkDecodeErr fails t unless err is a codec error (kind Internal: the
// bytes did not come from a correct peer).
func checkDecodeErr(t *testing.T, err error) {
	t.Helper()
	if qerr.KindOf(err) != qerr.Internal || !strings.Contains(err.Error(), "codec:") {
		t.Fatalf("error of kind %v: %v", qerr.KindOf(err), err)
	}
}

// FuzzDecodeSchema: any bytes decode to a schema that re-encodes, or to a
// codec error; never a panic or a huge allocation.
func FuzzDecodeSchema(f *testing.F) {
	for _, s := range testSchemas() {
		b, err := EncodeSchema(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := DecodeSchema(b)
		if err != nil {
			checkDecodeErr(t, err)
			return
		}
		if _, err := EncodeSchema(s); err != nil {
			t.Fatalf("re-encode %s: %v", s, err)
		}
	})
}

// FuzzDecodeType decodes an rpc.ArrowType message.
func FuzzDecodeType(f *testing.F) {
	for _, typ := range []arrow.DataType{arrow.PrimitiveTypes.Int64, &arrow.Decimal128Type{Precision: 9, Scale: 3},
		&arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"}, arrow.ListOf(arrow.BinaryTypes.String)} {
		m, err := EncodeType(typ)
		if err != nil {
			f.Fatal(err)
		}
		b, err := proto.Marshal(m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var m rpc.ArrowType
		if proto.Unmarshal(b, &m) != nil {
			return
		}
		typ, err := DecodeType(&m)
		if err != nil {
			checkDecodeErr(t, err)
			return
		}
		if _, err := EncodeType(typ); err != nil {
			t.Fatalf("re-encode %s: %v", typ, err)
		}
	})
}

// FuzzDecodeLiteral decodes an rpc.Literal message.
func FuzzDecodeLiteral(f *testing.F) {
	for _, l := range []struct {
		t arrow.DataType
		v any
	}{
		{arrow.PrimitiveTypes.Int64, int64(1)}, {arrow.BinaryTypes.String, "abc"},
		{&arrow.Decimal128Type{Precision: 15, Scale: 2}, decimal128.FromI64(-5)},
		{arrow.FixedWidthTypes.MonthDayNanoInterval, arrow.MonthDayNanoInterval{Days: 90}},
	} {
		m, err := EncodeLiteral(l.t, l.v)
		if err != nil {
			f.Fatal(err)
		}
		b, err := proto.Marshal(m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var m rpc.Literal
		if proto.Unmarshal(b, &m) != nil {
			return
		}
		typ, v, err := DecodeLiteral(&m)
		if err != nil {
			checkDecodeErr(t, err)
			return
		}
		if _, err := EncodeLiteral(typ, v); err != nil {
			t.Fatalf("re-encode %s %v: %v", typ, v, err)
		}
	})
}

// TestLiteralValueMatchesType: a literal whose value does not fit its type
// (operators would take the value as the type says) is refused.
func TestLiteralValueMatchesType(t *testing.T) {
	for name, m := range map[string]*rpc.Literal{
		"string as int64": {Type: &rpc.ArrowType{Id: int32(arrow.INT64)}, Value: &rpc.Literal_StringValue{StringValue: "x"}},
		"int64 as date":   {Type: &rpc.ArrowType{Id: int32(arrow.DATE32)}, Value: &rpc.Literal_Int64Value{Int64Value: 1}},
		"bool as string":  {Type: &rpc.ArrowType{Id: int32(arrow.STRING)}, Value: &rpc.Literal_BoolValue{BoolValue: true}},
	} {
		if _, _, err := DecodeLiteral(m); err == nil {
			t.Errorf("%s: decoded, want an error", name)
		}
	}
}
