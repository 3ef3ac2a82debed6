package quiver

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/google/uuid"
	"github.com/quiverdb/quiver/catalog"
	"github.com/quiverdb/quiver/exec/write"
	"github.com/quiverdb/quiver/logical"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/physical/planner"
	"github.com/quiverdb/quiver/qerr"
)

// Where writes run: a write is a query whose plan ends in a Write node,
// so it runs where every query runs (on the cluster's executors, or
// locally). Each task writes its partition's files into a hidden staging
// directory beside the target, and the job's last task moves the files
// the tasks reported into place (exec/write): a failed or cancelled write
// leaves nothing at the target, and readers skip the hidden directory
// meanwhile. On a cluster the target must be on storage every executor
// shares.

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
	w, err := df.planWrite(path, c)
	if err != nil {
		return 0, err
	}
	rows, err := df.derive(w, nil).Collect(ctx)
	if err != nil {
		// The tasks remove what they wrote when they fail; a task that
		// never ran, or whose executor died, may have left its files.
		os.RemoveAll(w.Staging)
		return 0, err
	}
	var n int64
	for _, b := range rows {
		if b.NumRows() > 0 {
			n += b.Column(0).(*array.Int64).Value(0)
		}
		b.Release()
	}
	return n, nil
}

// planWrite checks a write's options against df and the target, and
// returns its Write node.
func (df *DataFrame) planWrite(path string, c writeConfig) (*logical.Write, error) {
	if path == "" {
		return nil, qerr.Planf("write: empty path")
	}
	target, err := filepath.Abs(path)
	if err != nil {
		return nil, qerr.IOf("write %s: %w", path, err)
	}
	dir := len(c.partitionBy) > 0
	if c.format == "" {
		f, ok := catalog.FormatOf(path)
		switch {
		case ok:
			c.format = f
		case dir:
			c.format = catalog.Parquet
		default:
			return nil, qerr.Planf("write %s: cannot tell the format from the name; give FORMAT parquet, csv, json or arrow", path)
		}
	}
	schema := df.plan.Schema()
	var keys []int
	seen := map[int]bool{}
	for _, k := range c.partitionBy {
		i := -1
		for j, f := range schema.Fields {
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
		keys = append(keys, i)
	}
	opts := logical.WriteOptions{Format: string(c.format), PartitionBy: keys, Compression: c.compression,
		RowGroupSize: c.rowGroupSize, Delimiter: c.delimiter, Header: c.header}
	if err := write.CheckSpec(planner.WriteSpec(opts), schema.Len()); err != nil {
		return nil, err
	}
	if st, err := os.Stat(target); err == nil {
		if !c.overwrite {
			return nil, qerr.Planf("write %s: the target exists; use OVERWRITE to replace it", path)
		}
		if st.IsDir() != dir {
			what := map[bool]string{true: "a directory", false: "a file"}
			return nil, qerr.Planf("write %s: the target is %s, the write makes %s", path, what[st.IsDir()], what[dir])
		}
	}
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		return nil, qerr.IOf("write %s: %w", path, err)
	}
	staging := filepath.Join(filepath.Dir(target), "."+filepath.Base(target)+physical.StagingMark+uuid.NewString())
	return logical.NewWrite(df.plan, target, staging, c.overwrite, opts)
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
