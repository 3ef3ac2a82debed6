// Package sort runs physical.Sort: a full sort of its input (or of every
// input partition merged, unless the plan preserves partitioning), or a
// top-k selection when the plan carries a fetch limit, which keeps only the
// best rows in a bounded heap instead of sorting everything, or a top-k of
// each window partition when the plan carries a PartitionLimit
// (partition_topk.go: the rows a ranking bound above the window can pass,
// found by compacting the buffered rows and dropping on arrival the rows
// that sort after a full partition's last). A full sort
// that would not fit under the task's or the executor's memory limit
// spills sorted runs to Arrow IPC files under the work dir and merges them
// (spill.go). It also owns the sort-key comparators (SortKeyCol, SortSpec)
// and the k-way Merger that the sort-preserving merge exchange and range
// partitioning share.
//
// Invariants: ordering follows each key's direction and NULLS FIRST/LAST;
// the sort is stable (equal keys keep input order), so a top-k and a full
// sort followed by a limit return the same rows, and a spilled sort the
// same rows in the same order as one in memory; sort memory (the index
// arrays and buffered batches) is accounted against the task's limit;
// spill files are removed by Close whatever happened.
package sort
