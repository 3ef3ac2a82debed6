// Package hashtable maps distinct key tuples to dense ids (group ids for the
// aggregate, distinct-key ids for a join's build side) and keeps the keys in
// columnar form beside the ids, from which the aggregate builds its output.
//
// Each layout is its own type behind the small layout interface, which a
// Table calls once per batch (table.go): directInts (direct.go: one
// integer-like key over a small range, an array indexed by the value),
// hashedInts (hashed.go: open addressing holding the value beside its id),
// packedInts (packed.go: several integer-like or short string keys packed
// into one int64 that then uses one of the two integer layouts) and generic
// (generic.go: tagged slots, with keys kept as fixed-width records while they
// fit, records.go, and checked vector-at-a-time). The layout is chosen
// once, when the table is made (choose.go): from the keys' statistics
// (physical.ColumnStats, which the planner carries from Parquet footers,
// memory tables and VALUES) where they bound the keys exactly, else from
// the key types. The repeat pass and the loads ahead live in the layouts
// that use them; per-row work never leaves a layout's typed loops.
//
// Invariants: a layout chosen from exact statistics never changes while
// the keys keep within them; the layout changes (direct → hashed, packed
// re-packs and → generic, records → columns) are only the safety net for
// keys without such statistics (or outside wrong ones): they go one way,
// each at most once per table (re-packs at least double the fields),
// never change an id already handed out, and are counted for EXPLAIN
// ANALYZE (Figures); a NULL key is one key with its own id;
// ids are dense, in first-seen order. A Table is not safe for concurrent
// mutation; concurrent Find calls on a table no one mutates are safe only
// with separate probe scratch.
package hashtable
