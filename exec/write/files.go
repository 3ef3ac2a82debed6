package write

import (
	"bufio"
	"encoding/csv"
	"os"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/quiverdb/quiver/format"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
)

// fileWriter streams batches into one file; the caller keeps its
// references to the batches.
type fileWriter interface {
	write(b arrow.RecordBatch) error
	close() error
}

func newFileWriter(f *os.File, schema *arrow.Schema, s physical.WriteSpec) (fileWriter, error) {
	switch s.Format {
	case physical.FormatParquet:
		codec := compress.Codecs.Snappy
		if s.Compression != "" {
			codec = parquetCodecs[s.Compression]
		}
		props := []parquet.WriterProperty{parquet.WithCompression(codec)}
		if s.RowGroupSize > 0 {
			props = append(props, parquet.WithMaxRowGroupLength(s.RowGroupSize))
		}
		pw, err := pqarrow.NewFileWriter(schema, f, parquet.NewWriterProperties(props...), pqarrow.DefaultWriterProps())
		if err != nil {
			return nil, qerr.IOf("write %s: %w", f.Name(), err)
		}
		return &parquetWriter{w: pw}, nil
	case physical.FormatArrow:
		opts := []ipc.Option{ipc.WithSchema(schema)}
		switch s.Compression {
		case "lz4":
			opts = append(opts, ipc.WithLZ4())
		case "zstd":
			opts = append(opts, ipc.WithZstd())
		}
		iw, err := ipc.NewFileWriter(f, opts...)
		if err != nil {
			return nil, qerr.IOf("write %s: %w", f.Name(), err)
		}
		return &ipcWriter{f: f, w: iw}, nil
	case physical.FormatCSV:
		bw := bufio.NewWriterSize(f, 256<<10)
		cw := csv.NewWriter(bw)
		cw.Comma = s.Delimiter
		if cw.Comma == 0 {
			cw.Comma = ','
		}
		w := &csvWriter{f: f, bw: bw, cw: cw}
		if s.Header {
			rec := make([]string, schema.NumFields())
			for i, fl := range schema.Fields() {
				rec[i] = fl.Name
			}
			if err := cw.Write(rec); err != nil {
				return nil, qerr.IOf("write %s: %w", f.Name(), err)
			}
		}
		return w, nil
	case physical.FormatJSON:
		return &jsonWriter{f: f, bw: bufio.NewWriterSize(f, 256<<10), schema: schema}, nil
	}
	return nil, qerr.NotImplementedf("write: format %q is not supported", s.Format)
}

type parquetWriter struct{ w *pqarrow.FileWriter }

func (p *parquetWriter) write(b arrow.RecordBatch) error { return p.w.WriteBuffered(b) }
func (p *parquetWriter) close() error                    { return p.w.Close() } // closes the file

type ipcWriter struct {
	f *os.File
	w *ipc.FileWriter
}

func (p *ipcWriter) write(b arrow.RecordBatch) error { return p.w.Write(b) }
func (p *ipcWriter) close() error {
	err := p.w.Close()
	if cerr := p.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// csvWriter writes values in their text form (format.Column), NULL as an
// empty field.
type csvWriter struct {
	f   *os.File
	bw  *bufio.Writer
	cw  *csv.Writer
	rec []string
}

func (c *csvWriter) write(b arrow.RecordBatch) error {
	cols := make([][]string, b.NumCols())
	for i := range cols {
		cols[i], _ = format.Column(b.Column(i))
	}
	if cap(c.rec) < len(cols) {
		c.rec = make([]string, len(cols))
	}
	c.rec = c.rec[:len(cols)]
	for r := 0; r < int(b.NumRows()); r++ {
		for i := range cols {
			c.rec[i] = cols[i][r]
		}
		if len(c.rec) == 1 && c.rec[0] == "" {
			// A lone empty field would be an empty line, which CSV readers
			// skip: the row would be lost. Quoted, it reads back as a row.
			c.cw.Flush()
			if _, err := c.bw.WriteString("\"\"\n"); err != nil {
				return err
			}
			continue
		}
		if err := c.cw.Write(c.rec); err != nil {
			return err
		}
	}
	return nil
}

func (c *csvWriter) close() error {
	c.cw.Flush()
	err := c.cw.Error()
	if ferr := c.bw.Flush(); err == nil {
		err = ferr
	}
	if cerr := c.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// jsonWriter writes one JSON object per row, as the ndjson output format.
type jsonWriter struct {
	f      *os.File
	bw     *bufio.Writer
	schema *arrow.Schema
}

func (j *jsonWriter) write(b arrow.RecordBatch) error {
	return format.Write(j.bw, format.NDJSON, j.schema, []arrow.RecordBatch{b}, format.Options{})
}

func (j *jsonWriter) close() error {
	err := j.bw.Flush()
	if cerr := j.f.Close(); err == nil {
		err = cerr
	}
	return err
}
