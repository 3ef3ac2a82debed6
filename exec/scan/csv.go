package scan

import (
	"context"
	"io"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/csv"
	"github.com/quiverdb/quiver/exec/execop"
	"github.com/quiverdb/quiver/qerr"
)

// csvSource reads one CSV file with the table's full schema (options:
// delimiter, has_header (default true), null (default the empty string))
// and projects after reading.
type csvSource struct {
	s      *scanOp
	path   string
	f      *os.File
	r      *csv.Reader
	closed bool
}

func openCSV(s *scanOp, path string) (batchSource, error) {
	opts := []csv.Option{
		csv.WithAllocator(s.tc.Mem),
		csv.WithChunk(s.tc.BatchRows()),
		csv.WithHeader(true),
		csv.WithNullReader(true, ""),
	}
	for k, v := range s.n.Options {
		switch strings.ToLower(k) {
		case "delimiter":
			r, n := utf8.DecodeRuneInString(v)
			if v == `\t` {
				r, n = '\t', len(v)
			}
			if n != len(v) || r == utf8.RuneError {
				return nil, qerr.Execf("exec: scan of %s: csv option delimiter must be one character, got %q", s.n.Table, v)
			}
			opts = append(opts, csv.WithComma(r))
		case "has_header", "header":
			switch strings.ToLower(v) {
			case "true", "1", "yes":
				opts = append(opts, csv.WithHeader(true))
			case "false", "0", "no":
				opts = append(opts, csv.WithHeader(false))
			default:
				return nil, qerr.Execf("exec: scan of %s: csv option has_header must be true or false, got %q", s.n.Table, v)
			}
		case "null":
			opts = append(opts, csv.WithNullReader(true, v))
		}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, qerr.IOf("exec: scan of %s: cannot open csv file %s: %w", s.n.Table, path, err)
	}
	return &csvSource{s: s, path: path, f: f, r: csv.NewReader(f, s.n.FileSchema, opts...)}, nil
}

func (c *csvSource) next(ctx context.Context) (b arrow.RecordBatch, err error) {
	// The csv reader panics on some malformed input; that is a bad file,
	// not a bug of ours.
	defer func() {
		if r := recover(); r != nil {
			if le, ok := r.(*execop.LimitError); ok {
				panic(le)
			}
			b, err = nil, qerr.Execf("exec: scan of %s: cannot parse csv file %s: %v", c.s.n.Table, c.path, r)
		}
	}()
	if !c.r.Next() {
		if err := c.r.Err(); err != nil && err != io.EOF {
			return nil, qerr.Execf("exec: scan of %s: cannot parse csv file %s: %w", c.s.n.Table, c.path, err)
		}
		return nil, io.EOF
	}
	// The reader's batch is borrowed until the next call; projectBatch
	// takes its own references.
	return projectBatch(c.r.RecordBatch(), c.s.proj), nil
}

func (c *csvSource) close() {
	if c.closed {
		return
	}
	c.closed = true
	c.r.Release()
	c.f.Close()
}
