package quiver

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver/catalog"
	"github.com/quiverdb/quiver/exec/hashtable"
	"github.com/quiverdb/quiver/exec/scan"
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
	schema := df.Schema()
	batches, _, err := collectOffHeap(ctx, df, schema)
	if err != nil {
		return qerr.Execf("load into memory %q: %w", name, err)
	}
	// SplitContiguous takes over the copies; the catalog takes over the
	// parts' one reference to each batch.
	n := localTargetPartitions(s.snapshot())
	parts, rows := scan.SplitContiguous(batches, n)
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
