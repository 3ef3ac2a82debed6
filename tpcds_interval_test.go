package quiver_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver"
	"github.com/quiverdb/quiver/tpch"
)

// The TPC-DS templates write a date range's upper bound as the lower one
// plus an interval (d_date BETWEEN cast('2000-02-01' AS date) AND
// (cast('2000-02-01' AS date) + INTERVAL 60 DAY)); DuckDB's text, in
// testdata/tpcds/queries, has the sum computed. dateRangeQueries are the
// queries with such a range.
var dateRangeQueries = []int{5, 12, 16, 21, 32, 37, 40, 77, 80, 82, 92, 94, 95, 98}

var betweenDates = regexp.MustCompile(`(?i)BETWEEN\s+((?:CAST\s*\(\s*)?'(\d{4}-\d\d-\d\d)'(?:\s+AS\s+date\s*\))?)\s+AND\s+CAST\s*\(\s*'(\d{4}-\d\d-\d\d)'\s+AS\s+date\s*\)`)

// withIntervalBounds writes each range's upper bound back in the
// templates' form; n is how many ranges it rewrote.
func withIntervalBounds(t *testing.T, text string) (out string, n int) {
	out = betweenDates.ReplaceAllStringFunc(text, func(m string) string {
		g := betweenDates.FindStringSubmatch(m)
		lo, hi := mustDate(t, g[2]), mustDate(t, g[3])
		n++
		return fmt.Sprintf("BETWEEN %s AND (cast('%s' AS date) + INTERVAL %d DAY)", g[1], g[2], int(hi.Sub(lo).Hours()/24))
	})
	return out, n
}

func mustDate(t *testing.T, s string) time.Time {
	d, err := time.Parse("2006-01-02", s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestTPCDSIntervalBounds runs the date-range TPC-DS queries in the
// templates' form, where the upper bound is a TIMESTAMP (date + interval),
// against DuckDB's answers, and checks that every range still reaches the
// date_dim scan as a filter on the DATE column (so row groups are pruned
// by it) with no cast of d_date left in the plan: the plan is the very
// plan of the query with date bounds.
func TestTPCDSIntervalBounds(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	ctx := context.Background()
	s, err := quiver.NewSession(ctx, quiver.WithAllocator(mem))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.Close()
		mem.AssertSize(t, 0)
	})
	createTPCDSTables(t, ctx, s)
	scanLine := regexp.MustCompile(`TableScan: date_dim.*filters=\[[^\]]*d_date >= DATE '\d{4}-\d\d-\d\d'[^\]]*d_date <= DATE '\d{4}-\d\d-\d\d'`)
	// The physical scan's predicate is what prunes row groups.
	parquetLine := regexp.MustCompile(`ParquetScan: date_dim .*predicate=.*d_date@\d+ >= \d{4}-\d\d-\d\d.*d_date@\d+ <= \d{4}-\d\d-\d\d`)
	for _, q := range dateRangeQueries {
		t.Run(fmt.Sprintf("q%02d", q), func(t *testing.T) {
			text, err := os.ReadFile(filepath.Join("testdata", "tpcds", "queries", fmt.Sprintf("q%02d.sql", q)))
			if err != nil {
				t.Fatal(err)
			}
			sql, n := withIntervalBounds(t, string(text))
			if n == 0 {
				t.Fatal("no date range to rewrite")
			}
			df, err := s.SQL(ctx, sql)
			if err != nil {
				t.Fatal(err)
			}
			plan, err := df.Explain(ctx, false)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(plan, "CAST(date_dim.d_date") || strings.Contains(plan, "INTERVAL") {
				t.Errorf("the range was not simplified to dates:\n%s", plan)
			}
			if !scanLine.MatchString(plan) || !parquetLine.MatchString(plan) {
				t.Errorf("no DATE range pushed into the date_dim scan:\n%s", plan)
			}
			// Costs nothing: the plan is the one of DuckDB's text, whose
			// bounds are dates.
			orig, err := s.SQL(ctx, string(text))
			if err != nil {
				t.Fatal(err)
			}
			origPlan, err := orig.Explain(ctx, false)
			if err != nil {
				t.Fatal(err)
			}
			if plan != origPlan {
				t.Errorf("the plan differs from the one with date bounds:\n%s\nwith date bounds:\n%s", plan, origPlan)
			}
			got, schema, err := runQuery(ctx, s, sql)
			if err != nil {
				t.Fatal(err)
			}
			want := readAnswer(t, filepath.Join("testdata", "tpcds", "answers", fmt.Sprintf("q%02d.csv", q)))
			if len(want) > 0 && len(want[0]) == schema.NumFields() {
				for i, f := range schema.Fields() {
					want[0][i] = f.Name
				}
			}
			if err := tpch.CompareAnswer(schema, got, want); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestIntervalBoundInJoinCondition: a range with an interval bound in an
// outer join's ON clause reaches the date_dim scan before it is simplified;
// the scan's filters are simplified too, so the plan and the answer are
// those of date bounds.
func TestIntervalBoundInJoinCondition(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	ctx := context.Background()
	s, err := quiver.NewSession(ctx, quiver.WithAllocator(mem))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.Close()
		mem.AssertSize(t, 0)
	})
	createTPCDSTables(t, ctx, s)
	const q = "SELECT count(*), count(d_date), min(d_date), max(d_date) FROM web_sales LEFT JOIN date_dim ON ws_sold_date_sk = d_date_sk AND d_date BETWEEN '2002-02-01' AND %s"
	withInterval := fmt.Sprintf(q, "(cast('2002-02-01' AS date) + INTERVAL 60 DAY)")
	withDate := fmt.Sprintf(q, "'2002-04-02'")
	var plans, answers [2]string
	for i, sql := range []string{withInterval, withDate} {
		df, err := s.SQL(ctx, sql)
		if err != nil {
			t.Fatal(err)
		}
		if plans[i], err = df.Explain(ctx, false); err != nil {
			t.Fatal(err)
		}
		rows, _, err := runQuery(ctx, s, sql)
		if err != nil {
			t.Fatal(err)
		}
		answers[i] = fmt.Sprint(rows)
	}
	if strings.Contains(plans[0], "CAST(") {
		t.Errorf("a cast of d_date is left in the plan:\n%s", plans[0])
	}
	if plans[0] != plans[1] {
		t.Errorf("plan with an interval bound:\n%s\nwith a date bound:\n%s", plans[0], plans[1])
	}
	if answers[0] != answers[1] || strings.Contains(answers[0], "NULL") {
		t.Errorf("answers differ or match no date: %s vs %s", answers[0], answers[1])
	}
}
