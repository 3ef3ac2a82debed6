package exec

import (
	"github.com/quiverdb/quiver/exec/execop"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
)

// newUnion maps output partition i to the input that owns it: the inputs'
// partitions are numbered one input after another. The input's operator is
// returned as is (Build instruments it for the Union node as well).
func newUnion(tc *execop.TaskContext, n *physical.Union, partition int) (execop.Operator, error) {
	p := partition
	for _, in := range n.Inputs {
		if k := in.OutputPartitions(); p < k {
			return tc.Build(in, p)
		} else {
			p -= k
		}
	}
	return nil, qerr.Internalf("exec: union: partition %d out of range", partition)
}
