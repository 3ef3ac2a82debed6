package scan

import (
	"bufio"
	"context"
	"io"
	"os"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/quiverdb/quiver/exec/execop"
	"github.com/quiverdb/quiver/qerr"
)

// jsonSource reads one newline-delimited JSON file (one object per line;
// keys not in the schema are ignored, missing keys are NULL) with the
// table's file schema and projects after reading.
type jsonSource struct {
	s      *scanOp
	path   string
	f      *os.File
	r      *array.JSONReader
	closed bool
}

func openJSON(s *scanOp, path string) (batchSource, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, qerr.IOf("exec: scan of %s: cannot open json file %s: %w", s.n.Table, path, err)
	}
	r := array.NewJSONReader(bufio.NewReaderSize(f, 256<<10), s.n.FileSchema,
		array.WithAllocator(s.tc.Mem), array.WithChunk(s.tc.BatchRows()))
	return &jsonSource{s: s, path: path, f: f, r: r}, nil
}

func (j *jsonSource) next(ctx context.Context) (b arrow.RecordBatch, err error) {
	defer func() {
		if r := recover(); r != nil {
			if le, ok := r.(*execop.LimitError); ok {
				panic(le)
			}
			b, err = nil, qerr.Execf("exec: scan of %s: cannot parse json file %s: %v", j.s.n.Table, j.path, r)
		}
	}()
	if !j.r.Next() {
		if err := j.r.Err(); err != nil && err != io.EOF {
			return nil, qerr.Execf("exec: scan of %s: cannot parse json file %s: %w", j.s.n.Table, j.path, err)
		}
		return nil, io.EOF
	}
	// The reader's batch is borrowed until the next call; projectBatch
	// takes its own references.
	return projectBatch(j.r.RecordBatch(), j.s.proj), nil
}

func (j *jsonSource) close() {
	if j.closed {
		return
	}
	j.closed = true
	j.r.Release()
	j.f.Close()
}
