// Package window runs physical.Window: window functions over each input
// partition, whose rows the plan has already placed (every window partition,
// the rows equal on PARTITION BY, in one input partition) and sorted (by
// PARTITION BY, then ORDER BY).
//
// The operator drains its input, concatenates it, finds the window
// partitions and the peer groups (rows equal on ORDER BY) by comparing
// neighbouring rows with exec/sort's comparators, computes each function's
// column over all rows at once, and emits the input rows in input order
// with those columns appended, in batches of the task's batch size.
//
// Invariants: frames are computed as half-open row ranges whose ends never
// move backwards within a partition (RANGE offsets, whether numbers,
// fractions or intervals added to the key per row, are found by
// forward-only cursors, as PostgreSQL's are), so aggregates over frames
// run in one pass whatever the frame (count, and sum and avg of integers
// and decimals, by adding and removing rows; of floats by adding while the
// frame only grows and from a tree of
// partial sums; min and max with a monotonic deque); array_agg and
// string_agg gather each frame's rows, in window order or sorted by their
// own ORDER BY through ranks computed once per partition; value functions (LAG, LEAD,
// FIRST_VALUE, LAST_VALUE, NTH_VALUE, MIN, MAX) pick a source row per
// output row and gather the column once; with IGNORE NULLS they pick among
// the argument's non-NULL rows (a list of them and a per-row count), and
// a DISTINCT aggregate (whole-partition frames only) runs the ordinary
// aggregate over its argument with each value's repeats within the
// partition made NULL. Decimal sums are exact. The
// scratch index arrays are reserved with tc.Grow and returned on Close;
// Arrow memory comes from the task allocator. It imports exec/sort (the
// comparators), exec/kernel, exec/execop and physical, never exec.
package window
