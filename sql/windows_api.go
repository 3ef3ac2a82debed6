package sql

import "github.com/quiverdb/quiver/logical"

// Windows computes the window calls of exprs (already typed over input) in
// one Window node over input and returns it with exprs rewritten to read
// the node's columns, as SELECT plans them; the DataFrame API shares it.
// Without window calls it returns input and exprs unchanged.
func Windows(input logical.Plan, exprs []logical.Expr) (logical.Plan, []logical.Expr, error) {
	return windows(input, exprs)
}
