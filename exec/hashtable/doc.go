// Package hashtable maps distinct key tuples to dense ids (group ids for the
// aggregate, distinct-key ids for a join's build side) and keeps the keys in
// columnar form beside the ids, from which the aggregate builds its output.
//
// A Table picks its layout from the key columns and the keys it has seen:
// direct (one integer-like key over a small range: an array indexed by the
// value), hashed integer (open addressing holding the value beside its id),
// packed (several integer-like keys packed into one int64 that then uses the
// two integer layouts), and generic (tagged slots, with keys kept as
// fixed-width records while they fit, and checked vector-at-a-time). The
// repeat pass over string keys and the prefetching of record loads live with
// the layouts that use them.
//
// Invariants: layout changes go one way only (direct → hashed, packed →
// generic, records → columns), each at most once per table and without
// changing any id already handed out; a NULL key is one key with its own id;
// ids are dense, in first-seen order. A Table is not safe for concurrent
// mutation; concurrent Find calls on a table no one mutates are safe only
// with separate probe scratch.
package hashtable
