package quiver

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver/catalog"
	"github.com/quiverdb/quiver/exec"
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
	// The rows move outside the Go heap (exec.OffHeapAllocator) batch by
	// batch as they arrive: a gigabyte of tables on the heap would make the
	// collector let garbage grow by as much again before each cycle, and
	// copying as they stream keeps only one batch on the heap at a time.
	offHeap := exec.NewOffHeapAllocator()
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
		batches = append(batches, exec.CopyBatch(offHeap, b))
	}
	// The catalog takes over the one reference of each copy.
	n := max(1, s.snapshot().targetPartitions)
	parts := make([][]arrow.RecordBatch, n)
	var rows int64
	for i, b := range batches {
		parts[i%n] = append(parts[i%n], b)
		rows += b.NumRows()
	}
	schema := df.Schema()
	if len(batches) > 0 {
		schema = batches[0].Schema()
	}
	mt := &catalog.Table{Name: t.Name, Schema: schema, Format: catalog.Memory, Partitions: parts, Rows: rows, Distinct: t.Distinct}
	if err := s.cat.RegisterTable(mt, true); err != nil {
		release()
		return err
	}
	return nil
}
