package quiver_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/quiverdb/quiver/exec/aggregate"
)

// TestFinalDependentStringKeys: Final aggregates grouped by an integer key
// and string keys that follow from it (grouped on the integer alone) give
// the answers of the same grouping with the integer as a string (a table
// of every key), whether the strings follow throughout, stop following
// part way (a second name for an id in one file), hold NULLs, or the ids
// span a range too wide to index; and under a small memory limit (where
// the aggregates may spill, leaving the integer-alone table first).
func TestFinalDependentStringKeys(t *testing.T) {
	dir := t.TempDir()
	for f, file := range []string{"a.csv", "b.csv"} {
		var w strings.Builder
		w.WriteString("id,name,nat,odd,nul,wide,v\n")
		for i := range 20000 {
			id := (i*7919)%3000 + f*1500 // the files share ids 1500..2999
			odd := fmt.Sprintf("o-%d", id%5)
			if f == 1 && i >= 15000 {
				odd = "late"
			}
			nul := fmt.Sprintf("n-%d", id%3)
			if id%10 == 0 {
				nul = ""
			}
			fmt.Fprintf(&w, "%d,name-%04d,nat-%d,%s,%s,%d,%d\n", id, id, id%25, odd, nul, int64(id)*1_000_003, i)
		}
		if err := os.WriteFile(filepath.Join(dir, file), []byte(w.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := csvSource(t, dir, "id BIGINT, name VARCHAR, nat VARCHAR, odd VARCHAR, nul VARCHAR, wide BIGINT, v BIGINT", nil)
	// Each query has %s where the integer key goes: the column itself (the
	// lead) or cast to a string (no integer key: the general table).
	queries := []struct {
		q    string
		lead bool // every Final row groups on the integer alone
	}{
		{"SELECT %s, name, nat, sum(v), count(*) FROM src GROUP BY 1, name, nat", true},
		{"SELECT nat, %s, max(v) FROM src GROUP BY nat, 2", true},
		{"SELECT %s, odd, sum(v) FROM src GROUP BY 1, odd", false},
		{"SELECT %s, nul, count(*) FROM src GROUP BY 1, nul", false},
		{"SELECT %s, name, sum(v) FROM src GROUP BY 1, name", true},
	}
	sorted := func(q string) string {
		var lines []string
		for _, r := range sqlRows(t, s, q) {
			lines = append(lines, strings.Join(r, "|"))
		}
		slices.Sort(lines)
		return strings.Join(lines, "\n")
	}
	run := func(label string) {
		for _, key := range []string{"id", "wide"} {
			for _, q := range queries {
				general := fmt.Sprintf(q.q, "CAST("+key+" AS VARCHAR)")
				want := sorted(general)
				fast := fmt.Sprintf(q.q, key)
				before := aggregate.DepStringKeyRows()
				got := sorted(fast)
				if got != want {
					t.Errorf("%s: %s: got\n%.300s\nwant (as %s)\n%.300s", label, fast, got, general, want)
				}
				groups := int64(strings.Count(want, "\n") + 1)
				d := aggregate.DepStringKeyRows() - before
				switch {
				case key == "wide" && d != 0:
					t.Errorf("%s: %s: %d rows grouped on the integer alone, but its range is too wide to index", label, fast, d)
				case key == "id" && q.lead && label == "in memory" && d < groups:
					t.Errorf("%s: %s: %d rows grouped on the integer alone, want every Final input row (at least %d)", label, fast, d, groups)
				}
			}
		}
	}
	run("in memory")
	// Two partial and two final aggregates share the limit with the
	// batches between them; 6 MB leaves them room when the partials run
	// ahead of the finals on a loaded machine.
	sqlRows(t, s, "SET quiver.memory_limit = '6MB'")
	run("under a memory limit")
}
