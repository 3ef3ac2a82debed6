package hashtable

import (
	"math/bits"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver/exec/kernel"
)

// The generic layout, for keys no integer layout takes (long strings,
// decimals, floats, mixtures, NULLs in a packed key). Open addressing whose
// 8-byte slots pack the low 32 bits of the row's hash (a tag) with the id,
// so a probe touches one slot and compares keys only on a tag match;
// candidate rows are then checked vector-at-a-time, one type switch per key
// column per round, never per row. While every stored key fits, the keys are
// also kept as fixed-width records (records.go), which the rows are encoded
// to, hashed and compared by. The repeat pass (repeat.go and the records'
// differs) skips rows whose key equals the row before's.

// generic is the generic layout.
type generic struct {
	hashes []uint64 // per id: its key's hash (read only when growing)
	slots  []uint64 // tag<<32 | id+1; 0 = empty
	shift  uint     // 64 - log2(len(slots))
	// rec holds the keys as fixed-width records while every key inserted
	// fits one; nil otherwise, for good.
	rec *keyRecords
}

// newGeneric returns an empty generic layout for keys of types.
func newGeneric(types []arrow.DataType) *generic {
	return &generic{slots: make([]uint64, InitialSlots), shift: initialShift, rec: newKeyRecords(types)}
}

func (g *generic) memSize() int64 {
	n := int64(len(g.slots))*8 + int64(cap(g.hashes))*8
	if g.rec != nil {
		n += int64(cap(g.rec.data)) * 8
	}
	return n
}

func (g *generic) worstCase(t *Table, _ []arrow.Array, n int) int64 {
	grow := slotGrowth(len(g.slots), t.n+n, 8)
	grow += int64(n) * 8 * 2 // hashes, amortised append doubling
	if g.rec != nil {
		grow += int64(n) * int64(g.rec.words) * 8 * 2 // records, the same
	}
	return grow
}

// lookup encodes, hashes and looks up the rows that may differ from the
// row before (all of sel with a selection); the repeated rows take the id
// of the row before at the end.
func (g *generic) lookup(t *Table, p *Probe, cols []arrow.Array, n int, sel []int32, out []uint32, insert bool) {
	p.reset(n)
	rec := g.rec
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
			g.dropRecords(t)
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
		if c := SlotsFor(t.n + len(p.pending)); c > len(g.slots) {
			g.grow(c)
		}
		g.hashes = growDouble(g.hashes, len(p.pending))
	}
	for _, r := range p.pending {
		p.pos[r] = uint32(p.rowHash[r] >> g.shift)
	}
	slots := g.slots
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
						g.hashes = append(g.hashes, h)
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

// dropRecords ends the records for good: t's stored keys are rehashed by
// HashColumns and the slots rebuilt, ids unchanged.
func (g *generic) dropRecords(t *Table) {
	g.rec = nil
	t.changes++
	g.hashes = g.hashes[:t.n]
	if t.n > 0 {
		stored := t.storedKeys()
		kernel.HashColumns(stored, g.hashes)
		releaseArrays(stored)
	}
	g.grow(len(g.slots))
}

// grow resizes g to c slots (a power of two larger than now) and
// reinserts every id by its stored hash, in one pass.
func (g *generic) grow(c int) {
	g.slots = make([]uint64, c)
	g.shift = uint(64 - bits.TrailingZeros(uint(c)))
	mask := uint32(len(g.slots) - 1)
	for id, h := range g.hashes {
		s := uint32(h >> g.shift)
		for g.slots[s] != 0 {
			s = (s + 1) & mask
		}
		g.slots[s] = uint64(uint32(h))<<32 | uint64(id+1)
	}
}
