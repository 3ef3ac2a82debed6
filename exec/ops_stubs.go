package exec

import (

	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
)

// Stubs replaced by the real operators.

func notYet(what string) error { return qerr.NotImplementedf("exec: %s not implemented yet", what) }


func newFilter(tc *TaskContext, n *physical.Filter, partition int) (Operator, error) {
	return nil, notYet("filter")
}
func newProjection(tc *TaskContext, n *physical.Projection, partition int) (Operator, error) {
	return nil, notYet("projection")
}
