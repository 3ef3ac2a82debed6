// Package scan runs physical.Scan: one partition reads its files in turn
// (Parquet, CSV, newline-delimited JSON, Arrow IPC) or its memory-table
// partition, conforms every batch to the scan's output schema, adds a hive
// table's partition columns (constant per file, hive.go), slices batches
// bigger than the task's batch size, applies the fetch limit, and skips
// Parquet row groups whose statistics cannot satisfy the pushed-down
// predicate or lie outside the key range a hash join above published for
// this scan once its build side was collected (prune.go, execop.KeyRanges).
//
// Parquet files are read by exec/scan/parquet, which holds our own page
// decoder for flat columns and arrow-go's record reader for the rest; the
// scan gives it the column names, the batch size, the task's allocator and
// the pruning test, and gets batches back.
//
// Invariants: a memory-limit failure mid-read releases the half-built
// batch; nothing the scan opens outlives its Close.
package scan
