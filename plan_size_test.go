package quiver_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/quiverdb/quiver"
	"github.com/quiverdb/quiver/qerr"
)

// longExpressions are the statements of issue 20 that did not plan: a
// 10,000-term sum (never finished) and a 10,000-term OR chain (1,000 terms
// took 38 s).
func longExpressions(n int) map[string]string {
	terms := make([]string, n)
	ors := make([]string, n)
	for i := range terms {
		terms[i] = "1"
		ors[i] = fmt.Sprintf("a = %d", i)
	}
	return map[string]string{
		"sum": "SELECT " + strings.Join(terms, " + "),
		"or":  "SELECT a FROM (SELECT 1 AS a) v WHERE " + strings.Join(ors, " OR "),
	}
}

// TestPlanLongExpressions plans (SQL, optimizer, physical planner) and runs
// the long expressions under a 5 s deadline: far more than they need now,
// far less than they took when planning was quadratic or worse.
func TestPlanLongExpressions(t *testing.T) {
	s, err := quiver.NewSession(context.Background(), quiver.WithLocalExecution())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	want := map[string]string{"sum": "10000", "or": "1"}
	for name, q := range longExpressions(10000) {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			df, err := s.SQL(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := df.Explain(ctx, false); err != nil {
				t.Fatal(err)
			}
			batches, err := df.Collect(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer release(batches)
			if got := render(df.Schema(), batches); len(got) != 1 || got[0][0] != want[name] {
				t.Fatalf("got %v, want %s", got, want[name])
			}
		})
	}
}

// TestPlanSizeLimits: statements nested beyond the limits are planning
// errors, not a crash of the process (a Go stack overflow is fatal).
func TestPlanSizeLimits(t *testing.T) {
	s, err := quiver.NewSession(context.Background(), quiver.WithLocalExecution())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	// 10,000 nested parentheses are fine.
	if rows := sqlRows(t, s, "SELECT "+strings.Repeat("(", 10000)+"7"+strings.Repeat(")", 10000)); rows[0][0] != "7" {
		t.Fatalf("nested parentheses: %v", rows)
	}
	for name, q := range map[string]string{
		"a million parentheses": "SELECT " + strings.Repeat("(", 1_000_000) + "1" + strings.Repeat(")", 1_000_000),
		"a million NOTs":        "SELECT " + strings.Repeat("NOT ", 1_000_000) + "true",
		"40,000 nested CASEs":   "SELECT " + strings.Repeat("CASE WHEN true THEN ", 40_000) + "1" + strings.Repeat(" END", 40_000),
		"a 200,000-term sum":    longExpressions(200_000)["sum"],
	} {
		_, err := s.SQL(ctx, q)
		if qerr.KindOf(err) != qerr.Plan || !strings.Contains(err.Error(), "nest") {
			t.Errorf("%s: got %v, want a planning error about nesting", name, err)
		}
	}
}

func BenchmarkPlanLongExpression(b *testing.B) {
	s, err := quiver.NewSession(context.Background(), quiver.WithLocalExecution())
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	for _, n := range []int{1000, 10000} {
		for name, q := range longExpressions(n) {
			b.Run(fmt.Sprintf("%s/%d", name, n), func(b *testing.B) {
				for b.Loop() {
					df, err := s.SQL(ctx, q)
					if err != nil {
						b.Fatal(err)
					}
					if _, err := df.Explain(ctx, false); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
