package sql

import "github.com/quiverdb/quiver/logical"

// Windows computes the window calls of exprs (already typed over input) in
// one Window node over input and returns it with exprs rewritten to read
// the node's columns, as SELECT plans them; the DataFrame API shares it.
// Without window calls it returns input and exprs unchanged.
func Windows(input logical.Plan, exprs []logical.Expr) (logical.Plan, []logical.Expr, error) {
	return windows(input, exprs)
}

// DistinctOn keeps the first row of each group of rows equal on the first
// n of keys (over in's columns), in the order of the rest, as SELECT
// DISTINCT ON plans it; the DataFrame API shares it.
func DistinctOn(in logical.Plan, keys []logical.SortKey, n int) (logical.Plan, error) {
	return distinctOn(in, keys, n)
}
