package hashtable

import (
	"math/bits"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/quiverdb/quiver/exec/kernel"
	"github.com/quiverdb/quiver/qerr"
)

// Table maps distinct key tuples to dense ids 0, 1, 2, ... (group ids
// for the aggregate, distinct-key ids for the join build side). The keys
// themselves live beside it in columnar form (one typed keyColumn per key
// column), from which the aggregate builds its output.
//
// It has three layouts:
//   - one integer-like key column (Int8..Int64, Uint8..Uint64, Date32/64,
//     Timestamp) whose values span a small range (see direct.go): a
//     direct array indexed by the value minus the smallest one, so a lookup
//     is one load at a place that follows the key (keys arriving in order,
//     like line items by order key, read memory in order).
//   - one integer-like key column otherwise: open addressing (linear
//     probing) indexed by a hash's HIGH bits and kept at most half full;
//     intSlots hold the key value itself beside its id, so a lookup touches
//     one slot and compares the value in place, with no per-row call and no
//     second memory access. An integer table starts direct and turns hashed,
//     once and for good, when an insert would make the range too wide.
//     In both a NULL key has its own id (nullID) outside the slots.
//   - several integer-like key columns (packed.go): each row's key
//     packed into one int64 of per-column bit fields, which then uses the
//     two integer layouts above; it falls back to the generic layout for
//     good on a NULL key or fields wider than 63 bits.
//   - anything else: open addressing as above, where slots pack the low 32 bits of the row hash (a tag) with
//     the id, so a probe touches one 8-byte slot and compares keys only on a
//     tag match; candidate rows are then checked vector-at-a-time, one type
//     switch per key column per round, never per row.
//
// Not safe for concurrent mutation; concurrent find calls on a table no one
// mutates are safe only with separate scratch (see probe).
type Table struct {
	Keys  []keyColumn
	types []arrow.DataType // the key columns' types
	n     int              // ids handed out
	shift uint             // 64 - log2(slot count)

	// generic layout
	hashes []uint64 // per id: its key's hash (read only when growing)
	slots  []uint64 // tag<<32 | id+1; 0 = empty
	// rec holds the keys as fixed-width records (records.go) while
	// every key inserted fits one; nil otherwise, for good.
	rec *keyRecords

	// integer layouts
	intKey   bool
	hashed   bool      // the integer table uses intSlots, not direct
	intSlots []intSlot // hashed integer layout
	// direct integer layout (direct.go): the entry of key v is
	// pages[(v-directLo)>>pageBits][(v-directLo)&pageMask]
	pages      []*directPage
	directLo   int64
	directUsed int    // pages allocated (not zeroPage)
	nullID     uint32 // id of the NULL key, noID while none

	// packed layout (packed.go): several integer-like key columns
	// packed into one int64 that uses the integer layouts; nil otherwise.
	// intKey is set while packed.
	packed *packing
}

// intSlot is one slot of the integer layout; id is the key's id+1, 0 = empty.
type intSlot struct {
	key int64
	id  uint32
}

// noID marks a row without an id (no match, or skipped).
const NoID = ^uint32(0)

const InitialSlots = 16

// newHashTable returns an empty table for keys of the given types.
func New(types []arrow.DataType) (*Table, error) {
	t := &Table{nullID: NoID, shift: 64 - 4, types: types}
	for _, dt := range types {
		k, err := newKeyColumn(dt)
		if err != nil {
			return nil, err
		}
		t.Keys = append(t.Keys, k)
	}
	if len(types) == 1 && isIntLike(types[0]) {
		t.intKey = true // direct and empty until the first insert
	} else if packable(types) {
		t.intKey, t.packed = true, &packing{} // fields chosen at the first insert
	} else {
		t.slots = make([]uint64, InitialSlots)
		t.rec = newKeyRecords(types)
	}
	return t, nil
}

// PreferHashed makes an empty table over one integer key use hashed slots
// from its first insert instead of the direct layout. For keys known to be
// spread thin over a wide range (one hash partition of a key column, as
// spilling operators make), where every direct page would be allocated
// for a few keys each. Other layouts, and a table holding keys, are left
// as they are.
func (t *Table) PreferHashed() {
	if t.intKey && t.packed == nil && !t.hashed && t.n == 0 {
		t.toHashed(InitialSlots)
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

// numSlots is the open-addressing slot count (0 while direct).
func (t *Table) numSlots() int {
	if t.intKey {
		return len(t.intSlots)
	}
	return len(t.slots)
}

func (t *Table) slotBytes() int64 {
	if t.intKey {
		return 16
	}
	return 8
}

// MemSize approximates the table's bytes for memory accounting.
func (t *Table) MemSize() int64 {
	n := int64(t.numSlots())*t.slotBytes() + int64(cap(t.hashes))*8 + int64(t.directUsed)*pageSize*4 + int64(len(t.pages))*8
	for _, k := range t.Keys {
		n += k.memSize()
	}
	if t.rec != nil {
		n += int64(cap(t.rec.data)) * 8
	}
	return n
}

// WorstCase is an upper bound of the bytes inserting n rows of cols can add.
func (t *Table) WorstCase(cols []arrow.Array, n int) int64 {
	need := t.n + n
	grow := int64(0)
	if t.intKey && !t.hashed {
		// New direct pages, or the move to hashed slots: count both.
		grow += 4*int64(directLimit(need)) + 16*int64(SlotsFor(need))
	} else {
		for c := t.numSlots(); need*2 > c; c *= 2 {
			grow += int64(c) * 2 * t.slotBytes()
		}
	}
	if !t.intKey {
		grow += int64(n) * 8 * 2 // hashes, amortised append doubling
	}
	if t.rec != nil {
		grow += int64(n) * int64(t.rec.words) * 8 * 2 // records, the same
	}
	if t.packed != nil {
		// A re-pack's packed keys and ids, and the stored keys copied, or
		// the fall back to generic slots and hashes.
		grow += int64(need)*(8+4) + 8*int64(SlotsFor(need)) + 16*int64(need)
		for _, k := range t.Keys {
			grow += k.memSize()
		}
	}
	for i, k := range t.Keys {
		grow += k.worstCase(cols[i], n)
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
	if t.packed != nil {
		t.lookupPacked(p, cols, n, sel, out, true)
		return
	}
	if t.intKey {
		t.lookupInt(p, cols[0], n, sel, out, true)
		return
	}
	t.lookup(p, cols, n, sel, out, true)
}

// Find sets out[r] to the id of row r's key, or noID if absent, for every
// row of sel (nil: all). It never mutates t, so many goroutines may find
// concurrently, each with its own probe.
func (t *Table) Find(p *Probe, cols []arrow.Array, n int, sel []int32, out []uint32) {
	if t.packed != nil {
		t.lookupPacked(p, cols, n, sel, out, false)
		return
	}
	if t.intKey {
		t.lookupInt(p, cols[0], n, sel, out, false)
		return
	}
	t.lookup(p, cols, n, sel, out, false)
}

// lookupInt is find/findOrInsert for the integer layout: one type switch,
// then a typed loop.
func (t *Table) lookupInt(p *Probe, arr arrow.Array, n int, sel []int32, out []uint32, insert bool) {
	switch a := arr.(type) {
	case *array.Int8:
		lookupIntsIn(t, p, a.Int8Values(), arr, n, sel, out, insert)
	case *array.Int16:
		lookupIntsIn(t, p, a.Int16Values(), arr, n, sel, out, insert)
	case *array.Int32:
		lookupIntsIn(t, p, a.Int32Values(), arr, n, sel, out, insert)
	case *array.Int64:
		lookupIntsIn(t, p, a.Int64Values(), arr, n, sel, out, insert)
	case *array.Uint8:
		lookupIntsIn(t, p, a.Uint8Values(), arr, n, sel, out, insert)
	case *array.Uint16:
		lookupIntsIn(t, p, a.Uint16Values(), arr, n, sel, out, insert)
	case *array.Uint32:
		lookupIntsIn(t, p, a.Uint32Values(), arr, n, sel, out, insert)
	case *array.Uint64:
		lookupIntsIn(t, p, a.Uint64Values(), arr, n, sel, out, insert)
	case *array.Date32:
		lookupIntsIn(t, p, a.Date32Values(), arr, n, sel, out, insert)
	case *array.Date64:
		lookupIntsIn(t, p, a.Date64Values(), arr, n, sel, out, insert)
	case *array.Timestamp:
		lookupIntsIn(t, p, a.TimestampValues(), arr, n, sel, out, insert)
	case *array.Time64:
		lookupIntsIn(t, p, a.Time64Values(), arr, n, sel, out, insert)
	default:
		panic("exec/hash: integer key table given " + arr.DataType().String())
	}
	if len(p.newRows) > 0 {
		t.Keys[0].appendRows(arr, p.newRows)
	}
}

type intLike interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32 | ~uint64
}

// probeChunk is how many rows lookupInts resolves per pass pair: enough
// independent loads in flight to hide memory latency, few enough that their
// slots stay in cache until the second pass.
const ProbeChunk = 64

// lookupIntsIn resolves the rows of sel (nil: all n) in whichever integer
// layout the table has, first moving from direct to hashed when inserting
// these rows would make the direct window too wide.
func lookupIntsIn[T intLike](t *Table, p *Probe, vals []T, arr arrow.Array, n int, sel []int32, out []uint32, insert bool) {
	rows := n
	if sel != nil {
		rows = len(sel)
	}
	if !t.hashed {
		if insert && !coverDirect(t, vals, arr, n, sel) {
			t.toHashed(SlotsFor(t.n + rows))
		}
		if !t.hashed {
			lookupDirect(t, p, vals, arr, n, sel, out, insert)
			return
		}
	}
	if insert {
		if c := SlotsFor(t.n + rows); c > len(t.intSlots) {
			t.growInt(c)
		}
	}
	lookupInts(t, p, vals, arr, n, sel, out, insert)
}

// intSlotHash places an integer key: a full-avalanche mix whose high bits
// index the slots.
func intSlotHash(v int64) uint64 { return kernel.Fmix64(uint64(v)*kernel.HashMulA + kernel.HashSeed) }

// lookupInts resolves the rows of sel (nil: all n) against the integer
// layout. New keys get ids in row order; their rows are left in p.newRows
// for the caller to store. The caller has grown the slots for inserts.
func lookupInts[T intLike](t *Table, p *Probe, vals []T, arr arrow.Array, n int, sel []int32, out []uint32, insert bool) {
	p.newRows = p.newRows[:0]
	bits, off := keyBits(arr)
	slots := t.intSlots
	mask := uint64(len(slots) - 1)
	shift := t.shift
	if sel == nil && bits == nil {
		// Two passes per chunk of rows: the first computes every row's home
		// slot and loads it, loads that do not depend on one another, so
		// the CPU overlaps their cache misses; the second probes, mostly
		// from cache. One pass would wait out a miss per row: the branch on
		// the loaded slot stops the CPU from running ahead. A row whose key
		// repeats the row before it (line items of one order sit together)
		// takes that row's answer without touching the table.
		var home [ProbeChunk]uint64
		var homeID [ProbeChunk]uint32
		for base := 0; base < n; base += ProbeChunk {
			m := min(ProbeChunk, n-base)
			for i := 0; i < m; i++ {
				r := base + i
				if r > 0 && vals[r] == vals[r-1] {
					continue
				}
				s := intSlotHash(int64(vals[r])) >> shift
				home[i] = s
				homeID[i] = slots[s].id
			}
			for i := 0; i < m; i++ {
				r := base + i
				v := int64(vals[r])
				if r > 0 && vals[r] == vals[r-1] {
					out[r] = out[r-1]
					continue
				}
				s := home[i]
				if !insert && homeID[i] == 0 {
					out[r] = NoID
					continue
				}
				for {
					sl := &slots[s]
					if sl.id == 0 {
						if insert {
							t.n++
							sl.key, sl.id = v, uint32(t.n)
							out[r] = uint32(t.n - 1)
							p.newRows = append(p.newRows, int32(r))
						} else {
							out[r] = NoID
						}
						break
					}
					if sl.key == v {
						out[r] = sl.id - 1
						break
					}
					s = (s + 1) & mask
				}
			}
		}
		return
	}
	for k := range rowCount(n, sel) {
		r := int32(rowAt(sel, k))
		if bits != nil && !bitutil.BitIsSet(bits, off+int(r)) {
			t.resolveNull(p, r, out, insert)
			continue
		}
		v := int64(vals[r])
		s := intSlotHash(v) >> shift
		for {
			sl := &slots[s]
			if sl.id == 0 {
				if insert {
					t.n++
					sl.key, sl.id = v, uint32(t.n)
					out[r] = uint32(t.n - 1)
					p.newRows = append(p.newRows, r)
				} else {
					out[r] = NoID
				}
				break
			}
			if sl.key == v {
				out[r] = sl.id - 1
				break
			}
			s = (s + 1) & mask
		}
	}
}

// resolveNull gives row r, whose key is NULL, the NULL key's id, first
// handing that id out when inserting (NULL groups with NULL).
func (t *Table) resolveNull(p *Probe, r int32, out []uint32, insert bool) {
	if t.nullID == NoID && insert {
		t.nullID = uint32(t.n)
		t.n++
		p.newRows = append(p.newRows, r)
	}
	out[r] = t.nullID
}

// SlotsFor is the slot count (a power of two) that keeps n keys at most
// half full.
func SlotsFor(n int) int {
	c := InitialSlots
	for n*2 > c {
		c *= 2
	}
	return c
}

// growInt resizes the integer layout to c slots (a power of two larger
// than now) and reinserts every key, in one pass however large the step.
func (t *Table) growInt(c int) {
	old := t.intSlots
	t.intSlots = make([]intSlot, c)
	t.shift = uint(64 - bits.TrailingZeros(uint(c)))
	mask := uint64(len(t.intSlots) - 1)
	for _, sl := range old {
		if sl.id == 0 {
			continue
		}
		s := intSlotHash(sl.key) >> t.shift
		for t.intSlots[s].id != 0 {
			s = (s + 1) & mask
		}
		t.intSlots[s] = sl
	}
}

func (t *Table) lookup(p *Probe, cols []arrow.Array, n int, sel []int32, out []uint32, insert bool) {
	p.reset(n)
	rec := t.rec
	if rec != nil {
		// Only the rows that may differ from the row before (all of sel
		// with a selection) are encoded, hashed and looked up; the others
		// take the id of the row before at the end.
		if sel == nil {
			p.diff = kernel.GrowSlice(p.diff, n)
			rec.differs(cols, n, p.diff)
			p.rep = kernel.GrowSlice(p.rep, n)
			p.pending = pendingRows(p.diff[:n], p.rep, p.pending)
		} else {
			p.pending = append(p.pending, sel...)
		}
		p.recs = kernel.GrowSlice(p.recs, n*rec.words)
		if !rec.encode(cols, p.pending, p.recs) && insert {
			// A key too long for a record is to be stored: the key columns
			// hash and compare from now on. (A find just misses on it.)
			t.dropRecords()
			rec = nil
			p.pending = p.pending[:0]
		} else {
			if sel == nil {
				defer p.resolveRepeats(n, out)
			}
			rec.hash(p.recs, p.pending, p.rowHash)
		}
	}
	if rec == nil {
		// The key columns hash and compare; rows that repeat the row
		// before are skipped while enough do.
		kernel.HashColumns(cols, p.rowHash)
		switch {
		case sel != nil:
			p.pending = append(p.pending, sel...)
		case p.skipRepeats > 0:
			p.skipRepeats--
			for r := 0; r < n; r++ {
				p.pending = append(p.pending, int32(r))
			}
		default:
			p.rep, p.repCol = kernel.GrowSlice(p.rep, n), kernel.GrowSlice(p.repCol, n)
			repeats := markRepeats(cols, n, p.rep, p.repCol)
			for r := 0; r < n; r++ {
				if !repeats || !p.rep[r] {
					p.pending = append(p.pending, int32(r))
				}
			}
			if (n-len(p.pending))*repeatMinShare < n {
				p.skipRepeats = repeatPause
			}
			if repeats {
				defer p.resolveRepeats(n, out)
			}
		}
	}
	if insert {
		if c := SlotsFor(t.n + len(p.pending)); c > len(t.slots) {
			t.grow(c)
		}
		t.hashes = growDouble(t.hashes, len(p.pending))
	}
	for _, r := range p.pending {
		p.pos[r] = uint32(p.rowHash[r] >> t.shift)
	}
	slots := t.slots
	mask := uint32(len(slots) - 1)
	for len(p.pending) > 0 {
		p.candRows, p.candIDs, p.newRows = p.candRows[:0], p.candIDs[:0], p.newRows[:0]
		for i, r := range p.pending {
			if i%ProbeChunk == 0 {
				// Load the home slots of the next rows first: loads no
				// branch waits on, so a large table's cache misses overlap
				// instead of stalling the probe loop one by one.
				var sink uint64
				for _, q := range p.pending[i:min(i+ProbeChunk, len(p.pending))] {
					sink |= slots[p.pos[q]]
				}
				p.sink = sink
			}
			h, s := p.rowHash[r], p.pos[r]
			tag := uint32(h)
			for {
				sl := slots[s]
				if sl == 0 {
					if insert {
						nid := uint32(t.n)
						t.n++
						slots[s] = uint64(tag)<<32 | uint64(nid+1)
						t.hashes = append(t.hashes, h)
						out[r] = nid
						p.newRows = append(p.newRows, r)
					} else {
						out[r] = NoID
					}
					break
				}
				if uint32(sl>>32) == tag {
					p.candRows = append(p.candRows, r)
					p.candIDs = append(p.candIDs, uint32(sl)-1)
					p.pos[r] = s
					break
				}
				s = (s + 1) & mask
			}
		}
		// Store new keys before checking candidates: a later row of this
		// round may be a candidate for a key inserted earlier in the round.
		if len(p.newRows) > 0 {
			for i, k := range t.Keys {
				k.appendRows(cols[i], p.newRows)
			}
			if rec != nil {
				rec.appendRows(p.recs, p.newRows)
			}
		}
		p.next = p.next[:0]
		if len(p.candRows) > 0 {
			if cap(p.eq) < len(p.candRows) {
				p.eq = make([]bool, len(p.candRows))
			}
			eq := p.eq[:len(p.candRows)]
			for i := range eq {
				eq[i] = true
			}
			if rec != nil {
				p.sink |= rec.equal(p.recs, p.candRows, p.candIDs, eq)
			} else {
				for i, k := range t.Keys {
					k.equal(cols[i], p.candRows, p.candIDs, eq)
				}
			}
			for i, ok := range eq {
				r := p.candRows[i]
				if ok {
					out[r] = p.candIDs[i]
				} else {
					p.pos[r] = (p.pos[r] + 1) & mask
					p.next = append(p.next, r)
				}
			}
		}
		p.pending, p.next = p.next, p.pending
	}
}

// resolveRepeats gives each row marked in p.rep the id of the row before;
// called last, in row order, so that a run follows its first row.
func (p *Probe) resolveRepeats(n int, out []uint32) {
	if n == 0 {
		return
	}
	rep := p.rep[:n]
	out = out[:n]
	prev := out[0]
	for r := 1; r < n; r++ {
		v := out[r]
		if rep[r] {
			v = prev // a conditional move: runs are short and irregular
		}
		out[r], prev = v, v
	}
}

// dropRecords ends the record layout for good: the stored keys are
// rehashed by HashColumns and the slots rebuilt, ids unchanged.
func (t *Table) dropRecords() {
	t.rec = nil
	t.hashes = t.hashes[:t.n]
	if t.n > 0 {
		stored := t.storedKeys()
		kernel.HashColumns(stored, t.hashes)
		releaseArrays(stored)
	}
	t.grow(len(t.slots))
}

// grow resizes the generic layout to c slots (a power of two larger than
// now) and reinserts every id by its stored hash, in one pass.
func (t *Table) grow(c int) {
	t.slots = make([]uint64, c)
	t.shift = uint(64 - bits.TrailingZeros(uint(c)))
	mask := uint32(len(t.slots) - 1)
	for id, h := range t.hashes {
		s := uint32(h >> t.shift)
		for t.slots[s] != 0 {
			s = (s + 1) & mask
		}
		t.slots[s] = uint64(uint32(h))<<32 | uint64(id+1)
	}
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
	for _, r := range rows {
		if arr.IsNull(int(r)) {
			k.vals = append(k.vals, zero)
			k.valid = append(k.valid, false)
		} else {
			k.vals = append(k.vals, vals[r])
			k.valid = append(k.valid, true)
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
