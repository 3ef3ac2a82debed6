package hashtable

import (
	"math"
	"math/bits"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver/physical"
)

// The first layout. Where the keys' statistics bound them exactly
// (physical.ColumnStats: every value in [Lo, Hi]; a packed column that may
// hold NULL gets a nullable field, one code wider),
// the layout is chosen once from them and never has to change: direct when
// the window is small for the number of keys there can be, packed when the
// columns' exact ranges fit 63 bits together, hashed integers or generic
// otherwise, generic without records when a string is known too long for
// one. Without such statistics the key types choose, and the data may
// move the table on (direct → hashed, packed → generic): that one-way
// switch is only the safety net for missing statistics.

// choose sets t's first layout from its key types and stats (parallel to
// t.types; nil or short: none), rows being an upper bound of the rows the
// table will see (-1: unknown).
func (t *Table) choose(stats []physical.ColumnStats, rows int64) {
	types := t.types
	known := len(stats) == len(types)
	switch {
	case len(types) == 1 && isIntLike(types[0]):
		if known && stats[0].Bounded && stats[0].Lo <= stats[0].Hi {
			s := stats[0]
			t.layout, t.first = intLayoutFor(s.Lo, s.Hi, keyBound(uint64(s.Hi)-uint64(s.Lo), s.Distinct, rows))
			t.byStats = true
			return
		}
		t.layout, t.first = newDirectInts(), physical.LayoutDirect
	case packable(types):
		if known {
			if l, first, ok := packedFor(types, stats, rows); ok {
				t.layout, t.first, t.byStats = l, first, true
				return
			}
		}
		t.layout, t.first = &packedInts{ints: newDirectInts()}, physical.LayoutPacked
	default:
		g, by := genericFor(types, stats)
		t.layout, t.first, t.byStats = g, physical.LayoutGeneric, by
	}
}

// genericFor is the generic layout for keys of types, without records from
// the start when stats (nil: none) show a string too long for one (the
// records would end at the first batch); by reports that stats decided.
func genericFor(types []arrow.DataType, stats []physical.ColumnStats) (*generic, bool) {
	g := newGeneric(types)
	if g.rec == nil || len(stats) != len(types) {
		return g, false
	}
	for _, s := range stats {
		if s.LongestAtLeast > recordStringBytes {
			g.rec = nil
			return g, true
		}
	}
	return g, false
}

// keyBound is an upper bound of the distinct keys of a column spanning
// span+1 values with at most distinct (0: unknown) distinct values over at
// most rows rows (-1: unknown); -1 when only the span bounds them.
func keyBound(span uint64, distinct, rows int64) int64 {
	b := int64(-1)
	if distinct > 0 {
		b = distinct
	}
	if rows >= 0 && (b < 0 || rows < b) {
		b = rows
	}
	if b >= 0 && span < uint64(b) {
		b = int64(span) + 1
	}
	return b
}

// directByStats reports whether keys known to lie in [lo, hi], at most
// keys of them (-1: unknown), take the direct layout, and the values its
// window covers (whole pages). Up to two pages are taken whatever the key
// count (one page is always allowed and a range of one page's width may
// straddle two); wider windows when directLimit allows them for keys.
func directByStats(lo, hi, keys int64) (uint64, bool) {
	pages := (uint64(hi)-uint64(lo&^pageMask))>>pageBits + 1
	if pages > directMax>>pageBits {
		return 0, false
	}
	values := pages << pageBits
	if pages <= 2 {
		return values, true
	}
	return values, keys >= 0 && values <= directLimit(int(keys))
}

// intLayoutFor is the layout of one integer column, or of packed keys, known
// to lie in [lo, hi] with at most keys distinct values (-1: unknown).
func intLayoutFor(lo, hi, keys int64) (layout, physical.HashLayout) {
	if values, ok := directByStats(lo, hi, keys); ok {
		d := newDirectInts()
		d.allow = values
		return d, physical.LayoutDirect
	}
	return newHashedInts(InitialSlots), physical.LayoutHashed
}

// packedFor chooses from exact statistics between the packed layout, with
// fields that fit every key and the integer layout they use, and the
// generic one: ok false when the statistics do not decide (a column
// unbounded, or a string whose length is unknown).
func packedFor(types []arrow.DataType, stats []physical.ColumnStats, rows int64) (layout, physical.HashLayout, bool) {
	for i, dt := range types {
		if dt.ID() == arrow.STRING && stats[i].LongestAtLeast > maxCodeLen {
			g, _ := genericFor(types, stats) // a value has no code
			return g, physical.LayoutGeneric, true
		}
	}
	fields := make([]packField, len(types))
	total := uint(0)
	combos := uint64(1) // the key tuples the fields can tell apart, capped
	for i, dt := range types {
		s := stats[i]
		if !isIntLike(dt) || !s.Bounded || s.Lo > s.Hi {
			return nil, 0, false
		}
		base, null := s.Lo, !s.NoNulls
		if null {
			if base == math.MinInt64 {
				return nil, 0, false // no room for the NULL code
			}
			base-- // code 0, the NULL
		}
		span := uint64(s.Hi) - uint64(base)
		w := uint(bits.Len64(span))
		fields[i] = packField{base: base, width: w, nullable: null}
		total += w
		if hi, lo := bits.Mul64(combos, span+1); hi != 0 || lo > 1<<62 || span+1 == 0 {
			combos = 1 << 62
		} else {
			combos = lo
		}
	}
	if total > maxPackedBits {
		g, _ := genericFor(types, stats)
		return g, physical.LayoutGeneric, true
	}
	shift := total
	var top uint64 // the largest packed key
	for i := range fields {
		shift -= fields[i].width
		fields[i].shift = shift
		top |= (uint64(stats[i].Hi) - uint64(fields[i].base)) << shift
	}
	keys := keyBound(combos-1, 0, rows)
	ints, _ := intLayoutFor(0, int64(top), keys)
	return &packedInts{fields: fields, set: true, ints: ints}, physical.LayoutPacked, true
}
