// Package scan runs physical.Scan: one partition reads its files in turn
// (Parquet, CSV, newline-delimited JSON, Arrow IPC) or its memory-table
// partition, conforms every batch to the scan's output schema, adds a hive
// table's partition columns (constant per file, hive.go), slices batches
// bigger than the task's batch size, applies the fetch limit, and skips
// Parquet row groups whose statistics cannot satisfy the pushed-down
// predicate (prune.go).
//
// Flat Parquet columns (integers, dates, decimals, floats, strings and
// binaries; PLAIN or dictionary pages; version 1 and 2 data pages) are
// decoded page by page by our own decoder (parquet_direct.go,
// parquet_rle.go): arrow-go reads and decompresses the pages, and a helper
// goroutine may decode the next row group while the operator returns the
// current one. Everything else goes through arrow-go's record reader, with
// the conversions of parquet_widen.go.
//
// Invariants: both Parquet paths produce the same batches for the same file
// (tests run every file through each); a memory-limit failure mid-read
// releases the half-built batch; the helper goroutine is owned by the scan,
// stops on Close or cancellation, and reports its panics as the task's error.
package scan
