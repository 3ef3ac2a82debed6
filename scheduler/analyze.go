package scheduler

import (
	"time"

	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/rpc"
)

// OperatorInfo is one operator of a stage in GET /api/job/{id}: its
// EXPLAIN ANALYZE figures summed over the stage's successful tasks. Node is
// its position in a pre-order walk of the stage plan (root 0).
type OperatorInfo struct {
	Node          int    `json:"node"`
	Operator      string `json:"operator"`
	OutputRows    int64  `json:"output_rows"`
	OutputBatches int64  `json:"output_batches"`
	ElapsedNanos  int64  `json:"elapsed_ns"`
	SpilledBytes  int64  `json:"spilled_bytes"`
}

// stageAnalyze sums the operator metrics the successful tasks of s
// reported and renders the stage plan with them (physical.IndentAnalyze).
// It returns nothing until the stage has succeeded: figures of a stage
// still running would be partial. An entry naming a node the plan does not
// have, or with a negative figure, is ignored.
func stageAnalyze(s *stage) (string, []OperatorInfo) {
	if s.state != stageSuccessful || s.resolved == nil {
		return "", nil
	}
	var nodes []physical.Plan
	physical.PreOrder(s.resolved, func(_ int, n physical.Plan) { nodes = append(nodes, n) })
	sums := make([]physical.OperatorFigures, len(nodes))
	ran := make([]bool, len(nodes))
	reported := false
	for _, t := range s.tasks {
		for _, m := range t.metrics {
			i := int(m.GetNode())
			if i < 0 || i >= len(nodes) || m.GetOutputRows() < 0 || m.GetOutputBatches() < 0 || m.GetElapsedNanos() < 0 || m.GetSpilledBytes() < 0 {
				continue
			}
			f := &sums[i]
			f.OutputRows += m.GetOutputRows()
			f.OutputBatches += m.GetOutputBatches()
			f.Elapsed += time.Duration(m.GetElapsedNanos())
			f.SpilledBytes += m.GetSpilledBytes()
			ran[i], reported = true, true
		}
	}
	if !reported {
		return "", nil
	}
	text := physical.IndentAnalyze(s.resolved, func(i int, _ physical.Plan) physical.OperatorFigures { return sums[i] })
	ops := make([]OperatorInfo, 0, len(nodes))
	for i, n := range nodes {
		if !ran[i] {
			continue
		}
		f := sums[i]
		ops = append(ops, OperatorInfo{Node: i, Operator: n.String(), OutputRows: f.OutputRows, OutputBatches: f.OutputBatches,
			ElapsedNanos: int64(f.Elapsed), SpilledBytes: f.SpilledBytes})
	}
	return text, ops
}

// taskMetrics keeps what a successful task reported (its last success
// wins: a task run again after its output was lost reports anew).
func taskMetrics(t *task, st *rpc.TaskStatus) { t.metrics = st.GetMetrics() }
