package planner

import (
	"context"

	"github.com/quiverdb/quiver/logical"
	"github.com/quiverdb/quiver/physical"
)

// expand plans a logical Expand as is: it keeps its input's partitioning,
// and the aggregate above it exchanges its rows on the keys and the set's
// ordinal like any grouped aggregate's.
func (pl *Planner) expand(ctx context.Context, n *logical.Expand) (physical.Plan, error) {
	in, err := pl.Plan(ctx, n.Input)
	if err != nil {
		return nil, err
	}
	keys, err := exprs(n.Keys, n.Input.Schema())
	if err != nil {
		return nil, err
	}
	w := n.Input.Schema().Len()
	keyNames := names(n.Schema())[w : w+len(keys)]
	return &physical.Expand{Input: in, Keys: keys, KeyNames: keyNames, Sets: n.Sets}, nil
}
