// Package codec encodes logical plans (logical.Plan, logical.Expr) to the
// protobuf messages of rpc/plan.proto and back: the client ships optimized
// plans to the scheduler this way (rpc.ExecuteQueryRequest.logical_plan).
//
// Decode rebuilds every node through logical's New... constructors, so
// schemas are recomputed and checked, and returns a qerr Internal error
// ("codec: ...") for malformed input; it never panics.
//
// A Scan carries its catalog.Table without data: name, Arrow schema,
// format, location, files, options and row count. A catalog.Memory table
// keeps only its name, schema, row count and partition count — its batches
// stay in the process that registered them — and decodes to a Table with
// Format Memory and Partitions of that length holding nil slices.
// Subquery expressions and outer references are encoded too, though
// optimized plans rarely hold them.
//
// codec imports logical, catalog, rpc and qerr only.
package codec
