// Package settings owns Quiver's settings: the one table of every setting
// a session can SET (name, type, default, scope, description), the one
// parser of their values, sizes ("4GiB", "512MB", "1048576") and durations
// ("10m", "1h30m") included, and Values, the set of settings a session gave
// explicitly, which is what travels on the wire.
//
// Everything that reads a setting reads it here: the session's SET, SHOW
// and SHOW ALL; the scheduler when it takes a session's or a query's
// settings and plans a job, and its command-line flags for the cluster-wide
// defaults; the executors when they run a task. A value is parsed once, where
// it enters (SET, a flag, the wire), into a canonical text that every later
// reader parses without error.
//
// Invariants: a setting a session never SET is absent from its Values and so
// never sent, and whoever reads it applies its own default (the scheduler's
// for target partitions and the cache, the registry's for the rest); a
// Values holds only known settings with valid canonical values; bad input
// changes nothing and is refused with an error naming the setting and the
// value.
//
// settings imports physical (for the list of shuffle compressions), qerr and
// temporal (to check time zone names) only, so the root package, the scheduler, the executor and cmd/quiver can
// all import it.
package settings
