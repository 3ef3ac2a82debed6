package sort

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/quiverdb/quiver/exec/execop"
	"github.com/quiverdb/quiver/exec/kernel"
	"github.com/quiverdb/quiver/qerr"
)

// External sort: when the batches a full sort buffers, plus the copy and
// index array sorting them needs, would not fit in what is left under the
// task's or the executor's memory limit, the buffered rows are sorted and
// written to a spill file (an Arrow IPC stream: dictionary-encoded columns
// may change dictionaries between batches) as one sorted run, and their
// memory is released. At the end of the input the rest is spilled too and
// the runs are merged (Merger), one batch of each in memory at a time.
// Runs are merged in the order they were written, so the sort stays
// stable. The files live under the work dir's "spill" directory and are
// removed by Close, whatever happened.

// spillRun is one sorted run on disk.
type spillRun struct {
	path string
	f    *os.File
	r    *ipc.Reader // set once the run is opened for merging
}

// spillFactor: spill once the headroom under the memory limits is below
// this many times what sorting the buffered rows in memory would take,
// leaving the rest to the operators feeding the sort.
const spillFactor = 2

// minSpillBytes: a run is not written for less than this, so that a
// task whose memory is taken by something else writes no storm of tiny
// files (it fails with the memory limit instead).
const minSpillBytes = 64 << 10

// batchBytes estimates the memory of b's rows: by their rows for
// fixed-width and string columns (a batch sliced from a larger one holds
// only its rows' share), by the buffers' lengths for other types (an
// overestimate for slices, which only makes the sort spill sooner).
func batchBytes(b arrow.RecordBatch) int64 {
	var n int64
	for _, c := range b.Columns() {
		n += arrayBytes(c)
	}
	return n
}

func arrayBytes(a arrow.Array) int64 {
	rows := int64(a.Len())
	valid := (rows + 7) / 8
	switch a := a.(type) {
	case *array.String:
		if rows == 0 {
			return 0
		}
		return valid + 4*(rows+1) + int64(a.ValueOffset(int(rows)-1)+len(a.Value(int(rows)-1))-a.ValueOffset(0))
	case *array.Binary:
		if rows == 0 {
			return 0
		}
		return valid + 4*(rows+1) + int64(a.ValueOffset(int(rows)-1)+len(a.Value(int(rows)-1))-a.ValueOffset(0))
	}
	if fw, ok := a.DataType().(arrow.FixedWidthDataType); ok {
		return valid + (rows*int64(fw.BitWidth())+7)/8
	}
	return dataBytes(a.Data())
}

func dataBytes(d arrow.ArrayData) int64 {
	var n int64
	for _, buf := range d.Buffers() {
		if buf != nil {
			n += int64(buf.Len())
		}
	}
	for _, c := range d.Children() {
		n += dataBytes(c)
	}
	if d.DataType().ID() == arrow.DICTIONARY {
		n += dataBytes(d.Dictionary())
	}
	return n
}

// mustSpill reports whether the buffered rows should go to disk now.
func (s *sortOp) mustSpill() bool {
	if len(s.buf) == 0 || s.bufBytes < minSpillBytes {
		return false
	}
	need := s.bufBytes + 4*s.bufRows // the sorted copy and the permutation
	return s.tc.Headroom() < spillFactor*need
}

// spill sorts the buffered rows and writes them as a new run.
func (s *sortOp) spill(ctx context.Context) (err error) {
	if err := s.sortBuffered(ctx, -1); err != nil {
		return err
	}
	s.bufBytes = 0
	dir := filepath.Join(s.tc.WorkDir, "spill")
	if s.tc.WorkDir == "" {
		dir = filepath.Join(os.TempDir(), "quiver-spill")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return qerr.IOf("exec: sort: creating spill directory %s: %w", dir, err)
	}
	f, err := os.CreateTemp(dir, "sort-*.arrows")
	if err != nil {
		return qerr.IOf("exec: sort: creating a spill file in %s: %w", dir, err)
	}
	run := &spillRun{path: f.Name(), f: f}
	s.runs = append(s.runs, run) // Close removes it, written or not
	w := ipc.NewWriter(f, ipc.WithSchema(s.schema), ipc.WithAllocator(s.tc.Mem))
	rows := s.spillBatchRows()
	for off := 0; off < len(s.perm); {
		end := min(len(s.perm), off+rows)
		b, err := kernel.TakeBatch(ctx, s.tc.Mem, s.schema, s.data, s.perm[off:end])
		if err != nil {
			w.Close()
			return err
		}
		err = w.Write(b)
		b.Release()
		if err != nil {
			w.Close()
			return qerr.IOf("exec: sort: writing spill file %s: %w", run.path, err)
		}
		off = end
	}
	if err := w.Close(); err != nil {
		return qerr.IOf("exec: sort: writing spill file %s: %w", run.path, err)
	}
	s.data.Release()
	s.data = nil
	s.perm = nil
	s.tc.Shrink(s.reserved)
	s.reserved = 0
	if st, err := f.Stat(); err == nil {
		if m := s.tc.NodeMetrics(s.n); m != nil {
			m.SpilledBytes.Add(st.Size())
		}
	}
	return nil
}

// spillBatchRows is the rows per batch of a run being written: the merge
// holds one batch of every run at once, so a run's batches are kept to
// about a sixteenth of the memory left now (and at most 1 MiB), sized by
// the average row of the data being spilled.
func (s *sortOp) spillBatchRows() int {
	n := s.data.NumRows()
	if n == 0 {
		return s.tc.BatchRows()
	}
	target := min(s.tc.Headroom()/16, 1<<20)
	rowBytes := max(batchBytes(s.data)/n, 1)
	return int(max(1, min(int64(s.tc.BatchRows()), target/rowBytes)))
}

// startMerge spills what is still buffered and sets up the merge of every
// run.
func (s *sortOp) startMerge(ctx context.Context) error {
	if len(s.buf) > 0 {
		if err := s.spill(ctx); err != nil {
			return err
		}
	}
	// arrow-go's IPC reader turns a panic inside an allocation into an
	// error that no longer says it was the memory limit, so the runs are
	// read through a soft limit, checked after every batch.
	mem, crossed := execop.SoftLimited(s.tc.Mem)
	sources := make([]Source, len(s.runs))
	for i, run := range s.runs {
		if _, err := run.f.Seek(0, io.SeekStart); err != nil {
			return qerr.IOf("exec: sort: reading spill file %s: %w", run.path, err)
		}
		r, err := ipc.NewReader(run.f, ipc.WithAllocator(mem), ipc.WithSchema(s.schema))
		if err != nil {
			return readErr(run, err)
		}
		run.r = r
		sources[i] = func(context.Context) (arrow.RecordBatch, error) {
			if !r.Next() {
				if err := r.Err(); err != nil && !errors.Is(err, io.EOF) {
					return nil, readErr(run, err)
				}
				return nil, io.EOF
			}
			if err := crossed(); err != nil {
				return nil, err
			}
			b := r.RecordBatch()
			b.Retain()
			return b, nil
		}
	}
	s.merger = NewMerger(s.tc.Mem, s.schema, s.keys, s.spec, sources)
	return nil
}

// readErr is the error of reading run back: the memory limit's own error
// when arrow-go's reader hit it, else an IO error naming the file.
func readErr(run *spillRun, err error) error {
	if err := execop.LimitErr(err); qerr.Is(err, qerr.Resources) {
		return err
	}
	return qerr.IOf("exec: sort: reading spill file %s: %w", run.path, err)
}

// closeRuns ends the merge and removes every spill file.
func (s *sortOp) closeRuns() error {
	if s.merger != nil {
		s.merger.Close()
		s.merger = nil
	}
	var first error
	for _, run := range s.runs {
		if run.r != nil {
			run.r.Release()
		}
		run.f.Close()
		if err := os.Remove(run.path); err != nil && first == nil {
			first = qerr.IOf("exec: sort: removing spill file %s: %w", run.path, err)
		}
	}
	s.runs = nil
	return first
}
