// Package temporal owns the calendar and the text forms of Quiver's date
// and time values: dates (days since 1970-01-01), timestamps without time
// zone (microseconds since 1970-01-01 00:00:00), times of day
// (microseconds since midnight) and intervals (Arrow's month, day and
// nanosecond parts). It parses and renders them (the SQL literals, casts,
// CSV sniffing and result formatting all read and write through it) and
// does the calendar arithmetic (month ends clamp, as in PostgreSQL). For
// TIMESTAMPTZ (UTC instants) it resolves time zones, with the IANA database
// built in, and converts between instants and a zone's wall clock.
//
// It is a leaf: it imports nothing of this module except qerr, and every
// package may import it (ARCHITECTURE.md §1).
package temporal
