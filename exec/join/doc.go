// Package join runs physical.HashJoin and physical.NestedLoopJoin: the build
// side (the left input) is collected once, into columns and a
// hashtable.Table over its keys, shared by every probe partition when the
// plan collects it (CollectLeft) or built per partition when both sides are
// partitioned by the keys; each probe batch forms candidate (build row,
// probe row) pairs, filters them and takes the output columns.
//
// A CollectLeft join with one integer key that drops the probe rows meeting
// no build row publishes its build keys' range to the Parquet scan that
// produces its probe key (key_range.go), before the probe side is opened.
//
// Every join type lives here: inner, left, right, full, semi, anti, mark,
// and the right-side semi/anti joins (RightSemi, RightAnti) the planner
// picks when the right side is clearly smaller than the left.
//
// Invariants: a NULL key never matches; the build side's rows that matched
// are tracked per probe partition and merged when it finishes, so the probe
// loop takes no locks, and the left-side rows of Left/Full/Semi/Anti/Mark
// joins are emitted once, by the last partition to finish; the build side's
// memory is reserved against the task's limit before it is held.
//
// Under a memory limit a hash join whose build side does not fit becomes a
// grace hash join (grace.go): both sides are split into spill files by a
// hash of the join keys and joined partition by partition, a partition
// that still does not fit being split again, up to a depth limit.
package join
