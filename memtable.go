package quiver

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/quiverdb/quiver/catalog"
	"github.com/quiverdb/quiver/exec/execop"
	"github.com/quiverdb/quiver/exec/hashtable"
	"github.com/quiverdb/quiver/qerr"
)

// LoadIntoMemory replaces the registered table name (Parquet, CSV, ...) by
// an in-memory copy of its rows, spread round-robin by batch over the
// session's target_partitions partitions, so that later queries read no
// files. A table already in memory is left as it is. It runs a full scan of
// the table; on error the original table stays registered.
func (s *Session) LoadIntoMemory(ctx context.Context, name string) error {
	t, ok := s.cat.Table(name)
	if !ok {
		return qerr.Planf("load into memory: table %q not found", name)
	}
	if t.Format == catalog.Memory {
		return nil
	}
	df, err := s.Table(ctx, name)
	if err != nil {
		return err
	}
	// The rows move outside the Go heap (execop.OffHeapAllocator) batch by
	// batch as they arrive: a gigabyte of tables on the heap would make the
	// collector let garbage grow by as much again before each cycle, and
	// copying as they stream keeps only one batch on the heap at a time.
	offHeap := execop.NewOffHeapAllocator()
	var batches []arrow.RecordBatch
	release := func() {
		for _, b := range batches {
			b.Release()
		}
	}
	for b, err := range df.Stream(ctx) {
		if err != nil {
			release()
			return qerr.Execf("load into memory %q: %w", name, err)
		}
		batches = append(batches, execop.CopyBatch(offHeap, b))
	}
	schema := df.Schema()
	if len(batches) > 0 {
		schema = batches[0].Schema()
	}
	// splitContiguous takes over the copies; the catalog takes over the
	// parts' one reference to each batch.
	n := localTargetPartitions(s.snapshot())
	parts, rows := splitContiguous(batches, n)
	mt := &catalog.Table{Name: t.Name, Schema: schema, Format: catalog.Memory, Partitions: parts, Rows: rows,
		Distinct: t.Distinct, PartitionRanges: partitionRanges(parts, schema.NumFields())}
	if err := s.cat.RegisterTable(mt, true); err != nil {
		for _, p := range parts {
			for _, b := range p {
				b.Release()
			}
		}
		return err
	}
	return nil
}

// splitContiguous cuts batches, in order, into n runs of about equal row
// counts, as a Parquet scan splits row groups: a table stored in key order
// (TPC-H's line items by order key) then keeps each key in one partition,
// which partitionRanges records. A cut moves forward, by at most cutWindow
// rows, to the next row whose first column differs from the row before, so
// that rows sharing a leading key (an order's line items) stay together.
// Batches a cut falls inside are sliced (the slices share the buffers) and
// released; the parts own one reference to each batch they hold.
func splitContiguous(batches []arrow.RecordBatch, n int) ([][]arrow.RecordBatch, int64) {
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

// partitionRanges is each partition's catalog.KeyRange of each column.
func partitionRanges(parts [][]arrow.RecordBatch, fields int) [][]catalog.KeyRange {
	out := make([][]catalog.KeyRange, len(parts))
	for p, bs := range parts {
		out[p] = make([]catalog.KeyRange, fields)
		for c := range fields {
			r := catalog.EmptyRange
			for _, b := range bs {
				lo, hi, ok := hashtable.IntegerRange(b.Column(c))
				r = r.Union(catalog.KeyRange{Lo: lo, Hi: hi, Known: ok})
			}
			out[p][c] = r
		}
	}
	return out
}
