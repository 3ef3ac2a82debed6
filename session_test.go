package quiver_test

import (
	"context"
	"strings"
	"testing"

	"github.com/quiverdb/quiver"
	"github.com/quiverdb/quiver/qerr"
)

// sqlRows runs one statement and renders its rows.
func sqlRows(t *testing.T, s *quiver.Session, q string) [][]string {
	t.Helper()
	ctx := context.Background()
	df, err := s.SQL(ctx, q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	batches, err := df.Collect(ctx)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer release(batches)
	return render(df.Schema(), batches)
}

func TestExplainVerboseAndAnalyze(t *testing.T) {
	s := newTPCHSession(t, quiver.WithTargetPartitions(2))
	q := "SELECT l_returnflag, count(*) FROM lineitem WHERE l_shipdate <= DATE '1998-12-01' - INTERVAL 90 DAY GROUP BY l_returnflag"

	rows := sqlRows(t, s, "EXPLAIN VERBOSE "+q)
	kinds := map[string]bool{}
	for _, r := range rows {
		kinds[r[0]] = true
	}
	for _, want := range []string{"initial_logical_plan", "logical_plan after simplify_expressions", "logical_plan after push_down_projection", "logical_plan", "physical_plan"} {
		if !kinds[want] {
			t.Errorf("EXPLAIN VERBOSE lacks %q; has %v", want, kinds)
		}
	}

	rows = sqlRows(t, s, "EXPLAIN ANALYZE "+q)
	if len(rows) != 2 || rows[0][0] != "Plan with Metrics" {
		t.Fatalf("EXPLAIN ANALYZE rows: %v", rows)
	}
	plan := rows[0][1]
	for _, want := range []string{"ParquetScan: lineitem", "output_rows=60175", "output_batches=", "elapsed=", "HashAggregateExec: mode=Final"} {
		if !strings.Contains(plan, want) {
			t.Errorf("EXPLAIN ANALYZE lacks %q:\n%s", want, plan)
		}
	}
	// The final aggregate produced the three return flags.
	if !strings.Contains(rows[1][1], "output_rows=3") {
		t.Errorf("summary: %s", rows[1][1])
	}
}

func TestMemoryLimit(t *testing.T) {
	s := newTPCHSession(t)
	ctx := context.Background()
	if _, err := s.SQL(ctx, "SET quiver.memory_limit = '64KB'"); err != nil {
		t.Fatal(err)
	}
	df, err := s.SQL(ctx, "SELECT l_comment FROM lineitem ORDER BY l_comment")
	if err != nil {
		t.Fatal(err)
	}
	_, err = df.Collect(ctx)
	if !qerr.Is(err, qerr.Resources) {
		t.Fatalf("got %v (kind %v), want a resources-exhausted error", err, qerr.KindOf(err))
	}
	if !strings.Contains(err.Error(), "memory limit") {
		t.Errorf("message does not say what: %v", err)
	}
	// Lifting the limit makes the same query work in the same session.
	if _, err := s.SQL(ctx, "SET quiver.memory_limit = 'unlimited'"); err != nil {
		t.Fatal(err)
	}
	if n, err := df.Count(ctx); err != nil || n != 60175 {
		t.Fatalf("after lifting the limit: %d rows, %v", n, err)
	}
}

// TestFailedStatementsLeaveNoState checks bad DDL registers nothing.
func TestFailedStatementsLeaveNoState(t *testing.T) {
	s := newTPCHSession(t)
	ctx := context.Background()
	bad := []string{
		"CREATE EXTERNAL TABLE t1 STORED AS PARQUET LOCATION 'testdata/no/such.parquet'",
		"CREATE EXTERNAL TABLE t2 STORED AS PARQUET LOCATION 'testdata/slt/data/people.csv'",
		"CREATE EXTERNAL TABLE t3 (a INT, b INT) STORED AS PARQUET LOCATION 'tpch/sf0.01/nation.parquet'",
		"CREATE VIEW v1 AS SELECT nope FROM nation",
		"CREATE EXTERNAL TABLE lineitem STORED AS PARQUET LOCATION 'tpch/sf0.01/nation.parquet'",
	}
	for _, q := range bad {
		if _, err := s.SQL(ctx, q); err == nil {
			t.Errorf("%s: no error", q)
		}
	}
	for _, r := range sqlRows(t, s, "SHOW TABLES") {
		switch r[0] {
		case "t1", "t2", "t3", "v1":
			t.Errorf("%s was registered by a failed statement", r[0])
		}
	}
	// lineitem still is lineitem.
	if rows := sqlRows(t, s, "SELECT count(*) FROM lineitem"); rows[0][0] != "60175" {
		t.Errorf("lineitem changed: %v", rows)
	}
}

// TestJobProgress: a query on the scheduler reports its stages and tasks:
// several with shuffles, one whole stage with in-memory exchanges.
func TestJobProgress(t *testing.T) {
	for _, c := range []struct {
		mode      string
		minStages int
		minTasks  int
		maxStages int
	}{{"shuffle", 2, 2, 1 << 30}, {"auto", 1, 1, 1}} {
		t.Run(c.mode, func(t *testing.T) {
			s := newTPCHSession(t, quiver.WithExchangeMode(c.mode))
			ctx := context.Background()
			df, err := s.SQL(ctx, "SELECT l_returnflag, count(*) FROM lineitem GROUP BY l_returnflag")
			if err != nil {
				t.Fatal(err)
			}
			var last quiver.JobProgress
			calls := 0
			info := quiver.QueryInfo{OnProgress: func(p quiver.JobProgress) { last = p; calls++ }}
			for _, err := range df.StreamInfo(ctx, &info) {
				if err != nil {
					t.Fatal(err)
				}
			}
			if calls == 0 || last.StagesTotal < c.minStages || last.StagesTotal > c.maxStages || last.TasksTotal < c.minTasks || info.JobID == "" {
				t.Errorf("progress calls %d, last %+v, job %q", calls, last, info.JobID)
			}
		})
	}
}

// TestExchangeMode: quiver.exchange_mode is validated, shown, and decides
// what EXPLAIN DISTRIBUTED shows and how a standalone job runs.
func TestExchangeMode(t *testing.T) {
	ctx := context.Background()
	s := newTPCHSession(t, quiver.WithTargetPartitions(2))
	q := "SELECT o_orderpriority, count(*) AS n FROM orders JOIN customer ON o_custkey = c_custkey GROUP BY o_orderpriority ORDER BY o_orderpriority"
	want := sqlRows(t, s, q)
	if len(want) != 5 {
		t.Fatalf("query rows %v", want)
	}
	distributed := func() string {
		t.Helper()
		for _, r := range sqlRows(t, s, "EXPLAIN DISTRIBUTED "+q) {
			if r[0] == "distributed_plan" {
				return r[1]
			}
		}
		t.Fatal("EXPLAIN DISTRIBUTED has no distributed_plan row")
		return ""
	}
	if got := sqlRows(t, s, "SHOW quiver.exchange_mode"); len(got) != 1 || got[0][1] != "auto" {
		t.Fatalf("SHOW quiver.exchange_mode: %v", got)
	}
	if d := distributed(); !strings.Contains(d, "1 stages") || !strings.Contains(d, "whole") || !strings.Contains(d, "RepartitionExec") || !strings.Contains(d, "1 executor alive") {
		t.Errorf("default standalone session: EXPLAIN DISTRIBUTED should show one whole stage keeping its exchanges:\n%s", d)
	}

	sqlRows(t, s, "SET quiver.exchange_mode = 'SHUFFLE'")
	if got := sqlRows(t, s, "SHOW quiver.exchange_mode"); len(got) != 1 || got[0][1] != "shuffle" {
		t.Fatalf("SHOW quiver.exchange_mode: %v", got)
	}
	if d := distributed(); strings.Contains(d, "whole") || strings.Contains(d, "1 stages") || strings.Contains(d, "RepartitionExec") {
		t.Errorf("shuffle mode: EXPLAIN DISTRIBUTED should show shuffle stages:\n%s", d)
	}
	if got := sqlRows(t, s, q); strings.Join(flat(got), ",") != strings.Join(flat(want), ",") {
		t.Errorf("shuffle mode rows %v, in-memory rows %v", got, want)
	}

	_, err := s.SQL(ctx, "SET quiver.exchange_mode = 'memory'")
	if !qerr.Is(err, qerr.Plan) || !strings.Contains(err.Error(), "auto") || !strings.Contains(err.Error(), "shuffle") {
		t.Errorf("SET a bad mode: %v", err)
	}
	if got := sqlRows(t, s, "SHOW quiver.exchange_mode"); got[0][1] != "shuffle" {
		t.Errorf("a rejected SET changed the mode to %v", got)
	}
	if _, err := quiver.NewSession(ctx, quiver.WithExchangeMode("fast")); !qerr.Is(err, qerr.Plan) {
		t.Errorf("NewSession with a bad mode: %v", err)
	}

	two := newTPCHSession(t, quiver.WithStandaloneCluster(2), quiver.WithTargetPartitions(2))
	for _, r := range sqlRows(t, two, "EXPLAIN DISTRIBUTED "+q) {
		if r[0] == "distributed_plan" && (strings.Contains(r[1], "whole") || !strings.Contains(r[1], "2 executors")) {
			t.Errorf("two executors: EXPLAIN DISTRIBUTED should show shuffle stages:\n%s", r[1])
		}
	}
}

func flat(rows [][]string) []string {
	var out []string
	for _, r := range rows {
		out = append(out, strings.Join(r, "|"))
	}
	return out
}

// TestDropMemoryTableDuringScan: a table loaded into memory (outside the Go
// heap) and dropped while a query streams it never crashes the query.
// Scans already started keep their data until they finish; in local mode a
// partition whose scan starts after the drop fails the query with a clear
// error instead (the standalone executor builds every scan up front).
func TestDropMemoryTableDuringScan(t *testing.T) {
	for _, c := range []struct {
		name       string
		opts       []quiver.Option
		mayFailNow bool
	}{{"standalone", nil, false}, {"local", []quiver.Option{quiver.WithLocalExecution()}, true}} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			s := newTPCHSession(t, append(c.opts, quiver.WithBatchSize(1000))...)
			if err := s.LoadIntoMemory(ctx, "lineitem"); err != nil {
				t.Fatal(err)
			}
			df, err := s.SQL(ctx, "SELECT l_orderkey, l_comment FROM lineitem")
			if err != nil {
				t.Fatal(err)
			}
			var rows int64
			dropped := false
			var streamErr error
			for b, err := range df.Stream(ctx) {
				if err != nil {
					streamErr = err
					break
				}
				rows += b.NumRows()
				if !dropped {
					if _, err := s.SQL(ctx, "DROP TABLE lineitem"); err != nil {
						t.Fatal(err)
					}
					dropped = true
				}
			}
			switch {
			case streamErr != nil && c.mayFailNow:
				if !strings.Contains(streamErr.Error(), `memory table "lineitem" not found`) {
					t.Fatalf("query failed with %v", streamErr)
				}
			case streamErr != nil:
				t.Fatal(streamErr)
			case rows != 60175:
				t.Fatalf("read %d rows, want 60175", rows)
			}
			if _, err := s.SQL(ctx, "SELECT count(*) FROM lineitem"); err == nil {
				t.Fatal("lineitem is still registered after DROP TABLE")
			}
		})
	}
}
