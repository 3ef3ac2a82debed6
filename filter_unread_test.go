package quiver_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/quiverdb/quiver/exec"
)

// TestFilterUnreadColumnsThroughSQL: a filter whose parent is a hash
// aggregate gathers only the columns the aggregate reads and fills the
// others (here the predicate's string, decimal and integer columns) with
// NULLs. Each query runs as it is (the filter's own columns unread above)
// and with the aggregate also reading every filter column (nothing left
// unread: the general path); their common columns must agree, at batch
// sizes that cut the rows differently, and only the first must take the
// unread path.
func TestFilterUnreadColumnsThroughSQL(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	var rows [][]any
	for i := range 5000 {
		var s any = []string{"a", "b", "c"}[rng.IntN(3)]
		if i%11 == 0 {
			s = nil
		}
		rows = append(rows, []any{
			int64(rng.IntN(7)),    // g
			int64(rng.IntN(1000)), // k
			s,                     // s
			decimal128.FromI64(int64(rng.IntN(100000) - 50000)), // d, scale 2
			int64(rng.IntN(1000)),                               // v
		})
	}
	cols := []fpCol{
		{"g", arrow.PrimitiveTypes.Int64}, {"k", arrow.PrimitiveTypes.Int64}, {"s", arrow.BinaryTypes.String},
		{"d", &arrow.Decimal128Type{Precision: 12, Scale: 2}}, {"v", arrow.PrimitiveTypes.Int64},
	}
	queries := []struct{ fast, general string }{
		{
			"SELECT g, sum(v), count(*) FROM t WHERE s = 'b' AND k < 600 AND d > 0 GROUP BY g ORDER BY g",
			"SELECT g, sum(v), count(*), min(s), max(k), sum(d) FROM t WHERE s = 'b' AND k < 600 AND d > 0 GROUP BY g ORDER BY g",
		},
		{
			// The aggregate reads no column at all.
			"SELECT count(*) FROM t WHERE s = 'a' AND k > 10",
			"SELECT count(*), min(s), max(k) FROM t WHERE s = 'a' AND k > 10",
		},
		{
			"SELECT count(*), sum(d) FROM t WHERE s IN ('a', 'c') AND v > k",
			"SELECT count(*), sum(d), min(s), max(v), max(k) FROM t WHERE s IN ('a', 'c') AND v > k",
		},
	}
	for _, batch := range []int{7, 1000, 8192} {
		t.Run(fmt.Sprintf("batch=%d", batch), func(t *testing.T) {
			s := fpSession(t, batch, 1)
			fpRegisterNoStats(t, s, "t", cols, rows, batch)
			for _, q := range queries {
				plan := fmt.Sprint(sqlRows(t, s, "EXPLAIN "+q.fast))
				if !strings.Contains(plan, "HashAggregateExec") || !strings.Contains(plan, "FilterExec") {
					t.Fatalf("%s: the plan has no aggregate over a filter:\n%s", q.fast, plan)
				}
				before := exec.UnreadFilterColumns()
				fast := sqlRows(t, s, q.fast)
				mid := exec.UnreadFilterColumns()
				general := sqlRows(t, s, q.general)
				if mid == before || exec.UnreadFilterColumns() != mid {
					t.Errorf("%s: %d unread column batches, then %d for the query reading every column; want some, then none", q.fast, mid-before, exec.UnreadFilterColumns()-mid)
				}
				if len(fast) != len(general) || len(fast) == 0 {
					t.Fatalf("%s: %d rows, the general query %d", q.fast, len(fast), len(general))
				}
				for i := range fast {
					if got, want := fmt.Sprint(fast[i]), fmt.Sprint(general[i][:len(fast[i])]); got != want {
						t.Errorf("%s: row %d is %s, the general query's %s", q.fast, i, got, want)
					}
				}
			}
		})
	}
}
