package tpch

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quiverdb/quiver/exec/memcheck"
)

// The TPC-DS files of the repository's testdata.
var tpcdsDir = filepath.Join("..", "testdata", "tpcds")

func tpcdsOpts(t *testing.T, queries ...int) BenchOptions {
	return BenchOptions{Suite: "tpcds", DataDir: filepath.Join(tpcdsDir, "sf0.01"), VerifyDir: filepath.Join(tpcdsDir, "answers"),
		Iterations: 1, Queries: queries, mem: memcheck.New(t)}
}

// TestRunBenchTPCDS: the TPC-DS suite finds its schema and queries beside
// the data folder, runs the queries asked for (windows and ROLLUP among
// them), and verifies them against DuckDB's answers by value.
func TestRunBenchTPCDS(t *testing.T) {
	res, err := RunBench(context.Background(), tpcdsOpts(t, 3, 12, 36, 98))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Queries) != 4 || res.Settings.Suite != "tpcds" {
		t.Fatalf("%d results, suite %q", len(res.Queries), res.Settings.Suite)
	}
	for _, q := range res.Queries {
		if !q.Verified || q.Error != "" {
			t.Errorf("q%02d: verified=%v error=%q verify_error=%q", q.Query, q.Verified, q.Error, q.VerifyError)
		}
	}
}

// TestRunBenchTPCDSWrongAnswer: a changed value in an answer file is
// caught, though header names are not compared.
func TestRunBenchTPCDSWrongAnswer(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile(AnswerPath(filepath.Join(tpcdsDir, "answers"), 98))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	lines[1] = strings.Replace(lines[1], "|", "|x", 1)
	if err := os.WriteFile(AnswerPath(dir, 98), []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	o := tpcdsOpts(t, 98)
	o.VerifyDir = dir
	if _, err := RunBench(context.Background(), o); err == nil || !strings.Contains(err.Error(), "q98 wrong answer") {
		t.Fatalf("RunBench with a wrong answer file: %v", err)
	}
}

// TestRunBenchTPCDSErrors: a query number past 99, a missing schema file
// and a schema without tables are refused before anything runs.
func TestRunBenchTPCDSErrors(t *testing.T) {
	o := tpcdsOpts(t, 100)
	if _, err := RunBench(context.Background(), o); err == nil || !strings.Contains(err.Error(), "unknown query 100 (want 1 to 99") {
		t.Errorf("query 100: %v", err)
	}
	o = tpcdsOpts(t, 1)
	o.SchemaFile = filepath.Join(t.TempDir(), "missing.sql")
	if _, err := RunBench(context.Background(), o); err == nil || !strings.Contains(err.Error(), "TPC-DS schema") {
		t.Errorf("missing schema: %v", err)
	}
	empty := filepath.Join(t.TempDir(), "schema.sql")
	os.WriteFile(empty, []byte("-- nothing\n"), 0o644)
	o.SchemaFile = empty
	if _, err := RunBench(context.Background(), o); err == nil || !strings.Contains(err.Error(), "declares no table") {
		t.Errorf("empty schema: %v", err)
	}
}
