// Package sort runs physical.Sort: a full sort of its input (or of every
// input partition merged, unless the plan preserves partitioning), or a
// top-k selection when the plan carries a fetch limit, which keeps only the
// best rows in a bounded heap instead of sorting everything. It also owns
// the sort-key comparators (SortKeyCol, SortSpec) that the
// sort-preserving merge and range partitioning share.
//
// Invariants: ordering follows each key's direction and NULLS FIRST/LAST;
// the sort is stable (equal keys keep input order), so a top-k and a full
// sort followed by a limit return the same rows; sort memory (the index
// arrays and buffered batches) is accounted against the task's limit.
package sort
