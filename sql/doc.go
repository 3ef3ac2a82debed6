// Package sql turns SQL text into statements and logical plans. It owns the
// statement splitter, a token pre-parser for the statements the TiDB parser
// does not know (CREATE EXTERNAL TABLE, the cache statements, SET, SHOW,
// DESCRIBE, EXPLAIN, and the writes: COPY, CREATE TABLE, INSERT, DELETE,
// TRUNCATE, write.go) and for the syntax it lacks (NULLS FIRST/LAST, FULL
// JOIN, PostgreSQL-style casts and VALUES, QUALIFY, files in FROM:
// files.go), and the lowering of the TiDB AST to package logical.
//
// It is the only importer of github.com/pingcap/tidb/pkg/parser in Quiver; no
// ast type leaves the package. It imports logical, catalog and qerr, and
// executes nothing: the session executes the statements it returns.
package sql
