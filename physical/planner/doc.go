// Package planner owns the translation of optimized logical plans into
// physical plans: choosing operators (hash join modes, partial/final
// aggregation, top-k), inserting exchanges (repartition, coalesce, merge)
// for target_partitions-way parallelism, and resolving column names to
// indices and expressions to typed physical expressions.
//
// A hash join collects its left side whole when that side is small, and
// otherwise repartitions both sides by the join keys and joins partition by
// partition; when both sides are already hash-split by the join keys into
// as many partitions (two aggregates grouped by them, copartition.go), it
// joins partition by partition with no exchange of its own.
//
// planner imports logical and physical; never sql or exec.
package planner
