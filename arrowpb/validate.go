package arrowpb

import (
	"encoding/binary"

	"github.com/quiverdb/quiver/qerr"
)

// Schema bytes arrive from the network inside plans. arrow-go's IPC reader
// trusts the counts written in them: a forged field or metadata count makes
// it call make() with that count (hundreds of gigabytes for a few bytes of
// input), and the Go runtime's out-of-memory error cannot be recovered. So
// before arrow-go sees the bytes, checkSchemaBytes walks the flatbuffer of
// the schema message and checks every offset, vector length and string
// length against the bytes actually present, and bounds the number of
// fields (a flatbuffer may point many times at the same table, so a small
// message can describe an exponential number of fields) and their nesting.
// What passes can make arrow-go allocate at most a small multiple of the
// message length.

const (
	// MaxSchemaFields bounds the fields of one schema, nested ones included.
	MaxSchemaFields = 1 << 16
	// MaxSchemaDepth bounds how deeply fields may nest (list of struct of ...).
	MaxSchemaDepth = 64
)

// Slots (vtable offsets) of the Arrow flatbuffer tables read here; they are
// fixed by the Arrow format (Message.fbs and Schema.fbs).
const (
	continuationToken = 0xFFFFFFFF

	msgHeaderType = 6 // Message.header_type (ubyte)
	msgHeader     = 8 // Message.header (table)
	msgBodyLength = 10
	msgMetadata   = 12
	headerSchema  = 1 // MessageHeader.Schema

	schemaFields   = 6
	schemaMetadata = 8
	schemaFeatures = 10

	fieldName       = 4
	fieldTypeType   = 8
	fieldType       = 10
	fieldDictionary = 12
	fieldChildren   = 14
	fieldMetadata   = 16

	kvKey   = 4
	kvValue = 6

	dictIndexType = 6

	typeTimestamp = 10 // Type.Timestamp: timezone string at slot 6
	typeUnion     = 14 // Type.Union: typeIds [int] at slot 6
	typeSlot1     = 6
)

// schemaErr is the error for malformed schema bytes: the message says what
// is wrong in terms of the bytes, which is all a peer sending them needs.
func schemaErr(format string, args ...any) error {
	return qerr.Internalf("codec: malformed Arrow schema: "+format, args...)
}

// checkSchemaBytes validates b, an Arrow IPC stream whose first message is
// a schema, before it is handed to arrow-go.
func checkSchemaBytes(b []byte) error {
	if len(b) < 8 {
		return schemaErr("%d bytes, shorter than a message header", len(b))
	}
	if binary.LittleEndian.Uint32(b) != continuationToken {
		return schemaErr("no continuation marker at the start")
	}
	n := int64(int32(binary.LittleEndian.Uint32(b[4:])))
	if n < 8 || n > int64(len(b)-8) {
		return schemaErr("message metadata of %d bytes in %d bytes of input", n, len(b))
	}
	v := &fbVerifier{buf: b[8 : 8+n]}
	root, err := v.root()
	if err != nil {
		return err
	}
	if t, err := v.scalar(root, msgHeaderType, 1); err != nil {
		return err
	} else if t != headerSchema {
		return schemaErr("first message is of type %d, not a schema", t)
	}
	if body, err := v.scalar(root, msgBodyLength, 8); err != nil {
		return err
	} else if body != 0 {
		// A schema message has no body; a forged length would make
		// arrow-go allocate it before reading.
		return schemaErr("schema message claims a body of %d bytes", int64(body))
	}
	if err := v.metadata(root, msgMetadata); err != nil {
		return err
	}
	schema, ok, err := v.table(root, msgHeader)
	if err != nil {
		return err
	}
	if !ok {
		return schemaErr("schema message without a schema")
	}
	if err := v.fieldVector(schema, schemaFields, 0); err != nil {
		return err
	}
	if err := v.metadata(schema, schemaMetadata); err != nil {
		return err
	}
	_, _, err = v.vector(schema, schemaFeatures, 8)
	return err
}

// fbVerifier checks a flatbuffer in buf; seen counts the tables visited so
// far against MaxSchemaFields (and a bound from the buffer length).
type fbVerifier struct {
	buf  []byte
	seen int
}

// tbl is a verified table: its position and the size of its inline part.
type tbl struct {
	pos, size int
	vt, vtLen int // its vtable and the vtable's length in bytes
}

func (v *fbVerifier) u32(pos int) (uint32, error) {
	if pos < 0 || pos > len(v.buf)-4 {
		return 0, schemaErr("offset %d out of %d bytes", pos, len(v.buf))
	}
	return binary.LittleEndian.Uint32(v.buf[pos:]), nil
}

func (v *fbVerifier) root() (tbl, error) {
	off, err := v.u32(0)
	if err != nil {
		return tbl{}, err
	}
	return v.tableAt(int64(off))
}

// tableAt verifies the table at pos: its vtable and inline part lie in buf.
func (v *fbVerifier) tableAt(pos int64) (tbl, error) {
	v.seen++
	// Every table starts with its own 4-byte vtable offset, so a count
	// above len/4 means tables are visited more than once (shared, possibly
	// exponentially often).
	if v.seen > MaxSchemaFields || v.seen > len(v.buf)/4+1 {
		return tbl{}, schemaErr("more than %d fields, types and metadata entries in %d bytes", v.seen-1, len(v.buf))
	}
	if pos < 0 || pos > int64(len(v.buf))-4 {
		return tbl{}, schemaErr("table at %d out of %d bytes", pos, len(v.buf))
	}
	p := int(pos)
	vt := int64(p) - int64(int32(binary.LittleEndian.Uint32(v.buf[p:])))
	if vt < 0 || vt > int64(len(v.buf))-4 {
		return tbl{}, schemaErr("vtable at %d out of %d bytes", vt, len(v.buf))
	}
	vtLen := int(binary.LittleEndian.Uint16(v.buf[vt:]))
	size := int(binary.LittleEndian.Uint16(v.buf[vt+2:]))
	if vtLen < 4 || vtLen%2 != 0 || int64(vtLen) > int64(len(v.buf))-vt {
		return tbl{}, schemaErr("vtable of %d bytes at %d out of %d bytes", vtLen, vt, len(v.buf))
	}
	if size < 4 || size > len(v.buf)-p {
		return tbl{}, schemaErr("table of %d bytes at %d out of %d bytes", size, p, len(v.buf))
	}
	return tbl{pos: p, size: size, vt: int(vt), vtLen: vtLen}, nil
}

// field returns the position of t's field at slot (a vtable offset) and
// whether it is present; a present field of width bytes lies in t.
func (v *fbVerifier) field(t tbl, slot, width int) (int, bool, error) {
	if slot+2 > t.vtLen {
		return 0, false, nil // slot beyond the vtable: the field is absent
	}
	off := int(binary.LittleEndian.Uint16(v.buf[t.vt+slot:]))
	if off == 0 {
		return 0, false, nil
	}
	if off+width > t.size {
		return 0, false, schemaErr("field of %d bytes at %d of a %d-byte table", width, off, t.size)
	}
	return t.pos + off, true, nil
}

// scalar reads an unsigned scalar of width 1, 2, 4 or 8 (0 when absent).
func (v *fbVerifier) scalar(t tbl, slot, width int) (uint64, error) {
	p, ok, err := v.field(t, slot, width)
	if err != nil || !ok {
		return 0, err
	}
	switch width {
	case 1:
		return uint64(v.buf[p]), nil
	case 2:
		return uint64(binary.LittleEndian.Uint16(v.buf[p:])), nil
	case 4:
		return uint64(binary.LittleEndian.Uint32(v.buf[p:])), nil
	}
	return binary.LittleEndian.Uint64(v.buf[p:]), nil
}

// target follows the offset field at slot to the position it points at.
func (v *fbVerifier) target(t tbl, slot int) (int64, bool, error) {
	p, ok, err := v.field(t, slot, 4)
	if err != nil || !ok {
		return 0, ok, err
	}
	return int64(p) + int64(binary.LittleEndian.Uint32(v.buf[p:])), true, nil
}

// table verifies the sub-table at slot.
func (v *fbVerifier) table(t tbl, slot int) (tbl, bool, error) {
	pos, ok, err := v.target(t, slot)
	if err != nil || !ok {
		return tbl{}, ok, err
	}
	st, err := v.tableAt(pos)
	return st, err == nil, err
}

// vectorAt verifies a vector of n elements of elem bytes at pos and returns
// the position of its first element and n.
func (v *fbVerifier) vectorAt(pos int64, elem int) (int, int, error) {
	if pos < 0 || pos > int64(len(v.buf))-4 {
		return 0, 0, schemaErr("vector at %d out of %d bytes", pos, len(v.buf))
	}
	n := int64(binary.LittleEndian.Uint32(v.buf[pos:]))
	if have := int64(len(v.buf)) - pos - 4; n*int64(elem) > have {
		return 0, 0, schemaErr("vector of %d elements of %d bytes in %d bytes", n, elem, have)
	}
	return int(pos) + 4, int(n), nil
}

// vector verifies the vector at slot (absent: length 0).
func (v *fbVerifier) vector(t tbl, slot, elem int) (int, int, error) {
	pos, ok, err := v.target(t, slot)
	if err != nil || !ok {
		return 0, 0, err
	}
	return v.vectorAt(pos, elem)
}

// tables verifies the vector of tables at slot and calls each on every one.
func (v *fbVerifier) tables(t tbl, slot int, each func(tbl) error) error {
	start, n, err := v.vector(t, slot, 4)
	if err != nil {
		return err
	}
	for i := range n {
		p := start + 4*i
		et, err := v.tableAt(int64(p) + int64(binary.LittleEndian.Uint32(v.buf[p:])))
		if err != nil {
			return err
		}
		if err := each(et); err != nil {
			return err
		}
	}
	return nil
}

// metadata verifies a [KeyValue] vector at slot.
func (v *fbVerifier) metadata(t tbl, slot int) error {
	return v.tables(t, slot, func(kv tbl) error {
		if _, _, err := v.vector(kv, kvKey, 1); err != nil {
			return err
		}
		_, _, err := v.vector(kv, kvValue, 1)
		return err
	})
}

// fieldVector verifies a [Field] vector at slot, at nesting depth.
func (v *fbVerifier) fieldVector(t tbl, slot, depth int) error {
	if depth >= MaxSchemaDepth {
		return schemaErr("fields nest more than %d levels deep", MaxSchemaDepth)
	}
	return v.tables(t, slot, func(f tbl) error { return v.fieldTable(f, depth) })
}

func (v *fbVerifier) fieldTable(f tbl, depth int) error {
	if _, _, err := v.vector(f, fieldName, 1); err != nil {
		return err
	}
	tt, err := v.scalar(f, fieldTypeType, 1)
	if err != nil {
		return err
	}
	if typ, ok, err := v.table(f, fieldType); err != nil {
		return err
	} else if ok {
		switch tt {
		case typeUnion:
			if _, _, err := v.vector(typ, typeSlot1, 4); err != nil {
				return err
			}
		case typeTimestamp:
			if _, _, err := v.vector(typ, typeSlot1, 1); err != nil {
				return err
			}
		}
	}
	if dict, ok, err := v.table(f, fieldDictionary); err != nil {
		return err
	} else if ok {
		if _, _, err := v.table(dict, dictIndexType); err != nil {
			return err
		}
	}
	if err := v.fieldVector(f, fieldChildren, depth+1); err != nil {
		return err
	}
	return v.metadata(f, fieldMetadata)
}
