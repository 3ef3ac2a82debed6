package tpch

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver/exec/memcheck"
	"github.com/quiverdb/quiver/qerr"
)

var f64 = arrow.PrimitiveTypes.Float64

const (
	sf001   = "sf0.01"
	answers = "answers"
)

func benchOpts(t *testing.T, queries ...int) BenchOptions {
	return BenchOptions{DataDir: sf001, VerifyDir: answers, Iterations: 1, Queries: queries, mem: memcheck.New(t)}
}

func TestRunBenchVerifiesAndWritesJSON(t *testing.T) {
	res, err := RunBench(context.Background(), benchOpts(t, 1, 6, 13))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Queries) != 3 {
		t.Fatalf("%d query results, want 3", len(res.Queries))
	}
	wantRows := map[int]int64{1: 4, 6: 1, 13: 32}
	for _, q := range res.Queries {
		if !q.Verified || q.Error != "" || q.VerifyError != "" {
			t.Errorf("q%d: verified=%v error=%q verify_error=%q", q.Query, q.Verified, q.Error, q.VerifyError)
		}
		if q.Rows != wantRows[q.Query] {
			t.Errorf("q%d: %d rows, want %d", q.Query, q.Rows, wantRows[q.Query])
		}
		if len(q.IterationsMs) != 1 || q.MedianMs <= 0 || q.MinMs > q.MedianMs || q.MedianMs > q.MaxMs {
			t.Errorf("q%d: iterations %v min %v median %v max %v", q.Query, q.IterationsMs, q.MinMs, q.MedianMs, q.MaxMs)
		}
	}
	if res.TotalMs <= 0 || res.GeomeanMs <= 0 || res.GeomeanMs > res.TotalMs {
		t.Errorf("total %v geomean %v", res.TotalMs, res.GeomeanMs)
	}
	if res.PeakRSSBytes <= 0 {
		t.Errorf("peak RSS %d", res.PeakRSSBytes)
	}

	path := filepath.Join(t.TempDir(), "run.json")
	if err := res.WriteJSON(path); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"queries", "total_ms", "geomean_ms", "peak_rss_bytes", "machine", "go_version", "settings"} {
		if _, ok := doc[k]; !ok {
			t.Errorf("JSON has no %q", k)
		}
	}
	q0 := doc["queries"].([]any)[0].(map[string]any)
	for _, k := range []string{"query", "iterations_ms", "median_ms", "rows", "verified"} {
		if _, ok := q0[k]; !ok {
			t.Errorf("JSON query has no %q", k)
		}
	}
	if m := doc["machine"].(map[string]any); m["cores"].(float64) < 1 {
		t.Errorf("machine %v", m)
	}
	back, err := ReadResult(path)
	if err != nil {
		t.Fatal(err)
	}
	if back.TotalMs != res.TotalMs || len(back.Queries) != 3 {
		t.Errorf("read back %+v", back)
	}
	var out bytes.Buffer
	res.Print(&out)
	if !strings.Contains(out.String(), "q06") || !strings.Contains(out.String(), "geomean") {
		t.Errorf("printed:\n%s", out.String())
	}
}

func TestRunBenchMemTable(t *testing.T) {
	o := benchOpts(t, 3, 18)
	o.MemTable = true
	o.TargetPartitions = 3
	res, err := RunBench(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range res.Queries {
		if !q.Verified {
			t.Errorf("q%d on in-memory tables: %s %s", q.Query, q.Error, q.VerifyError)
		}
	}
	if res.PeakEngineBytes <= 0 {
		t.Errorf("engine peak %d with the tables in memory", res.PeakEngineBytes)
	}
}

// TestRunBenchWritesAnswers: one run's results written as answer files
// are what the official answers hold, and a second run verifies against
// them.
func TestRunBenchWritesAnswers(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "answers") // made by the run
	o := benchOpts(t, 1, 13)
	o.VerifyDir = ""
	o.AnswersOut = dir
	if _, err := RunBench(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	for _, q := range []int{1, 13} {
		got, err := ReadAnswer(AnswerPath(dir, q))
		if err != nil {
			t.Fatal(err)
		}
		want, err := ReadAnswer(AnswerPath(answers, q))
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) || len(got[0]) != len(want[0]) {
			t.Errorf("q%d: wrote %d lines of %d fields, the answer has %d of %d", q, len(got), len(got[0]), len(want), len(want[0]))
		}
	}
	o = benchOpts(t, 1, 13)
	o.VerifyDir = dir
	res, err := RunBench(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range res.Queries {
		if !q.Verified {
			t.Errorf("q%d against the written answers: %s %s", q.Query, q.Error, q.VerifyError)
		}
	}
}

// TestRunBenchWrongAnswer: a result that differs from its answer file fails
// the run, and the result still says which query and why.
func TestRunBenchWrongAnswer(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile(AnswerPath(answers, 6))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	lines[1] = "1.00" // revenue
	if err := os.WriteFile(AnswerPath(dir, 6), []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	o := benchOpts(t, 6)
	o.VerifyDir = dir
	res, err := RunBench(context.Background(), o)
	if err == nil || !strings.Contains(err.Error(), "q06 wrong answer") {
		t.Fatalf("RunBench with a wrong answer file: %v", err)
	}
	if res == nil || res.Queries[0].Verified || !strings.Contains(res.Queries[0].VerifyError, `want "1.00"`) {
		t.Fatalf("result %+v", res)
	}
}

func linkTables(t *testing.T, dir string, tables map[string]string) {
	t.Helper()
	for name, src := range tables {
		abs, err := filepath.Abs(filepath.Join(sf001, src+".parquet"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(abs, filepath.Join(dir, name+".parquet")); err != nil {
			t.Fatal(err)
		}
	}
}

func TestRunBenchErrorsBeforeRunning(t *testing.T) {
	incomplete := t.TempDir()
	seven := map[string]string{}
	for _, tbl := range Tables[:7] {
		seven[tbl] = tbl
	}
	linkTables(t, incomplete, seven)

	wrongSchema := t.TempDir()
	all := map[string]string{}
	for _, tbl := range Tables {
		all[tbl] = tbl
	}
	all["region"] = "nation" // region.parquet holds nation's columns
	linkTables(t, wrongSchema, all)

	interrupted := t.TempDir()
	delete(all, "region")
	linkTables(t, interrupted, all)
	os.WriteFile(filepath.Join(interrupted, "region.parquet.tmp"), []byte("PAR1"), 0o644)

	noAnswers := t.TempDir()
	cases := []struct {
		name string
		mod  func(*BenchOptions)
		kind qerr.Kind
		msg  string
	}{
		{"missing folder", func(o *BenchOptions) { o.DataDir = filepath.Join(t.TempDir(), "nope") }, qerr.IO, "data folder"},
		{"incomplete folder", func(o *BenchOptions) { o.DataDir = incomplete }, qerr.Plan, "missing supplier"},
		{"interrupted gen", func(o *BenchOptions) { o.DataDir = interrupted }, qerr.Plan, "interrupted gen"},
		{"wrong schema", func(o *BenchOptions) { o.DataDir = wrongSchema }, qerr.Plan, "table region"},
		{"missing answer", func(o *BenchOptions) { o.VerifyDir = noAnswers }, qerr.Plan, "q01.csv"},
		{"unknown query", func(o *BenchOptions) { o.Queries = []int{1, 23} }, qerr.Plan, "unknown query 23"},
		{"bad iterations", func(o *BenchOptions) { o.Iterations = -2 }, qerr.Plan, "iterations"},
		{"cached mode", func(o *BenchOptions) { o.Mode = "cached" }, qerr.Plan, "RunDashboard"},
		{"unknown mode", func(o *BenchOptions) { o.Mode = "warm" }, qerr.Plan, "unknown mode"},
		{"unknown exec", func(o *BenchOptions) { o.Exec = "remote" }, qerr.Plan, "unknown --exec"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := benchOpts(t, 1)
			ran := false
			o.OnTimed = func(bool) { ran = true }
			c.mod(&o)
			res, err := RunBench(context.Background(), o)
			if err == nil || res != nil {
				t.Fatalf("RunBench = %v, %v; want an error", res, err)
			}
			if qerr.KindOf(err) != c.kind || !strings.Contains(err.Error(), c.msg) {
				t.Errorf("error %v (kind %v), want kind %v containing %q", err, qerr.KindOf(err), c.kind, c.msg)
			}
			if ran {
				t.Error("queries ran before the error was found")
			}
		})
	}
}

func TestCompare(t *testing.T) {
	a := &BenchResult{Queries: []QueryResult{{Query: 1, MedianMs: 100}, {Query: 6, MedianMs: 20}, {Query: 9, Error: "boom"}}, TotalMs: 120, GeomeanMs: 44.7}
	b := &BenchResult{Queries: []QueryResult{{Query: 1, MedianMs: 50}, {Query: 6, MedianMs: 30}, {Query: 9, MedianMs: 7}}, TotalMs: 80, GeomeanMs: 38.7}
	var out bytes.Buffer
	Compare(&out, a, b)
	got := out.String()
	for _, want := range []string{"q01", "0.50", "q06", "1.50", "error", "0.67"} {
		if !strings.Contains(got, want) {
			t.Errorf("compare output lacks %q:\n%s", want, got)
		}
	}
}

func TestCompareAnswerFloatsAndDecimals(t *testing.T) {
	schema := Schema("region") // int32, utf8, utf8: exact comparison
	want := [][]string{{"r_regionkey", "r_name", "r_comment"}, {"1", "x", ""}}
	if err := CompareAnswer(schema, [][]string{{"1", "x", ""}}, want); err != nil {
		t.Error(err)
	}
	if err := CompareAnswer(schema, [][]string{{"1", "y", ""}}, want); err == nil {
		t.Error("a different string compares equal")
	}
	if err := CompareAnswer(schema, nil, want); err == nil {
		t.Error("a missing row compares equal")
	}
	if !cellEqual(f64, "1.0000000000001", "1") || cellEqual(f64, "1.00001", "1") || cellEqual(money, "1.00", "1.0") {
		t.Error("cellEqual tolerance is wrong")
	}
}

// TestRunBenchMemoryLimit: the run's quiver.memory_limit is applied (a
// limit too small for anything fails the query with a resources error) and
// recorded.
func TestRunBenchMemoryLimit(t *testing.T) {
	o := benchOpts(t, 1)
	o.MemoryLimit = 64 << 20
	res, err := RunBench(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Settings.MemoryLimit != 64<<20 || !res.Queries[0].Verified {
		t.Fatalf("settings %+v, q01 %+v", res.Settings, res.Queries[0])
	}
	o = benchOpts(t, 1)
	o.MemoryLimit = 1 << 10
	if _, err := RunBench(context.Background(), o); err == nil || !strings.Contains(err.Error(), "memory limit of 1.0 KiB") {
		t.Fatalf("a 1 KiB limit: %v", err)
	}
}
