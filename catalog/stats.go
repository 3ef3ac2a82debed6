package catalog

import (
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
)

// distinctBounds bounds the number of distinct values of each top-level
// column of a flat Parquet table from its footers: the files' distinct
// counts when written, else, for integer columns, the width of the
// [min, max] range of the column's statistics; both capped at the row
// count. Only the optimizer reads these figures, to order joins; they need
// to be right in magnitude, not exact. Call add once per file, then result.
type distinctBounds struct {
	cols []colBound
	flat bool
}

type colBound struct {
	lo, hi   int64
	seen     bool // lo and hi hold a range
	unknown  bool // some row group gave nothing usable
	distinct int64
	// vals is the range of the non-NULL values (Known false once a row
	// group gave no usable bounds; Lo > Hi while none was seen).
	vals KeyRange
}

func newDistinctBounds(fields int) *distinctBounds {
	d := &distinctBounds{cols: make([]colBound, fields), flat: true}
	for c := range d.cols {
		d.cols[c].vals = EmptyRange
	}
	return d
}

func (d *distinctBounds) add(pf *file.Reader) {
	md := pf.MetaData()
	if md.Schema.NumColumns() != len(d.cols) {
		d.flat = false // nested: leaf and field indexes differ
		return
	}
	for rg := 0; rg < pf.NumRowGroups(); rg++ {
		rmd := md.RowGroup(rg)
		for c := range d.cols {
			if !d.cols[c].unknown {
				d.cols[c].add(rmd, c)
			}
			if d.cols[c].vals.Known {
				d.cols[c].vals = d.cols[c].vals.Union(valueRange(rmd, c))
			}
		}
	}
}

func (b *colBound) add(rmd *metadata.RowGroupMetaData, c int) {
	cc, err := rmd.ColumnChunk(c)
	if err != nil {
		b.unknown = true
		return
	}
	if set, _ := cc.StatsSet(); !set {
		b.unknown = true
		return
	}
	st, err := cc.Statistics()
	if err != nil || st == nil {
		b.unknown = true
		return
	}
	if st.HasDistinctCount() {
		b.distinct += st.DistinctCount()
		return
	}
	if !st.HasMinMax() {
		// An all-NULL chunk adds no values; anything else is unbounded.
		b.unknown = rmd.NumRows() > 0 && (!st.HasNullCount() || st.NullCount() < rmd.NumRows())
		return
	}
	var lo, hi int64
	switch s := st.(type) {
	case *metadata.Int32Statistics:
		lo, hi = int64(s.Min()), int64(s.Max())
	case *metadata.Int64Statistics:
		lo, hi = s.Min(), s.Max()
	default:
		b.unknown = true
		return
	}
	if !b.seen || lo < b.lo {
		b.lo = lo
	}
	if !b.seen || hi > b.hi {
		b.hi = hi
	}
	b.seen = true
}

// valueRange is the range of column c's non-NULL values in a row group,
// unknown unless its statistics give integer bounds (or say it holds only
// NULLs: then EmptyRange).
func valueRange(rmd *metadata.RowGroupMetaData, c int) KeyRange {
	st := chunkStats(rmd, c)
	if st == nil {
		return KeyRange{}
	}
	if !st.HasMinMax() {
		if rmd.NumRows() == 0 || (st.HasNullCount() && st.NullCount() >= rmd.NumRows()) {
			return EmptyRange
		}
		return KeyRange{}
	}
	switch s := st.(type) {
	case *metadata.Int32Statistics:
		return KeyRange{Lo: int64(s.Min()), Hi: int64(s.Max()), Known: true}
	case *metadata.Int64Statistics:
		return KeyRange{Lo: s.Min(), Hi: s.Max(), Known: true}
	}
	return KeyRange{}
}

// ranges returns each column's range of non-NULL values (unknown where
// some row group gave none, or where no value was seen), or nil for a
// nested schema.
func (d *distinctBounds) ranges() []KeyRange {
	if !d.flat {
		return nil
	}
	out := make([]KeyRange, len(d.cols))
	for c, b := range d.cols {
		if b.vals.Known && b.vals.Lo <= b.vals.Hi {
			out[c] = KeyRange{Lo: b.vals.Lo, Hi: b.vals.Hi, Known: true}
		}
	}
	return out
}

// result returns one bound per column, 0 where unknown, or nil for a nested schema.
func (d *distinctBounds) result(rows int64) []int64 {
	if !d.flat {
		return nil
	}
	out := make([]int64, len(d.cols))
	for c, b := range d.cols {
		if b.unknown || rows <= 0 {
			continue
		}
		n := rows
		if b.distinct > 0 {
			n = min(n, b.distinct)
		}
		if b.seen {
			if w := b.hi - b.lo + 1; w > 0 { // w <= 0: the range overflowed int64
				n = min(n, w)
			}
		}
		if b.distinct == 0 && !b.seen {
			continue
		}
		out[c] = max(n, 1)
	}
	return out
}
