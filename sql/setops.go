package sql

import "github.com/quiverdb/quiver/logical"

// The set operations as SQL lowers them, for the DataFrame API, so that
// both front ends build the same plans.

// UnionAll is left UNION ALL right (column types widened to common ones).
func UnionAll(inputs ...logical.Plan) (logical.Plan, error) { return unionAll(inputs) }

// Distinct is SELECT DISTINCT * over lp.
func Distinct(lp logical.Plan) (logical.Plan, error) { return distinct(lp) }

// Intersect is left INTERSECT right (distinct rows in both).
func Intersect(left, right logical.Plan) (logical.Plan, error) {
	return intersectExcept(left, right, false)
}

// Except is left EXCEPT right (distinct rows of left not in right).
func Except(left, right logical.Plan) (logical.Plan, error) {
	return intersectExcept(left, right, true)
}

// IntersectAll is left INTERSECT ALL right (each row as often as it is in
// both: min(m, n) times).
func IntersectAll(left, right logical.Plan) (logical.Plan, error) {
	return intersectExceptAll(left, right, false)
}

// ExceptAll is left EXCEPT ALL right (each row max(m-n, 0) times).
func ExceptAll(left, right logical.Plan) (logical.Plan, error) {
	return intersectExceptAll(left, right, true)
}
