// Package exec turns physical plans into running operators. It owns the one
// type switch from physical nodes to operators (Build), Execute, the
// in-memory exchanges that move batches between partitions (repartition,
// coalesce, sort-preserving merge, union), the small row-at-a-batch
// operators (filter, projection, limit, values), and the loop of a WITH
// RECURSIVE query (RecursiveQuery, WorkTable: recursive.go), which
// rebuilds its recursive term once per iteration in a forked TaskContext
// and so runs on one partition, inside one task.
//
// The other operators live in rooms below it, each its own package:
// exec/scan, exec/aggregate, exec/join, exec/sort and exec/shuffle, built on
// exec/hashtable, exec/kernel and exec/filemap; all of them implement the
// contract in exec/execop. The rooms never import exec: a TaskContext made by
// NewTaskContext carries Build, and an operator builds its inputs with
// tc.Build.
//
// exec imports physical and Arrow; it never imports logical, sql or catalog.
package exec
