package tpch

import (
	"context"
	"path/filepath"
	"strconv"
	"testing"
)

// TestDashboardQueriesRun creates the dashboard view over the SF 0.01
// tables and runs every dashboard query, checking each returns rows and
// that the view's revenue adds up the same however it is grouped.
func TestDashboardQueriesRun(t *testing.T) {
	s := newTestSession(t)
	ctx := context.Background()
	for _, tbl := range Tables {
		if err := s.RegisterParquet(ctx, tbl, filepath.Join(sf001, tbl+".parquet")); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.SQL(ctx, DashboardView()); err != nil {
		t.Fatalf("create the dashboard view: %v", err)
	}
	qs, err := DashboardQueries()
	if err != nil {
		t.Fatal(err)
	}
	if len(qs) < 10 {
		t.Fatalf("%d dashboard queries, want at least 10", len(qs))
	}
	for _, q := range qs {
		t.Run(q.Name, func(t *testing.T) {
			if rows := queryRows(t, s, q.SQL); len(rows) == 0 {
				t.Error("no rows")
			}
		})
	}

	// The revenue per year (d01) and per region and year (d02) must both add
	// up to the revenue computed from the base tables directly.
	direct := queryRows(t, s, `SELECT sum(l_extendedprice * (1 - l_discount)) FROM lineitem JOIN orders ON l_orderkey = o_orderkey
		WHERE o_orderdate >= DATE '1994-01-01' AND o_orderdate < DATE '1997-01-01'`)[0][0]
	for _, name := range []string{"d01_revenue_by_year", "d02_revenue_by_region_year"} {
		var sql string
		for _, q := range qs {
			if q.Name == name {
				sql = q.SQL
			}
		}
		rows := queryRows(t, s, sql)
		col := 1
		if name == "d02_revenue_by_region_year" {
			col = 2
		}
		if got := sumDecimal(t, rows, col); got != sumDecimal(t, [][]string{{direct}}, 0) {
			t.Errorf("%s adds up to %d hundredths of hundredths, the base tables to %s", name, got, direct)
		}
	}
}

// sumDecimal adds a column of decimals printed at scale 4, exactly.
func sumDecimal(t *testing.T, rows [][]string, col int) int64 {
	t.Helper()
	var sum int64
	for _, r := range rows {
		s := r[col]
		neg := false
		if s[0] == '-' {
			neg, s = true, s[1:]
		}
		var digits string
		for _, c := range s {
			if c != '.' {
				digits += string(c)
			}
		}
		n, err := strconv.ParseInt(digits, 10, 64)
		if err != nil {
			t.Fatalf("not a decimal: %q", r[col])
		}
		if neg {
			n = -n
		}
		sum += n
	}
	return sum
}

// TestRunDashboard runs the cached workload on SF 0.01: the cached results
// equal the view's (RunDashboard checks) and every query ran both ways.
func TestRunDashboard(t *testing.T) {
	res, err := RunDashboard(context.Background(), BenchOptions{DataDir: "sf0.01", Iterations: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Queries) < 10 || res.BuildMS <= 0 || res.CacheRows <= 0 || res.CacheBytes <= 0 {
		t.Fatalf("result %+v", res)
	}
	for _, q := range res.Queries {
		if q.PlainMS <= 0 || q.CachedMS <= 0 {
			t.Errorf("%s was not timed both ways: %+v", q.Name, q)
		}
	}
}
