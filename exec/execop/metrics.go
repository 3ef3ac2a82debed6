package execop

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver/physical"
)

// Metrics collects per-node execution metrics for EXPLAIN ANALYZE,
// aggregated over every partition of a node. Safe for concurrent use.
type Metrics struct {
	mu    sync.Mutex
	nodes map[physical.Plan]*NodeMetrics
}

// NodeMetrics are one physical node's counters, summed over its partitions.
// Elapsed is the wall time spent inside Next, including the node's inputs
// (inclusive time), summed over partitions.
type NodeMetrics struct {
	OutputRows    atomic.Int64
	OutputBatches atomic.Int64
	ElapsedNanos  atomic.Int64
	// SpilledBytes are the bytes the node wrote to spill files because
	// its state did not fit in memory.
	SpilledBytes atomic.Int64
	// BatchesSkipped are a cache read's batches its zone maps ruled out.
	BatchesSkipped atomic.Int64
	// The node's hash tables (physical.TableFigures), under mu.
	mu     sync.Mutex
	tables physical.TableFigures
}

// AddTables counts hash tables the node made.
func (m *NodeMetrics) AddTables(f physical.TableFigures) {
	m.mu.Lock()
	m.tables.Add(f)
	m.mu.Unlock()
}

// Tables are the node's hash-table figures so far.
func (m *NodeMetrics) Tables() physical.TableFigures {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.tables
}

func (m *Metrics) node(p physical.Plan) *NodeMetrics {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.nodes == nil {
		m.nodes = map[physical.Plan]*NodeMetrics{}
	}
	nm, ok := m.nodes[p]
	if !ok {
		nm = &NodeMetrics{}
		m.nodes[p] = nm
	}
	return nm
}

// EnableMetrics makes Build record metrics for every operator it builds
// afterwards. Call it before building.
func (tc *TaskContext) EnableMetrics() {
	if tc.metrics == nil {
		tc.metrics = &Metrics{}
	}
}

// NodeMetrics returns the metrics recorded for p, or nil if metrics are
// disabled or p never ran.
func (tc *TaskContext) NodeMetrics(p physical.Plan) *NodeMetrics {
	if tc.metrics == nil {
		return nil
	}
	tc.metrics.mu.Lock()
	defer tc.metrics.mu.Unlock()
	return tc.metrics.nodes[p]
}

// FormatAnalyze renders p with each node's metrics (physical.IndentAnalyze,
// the one text form of EXPLAIN ANALYZE). Nodes that never ran show zeros.
func (tc *TaskContext) FormatAnalyze(p physical.Plan) string {
	return physical.IndentAnalyze(p, func(_ int, n physical.Plan) physical.OperatorFigures {
		return tc.Figures(n)
	})
}

// Figures are the metrics recorded for p (zeros when it never ran or
// metrics are off).
func (tc *TaskContext) Figures(p physical.Plan) physical.OperatorFigures {
	nm := tc.NodeMetrics(p)
	if nm == nil {
		return physical.OperatorFigures{}
	}
	return physical.OperatorFigures{OutputRows: nm.OutputRows.Load(), OutputBatches: nm.OutputBatches.Load(),
		Elapsed: time.Duration(nm.ElapsedNanos.Load()), SpilledBytes: nm.SpilledBytes.Load(), Tables: nm.Tables(),
		BatchesSkipped: nm.BatchesSkipped.Load()}
}

// Instrument wraps op for p: the wrapper turns a memory-limit panic inside
// Open, Next or Close into a Resources error (other panics keep unwinding to
// the goroutine root) and, when metrics are enabled, counts rows, batches
// and time spent in Next. Built with the assert tag, it also checks the
// operator's side of the Operator contract (see checked).
func (tc *TaskContext) Instrument(p physical.Plan, op Operator) Operator {
	if assertions {
		op = &checked{op: op, p: p, schema: p.Schema()}
	}
	w := &instrumented{op: op}
	if tc.metrics != nil {
		w.m = tc.metrics.node(p)
	}
	return w
}

type instrumented struct {
	op Operator
	m  *NodeMetrics // nil: metrics disabled
}

func (w *instrumented) Open(ctx context.Context) (err error) {
	defer recoverLimit(&err)
	return LimitErr(w.op.Open(ctx))
}

func (w *instrumented) Next(ctx context.Context) (b arrow.RecordBatch, err error) {
	defer recoverLimit(&err)
	if w.m == nil {
		b, err = w.op.Next(ctx)
		return b, LimitErr(err)
	}
	start := time.Now()
	b, err = w.op.Next(ctx)
	w.m.ElapsedNanos.Add(int64(time.Since(start)))
	if err == nil {
		w.m.OutputRows.Add(b.NumRows())
		w.m.OutputBatches.Add(1)
	}
	return b, LimitErr(err)
}

func (w *instrumented) Close() (err error) {
	defer recoverLimit(&err)
	return LimitErr(w.op.Close())
}
