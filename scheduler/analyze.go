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
			if i < 0 || i >= len(nodes) || m.GetOutputRows() < 0 || m.GetOutputBatches() < 0 || m.GetElapsedNanos() < 0 || m.GetSpilledBytes() < 0 || m.GetBatchesSkipped() < 0 {
				continue
			}
			f := &sums[i]
			f.OutputRows += m.GetOutputRows()
			f.OutputBatches += m.GetOutputBatches()
			f.Elapsed += time.Duration(m.GetElapsedNanos())
			f.SpilledBytes += m.GetSpilledBytes()
			f.BatchesSkipped += m.GetBatchesSkipped()
			f.Tables.Add(tableFigures(m))
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

// analyzeStages is EXPLAIN ANALYZE's answer: each stage of a successful
// job, in run order, with its figures (stageAnalyze).
func analyzeStages(j *job) []*rpc.StageAnalyze {
	var out []*rpc.StageAnalyze
	for _, id := range j.order {
		s := j.stages[id]
		text, _ := stageAnalyze(s)
		if text == "" {
			continue
		}
		tasks := 0
		for _, t := range s.tasks {
			if !t.kept {
				tasks++
			}
		}
		out = append(out, &rpc.StageAnalyze{StageId: int32(id), Final: id == j.final, Tasks: int32(tasks), Plan: text})
	}
	return out
}

// tableFigures are an entry's hash-table figures; none when malformed (a
// layout the scheduler does not know, or a negative count).
func tableFigures(m *rpc.OperatorMetrics) physical.TableFigures {
	var f physical.TableFigures
	started := m.GetHashTablesStarted()
	if len(started) > len(f.Started) || m.GetHashTablesByStats() < 0 || m.GetHashLayoutChanges() < 0 {
		return physical.TableFigures{}
	}
	for i, n := range started {
		if n < 0 {
			return physical.TableFigures{}
		}
		f.Started[i] = n
	}
	f.ByStats, f.Changes = m.GetHashTablesByStats(), m.GetHashLayoutChanges()
	return f
}
