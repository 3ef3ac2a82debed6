package exec

import (
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
)

// Stubs replaced by the shuffle implementation.

func newShuffleWriter(tc *TaskContext, n *physical.ShuffleWriter, partition int) (Operator, error) {
	return nil, qerr.NotImplementedf("exec: shuffle writer not implemented yet")
}

func newShuffleReader(tc *TaskContext, n *physical.ShuffleReader, partition int) (Operator, error) {
	return nil, qerr.NotImplementedf("exec: shuffle reader not implemented yet")
}

func newCacheReader(tc *TaskContext, n *physical.CacheReader, partition int) (Operator, error) {
	return nil, qerr.NotImplementedf("exec: cache reader not implemented yet")
}
