package quiver

import (
	"context"
	"errors"
	"io"
	"iter"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver/exec"
	"github.com/quiverdb/quiver/exec/execop"
	"github.com/quiverdb/quiver/format"
	"github.com/quiverdb/quiver/logical"
	lcodec "github.com/quiverdb/quiver/logical/codec"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/physical/planner"
	"github.com/quiverdb/quiver/physical/stage"
	"github.com/quiverdb/quiver/qerr"
	"github.com/quiverdb/quiver/rpc"
	"github.com/quiverdb/quiver/settings"
	"github.com/quiverdb/quiver/sql"
)

// DataFrame is a lazily evaluated query: a logical plan bound to a session.
// It is immutable and safe to share between goroutines; building on it never
// changes it.
type DataFrame struct {
	s      *Session
	plan   logical.Plan
	err    error // the first error of a chain of builder calls
	noRows bool  // a statement with no result set (DDL, SET)
	// sqlText is the statement a query frame was planned from (Session.SQL);
	// the scheduler shows it in its UI and logs. Frames built from it by
	// DataFrame calls have none.
	sqlText string
}

func (s *Session) newFrame(p logical.Plan) *DataFrame { return &DataFrame{s: s, plan: p} }

// Err returns the first error of the chain of builder calls that made df.
func (df *DataFrame) Err() error { return df.err }

// Schema is the schema of df's result (nil if df has an error).
func (df *DataFrame) Schema() *arrow.Schema {
	if df.err != nil {
		return nil
	}
	return df.plan.Schema().Arrow()
}

// ReturnsRows reports whether df is a result set, as opposed to the empty
// outcome of DDL or SET, which machine output formats print nothing for.
func (df *DataFrame) ReturnsRows() bool { return !df.noRows }

// LogicalPlan returns df's unoptimized logical plan.
func (df *DataFrame) LogicalPlan() logical.Plan { return df.plan }

// execution is one running query.
type execution struct {
	tc   *execop.TaskContext // nil when the query ran as a job on a scheduler
	mem  *execop.AccountingAllocator
	plan physical.Plan
	op   execop.Operator
	// jobID and status describe the job when the query ran on a scheduler.
	jobID  string
	status *rpc.JobStatus
}

func (s *Session) snapshot() settings.Values {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.settings
}

// optimize runs the optimizer; observe (may be nil) sees the plan after each rule that fired.
func (s *Session) physicalPlan(ctx context.Context, p logical.Plan, st settings.Values, caches planner.CacheResolver) (physical.Plan, error) {
	maxDepth, _ := st.Int(settings.MaxRecursionDepth)
	return planner.New(planner.Config{TargetPartitions: localTargetPartitions(st), MaxRecursionDepth: maxDepth, Caches: caches}).Plan(ctx, p)
}

// start optimizes, plans and opens df's query.
func (df *DataFrame) start(ctx context.Context, analyze bool, info *QueryInfo) (*execution, error) {
	if df.err != nil {
		return nil, df.err
	}
	s := df.s
	st := s.snapshot()
	// A session with a cluster runs every query there, EXPLAIN ANALYZE
	// included: the tasks report their operators' figures with their
	// status, and the job's final status carries them per stage.
	if s.remote != nil {
		x, err := df.startRemote(ctx, st, info, analyze)
		if err != nil {
			return nil, err
		}
		return x, nil
	}
	lp, err := s.optimize(ctx, df.plan, nil)
	if err != nil {
		return nil, err
	}
	pp, err := s.physicalPlan(ctx, lp, st, nil)
	if err != nil {
		return nil, err
	}
	// Operators allocate through a recycler, so buffers released by one
	// batch serve the next; it is closed with the operator tree.
	rec := execop.NewRecycler(s.mem, execop.DefaultTaskRecycleFree)
	mem := execop.NewAccountingAllocator(rec, localMemoryLimit(st))
	tc := exec.NewTaskContext(mem, localBatchSize(st))
	tc.SkipPartial = localSkipPartial(st)
	tc.MemoryTables = s.memoryTable
	if analyze {
		tc.EnableMetrics()
	}
	inner, err := exec.Execute(ctx, tc, pp)
	if err != nil {
		rec.Close()
		return nil, err
	}
	op := &recyclingOp{Operator: inner, rec: rec}
	if err := op.Open(ctx); err != nil {
		op.Close()
		return nil, err
	}
	return &execution{tc: tc, mem: mem, plan: pp, op: op}, nil
}

// recyclingOp closes the recycler its operator tree allocated through
// once the tree is closed (buffers of batches still held then go back to
// the parent allocator when released).
type recyclingOp struct {
	execop.Operator
	rec *execop.Recycler
}

func (o *recyclingOp) Close() error {
	err := o.Operator.Close()
	o.rec.Close()
	return err
}

func (s *Session) memoryTable(name string) ([][]arrow.RecordBatch, bool) {
	return s.cat.RetainPartitions(name)
}

// Collect runs the query and returns all result batches; the caller
// releases each batch.
func (df *DataFrame) Collect(ctx context.Context) ([]arrow.RecordBatch, error) {
	x, err := df.start(ctx, false, nil)
	if err != nil {
		return nil, err
	}
	if resultReadyHook != nil {
		resultReadyHook()
	}
	out, err := x.drain(ctx)
	if err != nil && qerr.Retryable(err) && df.s.remote != nil && !writes(df.plan) {
		// The cluster lost the result before it was read (its executor
		// went): a query that writes nothing runs again, once; nothing of
		// the first run was handed out.
		if x, err = df.start(ctx, false, nil); err != nil {
			return nil, err
		}
		return x.drain(ctx)
	}
	return out, err
}

// resultReadyHook, when set (by tests only), runs in Collect after the
// query's job has ended and before its result is read: the moment a lost
// executor takes the result with it.
var resultReadyHook func()

// writes reports whether running p changes anything (a Write node).
func writes(p logical.Plan) bool {
	found := false
	logical.Inspect(p, func(n logical.Plan) bool {
		if _, ok := n.(*logical.Write); ok {
			found = true
		}
		return !found
	})
	return found
}

func (x *execution) drain(ctx context.Context) ([]arrow.RecordBatch, error) {
	var out []arrow.RecordBatch
	release := func() {
		for _, b := range out {
			b.Release()
		}
	}
	for {
		b, err := x.op.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			release()
			x.op.Close()
			return nil, err
		}
		out = append(out, b)
	}
	if err := x.op.Close(); err != nil {
		release()
		return nil, err
	}
	return out, nil
}

// Stream runs the query and yields its batches as they are produced. Each
// yielded batch is released after the loop body returns; Retain it to keep
// it. Breaking out of the loop stops the query.
func (df *DataFrame) Stream(ctx context.Context) iter.Seq2[arrow.RecordBatch, error] {
	return df.StreamInfo(ctx, nil)
}

// QueryInfo describes how a query ran: its job on the scheduler and what
// it did with each cache it read.
type QueryInfo struct {
	JobID  string
	Caches []CacheEvent
	// OnProgress, if set, is called (from the query's goroutine) each time
	// the job's progress changes while it runs on a scheduler, and once
	// with the final counts when it succeeds.
	OnProgress func(JobProgress)
}

// JobProgress is how far a running job is.
type JobProgress struct {
	StagesDone, StagesTotal, TasksDone, TasksTotal int
}

// StreamInfo is Stream that also fills *info (if not nil) once the query's
// job has finished, before the first batch is yielded.
func (df *DataFrame) StreamInfo(ctx context.Context, info *QueryInfo) iter.Seq2[arrow.RecordBatch, error] {
	return func(yield func(arrow.RecordBatch, error) bool) {
		x, err := df.start(ctx, false, info)
		if err != nil {
			yield(nil, err)
			return
		}
		if info != nil && x.status != nil {
			info.JobID = x.jobID
			var segs map[string]bool
			if df.s.tablesOnExecutors() {
				segs = df.s.segmentIDs()
			}
			for _, e := range x.status.Caches {
				if segs[e.CacheId] {
					continue // a memory table's rows, not a cache
				}
				info.Caches = append(info.Caches, CacheEvent{Name: e.Name, CacheID: e.CacheId, Outcome: e.Outcome, Partitions: int(e.Partitions), Bytes: e.Bytes, Reason: e.Reason})
			}
		}
		defer x.op.Close()
		for {
			b, err := x.op.Next(ctx)
			if errors.Is(err, io.EOF) {
				return
			}
			if err != nil {
				yield(nil, err)
				return
			}
			more := yield(b, nil)
			b.Release()
			if !more {
				return
			}
		}
	}
}

// Count runs the query and returns its number of rows.
func (df *DataFrame) Count(ctx context.Context) (int64, error) {
	var n int64
	for b, err := range df.Stream(ctx) {
		if err != nil {
			return 0, err
		}
		n += b.NumRows()
	}
	return n, nil
}

// Show runs the query and prints the result as an aligned table.
func (df *DataFrame) Show(ctx context.Context, w io.Writer) error {
	return df.Print(ctx, w, format.Table, format.Options{})
}

// Print runs the query and writes the result in format k. A DataFrame of a
// statement without a result set prints nothing in the machine formats.
func (df *DataFrame) Print(ctx context.Context, w io.Writer, k format.Kind, opt format.Options) error {
	if df.noRows && k != format.Table {
		return nil
	}
	batches, err := df.Collect(ctx)
	if err != nil {
		return err
	}
	defer func() {
		for _, b := range batches {
			b.Release()
		}
	}()
	return format.Write(w, k, df.Schema(), batches, opt)
}

// Explain returns the optimized logical plan and the physical plan; with
// analyze it runs the query and shows rows, batches and time per operator.
func (df *DataFrame) Explain(ctx context.Context, analyze bool) (string, error) {
	rows, err := df.s.explainRows(ctx, df, &sql.Explain{Analyze: analyze})
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, r := range rows {
		b.WriteString(r[0] + ":\n" + r[1])
		if !strings.HasSuffix(r[1], "\n") {
			b.WriteString("\n")
		}
	}
	return b.String(), nil
}

func (s *Session) explain(ctx context.Context, st *sql.Explain) (*DataFrame, error) {
	rows, err := s.explainRows(ctx, s.newFrame(st.Plan), st)
	if err != nil {
		return nil, err
	}
	return s.table([]string{"plan_type", "plan"}, rows)
}

// explainRows builds EXPLAIN's (plan_type, plan) rows.
func (s *Session) explainRows(ctx context.Context, df *DataFrame, st *sql.Explain) ([][]string, error) {
	if df.err != nil {
		return nil, df.err
	}
	var rows [][]string
	var observe func(string, logical.Plan)
	if st.Verbose {
		rows = append(rows, []string{"initial_logical_plan", logical.Indent(df.plan)})
		observe = func(rule string, p logical.Plan) {
			rows = append(rows, []string{"logical_plan after " + rule, logical.Indent(p)})
		}
	}
	if st.Analyze {
		x, err := df.start(ctx, true, nil)
		if err != nil {
			return nil, err
		}
		batches, err := x.drain(ctx)
		if err != nil {
			return nil, err
		}
		var n int64
		for _, b := range batches {
			n += b.NumRows()
			b.Release()
		}
		if x.tc == nil {
			return append(rows, analyzeRows(x.jobID, x.status, n)...), nil
		}
		return append(rows, []string{"Plan with Metrics", x.tc.FormatAnalyze(x.plan)},
			[]string{"Summary", "output_rows=" + itoa(n) + ", peak_memory=" + physical.FormatBytes(x.mem.Peak())}), nil
	}
	lp, err := s.optimize(ctx, df.plan, observe)
	if err != nil {
		return nil, err
	}
	if s.remote != nil {
		return s.explainRemote(ctx, rows, lp, st.Distributed)
	}
	pp, err := s.physicalPlan(ctx, lp, s.snapshot(), nil)
	if err != nil {
		return nil, err
	}
	rows = append(rows, []string{"logical_plan", logical.Indent(lp)}, []string{"physical_plan", physical.Indent(pp)})
	if st.Distributed {
		g, err := stage.Split("explain", pp, stage.Options{})
		if err != nil {
			return nil, err
		}
		how := "local execution runs the physical plan directly, exchanges in memory; on several executors: a stage per exchange, shuffle files between them"
		rows = append(rows, []string{"distributed_plan", how + "\n" + g.String()})
	}
	return rows, nil
}

// explainRemote asks the scheduler to plan lp as it would plan the job
// (its target partitions, exchange mode and cache hits), so that EXPLAIN
// on a cluster shows what the query would run, not this process's guess.
func (s *Session) explainRemote(ctx context.Context, rows [][]string, lp logical.Plan, distributed bool) ([][]string, error) {
	resp, err := s.explainQuery(ctx, lp)
	if err != nil {
		return nil, err
	}
	states := cacheInfos(resp.GetCaches(), resp.GetRemoved())
	rows = append(rows, []string{"logical_plan", markCaches(logical.Indent(lp), states)}, []string{"physical_plan", resp.GetPhysicalPlan()})
	if distributed {
		rows = append(rows, []string{"distributed_plan", resp.GetDistributedPlan()})
	}
	return rows, nil
}

// explainQuery sends the optimized plan lp to the scheduler's ExplainQuery.
func (s *Session) explainQuery(ctx context.Context, lp logical.Plan) (*rpc.ExplainQueryResponse, error) {
	lp, err := s.readTablesOnExecutors(lp)
	if err != nil {
		return nil, err
	}
	if err := s.checkShippable(lp); err != nil {
		return nil, err
	}
	lp, err = s.stampVersions(lp)
	if err != nil {
		return nil, err
	}
	b, err := lcodec.Encode(lp)
	if err != nil {
		return nil, err
	}
	r := s.remote
	req := &rpc.ExplainQueryRequest{SessionId: r.sessionID, LogicalPlan: b, Settings: s.snapshot().Wire()}
	resp, err := r.client.ExplainQuery(ctx, req)
	if err != nil && unknownSession(err) {
		if _, rerr := s.reopen(ctx); rerr != nil {
			return nil, qerr.IOf("explain query: %w; re-opening the session: %w", err, rerr)
		}
		resp, err = r.client.ExplainQuery(ctx, req)
	}
	if err != nil {
		return nil, qerr.IOf("explain query: %w", err)
	}
	return resp, nil
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func isEOF(err error) bool { return errors.Is(err, io.EOF) }
