package planner

import (
	"context"

	"github.com/quiverdb/quiver/logical"
	"github.com/quiverdb/quiver/physical"
)

// recursive plans a WITH RECURSIVE query. Its operator runs both terms
// inside one task (physical.RecursiveQuery), so they are planned for one
// partition — no hash exchanges — and coalesced to one where a source
// has several (files, memory partitions).
func (pl *Planner) recursive(ctx context.Context, n *logical.RecursiveQuery) (physical.Plan, error) {
	sub := &Planner{cfg: pl.cfg}
	sub.cfg.TargetPartitions = 1
	sub.cfg.ShareCTEs = false // nothing inside is cut into stages
	static, err := sub.Plan(ctx, n.Static)
	if err != nil {
		return nil, err
	}
	rec, err := sub.Plan(ctx, n.Recursive)
	if err != nil {
		return nil, err
	}
	return &physical.RecursiveQuery{
		Name: n.Name, Static: onePartition(static), Recursive: onePartition(rec),
		Distinct: n.Distinct, MaxDepth: pl.cfg.MaxRecursionDepth, OutSchema: n.Schema().Arrow(),
	}, nil
}

func onePartition(p physical.Plan) physical.Plan {
	if p.OutputPartitions() > 1 {
		return &physical.Coalesce{Input: p}
	}
	return p
}
