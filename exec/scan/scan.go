package scan

import (
	"context"
	"errors"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/quiverdb/quiver/exec/execop"
	"github.com/quiverdb/quiver/exec/scan/parquet"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
)

// batchSource yields the batches of one file (or memory partition) with
// the scan's projected columns in output order; their types may still
// differ from the scan's output schema (the scan conforms them). next
// returns io.EOF at the end; the caller owns each batch. close is
// idempotent and releases everything.
type batchSource interface {
	next(ctx context.Context) (arrow.RecordBatch, error)
	close()
}

// scanOp reads one partition of a Scan: each of the partition's files in
// turn (or the memory table's partition), conforming every batch to the
// scan's output schema, slicing batches bigger than BatchSize and stopping
// after Fetch rows.
type scanOp struct {
	tc        *execop.TaskContext
	n         *physical.Scan
	partition int
	schema    *arrow.Schema
	files     []string
	ranges    []physical.RowGroupRange // parallels files when the scan splits Parquet files; else nil
	proj      []int                    // file schema column per output column
	prune     []pruneTerm
	// keyRanges holds what the hash joins above learnt of the keys this
	// scan's rows must have to meet a build row (execop.KeyRange).
	keyRanges *execop.KeyRanges

	fileIdx     int
	src         batchSource
	pending     arrow.RecordBatch // conformed batch being sliced
	pendingFile int               // the index in files of the file pending came from
	hive        *hiveCols         // adds hive partition columns; nil without
	off         int64
	emitted     int64
	done        bool
	closed      bool

	// row-group statistics of Parquet reads, for tests and metrics
	rowGroupsRead, rowGroupsPruned int
}

func NewScan(tc *execop.TaskContext, planned *physical.Scan, partition int) (execop.Operator, error) {
	countScan(planned.Table)
	// A hive-partitioned table's files are read through the node narrowed
	// to the file columns; hive adds the partition columns back.
	hive, n, err := newHiveCols(planned)
	if err != nil {
		return nil, err
	}
	s := &scanOp{tc: tc, n: n, partition: partition, schema: n.Schema(), hive: hive}
	if n.Projection == nil {
		s.proj = make([]int, n.FileSchema.NumFields())
		for i := range s.proj {
			s.proj[i] = i
		}
	} else {
		s.proj = n.Projection
	}
	for _, c := range s.proj {
		if c < 0 || c >= n.FileSchema.NumFields() {
			return nil, qerr.Internalf("exec: scan of %s: projected column %d out of range (%d columns)", n.Table, c, n.FileSchema.NumFields())
		}
	}
	switch n.Format {
	case physical.FormatParquet, physical.FormatCSV, physical.FormatArrow, physical.FormatJSON:
		if partition < len(n.Partitions) {
			s.files = n.Partitions[partition]
		}
		if n.RowGroups != nil {
			if n.Format != physical.FormatParquet || len(n.RowGroups) != len(n.Partitions) ||
				(partition < len(n.RowGroups) && len(n.RowGroups[partition]) != len(s.files)) {
				return nil, qerr.Internalf("exec: scan of %s: row-group ranges do not match the partitions' files", n.Table)
			}
			if partition < len(n.RowGroups) {
				s.ranges = n.RowGroups[partition]
			}
		}
	case physical.FormatMemory:
		if tc.MemoryTables == nil {
			return nil, qerr.Internalf("exec: scan of memory table %s: no memory tables in the task context", n.Table)
		}
		parts, ok := tc.MemoryTables(n.Table)
		releasePartitions(parts)
		if !ok {
			return nil, qerr.Execf("exec: scan: memory table %q not found", n.Table)
		}
	default:
		return nil, qerr.NotImplementedf("exec: scan of %s: format %q is not supported", n.Table, n.Format)
	}
	if n.Format == physical.FormatParquet && n.Predicate != nil {
		s.prune = pruneTerms(n.Predicate, s.schema)
	}
	if n.Format == physical.FormatParquet && hive == nil {
		// (a hive scan's narrowed node numbers its columns differently)
		s.keyRanges = tc.ScanKeyRanges(planned)
	}
	var op execop.Operator = s
	if tc.WrapSource != nil {
		op = tc.WrapSource(planned, partition, op)
	}
	return op, nil
}

func (s *scanOp) Open(ctx context.Context) error {
	if s.n.Format == physical.FormatMemory {
		// Resolved again here, not kept from Build: a table dropped in
		// between must fail the scan, never read as an empty partition.
		parts, ok := s.tc.MemoryTables(s.n.Table)
		if !ok {
			return qerr.Execf("exec: scan: memory table %q not found", s.n.Table)
		}
		var bs []arrow.RecordBatch
		if s.partition < len(parts) {
			bs = parts[s.partition]
			parts[s.partition] = nil
		}
		releasePartitions(parts)
		s.src = &memorySource{batches: bs, proj: s.proj}
	}
	return nil
}

func (s *scanOp) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	bs := int64(s.tc.BatchRows())
	for {
		if s.done || (s.n.Fetch >= 0 && s.emitted >= s.n.Fetch) {
			s.done = true
			s.releaseCurrent()
			return nil, io.EOF
		}
		if s.pending != nil {
			rows := s.pending.NumRows()
			if s.off >= rows {
				s.pending.Release()
				s.pending = nil
				continue
			}
			end := min(rows, s.off+bs)
			if s.n.Fetch >= 0 {
				// capped before adding: a pushed-down fetch may be near MaxInt64
				end = min(end, s.off+min(s.n.Fetch-s.emitted, rows))
			}
			var out arrow.RecordBatch
			if s.off == 0 && end == rows {
				out, s.pending = s.pending, nil
			} else {
				out = s.pending.NewSlice(s.off, end)
				s.off = end
			}
			s.emitted += out.NumRows()
			if s.hive != nil {
				return s.hive.attach(s.tc.Mem, out, s.files[s.pendingFile])
			}
			return out, nil
		}
		if s.src == nil {
			if s.fileIdx >= len(s.files) {
				s.done = true
				continue
			}
			src, err := s.openFile(ctx, s.fileIdx)
			if err != nil {
				return nil, err
			}
			s.fileIdx++
			s.src = src
		}
		b, err := s.src.next(ctx)
		if errors.Is(err, io.EOF) {
			s.src.close()
			s.src = nil
			if s.n.Format == physical.FormatMemory {
				s.done = true
			}
			continue
		}
		if err != nil {
			return nil, err
		}
		conformed, err := s.conform(ctx, b)
		b.Release()
		if err != nil {
			return nil, err
		}
		if conformed.NumRows() == 0 {
			conformed.Release()
			continue
		}
		s.pending, s.off = conformed, 0
		s.pendingFile = s.fileIdx - 1
	}
}

// openFile opens the partition's i-th file (only its row-group range, if any).
func (s *scanOp) openFile(ctx context.Context, i int) (batchSource, error) {
	path := s.files[i]
	countFile(s.n.Table)
	switch s.n.Format {
	case physical.FormatParquet:
		rg := physical.RowGroupRange{Start: 0, End: -1}
		if s.ranges != nil {
			rg = s.ranges[i]
		}
		return s.openParquet(ctx, path, rg)
	case physical.FormatCSV:
		return openCSV(s, path)
	case physical.FormatArrow:
		return openIPC(s, path)
	case physical.FormatJSON:
		return openJSON(s, path)
	}
	return nil, qerr.Internalf("exec: scan of %s: no file reader for format %q", s.n.Table, s.n.Format)
}

// conform rebuilds b (the projected columns in output order) with the
// scan's output schema, casting columns whose type differs (such as a
// reader's Int64 for a Parquet decimal). The caller keeps its reference to b.
func (s *scanOp) conform(ctx context.Context, b arrow.RecordBatch) (arrow.RecordBatch, error) {
	if int(b.NumCols()) != s.schema.NumFields() {
		return nil, qerr.Internalf("exec: scan of %s: reader produced %d columns, want %d", s.n.Table, b.NumCols(), s.schema.NumFields())
	}
	cols := make([]arrow.Array, len(s.proj))
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for i := range cols {
		col := b.Column(i)
		want := s.schema.Field(i).Type
		if arrow.TypeEqual(col.DataType(), want) {
			col.Retain()
			cols[i] = col
			continue
		}
		cctx := compute.WithAllocator(ctx, s.tc.Mem)
		cast, err := compute.CastArray(cctx, col, compute.SafeCastOptions(want))
		if err != nil {
			return nil, qerr.Execf("exec: scan of %s: column %q has type %s in the data, want %s: %w",
				s.n.Table, s.schema.Field(i).Name, col.DataType(), want, err)
		}
		cols[i] = cast
	}
	return array.NewRecordBatch(s.schema, cols, b.NumRows()), nil
}

func (s *scanOp) releaseCurrent() {
	if s.pending != nil {
		s.pending.Release()
		s.pending = nil
	}
	if s.src != nil {
		s.src.close()
		s.src = nil
	}
}

func (s *scanOp) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	s.releaseCurrent()
	return nil
}

// memorySource projects the borrowed batches of one memory partition.
type memorySource struct {
	batches []arrow.RecordBatch
	proj    []int
	i       int
}

func (m *memorySource) next(ctx context.Context) (arrow.RecordBatch, error) {
	if m.i >= len(m.batches) {
		return nil, io.EOF
	}
	b := m.batches[m.i]
	m.batches[m.i] = nil
	m.i++
	defer b.Release()
	return projectBatch(b, m.proj), nil
}

// close releases the batches not read yet.
func (m *memorySource) close() {
	for _, b := range m.batches[m.i:] {
		b.Release()
	}
	m.batches = nil
}

// releasePartitions releases every batch of parts (nil entries are skipped).
func releasePartitions(parts [][]arrow.RecordBatch) {
	for _, p := range parts {
		for _, b := range p {
			if b != nil {
				b.Release()
			}
		}
	}
}

// projectBatch returns a new batch of b's columns proj (b keeps its reference).
func projectBatch(b arrow.RecordBatch, proj []int) arrow.RecordBatch {
	cols := make([]arrow.Array, len(proj))
	fields := make([]arrow.Field, len(proj))
	for i, c := range proj {
		cols[i] = b.Column(c)
		fields[i] = b.Schema().Field(c)
	}
	return array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, b.NumRows())
}

// openParquet opens one Parquet file through the parquet room's reader.
func (s *scanOp) openParquet(ctx context.Context, path string, rg physical.RowGroupRange) (batchSource, error) {
	names := make([]string, s.schema.NumFields())
	for i := range names {
		names[i] = s.schema.Field(i).Name
	}
	opts := parquet.Options{
		Table:         s.n.Table,
		Columns:       names,
		BatchRows:     s.tc.BatchRows(),
		Mem:           s.tc.Mem,
		OnlyPartition: len(s.n.Partitions) == 1,
	}
	var ranges []execop.KeyRange
	if s.keyRanges != nil {
		ranges = s.keyRanges.Snapshot()
	}
	switch {
	case len(ranges) > 0:
		opts.Skip = func(rows int64, stats func(col int) metadata.TypedStatistics) bool {
			if s.canSkip(rows, stats) {
				return true
			}
			if s.outsideRanges(ranges, stats) {
				countKeyRangeSkip(s.n.Table)
				return true
			}
			return false
		}
	case len(s.prune) > 0:
		opts.Skip = s.canSkip
	}
	r, err := parquet.Open(ctx, path, rg, opts)
	if err != nil {
		return nil, err
	}
	return &parquetSource{r: r, s: s}, nil
}

// parquetSource adapts a parquet.Reader to batchSource, adding its row-group
// counts to the scan's when it closes.
type parquetSource struct {
	r *parquet.Reader
	s *scanOp
}

func (p *parquetSource) next(ctx context.Context) (arrow.RecordBatch, error) { return p.r.Next(ctx) }

func (p *parquetSource) close() {
	if p.r == nil {
		return
	}
	read, skipped := p.r.RowGroups()
	p.s.rowGroupsRead += read
	p.s.rowGroupsPruned += skipped
	p.r.Close()
	p.r = nil
}
