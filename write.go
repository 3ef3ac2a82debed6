package quiver

import (
	"context"
	"errors"
	"os"
	"path/filepath"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/quiverdb/quiver/format"
	"github.com/quiverdb/quiver/qerr"
)

// WriteParquet runs the query and writes its result to one Parquet file at
// path (Snappy-compressed). The file appears only when complete: on any
// error nothing is left at path.
func (df *DataFrame) WriteParquet(ctx context.Context, path string) error {
	return df.writeFile(ctx, "WriteParquet", path, func(f *os.File, schema *arrow.Schema, next func() (arrow.RecordBatch, error)) error {
		props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Snappy))
		w, err := pqarrow.NewFileWriter(schema, f, props, pqarrow.DefaultWriterProps())
		if err != nil {
			return err
		}
		for {
			b, err := next()
			if err != nil {
				w.Close()
				return err
			}
			if b == nil {
				return w.Close()
			}
			err = w.WriteBuffered(b)
			b.Release()
			if err != nil {
				w.Close()
				return err
			}
		}
	})
}

// WriteCSV runs the query and writes its result as CSV with a header line
// (RFC 4180; NULL is an empty field) to path, atomically as WriteParquet.
func (df *DataFrame) WriteCSV(ctx context.Context, path string) error {
	return df.writeFile(ctx, "WriteCSV", path, func(f *os.File, schema *arrow.Schema, next func() (arrow.RecordBatch, error)) error {
		var batches []arrow.RecordBatch
		defer func() {
			for _, b := range batches {
				b.Release()
			}
		}()
		for {
			b, err := next()
			if err != nil {
				return err
			}
			if b == nil {
				break
			}
			batches = append(batches, b)
		}
		return format.Write(f, format.CSV, schema, batches, format.Options{})
	})
}

// writeFile streams df into a temporary file beside path and renames it into
// place on success; next returns nil at the end; the writer releases batches.
func (df *DataFrame) writeFile(ctx context.Context, op, path string, write func(*os.File, *arrow.Schema, func() (arrow.RecordBatch, error)) error) error {
	if df.err != nil {
		return df.err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return qerr.IOf("%s: %w", op, err)
	}
	ok := false
	defer func() {
		if !ok {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	x, err := df.start(ctx, false, nil)
	if err != nil {
		return err
	}
	defer x.op.Close()
	next := func() (arrow.RecordBatch, error) {
		b, err := x.op.Next(ctx)
		if err != nil {
			if isEOF(err) {
				return nil, nil
			}
			return nil, err
		}
		return b, nil
	}
	if err := write(tmp, df.Schema(), next); err != nil {
		if qerr.KindOf(err) == qerr.Internal {
			return qerr.IOf("%s %s: %w", op, path, err)
		}
		return err
	}
	// The Parquet writer closes the file itself; a second close is harmless.
	if err := tmp.Close(); err != nil && !errors.Is(err, os.ErrClosed) {
		return qerr.IOf("%s %s: %w", op, path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return qerr.IOf("%s %s: %w", op, path, err)
	}
	ok = true
	return nil
}
