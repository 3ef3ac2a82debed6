package exec

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
)

// Stubs replaced by the hash aggregate / hash join implementation.

func newHashAggregate(tc *TaskContext, n *physical.HashAggregate, partition int) (Operator, error) {
	return nil, qerr.NotImplementedf("exec: hash aggregate not implemented yet")
}

func newHashJoin(tc *TaskContext, n *physical.HashJoin, partition int) (Operator, error) {
	return nil, qerr.NotImplementedf("exec: hash join not implemented yet")
}

func newNestedLoopJoin(tc *TaskContext, n *physical.NestedLoopJoin, partition int) (Operator, error) {
	return nil, qerr.NotImplementedf("exec: nested loop join not implemented yet")
}

// HashColumns writes into hashes[i] a hash of row i's values of cols (equal
// values, including equal decimals and strings, hash equally; NULL hashes to
// a fixed value). len(hashes) must equal the arrays' length.
func HashColumns(cols []arrow.Array, hashes []uint64) {}
