package tpch

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/quiverdb/quiver"
	"github.com/quiverdb/quiver/qerr"
)

// The TPC-DS benchmark (BenchOptions.Suite "tpcds") runs the 99 queries of
// a folder of query files over the 24 tables a schema file declares: one
// CREATE EXTERNAL TABLE statement per table whose location is {DIR}, the
// folder of Parquet files. DuckDB's answer files name some columns
// differently (it keeps expressions' text), so verification compares values
// and takes the header from the result.

// TPCDSQueries is the number of TPC-DS queries.
const TPCDSQueries = 99

var createTable = regexp.MustCompile(`(?i)^\s*CREATE\s+EXTERNAL\s+TABLE\s+([A-Za-z_][A-Za-z_0-9]*)`)

// tpcdsSchema reads the schema file and returns its CREATE statements with
// {DIR} replaced by the absolute data folder, and the tables they create.
func tpcdsSchema(schemaFile, dataDir string) (stmts, tables []string, err error) {
	text, err := os.ReadFile(schemaFile)
	if err != nil {
		return nil, nil, qerr.IOf("bench: TPC-DS schema: %w", err)
	}
	abs, err := filepath.Abs(dataDir)
	if err != nil {
		return nil, nil, qerr.IOf("bench: data folder: %w", err)
	}
	for _, line := range strings.Split(string(text), "\n") {
		m := createTable.FindStringSubmatch(line)
		if m == nil {
			continue // comments and blank lines
		}
		stmts = append(stmts, strings.ReplaceAll(line, "{DIR}", abs))
		tables = append(tables, m[1])
	}
	if len(stmts) == 0 {
		return nil, nil, qerr.Planf("bench: TPC-DS schema %s declares no table (want one CREATE EXTERNAL TABLE ... LOCATION '{DIR}/...' per line)", schemaFile)
	}
	return stmts, tables, nil
}

// registerTPCDS creates the tables of the schema file.
func registerTPCDS(ctx context.Context, s *quiver.Session, stmts []string) error {
	for _, st := range stmts {
		if _, err := s.SQL(ctx, st); err != nil {
			return qerr.Planf("bench: TPC-DS schema: %s: %w", strings.TrimSpace(st), err)
		}
	}
	return nil
}

// tpcdsQuery reads query q from dir.
func tpcdsQuery(dir string, q int) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("q%02d.sql", q)))
	if err != nil {
		return "", qerr.IOf("bench: TPC-DS query %d: %w", q, err)
	}
	return string(b), nil
}

// firstExisting returns the first of paths that exists, or the first.
func firstExisting(paths ...string) string {
	for _, p := range paths {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return paths[0]
}
