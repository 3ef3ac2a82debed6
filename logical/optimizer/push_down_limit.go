package optimizer

// push_down_limit pushes a row limit towards the data:
//
//	Limit: skip=s, fetch=n / Sort: k           → Limit: skip=s, fetch=n / Sort: k, fetch=s+n (top-k)
//	Limit / Projection: e / x                  → Projection: e / Limit / x
//	Limit / Union(a, b)                        → Limit / Union(Limit(a), Limit(b)) with fetch=s+n
//	Limit: skip=s, fetch=n / TableScan: t      → Limit / TableScan: t fetch=s+n
//
// The outer Limit stays wherever the pushed one cannot apply the skip. It must
// NOT fire without a fetch, pass a Filter, join or aggregate (they change the
// row count), or enter a Cache's input.

import (
	"context"

	"github.com/quiverdb/quiver/logical"
)

// PushDownLimit is the limit push-down rule.
type PushDownLimit struct{}

// Name implements Rule.
func (PushDownLimit) Name() string { return "push_down_limit" }

// Rewrite implements Rule.
func (PushDownLimit) Rewrite(ctx context.Context, p logical.Plan) (logical.Plan, bool, error) {
	return transformDown(ctx, p, func(n logical.Plan) (logical.Plan, bool, error) {
		l, ok := n.(*logical.Limit)
		if !ok || l.Fetch < 0 {
			return n, false, nil
		}
		want := logical.AddRows(l.Skip, l.Fetch)
		switch in := l.Input.(type) {
		case *logical.Sort:
			if in.Fetch >= 0 && in.Fetch <= want {
				return n, false, nil
			}
			ns, err := logical.NewSort(in.Input, in.Keys, want)
			if err != nil {
				return nil, false, err
			}
			return &logical.Limit{Input: ns, Skip: l.Skip, Fetch: l.Fetch}, true, nil
		case *logical.Projection:
			np, err := logical.NewProjection(&logical.Limit{Input: in.Input, Skip: l.Skip, Fetch: l.Fetch}, in.List)
			return np, err == nil, err
		case *logical.Union:
			ins := make([]logical.Plan, len(in.Inputs))
			changed := false
			for i, c := range in.Inputs {
				if limitedTo(c, want) {
					ins[i] = c
					continue
				}
				ins[i] = &logical.Limit{Input: c, Fetch: want}
				changed = true
			}
			if !changed {
				return n, false, nil
			}
			nu, err := logical.NewUnion(ins)
			if err != nil {
				return nil, false, err
			}
			return &logical.Limit{Input: nu, Skip: l.Skip, Fetch: l.Fetch}, true, nil
		case *logical.Scan:
			if in.Fetch >= 0 && in.Fetch <= want {
				return n, false, nil
			}
			ns := *in
			ns.Fetch = want
			return &logical.Limit{Input: &ns, Skip: l.Skip, Fetch: l.Fetch}, true, nil
		}
		return n, false, nil
	})
}

// limitedTo reports whether p yields at most n rows because of a Limit at
// its top or under Projections. The Limit this rule puts over a Union input
// is moved below the input's Projection by the Projection case; a check of
// the top node alone would add it again on every pass (no fixpoint for
// SELECT ... UNION ALL SELECT ... LIMIT n OFFSET m).
func limitedTo(p logical.Plan, n int64) bool {
	for {
		switch x := p.(type) {
		case *logical.Projection:
			p = x.Input
		case *logical.Limit:
			return x.Fetch >= 0 && x.Fetch <= n
		default:
			return false
		}
	}
}
