package quiver

import (
	"bufio"
	"context"
	"encoding/csv"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/quiverdb/quiver/catalog"
	"github.com/quiverdb/quiver/exec/hashtable"
	"github.com/quiverdb/quiver/exec/kernel"
	"github.com/quiverdb/quiver/format"
	"github.com/quiverdb/quiver/qerr"
)

// Where writes run: the query runs where every query runs (on the cluster's
// executors, or locally), and its result streams back to this process,
// which writes the files. A write is atomic: everything is written into a
// hidden temporary directory beside the target and renamed into place when
// complete, so a failed or canceled write leaves nothing at the target
// (and readers skip the hidden directory meanwhile).

// WriteOption configures a DataFrame write and COPY.
type WriteOption func(*writeConfig)

type writeConfig struct {
	format       catalog.Format // "" from the path's extension
	partitionBy  []string
	compression  string
	rowGroupSize int64
	overwrite    bool
	delimiter    rune
	header       bool
}

// PartitionBy writes one directory per distinct value of cols, Hive style
// (col=value/...), each holding files of the other columns; the target path
// is then a directory.
func PartitionBy(cols ...string) WriteOption {
	return func(c *writeConfig) { c.partitionBy = append(c.partitionBy, cols...) }
}

// Compression sets the codec: for Parquet snappy (the default), zstd, gzip,
// lz4, brotli or none; for Arrow lz4, zstd or none (the default). CSV and
// JSON are written uncompressed.
func Compression(codec string) WriteOption {
	return func(c *writeConfig) { c.compression = strings.ToLower(codec) }
}

// RowGroupSize sets the most rows of a Parquet row group.
func RowGroupSize(rows int64) WriteOption { return func(c *writeConfig) { c.rowGroupSize = rows } }

// Overwrite lets a write replace what is at its target; without it a write
// to an existing path fails before running the query.
func Overwrite() WriteOption { return func(c *writeConfig) { c.overwrite = true } }

// CSVWriteDelimiter sets a CSV file's delimiter (default ',').
func CSVWriteDelimiter(d rune) WriteOption { return func(c *writeConfig) { c.delimiter = d } }

// CSVWriteHeader sets whether a CSV file starts with a header line (default true).
func CSVWriteHeader(on bool) WriteOption { return func(c *writeConfig) { c.header = on } }

func withFormat(f catalog.Format) WriteOption { return func(c *writeConfig) { c.format = f } }

// WriteParquet runs the query and writes its result as Parquet to path: one
// file, or with PartitionBy a directory of partitions. See Write.
func (df *DataFrame) WriteParquet(ctx context.Context, path string, opts ...WriteOption) error {
	_, err := df.Write(ctx, path, append([]WriteOption{withFormat(catalog.Parquet)}, opts...)...)
	return err
}

// WriteCSV runs the query and writes its result as CSV (RFC 4180, a header
// line unless CSVWriteHeader(false); NULL is an empty field). See Write.
func (df *DataFrame) WriteCSV(ctx context.Context, path string, opts ...WriteOption) error {
	_, err := df.Write(ctx, path, append([]WriteOption{withFormat(catalog.CSV)}, opts...)...)
	return err
}

// WriteJSON runs the query and writes its result as newline-delimited JSON
// (one object per row). See Write.
func (df *DataFrame) WriteJSON(ctx context.Context, path string, opts ...WriteOption) error {
	_, err := df.Write(ctx, path, append([]WriteOption{withFormat(catalog.JSON)}, opts...)...)
	return err
}

// WriteArrow runs the query and writes its result as an Arrow IPC file. See Write.
func (df *DataFrame) WriteArrow(ctx context.Context, path string, opts ...WriteOption) error {
	_, err := df.Write(ctx, path, append([]WriteOption{withFormat(catalog.Arrow)}, opts...)...)
	return err
}

// Write runs the query and writes its result to path in the format its
// extension names (.parquet, .csv, .json/.ndjson, .arrow; Parquet for a
// partitioned write without one), returning the rows written. The write is
// atomic: on any error nothing is left at path, and an existing path is
// replaced only with Overwrite, in one rename.
func (df *DataFrame) Write(ctx context.Context, path string, opts ...WriteOption) (int64, error) {
	if df.err != nil {
		return 0, df.err
	}
	c := writeConfig{delimiter: ',', header: true}
	for _, o := range opts {
		o(&c)
	}
	w, err := newDatasetWriter(path, df.Schema(), c)
	if err != nil {
		return 0, err
	}
	defer w.abort()
	for b, err := range df.Stream(ctx) {
		if err != nil {
			return 0, err
		}
		if err := w.write(ctx, b); err != nil {
			return 0, err
		}
	}
	return w.commit()
}

// datasetWriter writes one result into a temporary directory and renames it
// into place on commit.
type datasetWriter struct {
	target  string
	dir     bool // the target is a directory (partitioned)
	tmp     string
	cfg     writeConfig
	schema  *arrow.Schema // the result's
	keys    []int         // partition columns in schema
	data    []int         // the other columns
	dataSch *arrow.Schema
	mem     memory.Allocator

	single  fileWriter   // unpartitioned
	parts   []fileWriter // by partition id
	table   *hashtable.Table
	probe   hashtable.Probe
	ids     []uint32
	rowsBy  [][]int32
	rows    int64
	done    bool
	maxPart int
}

// maxPartitions bounds the directories one partitioned write opens.
const maxPartitions = 4096

func newDatasetWriter(path string, schema *arrow.Schema, c writeConfig) (*datasetWriter, error) {
	if path == "" {
		return nil, qerr.Planf("write: empty path")
	}
	w := &datasetWriter{target: filepath.Clean(path), cfg: c, schema: schema, mem: memory.DefaultAllocator, maxPart: maxPartitions}
	w.dir = len(c.partitionBy) > 0
	if w.cfg.format == "" {
		f, ok := catalog.FormatOf(path)
		switch {
		case ok:
			w.cfg.format = f
		case w.dir:
			w.cfg.format = catalog.Parquet
		default:
			return nil, qerr.Planf("write %s: cannot tell the format from the name; give FORMAT parquet, csv, json or arrow", path)
		}
	}
	if err := checkCompression(w.cfg.format, w.cfg.compression); err != nil {
		return nil, err
	}
	if w.cfg.rowGroupSize < 0 || (w.cfg.rowGroupSize > 0 && w.cfg.format != catalog.Parquet) {
		return nil, qerr.Planf("write %s: ROW_GROUP_SIZE must be positive and applies to Parquet only", path)
	}
	seen := map[int]bool{}
	for _, k := range c.partitionBy {
		i := -1
		for j, f := range schema.Fields() {
			if strings.EqualFold(f.Name, k) {
				if i >= 0 {
					return nil, qerr.Planf("write %s: partition column %q is ambiguous", path, k)
				}
				i = j
			}
		}
		if i < 0 {
			return nil, qerr.Planf("write %s: partition column %q is not a column of the result", path, k)
		}
		if seen[i] {
			return nil, qerr.Planf("write %s: partition column %q given twice", path, k)
		}
		seen[i] = true
		w.keys = append(w.keys, i)
	}
	var fields []arrow.Field
	for i, f := range schema.Fields() {
		if !seen[i] {
			w.data = append(w.data, i)
			fields = append(fields, f)
		}
	}
	if len(fields) == 0 {
		return nil, qerr.Planf("write %s: every column is a partition column; nothing would be left to write in the files", path)
	}
	w.dataSch = arrow.NewSchema(fields, nil)
	if st, err := os.Stat(w.target); err == nil {
		if !c.overwrite {
			return nil, qerr.Planf("write %s: the target exists; use OVERWRITE to replace it", path)
		}
		if st.IsDir() != w.dir {
			what := map[bool]string{true: "a directory", false: "a file"}
			return nil, qerr.Planf("write %s: the target is %s, the write makes %s", path, what[st.IsDir()], what[w.dir])
		}
	}
	parent := filepath.Dir(w.target)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, qerr.IOf("write %s: %w", path, err)
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(w.target)+".quiver-tmp-")
	if err != nil {
		return nil, qerr.IOf("write %s: %w", path, err)
	}
	w.tmp = tmp
	if w.dir {
		types := make([]arrow.DataType, len(w.keys))
		for i, k := range w.keys {
			types[i] = schema.Field(k).Type
		}
		if w.table, err = hashtable.New(types); err != nil {
			w.abort()
			return nil, err
		}
	}
	return w, nil
}

func checkCompression(f catalog.Format, codec string) error {
	if codec == "" {
		return nil
	}
	ok := false
	switch f {
	case catalog.Parquet:
		_, ok = parquetCodecs[codec]
	case catalog.Arrow:
		ok = codec == "lz4" || codec == "zstd" || codec == "none" || codec == "uncompressed"
	default:
		ok = codec == "none" || codec == "uncompressed"
	}
	if !ok {
		return qerr.Planf("write: compression %q is not available for %s files", codec, f)
	}
	return nil
}

var parquetCodecs = map[string]compress.Compression{
	"snappy": compress.Codecs.Snappy, "zstd": compress.Codecs.Zstd, "gzip": compress.Codecs.Gzip,
	"lz4": compress.Codecs.Lz4Raw, "brotli": compress.Codecs.Brotli,
	"none": compress.Codecs.Uncompressed, "uncompressed": compress.Codecs.Uncompressed,
}

func (w *datasetWriter) write(ctx context.Context, b arrow.RecordBatch) error {
	n := int(b.NumRows())
	if n == 0 {
		return nil
	}
	w.rows += int64(n)
	if !w.dir {
		if w.single == nil {
			fw, err := w.open(filepath.Join(w.tmp, filepath.Base(w.target)))
			if err != nil {
				return err
			}
			w.single = fw
		}
		if !b.Schema().Equal(w.dataSch) {
			// The file writers want the declared schema exactly (a batch
			// may differ in field nullability or metadata).
			b = array.NewRecordBatch(w.dataSch, b.Columns(), b.NumRows())
			defer b.Release()
		}
		return w.single.write(b)
	}
	keys := make([]arrow.Array, len(w.keys))
	for i, k := range w.keys {
		keys[i] = b.Column(k)
	}
	w.ids = kernel.Resize(w.ids, n)
	w.table.FindOrInsert(&w.probe, keys, n, nil, w.ids)
	if w.table.Len() > w.maxPart {
		return qerr.Execf("write %s: more than %d partitions", w.target, w.maxPart)
	}
	for len(w.rowsBy) < w.table.Len() {
		w.rowsBy = append(w.rowsBy, nil)
	}
	for i := range w.rowsBy {
		w.rowsBy[i] = w.rowsBy[i][:0]
	}
	for r, id := range w.ids[:n] {
		w.rowsBy[id] = append(w.rowsBy[id], int32(r))
	}
	for id, rows := range w.rowsBy {
		if len(rows) == 0 {
			continue
		}
		for len(w.parts) <= id {
			w.parts = append(w.parts, nil)
		}
		if w.parts[id] == nil {
			fw, err := w.openPartition(keys, int(rows[0]))
			if err != nil {
				return err
			}
			w.parts[id] = fw
		}
		cols, err := kernel.TakeSome(ctx, w.mem, w.schema, b.Columns(), w.data, rows)
		if err != nil {
			return err
		}
		picked := make([]arrow.Array, len(w.data))
		for i, c := range w.data {
			picked[i] = cols[c]
		}
		part := array.NewRecordBatch(w.dataSch, picked, int64(len(rows)))
		kernel.ReleaseArrays(cols)
		err = w.parts[id].write(part)
		part.Release()
		if err != nil {
			return err
		}
	}
	return nil
}

// openPartition opens the file of the partition whose key is row r of keys.
func (w *datasetWriter) openPartition(keys []arrow.Array, r int) (fileWriter, error) {
	dir := w.tmp
	for i, k := range keys {
		one := array.NewSlice(k, int64(r), int64(r+1))
		vals, nulls := format.Column(one)
		one.Release()
		v := "__HIVE_DEFAULT_PARTITION__"
		if !nulls[0] {
			v = url.PathEscape(vals[0])
		}
		dir = filepath.Join(dir, w.schema.Field(w.keys[i]).Name+"="+v)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, qerr.IOf("write %s: %w", w.target, err)
	}
	return w.open(filepath.Join(dir, "data_0"+extension(w.cfg.format)))
}

func extension(f catalog.Format) string {
	switch f {
	case catalog.CSV:
		return ".csv"
	case catalog.JSON:
		return ".json"
	case catalog.Arrow:
		return ".arrow"
	}
	return ".parquet"
}

func (w *datasetWriter) open(path string) (fileWriter, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, qerr.IOf("write %s: %w", w.target, err)
	}
	fw, err := newFileWriter(f, w.dataSch, w.cfg)
	if err != nil {
		f.Close()
		return nil, err
	}
	return fw, nil
}

// commit closes the files and renames the temporary directory (or, for a
// single file, the file in it) into place; it returns the rows written.
func (w *datasetWriter) commit() (int64, error) {
	if !w.dir && w.single == nil {
		// An empty result still makes a file (with the schema, where the
		// format has one).
		fw, err := w.open(filepath.Join(w.tmp, filepath.Base(w.target)))
		if err != nil {
			return 0, err
		}
		w.single = fw
	}
	if err := w.closeFiles(); err != nil {
		return 0, err
	}
	src := w.tmp
	if !w.dir {
		src = filepath.Join(w.tmp, filepath.Base(w.target))
	}
	var trash string
	if _, err := os.Lstat(w.target); err == nil {
		// Overwrite (checked when the write began): move the old target
		// aside, the new one in, then delete the old.
		trash = w.tmp + ".old"
		if err := os.Rename(w.target, trash); err != nil {
			return 0, qerr.IOf("write %s: %w", w.target, err)
		}
	}
	if err := os.Rename(src, w.target); err != nil {
		if trash != "" {
			os.Rename(trash, w.target)
		}
		return 0, qerr.IOf("write %s: %w", w.target, err)
	}
	w.done = true
	os.RemoveAll(w.tmp)
	if trash != "" {
		os.RemoveAll(trash)
	}
	return w.rows, nil
}

func (w *datasetWriter) closeFiles() error {
	var first error
	all := append([]fileWriter{w.single}, w.parts...)
	w.single, w.parts = nil, nil
	for _, f := range all {
		if f == nil {
			continue
		}
		if err := f.close(); err != nil && first == nil {
			first = qerr.IOf("write %s: %w", w.target, err)
		}
	}
	return first
}

// abort removes everything written unless the write committed; it is
// idempotent.
func (w *datasetWriter) abort() {
	if w.done || w.tmp == "" {
		return
	}
	w.closeFiles()
	os.RemoveAll(w.tmp)
	w.done = true
}

// fileWriter streams batches into one file; the caller keeps its
// references to the batches.
type fileWriter interface {
	write(b arrow.RecordBatch) error
	close() error
}

func newFileWriter(f *os.File, schema *arrow.Schema, c writeConfig) (fileWriter, error) {
	switch c.format {
	case catalog.Parquet:
		codec := compress.Codecs.Snappy
		if c.compression != "" {
			codec = parquetCodecs[c.compression]
		}
		props := []parquet.WriterProperty{parquet.WithCompression(codec)}
		if c.rowGroupSize > 0 {
			props = append(props, parquet.WithMaxRowGroupLength(c.rowGroupSize))
		}
		pw, err := pqarrow.NewFileWriter(schema, f, parquet.NewWriterProperties(props...), pqarrow.DefaultWriterProps())
		if err != nil {
			return nil, qerr.IOf("write %s: %w", f.Name(), err)
		}
		return &parquetWriter{w: pw}, nil
	case catalog.Arrow:
		opts := []ipc.Option{ipc.WithSchema(schema)}
		switch c.compression {
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
	case catalog.CSV:
		bw := bufio.NewWriterSize(f, 256<<10)
		cw := csv.NewWriter(bw)
		cw.Comma = c.delimiter
		w := &csvWriter{f: f, bw: bw, cw: cw, schema: schema}
		if c.header {
			rec := make([]string, schema.NumFields())
			for i, fl := range schema.Fields() {
				rec[i] = fl.Name
			}
			if err := cw.Write(rec); err != nil {
				f.Close()
				return nil, qerr.IOf("write %s: %w", f.Name(), err)
			}
		}
		return w, nil
	case catalog.JSON:
		return &jsonWriter{f: f, bw: bufio.NewWriterSize(f, 256<<10), schema: schema}, nil
	}
	return nil, qerr.NotImplementedf("write: format %q is not supported", c.format)
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
	f      *os.File
	bw     *bufio.Writer
	cw     *csv.Writer
	schema *arrow.Schema
	rec    []string
}

func (c *csvWriter) write(b arrow.RecordBatch) error {
	cols := make([][]string, b.NumCols())
	for i := range cols {
		cols[i], _ = format.Column(b.Column(i))
	}
	c.rec = kernel.Resize(c.rec, len(cols))
	for r := 0; r < int(b.NumRows()); r++ {
		for i := range cols {
			c.rec[i] = cols[i][r]
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

// parseBoolOption reads an option's boolean value; a flag with no value is true.
func parseBoolOption(name, v string) (bool, error) {
	if v == "" {
		return true, nil
	}
	b, err := strconv.ParseBool(strings.ToLower(v))
	if err != nil {
		return false, qerr.Planf("option %s must be true or false, got %q", name, v)
	}
	return b, nil
}
