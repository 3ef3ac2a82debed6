package hashtable

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/quiverdb/quiver/exec/kernel"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
)

// Table maps distinct key tuples to dense ids 0, 1, 2, ... (group ids
// for the aggregate, distinct-key ids for the join build side). The keys
// themselves live beside it in columnar form (one typed keyColumn per key
// column), from which the aggregate builds its output.
//
// Where the ids live is its layout, one type each (docs/design/hash-tables.md):
//   - directInts (direct.go): one integer-like key column whose values
//     span a small range, in an array indexed by the value;
//   - hashedInts (hashed.go): one integer-like key column otherwise, in
//     open-addressing slots holding the value beside its id;
//   - packedInts (packed.go): several integer-like or short string key
//     columns packed into one int64 that uses one of the two above;
//   - generic (generic.go): anything else, in tagged slots, with the keys
//     also kept as fixed-width records (records.go) while they fit.
//
// The keys' statistics, where they bound the keys exactly, choose the
// layout once (choose.go); else the key types choose the first layout and
// the data may then move a table to a more general one (direct → hashed,
// packed → generic), once and for good, with every id kept. A layout is called once per batch; the per-row work
// stays inside its typed loops.
//
// Not safe for concurrent mutation; concurrent find calls on a table no one
// mutates are safe only with separate scratch (see probe).
type Table struct {
	Keys   []keyColumn
	types  []arrow.DataType // the key columns' types
	n      int              // ids handed out
	layout layout
	// How the layout was chosen (choose.go) and how often it changed since.
	first   physical.HashLayout
	byStats bool
	changes int
}

// layout is where a Table keeps its ids. Its methods are called once per
// batch; lookup may replace t.layout by a more general layout, which then
// resolves the batch.
type layout interface {
	// lookup sets out[r] to the id of row r's key for every row of sel
	// (nil: all n), inserting absent keys (with their key columns stored)
	// when insert, else giving them NoID.
	lookup(t *Table, p *Probe, cols []arrow.Array, n int, sel []int32, out []uint32, insert bool)
	// memSize is the layout's bytes, the key columns aside.
	memSize() int64
	// worstCase bounds the bytes inserting n more rows of cols can add
	// to the layout, the key columns' own growth aside.
	worstCase(t *Table, cols []arrow.Array, n int) int64
}

// noID marks a row without an id (no match, or skipped).
const NoID = ^uint32(0)

const InitialSlots = 16

// initialShift indexes InitialSlots slots by a hash's high bits.
const initialShift = 64 - 4

// New returns an empty table for keys of the given types, in the layout
// the types call for.
func New(types []arrow.DataType) (*Table, error) {
	return NewWithStats(types, nil, -1)
}

// NewWithStats returns an empty table for keys of the given types whose
// layout is chosen once from what stats (one per key column; nil: nothing)
// guarantee of the keys and rows (an upper bound of the rows it will see;
// -1: unknown); see choose.go.
func NewWithStats(types []arrow.DataType, stats []physical.ColumnStats, rows int64) (*Table, error) {
	t := &Table{types: types}
	for _, dt := range types {
		k, err := newKeyColumn(dt)
		if err != nil {
			return nil, err
		}
		t.Keys = append(t.Keys, k)
	}
	t.choose(stats, rows)
	return t, nil
}

// Figures are the table's EXPLAIN ANALYZE figures: the layout it started
// in, whether statistics chose it, and the layout changes since.
func (t *Table) Figures() physical.TableFigures {
	var f physical.TableFigures
	f.Started[t.first] = 1
	if t.byStats {
		f.ByStats = 1
	}
	f.Changes = int64(t.changes)
	return f
}

// PreferHashed makes an empty table over one integer key use hashed slots
// from its first insert instead of the direct layout. For keys known to be
// spread thin over a wide range (one hash partition of a key column, as
// spilling operators make), where every direct page would be allocated
// for a few keys each. Other layouts, and a table holding keys, are left
// as they are.
func (t *Table) PreferHashed() {
	if d, ok := t.layout.(*directInts); ok && t.n == 0 {
		t.layout = d.toHashed(InitialSlots)
		t.first, t.byStats = physical.LayoutHashed, false
	}
}

// keyBits is validBits for the integer layouts, where arr may be nil (the
// packed layout's keys, never NULL).
func keyBits(arr arrow.Array) ([]byte, int) {
	if arr == nil {
		return nil, 0
	}
	return kernel.ValidBits(arr)
}

// isIntLike reports whether dt's values compare as their int64 bit pattern.
func isIntLike(dt arrow.DataType) bool {
	switch dt.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64,
		arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64,
		arrow.DATE32, arrow.DATE64, arrow.TIMESTAMP, arrow.TIME64:
		return true
	}
	return false
}

// Len is the number of distinct keys (ids) in the table.
func (t *Table) Len() int { return t.n }

// MemSize approximates the table's bytes for memory accounting.
func (t *Table) MemSize() int64 {
	n := t.layout.memSize()
	for _, k := range t.Keys {
		n += k.memSize()
	}
	return n
}

// WorstCase is an upper bound of the bytes inserting n rows of cols can add.
func (t *Table) WorstCase(cols []arrow.Array, n int) int64 {
	grow := t.layout.worstCase(t, cols, n)
	for i, k := range t.Keys {
		grow += k.worstCase(cols[i], n)
	}
	return grow
}

// slotGrowth is the bytes of the slot arrays an open-addressing layout of
// slots slots (slotBytes each) allocates on its way to holding need keys.
func slotGrowth(slots, need int, slotBytes int64) int64 {
	grow := int64(0)
	for c := slots; need*2 > c; c *= 2 {
		grow += int64(c) * 2 * slotBytes
	}
	return grow
}

// Probe is per-call scratch, reused across batches by one goroutine.
type Probe struct {
	rowHash  []uint64
	pos      []uint32
	pending  []int32
	next     []int32
	candRows []int32
	candIDs  []uint32
	eq       []bool
	newRows  []int32
	rep      []bool   // rows whose key repeats the row before (markRepeats)
	packed   []int64  // packed keys of the packed layout
	codes    []int64  // string codes, scratch of packColumns
	repCol   []bool   // markRepeats' scratch
	recs     []uint64 // the rows' key records (keyRecords.encode)
	diff     []uint64 // non-zero where a row's key may differ from the row before (keyRecords.differs)
	// skipRepeats counts down the batches lookup resolves without looking
	// for repeated keys, after a batch in which few rows repeated: the
	// check costs about as much as hashing short keys, so it only pays
	// where runs are common.
	skipRepeats int
	sink        uint64 // keeps lookup's prefetching loads from being optimized away (per probe: tables are shared)
}

// Repeat checks are paused for repeatPause batches when fewer than one row
// in repeatMinShare repeats the row before.
const (
	repeatPause    = 16
	repeatMinShare = 8
)

func (p *Probe) reset(n int) {
	if cap(p.rowHash) < n {
		p.rowHash = make([]uint64, n)
		p.pos = make([]uint32, n)
	}
	p.rowHash = p.rowHash[:n]
	p.pos = p.pos[:n]
	p.pending = p.pending[:0]
}

// FindOrInsert sets out[r] to the id of row r's key for every row r of sel
// (nil: all rows 0..n-1), inserting keys not yet present; out[r] is left
// untouched for rows outside sel. NULL equals NULL here (grouping).
func (t *Table) FindOrInsert(p *Probe, cols []arrow.Array, n int, sel []int32, out []uint32) {
	t.layout.lookup(t, p, cols, n, sel, out, true)
}

// Find sets out[r] to the id of row r's key, or noID if absent, for every
// row of sel (nil: all). It never mutates t, so many goroutines may find
// concurrently, each with its own probe.
func (t *Table) Find(p *Probe, cols []arrow.Array, n int, sel []int32, out []uint32) {
	t.layout.lookup(t, p, cols, n, sel, out, false)
}

// ---- key columns ----

// keyColumn stores one key column of a hashTable, one value per id, in
// typed form. Each method handles a whole vector of rows.
type keyColumn interface {
	// appendRows appends arr[rows[k]] for every k (the keys of new ids).
	appendRows(arr arrow.Array, rows []int32)
	// equal clears eq[k] where arr[rows[k]] differs from the stored key of
	// ids[k] (NULL equals NULL; floats: NaN equals NaN, -0 equals 0).
	equal(arr arrow.Array, rows []int32, ids []uint32, eq []bool)
	// Build returns the stored keys of ids [start, end) as an Arrow array.
	Build(b *kernel.ArrayMaker, start, end int) arrow.Array
	memSize() int64
	worstCase(arr arrow.Array, n int) int64
}

func newKeyColumn(dt arrow.DataType) (keyColumn, error) {
	switch dt.ID() {
	case arrow.NULL:
		return &nullKeys{}, nil
	case arrow.BOOL:
		return &boolKeys{}, nil
	case arrow.INT8:
		return newFixedKeys[int8](dt), nil
	case arrow.INT16:
		return newFixedKeys[int16](dt), nil
	case arrow.INT32:
		return newFixedKeys[int32](dt), nil
	case arrow.INT64:
		return newFixedKeys[int64](dt), nil
	case arrow.UINT8:
		return newFixedKeys[uint8](dt), nil
	case arrow.UINT16:
		return newFixedKeys[uint16](dt), nil
	case arrow.UINT32:
		return newFixedKeys[uint32](dt), nil
	case arrow.UINT64:
		return newFixedKeys[uint64](dt), nil
	case arrow.FLOAT32:
		return newFixedKeys[float32](dt), nil
	case arrow.FLOAT64:
		return newFixedKeys[float64](dt), nil
	case arrow.DATE32:
		return newFixedKeys[arrow.Date32](dt), nil
	case arrow.DATE64:
		return newFixedKeys[arrow.Date64](dt), nil
	case arrow.TIMESTAMP:
		return newFixedKeys[arrow.Timestamp](dt), nil
	case arrow.TIME64:
		return newFixedKeys[arrow.Time64](dt), nil
	case arrow.DECIMAL128:
		return newFixedKeys[decimal128.Num](dt), nil
	case arrow.STRING, arrow.LARGE_STRING, arrow.BINARY:
		return &bytesKeys{dt: dt, offs: []int{0}}, nil
	}
	return nil, qerr.NotImplementedf("exec/hash: %s is not supported as a grouping or join key type", dt)
}

type fixedWidth interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32 | ~uint64 |
		~float32 | ~float64 | decimal128.Num
}

// fixedKeys stores fixed-width keys with a validity flag per id.
type fixedKeys[T fixedWidth] struct {
	dt    arrow.DataType
	vals  []T
	valid []bool
}

func newFixedKeys[T fixedWidth](dt arrow.DataType) *fixedKeys[T] {
	return &fixedKeys[T]{dt: dt}
}

func (k *fixedKeys[T]) appendRows(arr arrow.Array, rows []int32) {
	vals := arrow.GetValues[T](arr.Data(), 1)
	k.vals = growDouble(k.vals, len(rows))
	k.valid = growDouble(k.valid, len(rows))
	if arr.NullN() == 0 {
		n := len(k.vals)
		k.vals = k.vals[:n+len(rows)]
		k.valid = k.valid[:n+len(rows)]
		dv, dok := k.vals[n:], k.valid[n:]
		for i, r := range rows {
			dv[i] = vals[r]
			dok[i] = true
		}
		return
	}
	var zero T
	bits, off := kernel.ValidBits(arr)
	n := len(k.vals)
	k.vals = k.vals[:n+len(rows)]
	k.valid = k.valid[:n+len(rows)]
	dv, dok := k.vals[n:], k.valid[n:]
	for i, r := range rows {
		ok := bitutil.BitIsSet(bits, off+int(r))
		dv[i], dok[i] = vals[r], ok
		if !ok {
			dv[i] = zero
		}
	}
}

func (k *fixedKeys[T]) equal(arr arrow.Array, rows []int32, ids []uint32, eq []bool) {
	vals := arrow.GetValues[T](arr.Data(), 1)
	if arr.NullN() == 0 {
		for i, r := range rows {
			a, b := vals[r], k.vals[ids[i]]
			// a != a is true only for NaN: NaN keys group together.
			eq[i] = eq[i] && k.valid[ids[i]] && (a == b || (a != a && b != b))
		}
		return
	}
	for i, r := range rows {
		id := ids[i]
		if arr.IsNull(int(r)) {
			eq[i] = eq[i] && !k.valid[id]
			continue
		}
		a, b := vals[r], k.vals[id]
		eq[i] = eq[i] && k.valid[id] && (a == b || (a != a && b != b))
	}
}

func (k *fixedKeys[T]) Build(b *kernel.ArrayMaker, start, end int) arrow.Array {
	return kernel.MakeFixed(b, k.dt, k.vals[start:end], k.valid[start:end])
}

func (k *fixedKeys[T]) memSize() int64 {
	var z T
	return int64(cap(k.vals))*int64(kernel.SizeOf(z)) + int64(cap(k.valid))
}

func (k *fixedKeys[T]) worstCase(_ arrow.Array, n int) int64 {
	var z T
	return 2 * int64(n) * int64(kernel.SizeOf(z)+1)
}

// boolKeys stores Boolean keys.
type boolKeys struct{ vals, valid []bool }

func (k *boolKeys) appendRows(arr arrow.Array, rows []int32) {
	a := arr.(*array.Boolean)
	for _, r := range rows {
		k.valid = append(k.valid, a.IsValid(int(r)))
		k.vals = append(k.vals, a.IsValid(int(r)) && a.Value(int(r)))
	}
}

func (k *boolKeys) equal(arr arrow.Array, rows []int32, ids []uint32, eq []bool) {
	a := arr.(*array.Boolean)
	for i, r := range rows {
		id := ids[i]
		v := a.IsValid(int(r))
		eq[i] = eq[i] && v == k.valid[id] && (!v || a.Value(int(r)) == k.vals[id])
	}
}

func (k *boolKeys) Build(b *kernel.ArrayMaker, start, end int) arrow.Array {
	return kernel.MakeBool(b, k.vals[start:end], k.valid[start:end])
}
func (k *boolKeys) memSize() int64                       { return int64(cap(k.vals) + cap(k.valid)) }
func (k *boolKeys) worstCase(_ arrow.Array, n int) int64 { return 4 * int64(n) }

// nullKeys stores keys of the NULL type: every key is NULL and all are equal.
type nullKeys struct{ n int }

func (k *nullKeys) appendRows(_ arrow.Array, rows []int32)       { k.n += len(rows) }
func (k *nullKeys) equal(arrow.Array, []int32, []uint32, []bool) {}
func (k *nullKeys) Build(_ *kernel.ArrayMaker, start, end int) arrow.Array {
	return array.NewNull(end - start)
}
func (k *nullKeys) memSize() int64                   { return 0 }
func (k *nullKeys) worstCase(arrow.Array, int) int64 { return 0 }

// bytesKeys stores string and binary keys in one byte arena with offsets.
type bytesKeys struct {
	dt    arrow.DataType
	data  []byte
	offs  []int // len = ids+1
	valid []bool
}

// bytesAccess gives typed access to a string-like array's bytes.
type bytesAccess interface {
	arrow.Array
	ValueBytes() []byte
}

// byteValues returns row r's bytes; one type switch per call site, not per row.
type byteSource struct {
	data  []byte
	off32 []int32
	off64 []int64
	bin   *array.Binary
}

func NewByteSource(arr arrow.Array) byteSource {
	switch a := arr.(type) {
	case *array.String:
		return byteSource{data: a.ValueBytes(), off32: a.ValueOffsets()}
	case *array.LargeString:
		return byteSource{data: a.ValueBytes(), off64: a.ValueOffsets()}
	case *array.Binary:
		return byteSource{data: a.ValueBytes(), off32: a.ValueOffsets()}
	}
	panic("exec/hash: not a string-like array: " + arr.DataType().String())
}

// At returns row r's bytes (valid until the array is released).
func (s *byteSource) At(r int) []byte {
	if s.off32 != nil {
		base := s.off32[0]
		return s.data[s.off32[r]-base : s.off32[r+1]-base]
	}
	base := s.off64[0]
	return s.data[s.off64[r]-base : s.off64[r+1]-base]
}

func (k *bytesKeys) appendRows(arr arrow.Array, rows []int32) {
	src := NewByteSource(arr)
	k.valid = growDouble(k.valid, len(rows))
	k.offs = growDouble(k.offs, len(rows))
	for _, r := range rows {
		if arr.IsNull(int(r)) {
			k.valid = append(k.valid, false)
		} else {
			k.valid = append(k.valid, true)
			v := src.At(int(r))
			k.data = append(growDouble(k.data, len(v)), v...)
		}
		k.offs = append(k.offs, len(k.data))
	}
}

func (k *bytesKeys) equal(arr arrow.Array, rows []int32, ids []uint32, eq []bool) {
	src := NewByteSource(arr)
	hasNulls := arr.NullN() > 0
	for i, r := range rows {
		if !eq[i] {
			continue
		}
		id := ids[i]
		if hasNulls && arr.IsNull(int(r)) {
			eq[i] = !k.valid[id]
			continue
		}
		eq[i] = k.valid[id] && equalBytes(src.At(int(r)), k.data[k.offs[id]:k.offs[id+1]])
	}
}

func (k *bytesKeys) Build(b *kernel.ArrayMaker, start, end int) arrow.Array {
	return kernel.MakeBytes(b, k.dt, k.data, k.offs[start:end+1], k.valid[start:end])
}

func (k *bytesKeys) memSize() int64 {
	return int64(cap(k.data)) + int64(cap(k.offs))*8 + int64(cap(k.valid))
}

func (k *bytesKeys) worstCase(arr arrow.Array, n int) int64 {
	var data int64
	switch a := arr.(type) {
	case bytesAccess:
		data = int64(len(a.ValueBytes()))
	}
	return 2 * (data + int64(n)*9)
}

// growDouble returns s with room for n more elements, doubling its
// capacity when it must grow: at append's growth of 1.25× for large
// slices, the key columns of a table of a million groups would be copied
// about five times over, each time into freshly zeroed memory.
func growDouble[T any](s []T, n int) []T {
	if len(s)+n <= cap(s) {
		return s
	}
	out := make([]T, len(s), max(2*cap(s), len(s)+n))
	copy(out, s)
	return out
}
