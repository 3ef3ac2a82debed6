// Package exec owns the Arrow operators that run physical plans: it builds
// one Operator per (physical node, partition) with a single type switch
// (Build), runs partitions in parallel, moves batches between partitions in
// memory (repartition, coalesce), accounts memory per query, and collects
// per-operator metrics for EXPLAIN ANALYZE.
//
// exec imports physical and Arrow; it never imports logical, sql or catalog.
package exec
