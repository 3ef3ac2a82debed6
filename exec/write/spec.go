package write

import (
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
)

// CheckSpec validates a write's options for its input schema width: the
// one rule the planner (before a query runs) and FileSink (on the
// executor, for a plan from the wire) both apply.
func CheckSpec(s physical.WriteSpec, columns int) error {
	switch s.Format {
	case physical.FormatParquet, physical.FormatCSV, physical.FormatJSON, physical.FormatArrow:
	default:
		return qerr.Planf("write: unknown format %q (want parquet, csv, json or arrow)", s.Format)
	}
	if err := CheckCompression(s.Format, s.Compression); err != nil {
		return err
	}
	if s.RowGroupSize < 0 || (s.RowGroupSize > 0 && s.Format != physical.FormatParquet) {
		return qerr.Planf("write: ROW_GROUP_SIZE must be positive and applies to Parquet only")
	}
	seen := map[int]bool{}
	for _, c := range s.PartitionBy {
		if c < 0 || c >= columns || seen[c] {
			return qerr.Planf("write: bad partition column %d of %d", c, columns)
		}
		seen[c] = true
	}
	if columns > 0 && len(seen) == columns {
		return qerr.Planf("write: every column is a partition column; nothing would be left to write in the files")
	}
	return nil
}

// CheckCompression reports whether codec is available for files of format
// ("" is always: the format's default).
func CheckCompression(f physical.Format, codec string) error {
	if codec == "" {
		return nil
	}
	ok := false
	switch f {
	case physical.FormatParquet:
		_, ok = parquetCodecs[codec]
	case physical.FormatArrow:
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

// Extension is the file name extension of format.
func Extension(f physical.Format) string {
	switch f {
	case physical.FormatCSV:
		return ".csv"
	case physical.FormatJSON:
		return ".json"
	case physical.FormatArrow:
		return ".arrow"
	}
	return ".parquet"
}
