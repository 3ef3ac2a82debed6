// Package catalog owns what a session knows about its tables and views: each
// table's schema, format, location, file listing, options and statistics,
// and each view's defining SQL. It expands locations (files, directories,
// globs) into files of one format, finds hive key=value partition columns,
// and reads file metadata (Parquet footers, Arrow IPC schemas) or sniffs a
// sample (CSV dialect and types, NDJSON keys and types) to learn schemas.
//
// catalog imports Arrow only (and qerr); it never imports logical, sql or exec.
package catalog
