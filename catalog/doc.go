// Package catalog owns what a session knows about its tables and views: each
// table's schema, format, location, file listing, options and statistics,
// and each view's defining SQL. It reads file metadata (Parquet footers, CSV
// headers, Arrow IPC schemas) to learn schemas and row counts.
//
// catalog imports Arrow only (and qerr); it never imports logical, sql or exec.
package catalog
