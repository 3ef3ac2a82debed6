// Package execop is the operator contract every room of exec implements:
// the Operator interface (Open, Next, Close and who owns each batch), the
// TaskContext a task's operators share, memory accounting (the
// AccountingAllocator and its limit errors, the Recycler, off-heap
// allocation, unzeroed "dirty" buffers), per-node metrics for EXPLAIN
// ANALYZE, and the recover helpers that turn a panic into a task error.
//
// It lives below exec so that the operator rooms (aggregate, join, sort,
// scan, shuffle, ...) can implement the contract without importing exec,
// which imports them for its one Build switch. A TaskContext carries that
// Build as a BuildFunc: operators build their inputs with tc.Build.
//
// Invariants: every batch Next returns carries one reference that moves to
// the caller; Close is idempotent; every Arrow buffer a task allocates comes
// from tc.Mem, and non-Arrow memory (hash tables, sort indices) is reserved
// with tc.Grow and returned with tc.Shrink.
//
// Spilling operators (a full sort, a hash aggregate, a hash join's build
// side) decide when to spill by a Spiller, not by the room left under the
// limit: each gets a fair share of what the limit leaves beside the memory
// that cannot spill and a reserve (spill.go). Measured against the room
// left, two spilling operators sharing one limit (the partitions of a
// local query, the tasks of an executor) each took what the other left,
// and scans, exchanges and current batches, which cannot spill, found
// nothing when they next asked, so the query failed although spilling more
// would have let it finish. Requests that cannot spill keep the
// first-come rule: reserveOwn refuses only what does not fit.
package execop
