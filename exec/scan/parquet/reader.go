package parquet

import (
	"context"
	"errors"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	pq "github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/quiverdb/quiver/exec/execop"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
)

// Options say what to read from a file and on whose account.
type Options struct {
	// Table names the scanned table in error messages.
	Table string
	// Columns are the output columns, each matched to the file's field of
	// the same name (case-insensitive); a name may repeat.
	Columns []string
	// BatchRows is the most rows a batch holds.
	BatchRows int
	// Mem is the task's allocator: every buffer the reader makes is
	// charged to it.
	Mem memory.Allocator
	// OnlyPartition says the file is read by its table's only partition:
	// the direct decoder may then share the work with a helper goroutine.
	OnlyPartition bool
	// Skip, when set, reports whether a row group of rows rows can be
	// skipped, given each output column's statistics in the file (stats
	// returns nil where the footer has none usable).
	Skip func(rows int64, stats func(col int) metadata.TypedStatistics) bool
}

// Reader reads one Parquet file row group by row group (so at most one row
// group's column chunks are decoded at a time), only the requested
// columns, skipping the row groups Options.Skip rules out.
type Reader struct {
	opts   Options
	path   string
	f      *file.Reader
	fr     *pqarrow.FileReader
	leaves []int // leaf columns to read, ascending
	outPos []int // per output column, its position in the reader's batches
	fields []int // per output column, its field index in the file
	rgs    []int // row groups left to read
	rr     pqarrow.RecordReader
	mem    *execop.Recycler // the decoder's allocator
	// crossed reports whether mem's allocations crossed the query's memory
	// limit (they never panic; see Open).
	crossed func() error
	// per field the record reader returns: how to convert it (widen.go)
	uniq    []int // the distinct fields read, ascending
	fix     []colFix
	fixType []arrow.DataType
	direct  *directReader // the direct path (direct.go), or nil
	closed  bool

	rowGroupsRead, rowGroupsPruned int
}

// streamBuffer is the read buffer of a column chunk's stream: page
// headers and small pages come through it, larger pages bypass it.
const streamBuffer = 64 << 10

// Open opens path to read the row groups of rg (End < 0: to the end).
// Its batches hold the columns of opts.Columns in that order, typed as
// the file maps them to Arrow (timestamps and times in microseconds).
func Open(ctx context.Context, path string, rg physical.RowGroupRange, opts Options) (*Reader, error) {
	if opts.BatchRows <= 0 || opts.Mem == nil {
		return nil, qerr.Internalf("exec: scan of %s: parquet reader of %s opened without a batch size or an allocator", opts.Table, path)
	}
	if _, err := os.Stat(path); err != nil {
		return nil, qerr.IOf("exec: scan of %s: cannot open parquet file %s: %w", opts.Table, path, err)
	}
	// The decoder allocates through a scan-local recycler (its page buffers
	// too, which the default reader properties would take from the Go heap
	// outside the query's accounting).
	// It counts against the query's limit without panicking: arrow-go's
	// readers leak what they hold when a limit panic unwinds through them,
	// so Next checks the limit after each batch instead.
	soft, crossed := execop.SoftLimited(opts.Mem)
	rec := execop.NewScanRecycler(soft, execop.DefaultRecycleFree)
	props := pq.NewReaderProperties(rec)
	// Stream each column chunk instead of reading it whole into a fresh
	// Go slice: page bodies are then read straight into the page reader's
	// reused (recycled) buffers.
	props.BufferedStreamEnabled = true
	props.BufferSize = streamBuffer
	f, err := file.OpenParquetFile(path, false, file.WithReadProps(props))
	if err != nil {
		rec.Close()
		return nil, qerr.Execf("exec: scan of %s: cannot read parquet file %s (corrupt or not parquet): %w", opts.Table, path, err)
	}
	p := &Reader{opts: opts, path: path, f: f, mem: rec, crossed: crossed}
	fr, err := pqarrow.NewFileReader(f, pqarrow.ArrowReadProperties{BatchSize: int64(opts.BatchRows)}, rec)
	if err != nil {
		p.Close()
		return nil, qerr.Execf("exec: scan of %s: cannot read parquet schema of %s: %w", opts.Table, path, err)
	}
	p.fr = fr
	if err := p.resolveColumns(); err != nil {
		p.Close()
		return nil, err
	}
	end := f.NumRowGroups()
	if rg.End >= 0 {
		if rg.End > end || rg.Start > rg.End {
			p.Close()
			return nil, qerr.Execf("exec: scan of %s: parquet file %s has %d row groups, the plan reads %d to %d (the file changed since planning?)",
				opts.Table, path, end, rg.Start, rg.End)
		}
		end = rg.End
	}
	for rg := rg.Start; rg < end; rg++ {
		if p.canSkip(rg) {
			p.rowGroupsPruned++
			continue
		}
		p.rgs = append(p.rgs, rg)
	}
	p.planDirect()
	if p.direct == nil {
		p.planFixes(p.uniq)
	}
	return p, nil
}

// RowGroups reports how many row groups the reader has started reading
// and how many Options.Skip ruled out.
func (p *Reader) RowGroups() (read, skipped int) { return p.rowGroupsRead, p.rowGroupsPruned }

// canSkip reports whether Options.Skip rules out row group rg.
func (p *Reader) canSkip(rg int) bool {
	if p.opts.Skip == nil {
		return false
	}
	md := p.f.MetaData().RowGroup(rg)
	stats := func(col int) metadata.TypedStatistics {
		sf := &p.fr.Manifest.Fields[p.fields[col]]
		if !sf.IsLeaf() {
			return nil
		}
		cc, err := md.ColumnChunk(sf.ColIndex)
		if err != nil {
			return nil
		}
		if ok, _ := cc.StatsSet(); !ok {
			return nil
		}
		st, err := cc.Statistics()
		if err != nil || st == nil {
			return nil
		}
		return st
	}
	return p.opts.Skip(md.NumRows(), stats)
}

// resolveColumns maps each output column to the file's field of the same
// name (case-insensitive) and that field's leaf columns.
func (p *Reader) resolveColumns() error {
	fs, err := p.fr.Schema()
	if err != nil {
		return qerr.Execf("exec: scan of %s: cannot read parquet schema of %s: %w", p.opts.Table, p.path, err)
	}
	p.fields = make([]int, len(p.opts.Columns))
	for i, name := range p.opts.Columns {
		idx := -1
		for j, f := range fs.Fields() {
			if strings.EqualFold(f.Name, name) {
				idx = j
				break
			}
		}
		if idx < 0 {
			return qerr.Execf("exec: scan of %s: parquet file %s has no column %q (it has %s)", p.opts.Table, p.path, name, fieldNames(fs))
		}
		p.fields[i] = idx
	}
	// The record reader returns the requested fields in file order, once
	// each; so request the distinct fields ascending and remember where each
	// output column lands.
	uniq := slices.Clone(p.fields)
	slices.Sort(uniq)
	uniq = slices.Compact(uniq)
	p.outPos = make([]int, len(p.fields))
	for i, f := range p.fields {
		p.outPos[i], _ = slices.BinarySearch(uniq, f)
	}
	for _, f := range uniq {
		p.leaves = appendLeaves(p.leaves, &p.fr.Manifest.Fields[f])
	}
	p.uniq = uniq
	slices.Sort(p.leaves)
	return nil
}

func appendLeaves(dst []int, f *pqarrow.SchemaField) []int {
	if f.IsLeaf() {
		return append(dst, f.ColIndex)
	}
	for i := range f.Children {
		dst = appendLeaves(dst, &f.Children[i])
	}
	return dst
}

func fieldNames(s *arrow.Schema) string {
	names := make([]string, s.NumFields())
	for i, f := range s.Fields() {
		names[i] = f.Name
	}
	return strings.Join(names, ", ")
}

// Next returns the next batch (io.EOF at the end), or the memory limit's
// error once the reader's allocations crossed it (the batch is released).
// The caller owns the batch; it stays valid after Close.
func (p *Reader) Next(ctx context.Context) (arrow.RecordBatch, error) {
	b, err := p.read(ctx)
	if err == nil {
		if lerr := p.crossed(); lerr != nil {
			b.Release()
			return nil, lerr
		}
	}
	return b, err
}

// read returns the next batch of either read path.
func (p *Reader) read(ctx context.Context) (arrow.RecordBatch, error) {
	if p.direct != nil {
		return p.nextDirect(ctx)
	}
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if p.rr == nil {
			if len(p.rgs) == 0 {
				return nil, io.EOF
			}
			rg := p.rgs[0]
			p.rgs = p.rgs[1:]
			p.rowGroupsRead++
			if len(p.leaves) == 0 {
				// No columns: only the row count matters.
				n := p.f.MetaData().RowGroup(rg).NumRows()
				return array.NewRecordBatch(arrow.NewSchema(nil, nil), nil, n), nil
			}
			rr, err := p.fr.GetRecordReader(ctx, p.leaves, []int{rg})
			if err != nil {
				return nil, qerr.Execf("exec: scan of %s: cannot read row group %d of %s: %w", p.opts.Table, rg, p.path, err)
			}
			p.rr = rr
		}
		b, err := p.rr.Read()
		if errors.Is(err, io.EOF) || (err == nil && b == nil) {
			p.rr.Release()
			p.rr = nil
			continue
		}
		if err != nil {
			return nil, qerr.Execf("exec: scan of %s: cannot read parquet file %s: %w", p.opts.Table, p.path, err)
		}
		// b is borrowed until the next Read; finish takes its own references.
		return p.finish(b)
	}
}

// Close releases everything the reader holds; it is idempotent.
func (p *Reader) Close() {
	if p.closed {
		return
	}
	p.closed = true
	if p.direct != nil {
		p.closeDirect()
	}
	if p.rr != nil {
		p.rr.Release()
		p.rr = nil
	}
	if p.f != nil {
		p.f.Close()
	}
	p.mem.Close()
}
