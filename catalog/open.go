package catalog

import (
	"io"
	"os"
	"strconv"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/quiverdb/quiver/qerr"
)

// OpenTable describes the table stored at location: a file, a directory
// (its files, read recursively) or a glob. See OpenFiles.
func OpenTable(name string, format Format, location string, options map[string]string, declared []arrow.Field) (*Table, error) {
	return OpenFiles(name, format, []string{location}, options, declared)
}

func (t *Table) openParquet() error {
	var rows int64
	t.RowGroupRows = make([][]int64, len(t.Files))
	t.RowGroupRanges = make([][][]KeyRange, len(t.Files))
	var bounds *distinctBounds
	for i, f := range t.Files {
		pf, err := file.OpenParquetFile(f, false)
		if err != nil {
			return qerr.IOf("catalog: %s is not a readable Parquet file: %w", f, err)
		}
		rows += pf.NumRows()
		t.RowGroupRows[i] = rowGroupRows(pf)
		fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
		if err != nil {
			pf.Close()
			return qerr.IOf("catalog: %s: %w", f, err)
		}
		s, err := fr.Schema()
		if err == nil {
			if bounds == nil {
				bounds = newDistinctBounds(s.NumFields())
			}
			bounds.add(pf)
			t.RowGroupRanges[i] = rowGroupRanges(pf, s.NumFields())
		}
		pf.Close()
		if err != nil {
			return qerr.IOf("catalog: %s: reading schema: %w", f, err)
		}
		s = NormalTemporal(stripMetadata(s))
		if err := t.agree(f, s); err != nil {
			return err
		}
	}
	t.Rows = rows
	if bounds != nil && len(bounds.cols) == t.Schema.NumFields() {
		t.Distinct = bounds.result(rows)
		t.Bounds = bounds.ranges()
	}
	return nil
}

func rowGroupRows(pf *file.Reader) []int64 {
	md := pf.MetaData()
	out := make([]int64, pf.NumRowGroups())
	for rg := range out {
		out[rg] = md.RowGroup(rg).NumRows()
	}
	return out
}

// ParquetRowGroups returns, for each of a Parquet table's files (parallel
// to t.Files), the row count and the column value ranges of each row group:
// t.RowGroupRows and t.RowGroupRanges when they were recorded at
// registration, else read from the files' footers (a table decoded from a
// shipped logical plan does not carry them), once per file version (see
// footers). The results are shared: callers must not modify them. It errors when a footer cannot
// be read, for instance on a scheduler that cannot see the files; callers
// then plan one partition per file and assume nothing of the ranges.
func ParquetRowGroups(t *Table) (rows [][]int64, ranges [][][]KeyRange, err error) {
	if t.Format != Parquet {
		return nil, nil, qerr.Internalf("catalog: table %q is %s, not parquet: it has no row groups", t.Name, t.Format)
	}
	if len(t.RowGroupRows) == len(t.Files) {
		return t.RowGroupRows, t.RowGroupRanges, nil // recorded together at registration
	}
	fields := 0
	if t.Schema != nil {
		fields = t.Schema.NumFields()
	}
	rows = make([][]int64, len(t.Files))
	ranges = make([][][]KeyRange, len(t.Files))
	for i, f := range t.Files {
		if rows[i], ranges[i], err = footers.rowGroups(f, fields); err != nil {
			return nil, nil, qerr.IOf("catalog: table %q: cannot read the footer of %s: %w", t.Name, f, err)
		}
	}
	return rows, ranges, nil
}

func (t *Table) openIPC() error {
	var rows int64
	for _, f := range t.Files {
		s, n, err := ipcSchema(f)
		if err != nil {
			return err
		}
		rows += n
		if err := t.agree(f, s); err != nil {
			return err
		}
	}
	t.Rows = rows
	return nil
}

// ipcSchema reads an Arrow IPC file (or stream) schema and, for the file format, its row count.
func ipcSchema(path string) (*arrow.Schema, int64, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, 0, qerr.IOf("catalog: %w", err)
	}
	defer fh.Close()
	if r, err := ipc.NewFileReader(fh); err == nil {
		defer r.Close()
		var rows int64
		for i := 0; i < r.NumRecords(); i++ {
			// RecordBatchAt hands the batch over (RecordBatch keeps it in
			// the reader, which releases it itself).
			rec, err := r.RecordBatchAt(i)
			if err != nil {
				return nil, 0, qerr.IOf("catalog: %s: %w", path, err)
			}
			rows += rec.NumRows()
			rec.Release()
		}
		return r.Schema(), rows, nil
	}
	if _, err := fh.Seek(0, io.SeekStart); err != nil {
		return nil, 0, qerr.IOf("catalog: %w", err)
	}
	r, err := ipc.NewReader(fh)
	if err != nil {
		return nil, 0, qerr.IOf("catalog: %s is not an Arrow IPC file: %w", path, err)
	}
	defer r.Release()
	return r.Schema(), -1, nil
}

// agree sets t.Schema from the first file and checks later files match; a
// declared schema must have the files' column types.
func (t *Table) agree(path string, s *arrow.Schema) error {
	if t.Schema == nil {
		t.Schema = s
		return nil
	}
	if t.Schema.NumFields() != s.NumFields() {
		return qerr.Planf("catalog: %s has %d columns, table %q expects %d", path, s.NumFields(), t.Name, t.Schema.NumFields())
	}
	for i, f := range s.Fields() {
		want := t.Schema.Field(i)
		if !arrow.TypeEqual(f.Type, want.Type) {
			return qerr.Planf("catalog: column %d (%s) of %s has type %s, table %q expects %s", i+1, f.Name, path, f.Type, t.Name, want.Type)
		}
	}
	return nil
}

// CSVDelimiter returns the delimiter option (default ',').
func CSVDelimiter(options map[string]string) (rune, error) {
	d, ok := options["delimiter"]
	if !ok || d == "" {
		return ',', nil
	}
	if d == `\t` || d == "tab" {
		return '\t', nil
	}
	r := []rune(d)
	if len(r) != 1 {
		return 0, qerr.Planf("catalog: option delimiter must be one character, got %q", d)
	}
	return r[0], nil
}

// CSVHasHeader returns the has_header option (default true).
func CSVHasHeader(options map[string]string) (bool, error) {
	v, ok := options["has_header"]
	if !ok {
		return true, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, qerr.Planf("catalog: option has_header must be true or false, got %q", v)
	}
	return b, nil
}

// csvKind is a lattice: unseen < int < float < string, unseen < date <
// timestamp < string, unseen < bool < string.
type csvKind int

const (
	kUnseen csvKind = iota
	kInt
	kFloat
	kDate
	kBool
	kString
	kTimestamp
)

func (k csvKind) widen(v string) csvKind {
	isInt := func() bool { _, err := strconv.ParseInt(v, 10, 64); return err == nil }
	isFloat := func() bool { _, err := strconv.ParseFloat(v, 64); return err == nil }
	isDate := func() bool { _, err := time.Parse("2006-01-02", v); return err == nil }
	isBool := func() bool { _, err := strconv.ParseBool(v); return err == nil && !isInt() }
	// A timestamp has a time of day after the date; the CSV reader parses
	// it with arrow's parser, so that parser decides.
	isTimestamp := func() bool {
		_, _, err := arrow.TimestampFromStringInLocation(v, arrow.Microsecond, time.UTC)
		return len(v) > 10 && err == nil
	}
	switch k {
	case kUnseen:
		switch {
		case isInt():
			return kInt
		case isFloat():
			return kFloat
		case isDate():
			return kDate
		case isTimestamp():
			return kTimestamp
		case isBool():
			return kBool
		}
		return kString
	case kInt:
		if isInt() {
			return kInt
		}
		if isFloat() {
			return kFloat
		}
	case kFloat:
		if isFloat() {
			return kFloat
		}
	case kDate:
		if isDate() {
			return kDate
		}
		if isTimestamp() {
			return kTimestamp
		}
	case kTimestamp:
		if isTimestamp() || isDate() {
			return kTimestamp
		}
	case kBool:
		if isBool() {
			return kBool
		}
	}
	return kString
}

func (k csvKind) arrowType() arrow.DataType {
	switch k {
	case kInt:
		return arrow.PrimitiveTypes.Int64
	case kFloat:
		return arrow.PrimitiveTypes.Float64
	case kDate:
		return arrow.FixedWidthTypes.Date32
	case kTimestamp:
		// Microseconds without a time zone, as SQL's TIMESTAMP.
		return &arrow.TimestampType{Unit: arrow.Microsecond}
	case kBool:
		return arrow.FixedWidthTypes.Boolean
	}
	return arrow.BinaryTypes.String
}

// stripMetadata drops schema and field metadata (Parquet field ids), so
// schemas compare by names and types only.
func stripMetadata(s *arrow.Schema) *arrow.Schema {
	fs := s.Fields()
	for i := range fs {
		fs[i].Metadata = arrow.Metadata{}
	}
	return arrow.NewSchema(fs, nil)
}
