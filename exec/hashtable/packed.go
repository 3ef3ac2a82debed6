package hashtable

import (
	"encoding/binary"
	"math"
	"math/bits"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver/exec/kernel"
)

// The packed layout. A key of two or more integer-like columns (q9's
// (ps_partkey, ps_suppkey), q3's (l_orderkey, o_orderdate, o_shippriority)),
// or of short strings and integers (q1's one-letter flags), is packed into
// one int64 (a string by its code: length and up to maxCodeLen bytes): per column a field of width bits holding the
// value minus the column's base, the first column in the highest field. The
// packed value then goes through the integer layouts (direct or hashed,
// the same code as one integer key), which cost a fraction of the generic
// layout's row hashes, tags and candidate rounds.
//
// Packed keys lie in [0, 2^63): a row whose packed value is negative (bit
// 63 set: a NULL, or a value outside its field) can never be present, so
// find resolves it to noID through the ordinary integer lookup.
//
// The fields are chosen at the first insert from the rows' ranges, with
// headroom. An insert bringing a value outside its field re-packs: new
// fields covering the stored keys and the new rows, and the integer layout
// rebuilt from the stored key columns (ids unchanged). Fields double at
// least at each re-pack, so their cost is amortised. A column that may hold
// NULL (by its statistics, or once an inserted key holds one) gets a
// nullable field, whose code 0 is NULL and whose values start at 1, so
// grouping keeps NULL equal to NULL without leaving the layout (q97's
// customer keys). When the fields would need more than 63 bits or a string
// has no code, the table falls back for good to the generic layout, rebuilt
// from the stored keys.

// packField is one key column's place in the packed key.
type packField struct {
	base     int64
	width    uint // bits; the field holds values base .. base+2^width-1
	shift    uint // the field's lowest bit in the packed key
	nullable bool // code 0 (the value base) is NULL, never a value
}

// packedInts is the packed layout: the fields (chosen once rows arrive),
// and the integer layout (directInts or hashedInts) the packed keys use.
type packedInts struct {
	fields  []packField
	set     bool // fields chosen (at the first insert with rows)
	repacks int  // times the fields were widened (for tests)
	ints    layout
}

func (pk *packedInts) memSize() int64 { return pk.ints.memSize() }

// worstCase adds to the integer layout's growth a re-pack's packed keys
// and ids and the stored keys copied, or the fall back to generic slots
// and hashes.
func (pk *packedInts) worstCase(t *Table, cols []arrow.Array, n int) int64 {
	need := t.n + n
	grow := pk.ints.worstCase(t, cols, n)
	grow += int64(need)*(8+4) + 8*int64(SlotsFor(need)) + 16*int64(need)
	for _, k := range t.Keys {
		grow += k.memSize()
	}
	return grow
}

// maxPackedBits keeps packed keys non-negative int64s.
const maxPackedBits = 63

// packable reports whether keys of types can use the packed layout: two or
// more integer-like columns, or any number with at least one string column
// (a string is packed by its code, see stringCode; one integer column alone
// uses the integer layout directly).
func packable(types []arrow.DataType) bool {
	strs := 0
	for _, dt := range types {
		switch {
		case dt.ID() == arrow.STRING:
			strs++
		case !isIntLike(dt):
			return false
		}
	}
	return len(types) >= 2 || strs > 0
}

// maxCodeLen is the longest string that has a code.
const maxCodeLen = 7

// stringCodes writes the code of row r of a string array into dst[r] for
// the rows of sel (nil: all n): its length in the low 3 bits and its bytes
// above (the first byte lowest), so equal codes mean equal strings and
// short strings of one length (flags, codes) span a narrow range. A string longer than
// maxCodeLen has no code; stringCodes reports false if a row has one (its
// dst entry is then meaningless). NULL rows get the code of their slot's
// bytes, which the callers ignore through validity.
func stringCodes(a *array.String, n int, sel []int32, dst []int64) bool {
	offs := a.ValueOffsets()
	data := a.ValueBytes()
	base := offs[0]
	long := false
	for k := range rowCount(n, sel) {
		r := rowAt(sel, k)
		lo, hi := offs[r]-base, offs[r+1]-base
		l := hi - lo
		if l > maxCodeLen {
			long = true
			continue
		}
		var c uint64
		if int(lo)+8 <= len(data) {
			// One load and a mask (l <= 7, so the shift is below 64).
			c = binary.LittleEndian.Uint64(data[lo:]) & (1<<(8*uint(l)) - 1) << 3
		} else {
			for i := int32(0); i < l; i++ {
				c |= uint64(data[lo+i]) << (8*i + 3)
			}
		}
		dst[r] = int64(c | uint64(l))
	}
	return !long
}

// colRange is a column's smallest and largest value (as int64) over some rows.
type colRange struct {
	lo, hi int64
	ok     bool // any value seen
	bad    bool // a value cannot be packed (a string without a code)
	null   bool // a NULL seen
}

func (r colRange) union(o colRange) colRange {
	bad, null := r.bad || o.bad, r.null || o.null
	switch {
	case !o.ok:
		r.bad, r.null = bad, null
		return r
	case !r.ok:
		o.bad, o.null = bad, null
		return o
	}
	return colRange{lo: min(r.lo, o.lo), hi: max(r.hi, o.hi), ok: true, bad: bad, null: null}
}

// intColRange returns the range of the non-NULL values of the rows of sel
// (nil: all n) of an integer-like array: one type switch, then a typed loop.
func intColRange(arr arrow.Array, n int, sel []int32) colRange {
	var lo, hi int64
	var ok bool
	switch a := arr.(type) {
	case *array.Int8:
		lo, hi, ok = keyRange(a.Int8Values(), arr, n, sel)
	case *array.Int16:
		lo, hi, ok = keyRange(a.Int16Values(), arr, n, sel)
	case *array.Int32:
		lo, hi, ok = keyRange(a.Int32Values(), arr, n, sel)
	case *array.Int64:
		lo, hi, ok = keyRange(a.Int64Values(), arr, n, sel)
	case *array.Uint8:
		lo, hi, ok = keyRange(a.Uint8Values(), arr, n, sel)
	case *array.Uint16:
		lo, hi, ok = keyRange(a.Uint16Values(), arr, n, sel)
	case *array.Uint32:
		lo, hi, ok = keyRange(a.Uint32Values(), arr, n, sel)
	case *array.Uint64:
		lo, hi, ok = keyRange(a.Uint64Values(), arr, n, sel)
	case *array.Date32:
		lo, hi, ok = keyRange(a.Date32Values(), arr, n, sel)
	case *array.Date64:
		lo, hi, ok = keyRange(a.Date64Values(), arr, n, sel)
	case *array.Timestamp:
		lo, hi, ok = keyRange(a.TimestampValues(), arr, n, sel)
	case *array.Time64:
		lo, hi, ok = keyRange(a.Time64Values(), arr, n, sel)
	case *array.String:
		codes := make([]int64, n)
		if !stringCodes(a, n, sel, codes) {
			return colRange{bad: true}
		}
		lo, hi, ok = keyRange(codes, arr, n, sel)
	default:
		panic("exec/hash: packed key table given " + arr.DataType().String())
	}
	return colRange{lo: lo, hi: hi, ok: ok, null: hasNull(arr, n, sel)}
}

// hasNull reports whether a row of sel (nil: all n) of arr is NULL.
func hasNull(arr arrow.Array, n int, sel []int32) bool {
	bitsV, off := keyBits(arr)
	if bitsV == nil || arr.NullN() == 0 {
		return false
	}
	if sel == nil {
		return arr.NullN() > 0 && (n == arr.Len() || bitutil.CountSetBits(bitsV, off, n) < n)
	}
	for _, r := range sel {
		if !bitutil.BitIsSet(bitsV, off+int(r)) {
			return true
		}
	}
	return false
}

// chooseFields picks fields covering ranges (one per column; a column
// without values gets a one-value field at 0) with headroom: each field is
// at least twice its range, the spare room below the smallest value when
// grow says the column has grown downwards (else above); a column with a
// NULL gets a nullable field, its code 0 below the smallest value. It
// reports false when they need more than 63 bits.
func chooseFields(ranges []colRange, grewDown []bool) ([]packField, bool) {
	fields := make([]packField, len(ranges))
	total := uint(0)
	for i, r := range ranges {
		if r.bad {
			return nil, false
		}
		null := r.null
		if !r.ok {
			r = colRange{lo: 0, hi: 0, ok: true}
		}
		if null {
			if r.lo == math.MinInt64 {
				return nil, false // no room for the NULL code
			}
			r.lo-- // code 0, the NULL
		}
		span := uint64(r.hi) - uint64(r.lo)
		w := uint(bits.Len64(span)) + 1
		if w > maxPackedBits {
			return nil, false
		}
		base := r.lo
		if grewDown != nil && grewDown[i] {
			room := (uint64(1)<<w - 1 - span) / 2
			if uint64(base)^(1<<63) < room { // base - MinInt64
				base = math.MinInt64
			} else {
				base = int64(uint64(base) - room)
			}
		}
		fields[i] = packField{base: base, width: w, nullable: null}
		total += w
	}
	if total > maxPackedBits {
		return nil, false
	}
	// First column in the highest field.
	shift := total
	for i := range fields {
		shift -= fields[i].width
		fields[i].shift = shift
	}
	return fields, true
}

// packCol ORs column c's fields into dst for the rows of sel (nil: all n),
// setting bit 63 (a negative key) of rows whose value lies outside the
// field, or is NULL when the field is not nullable. first: dst is written,
// not ORed (the first column).
func packCol[T intLike](vals []T, arr arrow.Array, f packField, n int, sel []int32, dst []int64, first bool) {
	base, shift, w := uint64(f.base), f.shift, f.width
	if f.nullable {
		packNullable(vals, arr, f, n, sel, dst, first)
		return
	}
	switch {
	case sel == nil && first:
		vals, dst = vals[:n], dst[:n]
		for r, v := range vals {
			d := uint64(int64(v)) - base
			dst[r] = int64(d<<shift | outside(d, w))
		}
	case sel == nil:
		vals, dst = vals[:n], dst[:n]
		for r, v := range vals {
			d := uint64(int64(v)) - base
			dst[r] |= int64(d<<shift | outside(d, w))
		}
	case first:
		for _, r := range sel {
			d := uint64(int64(vals[r])) - base
			dst[r] = int64(d<<shift | outside(d, w))
		}
	default:
		for _, r := range sel {
			d := uint64(int64(vals[r])) - base
			dst[r] |= int64(d<<shift | outside(d, w))
		}
	}
	if bitsV, off := keyBits(arr); bitsV != nil {
		for k := range rowCount(n, sel) {
			r := rowAt(sel, k)
			if !bitutil.BitIsSet(bitsV, off+r) {
				dst[r] |= math.MinInt64
			}
		}
	}
}

// packNullable is packCol for a nullable field: a NULL row's field is 0,
// a value's is its offset from base, which must not be 0 (that is bit 63).
func packNullable[T intLike](vals []T, arr arrow.Array, f packField, n int, sel []int32, dst []int64, first bool) {
	base, shift, w := uint64(f.base), f.shift, f.width
	bitsV, off := keyBits(arr)
	if arr != nil && arr.NullN() == 0 {
		bitsV = nil
	}
	for k := range rowCount(n, sel) {
		r := rowAt(sel, k)
		d := uint64(int64(vals[r])) - base
		v := d<<shift | outside(d, w) | isZero(d)
		if bitsV != nil && !bitutil.BitIsSet(bitsV, off+r) {
			v = 0
		}
		if first {
			dst[r] = int64(v)
		} else {
			dst[r] |= int64(v)
		}
	}
}

// isZero is 1<<63 when d is 0, else 0 (no branch).
func isZero(d uint64) uint64 { return ^(d | -d) & (1 << 63) }

// outside is 1<<63 when d does not fit in w bits, else 0 (no branch).
func outside(d uint64, w uint) uint64 {
	// d>>w is 0 exactly when d fits; (x | -x) has bit 63 set exactly when x != 0.
	x := d >> w
	return (x | -x) & (1 << 63)
}

// packColumns computes the packed key of every row of sel (nil: all n) of
// cols into dst (len >= n) under fields. codes is scratch for a string
// column's codes (len >= n; nil: allocated when needed).
func packColumns(cols []arrow.Array, fields []packField, n int, sel []int32, dst, codes []int64) {
	for c, arr := range cols {
		f, first := fields[c], c == 0
		switch a := arr.(type) {
		case *array.Int8:
			packCol(a.Int8Values(), arr, f, n, sel, dst, first)
		case *array.Int16:
			packCol(a.Int16Values(), arr, f, n, sel, dst, first)
		case *array.Int32:
			packCol(a.Int32Values(), arr, f, n, sel, dst, first)
		case *array.Int64:
			packCol(a.Int64Values(), arr, f, n, sel, dst, first)
		case *array.Uint8:
			packCol(a.Uint8Values(), arr, f, n, sel, dst, first)
		case *array.Uint16:
			packCol(a.Uint16Values(), arr, f, n, sel, dst, first)
		case *array.Uint32:
			packCol(a.Uint32Values(), arr, f, n, sel, dst, first)
		case *array.Uint64:
			packCol(a.Uint64Values(), arr, f, n, sel, dst, first)
		case *array.Date32:
			packCol(a.Date32Values(), arr, f, n, sel, dst, first)
		case *array.Date64:
			packCol(a.Date64Values(), arr, f, n, sel, dst, first)
		case *array.Timestamp:
			packCol(a.TimestampValues(), arr, f, n, sel, dst, first)
		case *array.Time64:
			packCol(a.Time64Values(), arr, f, n, sel, dst, first)
		case *array.String:
			if len(codes) < n {
				codes = make([]int64, n)
			}
			fits := stringCodes(a, n, sel, codes)
			packCol(codes, arr, f, n, sel, dst, first)
			if !fits {
				markLong(a, n, sel, dst)
			}
		default:
			panic("exec/hash: packed key table given " + arr.DataType().String())
		}
	}
}

// markLong sets bit 63 (outside: absent, or a re-pack that falls back) in
// dst for the rows of sel (nil: all n) whose string has no code.
func markLong(a *array.String, n int, sel []int32, dst []int64) {
	offs := a.ValueOffsets()
	for k := range rowCount(n, sel) {
		r := rowAt(sel, k)
		if offs[r+1]-offs[r] > maxCodeLen {
			dst[r] |= math.MinInt64
		}
	}
}

// lookup packs the rows' keys and resolves them in the integer layout. It
// may leave the packed layout (re-pack keeps it; a NULL key or too wide
// fields fall back to the generic layout, which then resolves the rows).
func (pk *packedInts) lookup(t *Table, p *Probe, cols []arrow.Array, n int, sel []int32, out []uint32, insert bool) {
	if insert {
		if !pk.set {
			ranges := make([]colRange, len(cols))
			for c, arr := range cols {
				ranges[c] = intColRange(arr, n, sel)
			}
			fields, ok := chooseFields(ranges, nil)
			if !ok {
				t.toGeneric(p, cols, n, sel, out)
				return
			}
			pk.fields, pk.set = fields, true
		}
	} else if !pk.set {
		// Nothing inserted yet: every row is absent.
		for k := range rowCount(n, sel) {
			out[rowAt(sel, k)] = NoID
		}
		return
	}
	p.packed = kernel.GrowSlice(p.packed, n)
	p.codes = kernel.GrowSlice(p.codes, n)
	packColumns(cols, pk.fields, n, sel, p.packed, p.codes)
	if insert && anyOutside(p.packed, n, sel) {
		if !pk.repack(t, p, cols, n, sel) {
			t.toGeneric(p, cols, n, sel, out)
			return
		}
		packColumns(cols, pk.fields, n, sel, p.packed, p.codes)
	}
	lookupIntsIn(t, &pk.ints, p, p.packed[:n], nil, n, sel, out, insert)
	if len(p.newRows) > 0 {
		for i, k := range t.Keys {
			k.appendRows(cols[i], p.newRows)
		}
	}
}

// anyOutside reports whether some row of sel (nil: all n) has bit 63 set.
func anyOutside(packed []int64, n int, sel []int32) bool {
	acc := int64(0)
	if sel == nil {
		for _, v := range packed[:n] {
			acc |= v
		}
	} else {
		for _, r := range sel {
			acc |= packed[r]
		}
	}
	return acc < 0
}

// storedKeys builds the stored key columns of ids [0, n) as arrays of a Go
// allocator (the caller releases them).
func (t *Table) storedKeys() []arrow.Array {
	m := kernel.ArrayMaker{Mem: memory.DefaultAllocator}
	arrs := make([]arrow.Array, len(t.Keys))
	for i, k := range t.Keys {
		arrs[i] = k.Build(&m, 0, t.n)
	}
	return arrs
}

// repack chooses wider fields covering t's stored keys and the rows of sel
// (nil: all n) of cols, and rebuilds the integer layout from the stored
// keys, ids unchanged. It reports false, changing nothing, when the fields
// would need more than 63 bits.
func (pk *packedInts) repack(t *Table, p *Probe, cols []arrow.Array, n int, sel []int32) bool {
	stored := t.storedKeys()
	defer releaseArrays(stored)
	old := pk.fields
	ranges := make([]colRange, len(cols))
	grewDown := make([]bool, len(cols))
	for c := range cols {
		s := intColRange(stored[c], t.n, nil)
		b := intColRange(cols[c], n, sel)
		ranges[c] = s.union(b)
		grewDown[c] = b.ok && b.lo < old[c].base
		// Keep at least the old field: re-packs then double it.
		lo := old[c].base
		if old[c].nullable {
			lo++ // the field's code 0 is no value
		}
		ranges[c] = ranges[c].union(colRange{lo: lo, hi: int64(uint64(old[c].base) + (uint64(1)<<old[c].width - 1)), ok: true, null: old[c].nullable})
	}
	fields, ok := chooseFields(ranges, grewDown)
	if !ok {
		return false
	}
	pk.fields = fields
	pk.repacks++
	t.changes++
	// Reinsert the stored keys in id order into an empty integer layout:
	// they are distinct, so they get their old ids back.
	keys := make([]int64, t.n)
	packColumns(stored, fields, t.n, nil, keys, nil)
	n0 := t.n
	if _, hashed := pk.ints.(*hashedInts); hashed {
		// Keys the direct window did not hold before will not fit it now:
		// start hashed, sized for them, not from a direct table doubling.
		t.n, pk.ints = 0, newHashedInts(SlotsFor(n0+rowCount(n, sel)))
	} else {
		t.n, pk.ints = 0, newDirectInts()
	}
	ids := make([]uint32, n0)
	lookupIntsIn(t, &pk.ints, p, keys, nil, n0, nil, ids, true)
	p.newRows = p.newRows[:0]
	return true
}

// toGeneric leaves the packed layout for good: a generic layout is built
// from the stored keys (ids unchanged) and resolves the rows of sel (nil:
// all n), inserting.
func (t *Table) toGeneric(p *Probe, cols []arrow.Array, n int, sel []int32, out []uint32) {
	g := t.storedGeneric()
	t.layout = g
	t.changes++
	g.lookup(t, p, cols, n, sel, out, true)
}

// storedGeneric returns a generic layout holding t's stored keys under
// their ids.
func (t *Table) storedGeneric() *generic {
	g := &generic{hashes: make([]uint64, t.n, max(t.n, 16)), rec: newKeyRecords(t.types)}
	if t.n > 0 {
		// Stored hashes are record hashes while the records last (see
		// generic.lookup), column hashes otherwise.
		stored := t.storedKeys()
		if g.rec != nil {
			g.rec.data = make([]uint64, t.n*g.rec.words)
			ids := make([]int32, t.n)
			for i := range ids {
				ids[i] = int32(i)
			}
			if g.rec.encode(stored, ids, g.rec.data) {
				g.rec.hash(g.rec.data, ids, g.hashes)
			} else {
				g.rec = nil
			}
		}
		if g.rec == nil {
			kernel.HashColumns(stored, g.hashes)
		}
		releaseArrays(stored)
	}
	g.grow(SlotsFor(t.n))
	return g
}

func releaseArrays(arrs []arrow.Array) {
	for _, a := range arrs {
		a.Release()
	}
}
