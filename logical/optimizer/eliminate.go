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

// PropagateEmpty replaces an operator that gives no rows when an input
// gives none with an EmptyRelation of its schema, so that a branch a
// constant filter emptied (a UNION ALL branch of another sale_type, say)
// reads nothing: a projection, filter, sort, limit, alias or window over no
// rows, an aggregate with GROUP BY over no rows, an inner or semi join with
// an empty side, a left, anti or mark join with an empty left side, a right
// join with an empty right side, a full join with both empty, a union of
// empty inputs. An empty union input after the first is dropped (the first
// names the union's columns). A global aggregate gives one row over none
// and is kept, as is everything else.
type PropagateEmpty struct{}

// Name implements Rule.
func (PropagateEmpty) Name() string { return "propagate_empty" }

// Rewrite implements Rule.
func (PropagateEmpty) Rewrite(ctx context.Context, p logical.Plan) (logical.Plan, bool, error) {
	return transformUp(ctx, p, func(n logical.Plan) (logical.Plan, bool, error) {
		emptied := func() (logical.Plan, bool, error) {
			return logical.NewEmptyRelation(false, n.Schema()), true, nil
		}
		switch x := n.(type) {
		case *logical.Projection, *logical.Filter, *logical.Sort, *logical.Limit, *logical.SubqueryAlias, *logical.Window:
			if isEmpty(n.Children()[0]) {
				return emptied()
			}
		case *logical.Aggregate:
			if len(x.GroupBy) > 0 && isEmpty(x.Input) {
				return emptied()
			}
		case *logical.Join:
			l, r := isEmpty(x.Left), isEmpty(x.Right)
			switch x.Type {
			case logical.InnerJoin, logical.SemiJoin:
				if l || r {
					return emptied()
				}
			case logical.LeftJoin, logical.AntiJoin, logical.MarkJoin:
				if l {
					return emptied()
				}
			case logical.RightJoin:
				if r {
					return emptied()
				}
			case logical.FullJoin:
				if l && r {
					return emptied()
				}
			}
		case *logical.Union:
			keep := []logical.Plan{x.Inputs[0]}
			for _, in := range x.Inputs[1:] {
				if !isEmpty(in) {
					keep = append(keep, in)
				}
			}
			switch {
			case len(keep) == len(x.Inputs):
			case len(keep) == 1 && isEmpty(keep[0]):
				return emptied()
			case len(keep) == 1:
				if keep[0].Schema().Equal(x.Schema()) {
					return keep[0], true, nil
				}
			default:
				u, err := logical.NewUnion(keep)
				if err != nil || !u.Schema().Equal(x.Schema()) {
					return n, false, err
				}
				return u, true, nil
			}
		}
		return n, false, nil
	})
}

// isEmpty reports whether p is an EmptyRelation of no rows.
func isEmpty(p logical.Plan) bool {
	e, ok := p.(*logical.EmptyRelation)
	return ok && !e.ProduceOneRow
}
