package catalog

import (
	"math"
	"slices"

	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
)

// KeyRange is the smallest and largest value (as int64) of an integer-like
// column over some rows, known only when those rows hold no NULL in it.
// Known with Lo > Hi means the rows hold no value at all. The planner reads
// ranges to find columns whose values never occur in two scan partitions
// (see Disjoint), which lets an aggregate grouped by such a column skip the
// exchange.
type KeyRange struct {
	Lo, Hi int64
	Known  bool
	// Bounded, when Known is false, says Lo..Hi still bound the non-NULL
	// values though some row may be NULL: no disjointness follows, but the
	// hash tables size and pack keys by it (physical.ColumnStats).
	Bounded bool
	// LongestAtLeast, of a string column, is the length of the longer of
	// the rows' smallest and largest value (so some value is at least
	// that long), NULLs or not; 0 when unknown. The hash tables read it to
	// skip a layout for short strings that could not hold these keys.
	LongestAtLeast int
}

// EmptyRange is the range of no rows: known, and the identity of Union.
var EmptyRange = KeyRange{Lo: math.MaxInt64, Hi: math.MinInt64, Known: true}

// Union is the range covering the rows of r and o; unknown if either is.
func (r KeyRange) Union(o KeyRange) KeyRange {
	long := max(r.LongestAtLeast, o.LongestAtLeast)
	if (!r.Known && !r.Bounded) || (!o.Known && !o.Bounded) {
		return KeyRange{LongestAtLeast: long}
	}
	known := r.Known && o.Known
	return KeyRange{Lo: min(r.Lo, o.Lo), Hi: max(r.Hi, o.Hi), Known: known, Bounded: !known, LongestAtLeast: long}
}

// Disjoint reports whether every range is known and no two non-empty
// ranges share a value: then no value occurs in two of the row sets they
// describe.
func Disjoint(ranges []KeyRange) bool {
	var live []KeyRange
	for _, r := range ranges {
		if !r.Known {
			return false
		}
		if r.Lo <= r.Hi {
			live = append(live, r)
		}
	}
	slices.SortFunc(live, func(a, b KeyRange) int {
		switch {
		case a.Lo < b.Lo:
			return -1
		case a.Lo > b.Lo:
			return 1
		}
		return 0
	})
	for i := 1; i < len(live); i++ {
		if live[i].Lo <= live[i-1].Hi {
			return false
		}
	}
	return true
}

// rowGroupRanges reads each row group's KeyRange of each top-level column
// from a flat Parquet file's statistics: known for INT32 and INT64 columns
// (integers, dates) whose chunk records min, max and a NULL count of zero,
// bounded when that count is above zero.
// Nil for a nested schema (leaf and field indexes differ).
func rowGroupRanges(pf *file.Reader, fields int) [][]KeyRange {
	md := pf.MetaData()
	if md.Schema.NumColumns() != fields {
		return nil
	}
	out := make([][]KeyRange, pf.NumRowGroups())
	for rg := range out {
		rmd := md.RowGroup(rg)
		out[rg] = make([]KeyRange, fields)
		for c := range fields {
			out[rg][c] = chunkRange(rmd, c)
		}
	}
	return out
}

// chunkStats returns column c's statistics in a row group, or nil where
// the footer gives none.
func chunkStats(rmd *metadata.RowGroupMetaData, c int) metadata.TypedStatistics {
	cc, err := rmd.ColumnChunk(c)
	if err != nil {
		return nil
	}
	if set, _ := cc.StatsSet(); !set {
		return nil
	}
	st, err := cc.Statistics()
	if err != nil {
		return nil
	}
	return st
}

func chunkRange(rmd *metadata.RowGroupMetaData, c int) KeyRange {
	if rmd.NumRows() == 0 {
		return EmptyRange
	}
	st := chunkStats(rmd, c)
	if st == nil || !st.HasMinMax() {
		return KeyRange{}
	}
	if s, ok := st.(*metadata.ByteArrayStatistics); ok {
		return KeyRange{LongestAtLeast: max(len(s.Min()), len(s.Max()))}
	}
	if !st.HasNullCount() {
		return KeyRange{}
	}
	known := st.NullCount() == 0
	var r KeyRange
	switch s := st.(type) {
	case *metadata.Int32Statistics:
		r = KeyRange{Lo: int64(s.Min()), Hi: int64(s.Max()), Known: known, Bounded: !known}
	case *metadata.Int64Statistics:
		r = KeyRange{Lo: s.Min(), Hi: s.Max(), Known: known, Bounded: !known}
	}
	if r.Lo > r.Hi {
		// Unsigned statistics spanning 2^63 reverse as int64: unknown.
		return KeyRange{}
	}
	return r
}
