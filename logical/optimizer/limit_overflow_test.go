package optimizer

import (
	"context"
	"math"
	"testing"

	"github.com/quiverdb/quiver/logical"
)

func TestAddRowsSaturates(t *testing.T) {
	for _, c := range []struct{ a, b, want int64 }{
		{0, 0, 0},
		{5, 10, 15},
		{5, math.MaxInt64, math.MaxInt64},
		{math.MaxInt64, 5, math.MaxInt64},
		{math.MaxInt64 - 1, 1, math.MaxInt64},
		{math.MaxInt64 - 1, 3, math.MaxInt64},
		{math.MaxInt64, math.MaxInt64, math.MaxInt64},
	} {
		if got := logical.AddRows(c.a, c.b); got != c.want {
			t.Errorf("AddRows(%d, %d) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

// TestLimitNearMaxInt64 runs the whole optimizer over limits whose skip +
// fetch does not fit an int64; the sum once wrapped negative and the limit
// push-down rewrote the plan on every pass until the batch gave up.
func TestLimitNearMaxInt64(t *testing.T) {
	sorted := func() logical.Plan {
		return must(logical.NewSort(scan(tblT, "t"), []logical.SortKey{{Expr: col("t.a"), Asc: true}}, -1))
	}
	union := func() logical.Plan {
		return must(logical.NewUnion([]logical.Plan{project(scan(tblW, "w"), col("w.k")), project(scan(tblW, "w"), col("w.k"))}))
	}
	cases := []struct {
		name      string
		plan      logical.Plan
		skip      int64 // of the top Limit after optimizing
		fetch     int64
		pushed    int64 // the fetch pushed into the Sort or scans
		pushedSet bool
	}{
		{"offset 5 fetch max over a sort", &logical.Limit{Input: project(sorted(), col("t.a")), Skip: 5, Fetch: math.MaxInt64}, 5, math.MaxInt64, math.MaxInt64, true},
		{"offset max-1 fetch 3 over a sort", &logical.Limit{Input: sorted(), Skip: math.MaxInt64 - 1, Fetch: 3}, math.MaxInt64 - 1, 3, math.MaxInt64, true},
		{"offset 5 fetch max over a scan", &logical.Limit{Input: scan(tblT, "t"), Skip: 5, Fetch: math.MaxInt64}, 5, math.MaxInt64, math.MaxInt64, true},
		{"offset max fetch max over a union", &logical.Limit{Input: union(), Skip: math.MaxInt64, Fetch: math.MaxInt64}, math.MaxInt64, math.MaxInt64, math.MaxInt64, true},
		// not an overflow: the union inputs' projections hid the limit
		// already pushed into them, so it was pushed again on every pass
		{"offset 5 fetch 10 over a union of projections", &logical.Limit{Input: union(), Skip: 5, Fetch: 10}, 5, 10, 15, true},
		{"stacked offsets saturate", &logical.Limit{Input: &logical.Limit{Input: scan(tblT, "t"), Skip: math.MaxInt64 - 2, Fetch: math.MaxInt64}, Skip: 10, Fetch: 4}, math.MaxInt64, 0, 0, false},
	}
	for _, c := range cases {
		p, err := New().Optimize(context.Background(), c.plan, nil)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		var top *logical.Limit
		var sorts, scans []int64
		logical.Inspect(p, func(n logical.Plan) bool {
			switch n := n.(type) {
			case *logical.Limit:
				if top == nil {
					top = n
				}
			case *logical.Sort:
				sorts = append(sorts, n.Fetch)
			case *logical.Scan:
				scans = append(scans, n.Fetch)
			}
			return true
		})
		pushed := sorts // a top-k sort takes the fetch; the scans under it read all
		if len(sorts) == 0 {
			pushed = scans
		}
		if top == nil {
			// an outer limit of fetch 0 after the merge may be replaced by
			// an empty relation
			if c.fetch != 0 {
				t.Errorf("%s: no Limit left:\n%s", c.name, logical.Indent(p))
			}
			continue
		}
		if top.Skip != c.skip || (c.fetch != 0 && top.Fetch != c.fetch) {
			t.Errorf("%s: top limit skip=%d fetch=%d, want skip=%d fetch=%d\n%s", c.name, top.Skip, top.Fetch, c.skip, c.fetch, logical.Indent(p))
		}
		if c.pushedSet {
			for _, f := range pushed {
				if f != c.pushed {
					t.Errorf("%s: pushed fetch %d, want %d\n%s", c.name, f, c.pushed, logical.Indent(p))
				}
			}
		}
	}
}
