package planner

import (
	"context"

	"github.com/quiverdb/quiver/logical"
	"github.com/quiverdb/quiver/physical"
)

// cteRef plans a reference to a shared WITH query. With Config.ShareCTEs,
// the references whose inputs are still the same plan (the optimizer keeps
// them so) get one SharedCTE node; a reference whose input differs is
// planned on its own, as is every reference without ShareCTEs.
func (pl *Planner) cteRef(ctx context.Context, n *logical.CTERef) (physical.Plan, error) {
	if !pl.cfg.ShareCTEs {
		return pl.Plan(ctx, n.Input)
	}
	key := logical.Indent(n.Input)
	if c, ok := pl.ctes[n.ID]; ok {
		if c.key == key {
			return c.node, nil
		}
		return pl.Plan(ctx, n.Input)
	}
	in, err := pl.Plan(ctx, n.Input)
	if err != nil {
		return nil, err
	}
	node := &physical.SharedCTE{ID: n.ID, Name: n.Name, Input: in}
	if pl.ctes == nil {
		pl.ctes = map[int]sharedCTE{}
	}
	pl.ctes[n.ID] = sharedCTE{node: node, key: key}
	return node, nil
}
