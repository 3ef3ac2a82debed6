package scan

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// SplitContiguous cuts the batches of a table being loaded into memory, in order, into n runs of about equal row
// counts, as a Parquet scan splits row groups: a table stored in key order
// (TPC-H's line items by order key) then keeps each key in one partition,
// which the partitions' key ranges then record. A cut moves forward, by at most cutWindow
// rows, to the next row whose first column differs from the row before, so
// that rows sharing a leading key (an order's line items) stay together.
// Batches a cut falls inside are sliced (the slices share the buffers) and
// released; the parts own one reference to each batch they hold.
func SplitContiguous(batches []arrow.RecordBatch, n int) ([][]arrow.RecordBatch, int64) {
	var rows int64
	for _, b := range batches {
		rows += b.NumRows()
	}
	cuts := make([]int64, 0, n)
	for k := 1; k < n; k++ {
		cuts = append(cuts, leadingKeyCut(batches, int64(k)*rows/int64(n)))
	}
	cuts = append(cuts, rows)
	parts := make([][]arrow.RecordBatch, n)
	p := 0
	var at int64 // global row of b's first row
	for _, b := range batches {
		start, end := at, at+b.NumRows()
		at = end
		for start < end {
			for p < n-1 && cuts[p] <= start {
				p++
			}
			stop := min(end, cuts[p])
			if stop-start == b.NumRows() {
				b.Retain()
				parts[p] = append(parts[p], b)
			} else {
				off := start - (end - b.NumRows())
				parts[p] = append(parts[p], b.NewSlice(off, off+stop-start))
			}
			start = stop
		}
		b.Release()
	}
	return parts, rows
}

// cutWindow is how far a partition cut may move to a change of leading key.
const cutWindow = 1 << 14

// leadingKeyCut returns the first global row r in [at, at+cutWindow] whose
// first-column value differs from row r-1's, or at when there is none or
// the first column is not a non-NULL Int32, Int64 or Date32.
func leadingKeyCut(batches []arrow.RecordBatch, at int64) int64 {
	var prev int64
	havePrev := false
	var base int64
	for _, b := range batches {
		n := b.NumRows()
		if base+n < at {
			base += n
			continue
		}
		if b.NumCols() == 0 || b.Column(0).NullN() != 0 {
			return at
		}
		for i := max(0, at-1-base); i < n; i++ {
			r := base + i
			if r > at+cutWindow {
				return at
			}
			v, ok := intValue(b.Column(0), int(i))
			if !ok {
				return at
			}
			if havePrev && r >= at && v != prev {
				return r
			}
			prev, havePrev = v, true
		}
		base += n
	}
	return at
}

// intValue is row i of an Int32, Int64 or Date32 array.
func intValue(a arrow.Array, i int) (int64, bool) {
	switch a := a.(type) {
	case *array.Int64:
		return a.Value(i), true
	case *array.Int32:
		return int64(a.Value(i)), true
	case *array.Date32:
		return int64(a.Value(i)), true
	}
	return 0, false
}
