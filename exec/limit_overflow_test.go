package exec_test

import (
	"math"
	"testing"

	"github.com/quiverdb/quiver/exec/exectest"
	"github.com/quiverdb/quiver/physical"
)

// TestLimitFetchNearMaxInt64: LIMIT 9223372036854775807 OFFSET n passes
// every row after the first n. skip + fetch once wrapped negative in the
// operators and dropped the batch holding the end of the offset.
func TestLimitFetchNearMaxInt64(t *testing.T) {
	exectest.Run(t, exectest.Case{
		Name: "limit-offset-fetch-max", Inputs: abInput(1), Order: exectest.Ordered,
		Plan: func(s []physical.Plan) physical.Plan {
			return &physical.Limit{Input: s[0], Skip: 2, Fetch: math.MaxInt64}
		},
		Want: `[
			{"a": 1, "b": null}, {"a": 2, "b": "x"}, {"a": 3, "b": "a"}, {"a": 1, "b": "z"}, {"a": null, "b": null},
			{"a": 5, "b": "q"}, {"a": 4, "b": "x"}, {"a": 2, "b": "b"}, {"a": 0, "b": "c"}, {"a": 7, "b": "d"}
		]`,
	})
	exectest.Run(t, exectest.Case{
		Name: "limit-offset-fetch-max-over-top-k", Inputs: abInput(1), Order: exectest.Ordered,
		Plan: func(s []physical.Plan) physical.Plan {
			keys := []physical.SortKey{{Expr: colA, Asc: true}}
			return &physical.Limit{Input: &physical.Sort{Input: s[0], Keys: keys, Fetch: math.MaxInt64}, Skip: 9, Fetch: math.MaxInt64}
		},
		// sorted: 0 1 1 2 2 3 3 4 5 7 NULL NULL; nine skipped
		Want: `[{"a": 7, "b": "d"}, {"a": null, "b": "y"}, {"a": null, "b": null}]`,
	})
	exectest.Run(t, exectest.Case{
		Name: "limit-offset-max", Inputs: abInput(2),
		Plan: func(s []physical.Plan) physical.Plan {
			return &physical.Limit{Input: s[0], Skip: math.MaxInt64, Fetch: math.MaxInt64}
		},
		Want: `[]`,
	})
}
