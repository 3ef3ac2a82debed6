package join

import (
	"context"

	"github.com/quiverdb/quiver/exec/execop"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
)

// NewNestedLoopJoin runs one partition of a physical.NestedLoopJoin with the
// join machinery of joinOp (see hash_join.go): the left side is collected
// once and shared by every right partition; each right batch is paired with
// every left row, BatchSize pairs at a time, the pairs' cross-product batch
// is built with Take and the Filter (none: a cross join) keeps the TRUE
// pairs. Mark joins follow Kleene logic over the filter: true if some pair
// is TRUE, else NULL if some pair is NULL, else false (false for an empty
// right side).
func NewNestedLoopJoin(tc *execop.TaskContext, n *physical.NestedLoopJoin, partition int) (execop.Operator, error) {
	if n.Type == physical.RightSemiJoin || n.Type == physical.RightAntiJoin {
		return nil, qerr.NotImplementedf("exec/nljoin: %s join: the planner makes it only as a hash join", n.Type)
	}
	j, err := newJoinOp(tc, n.Left, n.Right, n.Type, n.Filter, n.Schema(), partition, "nljoin")
	if err != nil {
		return nil, err
	}
	j.nested = true
	if j.keyOnly {
		j.keyOnly, j.skipMatched = false, true
	}
	left, leftSc := n.Left, n.Left.Schema()
	j.shared = tc.Shared(n, func() any { return &joinShared{parts: probeParts(tc, n.Right)} }).(*joinShared)
	j.makeBuild = func(ctx context.Context) (*joinBuild, error) {
		bs, err := execop.CollectAll(ctx, tc, left)
		if err != nil {
			return nil, err
		}
		return buildJoinSide(ctx, tc, leftSc, bs, nil, keyStats{}, j.what, false)
	}
	return j, nil
}
