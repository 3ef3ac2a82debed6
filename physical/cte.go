package physical

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
)

// SharedCTE is the result of a WITH query that several places of the plan
// read (logical.CTERef): the same node, by pointer and ID, stands at every
// reference. The stage cutter computes Input once, as a stage of its own
// whose output every reading stage reads (ARCHITECTURE.md §3, "Shared
// CTEs"); it never reaches an executor. Its partitions are Input's, so a
// reader sees the partitioning Input has.
type SharedCTE struct {
	ID    int
	Name  string
	Input Plan
}

func (*SharedCTE) isPlan()                 {}
func (c *SharedCTE) Schema() *arrow.Schema { return c.Input.Schema() }
func (c *SharedCTE) Children() []Plan      { return []Plan{c.Input} }
func (c *SharedCTE) OutputPartitions() int { return c.Input.OutputPartitions() }
func (c *SharedCTE) WithChildren(ch []Plan) Plan {
	n := *c
	n.Input = ch[0]
	return &n
}
func (c *SharedCTE) String() string {
	return fmt.Sprintf("SharedCTEExec: %s id=%d", c.Name, c.ID)
}

// refString is how Indent shows a reference after the first one, whose
// input it already showed.
func (c *SharedCTE) refString() string {
	return fmt.Sprintf("CTERefExec: %s id=%d (reads the shared result above)", c.Name, c.ID)
}
