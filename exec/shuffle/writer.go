package shuffle

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/quiverdb/quiver/exec/execop"
	"github.com/quiverdb/quiver/exec/kernel"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
)

// FilePath is where map partition mapPart of stage stageID of job
// jobID keeps output partition out under workDir:
// {workDir}/{jobID}/{stageID}/{out}/data-{mapPart}.arrow. The caller
// validates the parts (ValidFile) before trusting the path.
func FilePath(workDir string, jobID string, stageID, out, mapPart int) string {
	return filepath.Join(workDir, jobID, strconv.Itoa(stageID), strconv.Itoa(out), "data-"+strconv.Itoa(mapPart)+".arrow")
}

// ValidFile reports whether the parts of a shuffle file path are
// well formed: a job id that physical.ValidJobID accepts (it becomes a
// directory name, so no "..", no separators) and non-negative numbers.
// Paths built from valid parts stay under the work dir.
func ValidFile(jobID string, stageID, out, mapPart int) error {
	if !physical.ValidJobID(jobID) {
		return qerr.Internalf("exec: shuffle job id %q: want %s", jobID, physical.JobIDSyntax)
	}
	if stageID < 0 || out < 0 || mapPart < 0 {
		return qerr.Internalf("exec: shuffle file of job %s has a negative stage %d, output partition %d or map partition %d", jobID, stageID, out, mapPart)
	}
	return nil
}

// ipcCompression returns the IPC writer option of c ("" means lz4).
func ipcCompression(c physical.Compression) ([]ipc.Option, error) {
	switch c {
	case "", physical.CompressLZ4:
		return []ipc.Option{ipc.WithLZ4()}, nil
	case physical.CompressZstd:
		return []ipc.Option{ipc.WithZstd()}, nil
	case physical.CompressNone:
		return nil, nil
	}
	return nil, qerr.Planf("exec: shuffle compression %q is not one of lz4, zstd, none", c)
}

func NewShuffleWriter(tc *execop.TaskContext, n *physical.ShuffleWriter, partition int) (execop.Operator, error) {
	if tc.WorkDir == "" {
		return nil, qerr.Internalf("exec: shuffle writer of job %s stage %d needs a work dir (it runs only inside a task)", n.JobID, n.StageID)
	}
	if err := ValidFile(n.JobID, n.StageID, 0, partition); err != nil {
		return nil, err
	}
	if n.N < 0 || (len(n.Keys) > 0 && n.N == 0) {
		return nil, qerr.Internalf("exec: shuffle writer of job %s stage %d: %d output partitions with %d keys", n.JobID, n.StageID, n.N, len(n.Keys))
	}
	opts, err := ipcCompression(n.Compression)
	if err != nil {
		return nil, err
	}
	if n.Pinned {
		// A pinned (cache) file is written once and read back by every
		// query over the cache: uncompressed, a local read uses the file's
		// pages as column buffers (filemap), where any codec would make
		// every read decompress into fresh memory and the build pay for
		// compressing too. The price is disk, and Flight bytes when a
		// cache is read remotely.
		opts = nil
	}
	keys, err := kernel.CompileExprs(n.Keys)
	if err != nil {
		return nil, err
	}
	input, err := tc.Build(n.Input, partition)
	if err != nil {
		return nil, err
	}
	w := &shuffleWriteOp{tc: tc, n: n, mapPart: partition, input: input, keys: keys, ipcOpts: opts, schema: n.Input.Schema()}
	switch {
	case len(n.Keys) == 0 && n.N == 0: // passthrough: map partition p writes output p
		w.outs = []int{partition}
	case len(n.Keys) == 0: // single
		w.outs = []int{0}
	default:
		w.outs = make([]int, n.N)
		for i := range w.outs {
			w.outs[i] = i
		}
	}
	return w, nil
}

// shuffleWriteOp runs map partition mapPart of a stage: it drains its input,
// routes the rows to output partitions and appends them to one Arrow IPC
// stream file per output partition. All the work happens in the first Next,
// which then returns one ShuffleWriteStatsSchema batch; the next call
// returns io.EOF.
//
// Files are written under temporary names and renamed into place only once
// every file is complete, so a crashed or failed task never leaves a file
// that looks finished. On failure, cancellation or an early Close, the
// temporary and renamed files of this attempt are removed. Directories are
// kept: other map tasks share them.
//
// A writer with one output file and an InlineLimit keeps the file's bytes
// in memory while they fit the limit and makes the file (directories
// included) only once they pass it; a file that never does is returned in
// the stats batch's inline column and never touches the disk. A small
// query result so costs no file system calls and no fetch.
type shuffleWriteOp struct {
	tc      *execop.TaskContext
	n       *physical.ShuffleWriter
	mapPart int
	input   execop.Operator
	keys    []kernel.ExprRunner
	ipcOpts []ipc.Option
	schema  *arrow.Schema
	outs    []int // output partition of each file

	files    []*shuffleFile // parallel to outs, while writing
	renamed  []string       // final paths already in place (removed on failure)
	done     bool           // the stats batch was returned
	err      error          // the write failed (and was cleaned up): Next repeats it
	finished bool           // files are complete and in place
	closed   bool
}

// shuffleFile is one output partition's file being written.
type shuffleFile struct {
	tmp   string
	final string
	f     *os.File // nil while the bytes are in mem
	buf   *bufio.Writer
	cw    countingWriter
	// mem holds the bytes while the file is kept in memory (limit > 0 and
	// no file made yet): at most limit of them.
	mem     []byte
	limit   int64
	w       *ipc.Writer
	rows    int64
	batches int64
	// pinned (cache) files only: batches held back until they add up to a
	// full batch (coalesce)
	pending     []arrow.RecordBatch
	pendingRows int64
	// pinned files only: what the written batches hold (zones.go)
	stats *statsCollector
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

func (w *shuffleWriteOp) Open(ctx context.Context) error {
	return w.input.Open(ctx)
}

func (w *shuffleWriteOp) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if w.err != nil {
		return nil, w.err
	}
	if w.done {
		return nil, io.EOF
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := w.runRecovered(ctx); err != nil {
		w.abort()
		w.err = err
		return nil, err
	}
	w.done = true
	return w.stats()
}

// runRecovered is run with a panic turned into an error: the writer is a
// task's root, and a panic must not leave its files behind.
func (w *shuffleWriteOp) runRecovered(ctx context.Context) (err error) {
	defer execop.RecoverRoot(&err, fmt.Sprintf("shuffle write of job %s stage %d map partition %d", w.n.JobID, w.n.StageID, w.mapPart))
	return w.run(ctx)
}

// run writes every file and moves them into place.
func (w *shuffleWriteOp) run(ctx context.Context) error {
	if err := w.create(); err != nil {
		return err
	}
	var parts kernel.HashPartitioner
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		b, err := w.input.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		if b.NumRows() == 0 {
			b.Release()
			continue
		}
		if len(w.files) == 1 {
			err = w.write(0, b)
		} else {
			err = w.route(ctx, b, &parts)
		}
		b.Release()
		if err != nil {
			return err
		}
	}
	return w.commit()
}

// create starts one file per output partition: a temporary file, its
// directories made, or the memory of a file that may stay inline.
func (w *shuffleWriteOp) create() error {
	n := w.n
	inline := n.InlineLimit > 0 && !n.Pinned && len(w.outs) == 1
	w.files = make([]*shuffleFile, len(w.outs))
	for i, out := range w.outs {
		sf := &shuffleFile{final: FilePath(w.tc.WorkDir, n.JobID, n.StageID, out, w.mapPart)}
		if n.Pinned {
			sf.stats = newStatsCollector(w.schema)
		}
		w.files[i] = sf
		if inline {
			sf.limit = n.InlineLimit
			sf.cw.w = &memSink{w: w, sf: sf}
		} else if err := w.openFile(sf); err != nil {
			return err
		}
		opts := append([]ipc.Option{ipc.WithSchema(w.schema), ipc.WithAllocator(w.tc.Mem)}, w.ipcOpts...)
		sf.w = ipc.NewWriter(&sf.cw, opts...)
	}
	return nil
}

// openFile makes sf's directories and temporary file and moves the bytes
// held in memory there; later writes go to the file.
func (w *shuffleWriteOp) openFile(sf *shuffleFile) error {
	n := w.n
	dir := filepath.Dir(sf.final)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return qerr.IOf("exec: shuffle write of job %s stage %d: cannot create %s: %w", n.JobID, n.StageID, dir, err)
	}
	f, err := os.CreateTemp(dir, filepath.Base(sf.final)+".tmp-*")
	if err != nil {
		return qerr.IOf("exec: shuffle write of job %s stage %d: cannot create a file in %s: %w", n.JobID, n.StageID, dir, err)
	}
	sf.tmp, sf.f = f.Name(), f
	sf.buf = bufio.NewWriterSize(f, 64<<10)
	sf.cw.w = sf.buf
	if len(sf.mem) > 0 {
		if _, err := sf.buf.Write(sf.mem); err != nil {
			return qerr.IOf("exec: shuffle write of job %s stage %d: cannot write %s: %w", n.JobID, n.StageID, sf.tmp, err)
		}
	}
	sf.mem, sf.limit = nil, 0
	return nil
}

// memSink is the writer of a file kept in memory: it appends to sf.mem
// while the bytes fit sf.limit and makes the file when they would not.
type memSink struct {
	w  *shuffleWriteOp
	sf *shuffleFile
}

func (m *memSink) Write(p []byte) (int, error) {
	sf := m.sf
	if int64(len(sf.mem)+len(p)) <= sf.limit {
		sf.mem = append(sf.mem, p...)
		return len(p), nil
	}
	if err := m.w.openFile(sf); err != nil {
		return 0, err
	}
	return sf.buf.Write(p)
}

// inMemory reports whether sf has no file: its bytes are sf.mem.
func (sf *shuffleFile) inMemory() bool { return sf.f == nil && sf.tmp == "" }

// write appends b to file i; b keeps its reference. A pinned (cache) file
// gets its rows in batches of at least the task's batch size: a join's
// output comes in pieces (a few thousand rows of each probe batch), and
// every later query over the cache pays per batch it reads, while the
// merge is paid once, when the cache is built.
func (w *shuffleWriteOp) write(i int, b arrow.RecordBatch) error {
	sf := w.files[i]
	if w.n.Pinned {
		if b.NumCols() != int64(w.schema.NumFields()) {
			return qerr.Internalf("exec: shuffle write of job %s stage %d: batch has %d columns, the plan %d", w.n.JobID, w.n.StageID, b.NumCols(), w.schema.NumFields())
		}
		b.Retain()
		sf.pending = append(sf.pending, b)
		sf.pendingRows += b.NumRows()
		if sf.pendingRows < int64(w.tc.BatchRows()) {
			return nil
		}
		return w.flushPending(sf)
	}
	return w.writeBatch(sf, b)
}

// flushPending writes sf's held-back batches as one.
func (w *shuffleWriteOp) flushPending(sf *shuffleFile) error {
	if len(sf.pending) == 0 {
		return nil
	}
	merged, err := kernel.ConcatBatches(w.tc.Mem, w.schema, sf.pending)
	execop.ReleaseAll(sf.pending)
	sf.pending, sf.pendingRows = sf.pending[:0], 0
	if err != nil {
		return err
	}
	defer merged.Release()
	return w.writeBatch(sf, merged)
}

// writeBatch appends b to sf's file; b keeps its reference.
func (w *shuffleWriteOp) writeBatch(sf *shuffleFile, b arrow.RecordBatch) error {
	if !b.Schema().Equal(w.schema) {
		// Same columns, but names or nullability differ from the plan's
		// schema: relabel, so every file carries exactly the plan's schema.
		if b.NumCols() != int64(w.schema.NumFields()) {
			return qerr.Internalf("exec: shuffle write of job %s stage %d: batch has %d columns, the plan %d", w.n.JobID, w.n.StageID, b.NumCols(), w.schema.NumFields())
		}
		b = array.NewRecordBatch(w.schema, b.Columns(), b.NumRows())
		defer b.Release()
	}
	if err := sf.w.Write(b); err != nil {
		return qerr.IOf("exec: shuffle write of job %s stage %d: cannot write %s: %w", w.n.JobID, w.n.StageID, sf.tmp, err)
	}
	sf.rows += b.NumRows()
	sf.batches++
	if sf.stats != nil {
		sf.stats.add(b)
	}
	return nil
}

// route writes each row of b to file hash(keys) % N; b keeps its reference.
// The scratch slices are reused across batches.
func (w *shuffleWriteOp) route(ctx context.Context, b arrow.RecordBatch, parts *kernel.HashPartitioner) error {
	n := int(b.NumRows())
	arrs, err := kernel.EvalAll(ctx, w.tc.Mem, w.keys, b)
	if err != nil {
		return err
	}
	parts.Split(arrs, n, len(w.files))
	kernel.ReleaseArrays(arrs)
	for t := range w.files {
		rows := parts.Rows(t)
		if len(rows) == 0 {
			continue
		}
		if len(rows) == n {
			if err := w.write(t, b); err != nil {
				return err
			}
			continue
		}
		out, err := kernel.TakeBatch(ctx, w.tc.Mem, b.Schema(), b, rows)
		if err != nil {
			return err
		}
		err = w.write(t, out)
		out.Release()
		if err != nil {
			return err
		}
	}
	return nil
}

// commit finishes every file, syncs nothing (a lost executor's files are
// recomputed anyway) and renames them into place.
func (w *shuffleWriteOp) commit() error {
	for _, sf := range w.files {
		if err := w.flushPending(sf); err != nil {
			return err
		}
	}
	for _, sf := range w.files {
		err := sf.w.Close()
		sf.w = nil
		if sf.inMemory() {
			if err != nil {
				return qerr.IOf("exec: shuffle write of job %s stage %d: cannot finish output %s: %w", w.n.JobID, w.n.StageID, sf.final, err)
			}
			continue // stays inline: no file to finish or move
		}
		if err == nil {
			err = sf.buf.Flush()
		}
		if cerr := sf.f.Close(); err == nil {
			err = cerr
		}
		sf.f = nil
		if err != nil {
			return qerr.IOf("exec: shuffle write of job %s stage %d: cannot finish %s: %w", w.n.JobID, w.n.StageID, sf.tmp, err)
		}
	}
	for _, sf := range w.files {
		if sf.stats == nil {
			continue
		}
		// The sidecar goes into place before its data file: a data file
		// in place always has its zones (a missing sidecar only means no
		// skipping).
		zp := sf.final + ZonesSuffix
		if err := os.WriteFile(zp, encodeZones(sf.cw.n, sf.stats.kinds(), sf.stats.zones), 0o644); err != nil {
			return qerr.IOf("exec: shuffle write of job %s stage %d: cannot write %s: %w", w.n.JobID, w.n.StageID, zp, err)
		}
		w.renamed = append(w.renamed, zp)
	}
	for _, sf := range w.files {
		if sf.inMemory() {
			continue
		}
		if err := os.Rename(sf.tmp, sf.final); err != nil {
			return qerr.IOf("exec: shuffle write of job %s stage %d: cannot move %s into place: %w", w.n.JobID, w.n.StageID, sf.final, err)
		}
		w.renamed = append(w.renamed, sf.final)
	}
	w.finished = true
	return nil
}

// abort closes and removes everything this attempt wrote.
func (w *shuffleWriteOp) abort() {
	for _, sf := range w.files {
		if sf == nil {
			continue
		}
		execop.ReleaseAll(sf.pending)
		sf.pending, sf.pendingRows = nil, 0
		if sf.w != nil {
			_ = sf.w.Close() // releases the writer's buffers; the file goes anyway
			sf.w = nil
		}
		if sf.f != nil {
			_ = sf.f.Close()
			sf.f = nil
		}
		if sf.tmp != "" {
			_ = os.Remove(sf.tmp)
		}
		sf.mem = nil
	}
	for _, p := range w.renamed {
		_ = os.Remove(p)
	}
	w.files, w.renamed = nil, nil
	w.finished = false
}

// stats returns the one ShuffleWriteStatsSchema batch: a row per file.
func (w *shuffleWriteOp) stats() (arrow.RecordBatch, error) {
	b := array.NewRecordBuilder(w.tc.Mem, physical.ShuffleWriteStatsSchema)
	defer b.Release()
	outB := b.Field(0).(*array.Int64Builder)
	rowsB := b.Field(1).(*array.Int64Builder)
	batchesB := b.Field(2).(*array.Int64Builder)
	bytesB := b.Field(3).(*array.Int64Builder)
	colB := b.Field(4).(*array.BinaryBuilder)
	inlineB := b.Field(5).(*array.BinaryBuilder)
	for i, sf := range w.files {
		outB.Append(int64(w.outs[i]))
		rowsB.Append(sf.rows)
		batchesB.Append(sf.batches)
		bytesB.Append(sf.cw.n)
		if sf.stats != nil {
			colB.Append(physical.EncodeColumnStats(sf.stats.stats()))
		} else {
			colB.AppendNull()
		}
		if sf.inMemory() {
			inlineB.Append(sf.mem)
		} else {
			inlineB.AppendNull()
		}
	}
	return b.NewRecordBatch(), nil
}

// Close closes the input; if the files were not all completed it removes
// what this attempt wrote.
func (w *shuffleWriteOp) Close() error {
	if w.closed {
		return nil
	}
	w.closed = true
	if !w.finished {
		w.abort()
	}
	return w.input.Close()
}
