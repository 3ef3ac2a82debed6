package scan

import (
	"context"
	"errors"
	"io"
	"os"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/quiverdb/quiver/qerr"
)

// ipcSource reads one Arrow IPC file, in the file format or, failing that,
// the stream format. Columns are taken by position from the table schema.
type ipcSource struct {
	s      *scanOp
	path   string
	f      *os.File
	file   *ipc.FileReader // one of file and stream is set
	stream *ipc.Reader
	next_  int
	closed bool
}

func openIPC(s *scanOp, path string) (batchSource, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, qerr.IOf("exec: scan of %s: cannot open arrow file %s: %w", s.n.Table, path, err)
	}
	src := &ipcSource{s: s, path: path, f: f}
	var schema *arrow.Schema
	if fr, ferr := ipc.NewFileReader(f, ipc.WithAllocator(s.tc.Mem)); ferr == nil {
		src.file, schema = fr, fr.Schema()
	} else {
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			f.Close()
			return nil, qerr.IOf("exec: scan of %s: cannot read arrow file %s: %w", s.n.Table, path, err)
		}
		sr, serr := ipc.NewReader(f, ipc.WithAllocator(s.tc.Mem))
		if serr != nil {
			f.Close()
			return nil, qerr.Execf("exec: scan of %s: %s is neither an arrow ipc file nor stream: %w", s.n.Table, path, errors.Join(ferr, serr))
		}
		src.stream, schema = sr, sr.Schema()
	}
	if schema.NumFields() != s.n.FileSchema.NumFields() {
		src.close()
		return nil, qerr.Execf("exec: scan of %s: arrow file %s has %d columns, the table has %d", s.n.Table, path, schema.NumFields(), s.n.FileSchema.NumFields())
	}
	return src, nil
}

func (r *ipcSource) next(ctx context.Context) (arrow.RecordBatch, error) {
	if r.file != nil {
		if r.next_ >= r.file.NumRecords() {
			return nil, io.EOF
		}
		b, err := r.file.RecordBatchAt(r.next_)
		if err != nil {
			return nil, qerr.Execf("exec: scan of %s: cannot read batch %d of arrow file %s: %w", r.s.n.Table, r.next_, r.path, err)
		}
		defer b.Release()
		r.next_++
		return projectBatch(b, r.s.proj), nil
	}
	if !r.stream.Next() {
		if err := r.stream.Err(); err != nil && !errors.Is(err, io.EOF) {
			return nil, qerr.Execf("exec: scan of %s: cannot read arrow stream %s: %w", r.s.n.Table, r.path, err)
		}
		return nil, io.EOF
	}
	return projectBatch(r.stream.RecordBatch(), r.s.proj), nil
}

func (r *ipcSource) close() {
	if r.closed {
		return
	}
	r.closed = true
	if r.file != nil {
		r.file.Close()
	}
	if r.stream != nil {
		r.stream.Release()
	}
	r.f.Close()
}
