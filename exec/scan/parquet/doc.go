// Package parquet reads one Parquet file into Arrow batches for the scan
// (exec/scan): the requested columns by name, a range of row groups, the
// row groups the caller's statistics test rules out skipped. The scan
// operator sees only Open, Reader.Next, Reader.RowGroups and Reader.Close.
//
// Flat columns (integers, dates, timestamps, times, decimals, floats,
// strings and binaries; PLAIN or dictionary pages; version 1 and 2 data
// pages) are decoded page by page by our own decoder (direct.go, rle.go;
// docs/design/parquet-decoder.md): arrow-go reads and decompresses the
// pages, and when the file is its table's only partition a helper
// goroutine decodes about half of the columns beside the caller. Every
// other file goes through arrow-go's record reader, with the conversions
// of widen.go. The choice is per file.
//
// The direct decoder reinterprets little-endian bytes in place; it is
// compiled on only for little-endian hosts (endian_little.go), and big-endian
// hosts read every file through the record reader (endian_big.go).
//
// Invariants: both read paths produce the same batches for the same file
// (the tests run every file, DuckDB-written ones included, through each);
// every buffer comes from the caller's allocator through a recycler, and a
// memory-limit failure mid-read releases the half-built batch; the helper
// goroutine is owned by the Reader, stops on Close, and reports its panics
// as the read's error. The package knows nothing of operators or plans
// beyond physical.RowGroupRange.
//
// It may import exec/execop, physical and qerr of ours, and arrow-go.
package parquet
