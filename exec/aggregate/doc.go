// Package aggregate runs physical.HashAggregate: group keys map to dense
// group ids in a hashtable.Table, and each aggregate keeps flat typed state
// per group id (accumulators for count, sum, avg, min, max and the DISTINCT
// forms), updated column-at-a-time over (group id, value) pairs.
//
// DISTINCT aggregates keep per-group sets: a bitmap over a small integer
// range while the values fit one (distinct_direct.go), hashed sets
// otherwise, or, in the two-phase plan by sets, each group's distinct values
// as a list state merged by the final phase (distinct_sets.go); that
// Partial phase, needing its sets only at the end, records its pairs and
// sorts them instead of probing a set while they do not mostly repeat
// (distinct_lazy.go). Few-group
// aggregates (a handful of groups, as in TPC-H Q1) update per-group lanes in
// registers instead of scattering by id.
//
// A Partial aggregate grouping by a string column read straight from a
// decoded cache file groups on the file's dictionary codes, as Int32 ids,
// and turns them into strings only for its output groups (dict_keys.go);
// so does a CASE of string constants, on its results' ids. When its other
// keys are such ids and one is an integer they follow from (c_custkey,
// c_name, nation), it groups on the integer alone while the data bears
// that out (dep_keys.go).
//
// A Partial aggregate whose groups, after the task's
// quiver.aggregate.skip_partial_probe_rows input rows, exceed
// skip_partial_percent of them emits its groups and passes every later row
// on as its own partial state, built by the accumulators themselves, so
// the Final aggregate merges them as any other (skip_partial.go); DISTINCT
// and collecting aggregates never do.
//
// Collecting aggregates (array_agg; string_agg ordered, DISTINCT or
// filtered: collect.go) keep each group's rows, copied to the Go heap and
// accounted, pass them as a list state, and sort and dedupe them per group
// only when the final result is built.
//
// Under memory pressure (spill.go) a grouped aggregate folds its input in
// slices that fit, and when its groups no longer fit, a Partial aggregate
// emits them early and starts afresh, while a Final or Single one writes
// their partial states to hash-split spill files and aggregates each file
// on its own at the end. A DISTINCT aggregate's spilled state is its
// group's set of values as a list, the state of the plan by sets, because
// sets merge where running counts do not (distinct_spill.go); a collecting
// aggregate's is its group's rows, which merge as they are.
//
// When the groups are too few for a split by key to free anything (no
// GROUP BY, or one group's set above the limit), the sets are split by a
// hash of their values instead (value_spill.go): each file then holds all
// of its values' occurrences, so its distinct values are final, and its
// re-aggregation yields the inner aggregates' plain states (a count, a
// sum) over them, which a second aggregate merges across the files as it
// merges any partial states. This keeps the existing files, levels and
// metrics, and costs a second aggregation only when it is needed; the
// rewrite into a GROUP BY over (group, value) would pay that second
// aggregation on every query. A collecting aggregate's one list without
// GROUP BY cannot be split (its order and DISTINCT need every row) and
// still fails at the limit.
//
// Invariants: an aggregate drains its whole input before its first output
// batch, but for a Partial one flushing under memory pressure or passing
// rows through; without GROUP BY it yields exactly one row, also over empty input;
// before each input batch it reserves (tc.Grow) the worst case the batch can
// add and returns the unused part after, and everything on Close; Partial,
// Final and Single modes agree on the state layout the physical planner
// describes.
package aggregate
