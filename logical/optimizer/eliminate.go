package optimizer

// eliminate_filter removes filters whose predicate is a constant:
//
//	Filter: true → (its input)
//	Filter: false / Filter: NULL → EmptyRelation (same schema)
//
// and merges a Filter directly above another Filter into one (a AND b).
//
// eliminate_limit removes limits that do nothing and empties limits of zero:
//
//	Limit: skip=0, fetch=None → (its input)
//	Limit: fetch=0            → EmptyRelation (same schema)
//	Limit(Limit(x))           → one Limit with the combined skip and fetch
//
// Neither fires on a predicate or limit that is not a constant.

import (
	"context"

	"github.com/quiverdb/quiver/logical"
)

// EliminateFilter removes constant filters and merges stacked ones.
type EliminateFilter struct{}

// Name implements Rule.
func (EliminateFilter) Name() string { return "eliminate_filter" }

// Rewrite implements Rule.
func (EliminateFilter) Rewrite(ctx context.Context, p logical.Plan) (logical.Plan, bool, error) {
	return transformUp(ctx, p, func(n logical.Plan) (logical.Plan, bool, error) {
		f, ok := n.(*logical.Filter)
		if !ok {
			return n, false, nil
		}
		switch {
		case isBoolLit(f.Predicate, true):
			return f.Input, true, nil
		case isBoolLit(f.Predicate, false) || isNullLit(f.Predicate):
			return logical.NewEmptyRelation(false, f.Schema()), true, nil
		}
		if in, ok := f.Input.(*logical.Filter); ok {
			nf, err := logical.NewFilter(in.Input, logical.And(in.Predicate, f.Predicate))
			return nf, err == nil, err
		}
		return n, false, nil
	})
}

// EliminateLimit removes no-op limits and merges stacked ones.
type EliminateLimit struct{}

// Name implements Rule.
func (EliminateLimit) Name() string { return "eliminate_limit" }

// Rewrite implements Rule.
func (EliminateLimit) Rewrite(ctx context.Context, p logical.Plan) (logical.Plan, bool, error) {
	return transformUp(ctx, p, func(n logical.Plan) (logical.Plan, bool, error) {
		l, ok := n.(*logical.Limit)
		if !ok {
			return n, false, nil
		}
		if l.Skip == 0 && l.Fetch < 0 {
			return l.Input, true, nil
		}
		if l.Fetch == 0 {
			return logical.NewEmptyRelation(false, l.Schema()), true, nil
		}
		if in, ok := l.Input.(*logical.Limit); ok {
			// Outer skips l.Skip of the inner's output, which is rows
			// [in.Skip, in.Skip+in.Fetch) of the input.
			skip := logical.AddRows(in.Skip, l.Skip)
			fetch := l.Fetch
			if in.Fetch >= 0 {
				rest := max(0, in.Fetch-l.Skip)
				if fetch < 0 || rest < fetch {
					fetch = rest
				}
			}
			return &logical.Limit{Input: in.Input, Skip: skip, Fetch: fetch}, true, nil
		}
		return n, false, nil
	})
}
