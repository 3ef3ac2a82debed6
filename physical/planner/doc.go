// Package planner owns the translation of optimized logical plans into
// physical plans: choosing operators (hash join modes, partial/final
// aggregation, top-k), inserting exchanges (repartition, coalesce, merge)
// for target_partitions-way parallelism, and resolving column names to
// indices and expressions to typed physical expressions.
//
// planner imports logical and physical; never sql or exec.
package planner
