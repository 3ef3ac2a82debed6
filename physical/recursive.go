package physical

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
)

// RecursiveQuery runs a WITH RECURSIVE query (see logical.RecursiveQuery)
// in one operator on one partition: Static once, then Recursive over and
// over, each run reading the rows the previous one added through the
// WorkTable named Name, until a run adds no row. Distinct (UNION) adds only
// rows not added before. More than MaxDepth runs of Recursive is an error
// naming the query (MaxDepth ≤ 0: no limit).
//
// Both terms are planned with one output partition and must be built
// whole inside the task running this node: the stage cutter never cuts
// inside it, so a plan holding one runs it in a single stage.
type RecursiveQuery struct {
	Name              string
	Static, Recursive Plan
	Distinct          bool
	MaxDepth          int64
	OutSchema         *arrow.Schema
}

func (*RecursiveQuery) isPlan()                 {}
func (q *RecursiveQuery) Schema() *arrow.Schema { return q.OutSchema }
func (q *RecursiveQuery) Children() []Plan      { return []Plan{q.Static, q.Recursive} }
func (q *RecursiveQuery) OutputPartitions() int { return 1 }
func (q *RecursiveQuery) WithChildren(c []Plan) Plan {
	n := *q
	n.Static, n.Recursive = c[0], c[1]
	return &n
}
func (q *RecursiveQuery) String() string {
	op := "UNION ALL"
	if q.Distinct {
		op = "UNION"
	}
	return fmt.Sprintf("RecursiveQueryExec: name=%s, %s, max_depth=%d", q.Name, op, q.MaxDepth)
}

// WorkTable reads, in one partition, the rows the enclosing RecursiveQuery
// named Name added in its previous run.
type WorkTable struct {
	Name      string
	OutSchema *arrow.Schema
}

func (*WorkTable) isPlan()                    {}
func (w *WorkTable) Schema() *arrow.Schema    { return w.OutSchema }
func (w *WorkTable) Children() []Plan         { return nil }
func (w *WorkTable) WithChildren([]Plan) Plan { return w }
func (w *WorkTable) OutputPartitions() int    { return 1 }
func (w *WorkTable) String() string           { return "WorkTableExec: name=" + w.Name }
