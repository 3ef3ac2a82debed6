package quiver_test

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver/exec/aggregate"
)

// TestSortedDistinctThroughSQL: integer DISTINCT aggregates dedupe values
// that arrive in order without a set, and leave that path for good at the
// first batch out of order. The same rows are read three ways (stored in
// key order, in key order but for a stretch moved to the end, and
// shuffled), at batch sizes that put the switch at different places; each
// query's answer must be the one computed here, and the ordered path must
// take rows of the ordered tables only.
func TestSortedDistinctThroughSQL(t *testing.T) {
	const n = 6000
	rng := rand.New(rand.NewPCG(1, 2))
	type row struct{ k, g int64 }
	ordered := make([]row, n)
	k := int64(-50)
	for i := range ordered {
		if rng.IntN(3) == 0 {
			k += int64(rng.IntN(4))
		}
		ordered[i] = row{k, int64(rng.IntN(5))}
	}
	moved := append(append([]row{}, ordered[:n/3]...), ordered[2*n/3:]...)
	moved = append(moved, ordered[n/3:2*n/3]...) // a stretch of smaller keys after the largest
	shuffled := append([]row{}, ordered...)
	rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })

	// The answers: per g, the distinct k and their sum; over all, the count.
	perG := map[int64]map[int64]bool{}
	all := map[int64]bool{}
	for _, r := range ordered {
		if perG[r.g] == nil {
			perG[r.g] = map[int64]bool{}
		}
		perG[r.g][r.k], all[r.k] = true, true
	}
	var grouped [][]string
	for g := range int64(5) {
		sum := int64(0)
		for k := range perG[g] {
			sum += k
		}
		grouped = append(grouped, []string{fmt.Sprint(g), fmt.Sprint(len(perG[g])), fmt.Sprint(sum)})
	}
	sort.Slice(grouped, func(i, j int) bool { return grouped[i][0] < grouped[j][0] })
	ungrouped := [][]string{{fmt.Sprint(len(all))}}

	for _, batch := range []int{7, 1000, 8192} {
		for _, tc := range []struct {
			name    string
			rows    []row
			inOrder bool // the ordered path takes some rows
		}{
			{"ordered", ordered, true},
			// in order up to row 2n/3: the path takes the batches before
			{"moved", moved, batch <= 2*n/3},
			{"shuffled", shuffled, false},
		} {
			t.Run(fmt.Sprintf("%s/batch=%d", tc.name, batch), func(t *testing.T) {
				s := fpSession(t, batch, 1)
				var rows [][]any
				for _, r := range tc.rows {
					rows = append(rows, []any{r.k, r.g})
				}
				fpRegisterNoStats(t, s, "t", []fpCol{{"k", arrow.PrimitiveTypes.Int64}, {"g", arrow.PrimitiveTypes.Int64}}, rows, batch)
				before := aggregate.SortedDistinctRows()
				for _, q := range []struct {
					sql  string
					want [][]string
				}{
					{"SELECT g, count(DISTINCT k), sum(DISTINCT k) FROM t GROUP BY g ORDER BY g", grouped},
					{"SELECT count(DISTINCT k) FROM t", ungrouped},
				} {
					if got := sqlRows(t, s, q.sql); fmt.Sprint(got) != fmt.Sprint(q.want) {
						t.Errorf("%s:\n got %v\nwant %v", q.sql, got, q.want)
					}
				}
				took := aggregate.SortedDistinctRows() - before
				if (took > 0) != tc.inOrder {
					t.Errorf("the ordered path took %d rows; want some: %v", took, tc.inOrder)
				}
			})
		}
	}
}
