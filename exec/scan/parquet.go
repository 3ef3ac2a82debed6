package scan

import (
	"context"
	"errors"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/quiverdb/quiver/exec/execop"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
)

// parquetSource reads one Parquet file row group by row group (so at most
// one row group's column chunks are decoded at a time), only the projected
// columns, skipping row groups whose statistics prove the scan predicate
// cannot match.
type parquetSource struct {
	s      *scanOp
	path   string
	f      *file.Reader
	fr     *pqarrow.FileReader
	leaves []int // leaf columns to read, ascending
	outPos []int // per output column, its position in the reader's batches
	fields []int // per output column, its field index in the file
	rgs    []int // row groups left to read
	rr     pqarrow.RecordReader
	mem    *execop.Recycler // the decoder's allocator (recycler.go)
	// crossed reports whether mem's allocations crossed the query's memory
	// limit (they never panic; see openParquet).
	crossed func() error
	// per field the reader returns: how to convert it (parquet_widen.go)
	uniq    []int // the distinct fields read, ascending
	fix     []colFix
	fixType []arrow.DataType
	direct  *parquetDirectReader // the direct path (parquet_direct.go), or nil
	closed  bool
}

// parquetStreamBuffer is the read buffer of a column chunk's stream: page
// headers and small pages come through it, larger pages bypass it.
const parquetStreamBuffer = 64 << 10

// openParquet opens path to read the row groups of rg (End < 0: to the end).
func openParquet(ctx context.Context, s *scanOp, path string, rg physical.RowGroupRange) (batchSource, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, qerr.IOf("exec: scan of %s: cannot open parquet file %s: %w", s.n.Table, path, err)
	}
	// The decoder allocates through a scan-local recycler (its page buffers
	// too, which the default reader properties would take from the Go heap
	// outside the query's accounting).
	// It counts against the query's limit without panicking: arrow-go's
	// readers leak what they hold when a limit panic unwinds through them,
	// so next checks the limit after each batch instead.
	soft, crossed := execop.SoftLimited(s.tc.Mem)
	rec := execop.NewScanRecycler(soft, execop.DefaultRecycleFree)
	props := parquet.NewReaderProperties(rec)
	// Stream each column chunk instead of reading it whole into a fresh
	// Go slice: page bodies are then read straight into the page reader's
	// reused (recycled) buffers.
	props.BufferedStreamEnabled = true
	props.BufferSize = parquetStreamBuffer
	f, err := file.OpenParquetFile(path, false, file.WithReadProps(props))
	if err != nil {
		rec.Close()
		return nil, qerr.Execf("exec: scan of %s: cannot read parquet file %s (corrupt or not parquet): %w", s.n.Table, path, err)
	}
	p := &parquetSource{s: s, path: path, f: f, mem: rec, crossed: crossed}
	fr, err := pqarrow.NewFileReader(f, pqarrow.ArrowReadProperties{BatchSize: int64(s.tc.BatchRows())}, rec)
	if err != nil {
		p.close()
		return nil, qerr.Execf("exec: scan of %s: cannot read parquet schema of %s: %w", s.n.Table, path, err)
	}
	p.fr = fr
	if err := p.resolveColumns(); err != nil {
		p.close()
		return nil, err
	}
	end := f.NumRowGroups()
	if rg.End >= 0 {
		if rg.End > end || rg.Start > rg.End {
			p.close()
			return nil, qerr.Execf("exec: scan of %s: parquet file %s has %d row groups, the plan reads %d to %d (the file changed since planning?)",
				s.n.Table, path, end, rg.Start, rg.End)
		}
		end = rg.End
	}
	for rg := rg.Start; rg < end; rg++ {
		if p.canSkip(rg) {
			s.rowGroupsPruned++
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

// resolveColumns maps each output column to the file's field of the same
// name (case-insensitive) and that field's leaf columns.
func (p *parquetSource) resolveColumns() error {
	fs, err := p.fr.Schema()
	if err != nil {
		return qerr.Execf("exec: scan of %s: cannot read parquet schema of %s: %w", p.s.n.Table, p.path, err)
	}
	p.fields = make([]int, len(p.s.proj))
	for i := range p.s.proj {
		name := p.s.schema.Field(i).Name
		idx := -1
		for j, f := range fs.Fields() {
			if strings.EqualFold(f.Name, name) {
				idx = j
				break
			}
		}
		if idx < 0 {
			return qerr.Execf("exec: scan of %s: parquet file %s has no column %q (it has %s)", p.s.n.Table, p.path, name, fieldNames(fs))
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

// next returns the next batch, or the memory limit's error once the
// reader's allocations crossed it (the batch is released).
func (p *parquetSource) next(ctx context.Context) (arrow.RecordBatch, error) {
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
func (p *parquetSource) read(ctx context.Context) (arrow.RecordBatch, error) {
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
			p.s.rowGroupsRead++
			if len(p.leaves) == 0 {
				// No columns: only the row count matters.
				n := p.f.MetaData().RowGroup(rg).NumRows()
				return array.NewRecordBatch(arrow.NewSchema(nil, nil), nil, n), nil
			}
			rr, err := p.fr.GetRecordReader(ctx, p.leaves, []int{rg})
			if err != nil {
				return nil, qerr.Execf("exec: scan of %s: cannot read row group %d of %s: %w", p.s.n.Table, rg, p.path, err)
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
			return nil, qerr.Execf("exec: scan of %s: cannot read parquet file %s: %w", p.s.n.Table, p.path, err)
		}
		// b is borrowed until the next Read; finish takes its own references.
		return p.finish(b)
	}
}

func (p *parquetSource) close() {
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
