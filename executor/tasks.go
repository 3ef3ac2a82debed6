package executor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/quiverdb/quiver/exec"
	"github.com/quiverdb/quiver/exec/execop"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/physical/codec"
	"github.com/quiverdb/quiver/qerr"
	"github.com/quiverdb/quiver/rpc"
	"golang.org/x/sync/errgroup"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// taskKey identifies a task attempt.
type taskKey struct {
	job                       string
	stage, partition, attempt int32
}

func keyOf(id *rpc.TaskId) taskKey {
	return taskKey{id.GetJobId(), id.GetStageId(), id.GetPartition(), id.GetAttempt()}
}

func (k taskKey) String() string {
	return fmt.Sprintf("%s/%d/%d#%d", k.job, k.stage, k.partition, k.attempt)
}

// task is one launched task. cancel and cancelled are guarded by
// Executor.mu; cancel is set when a worker picks the task up.
type task struct {
	key taskKey
	def *rpc.TaskDefinition
	// stage and settings are decoded from def by LaunchTasks.
	stage     *physical.ShuffleWriter
	settings  taskSettings
	metrics   []*rpc.OperatorMetrics // set by runPlan when the task succeeded
	cancel    context.CancelFunc
	cancelled bool
}

func (t *task) status(state rpc.TaskState, executorID string) *rpc.TaskStatus {
	return &rpc.TaskStatus{Id: proto.Clone(t.def.GetId()).(*rpc.TaskId), ExecutorId: executorID, State: state}
}

// worker runs queued tasks one at a time until ctx (the executor's
// lifetime) ends. Owner: Executor; VCores of them run.
func (e *Executor) worker(ctx context.Context) {
	defer e.wg.Done()
	for {
		t, tctx := e.next(ctx)
		if t == nil {
			select {
			case <-e.wake:
				continue
			case <-ctx.Done():
				return
			}
		}
		e.runTask(ctx, tctx, t)
	}
}

// next pops the oldest queued task and marks it running with its own
// context (a child of ctx, cancelled by CancelTasks or Close).
func (e *Executor) next(ctx context.Context) (*task, context.Context) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if ctx.Err() != nil || len(e.queue) == 0 {
		return nil, nil
	}
	t := e.queue[0]
	e.queue[0] = nil
	e.queue = e.queue[1:]
	tctx, cancel := context.WithCancel(ctx)
	t.cancel = cancel
	e.running[t.key] = t
	return t, tctx
}

// runningCount is the number of tasks running now.
func (e *Executor) runningCount() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.running)
}

// runTask runs t and reports its outcome, unless the executor is closing.
func (e *Executor) runTask(ctx, tctx context.Context, t *task) {
	began := time.Now()
	e.log.l.Info("task started", "task", t.key.String(), "request_id", t.def.GetRequestId())
	st := e.execute(tctx, t)
	e.mu.Lock()
	delete(e.running, t.key)
	cancelled := t.cancelled
	e.mu.Unlock()
	t.cancel()
	if ctx.Err() != nil {
		return // closing: the scheduler learns from the executor's loss
	}
	if cancelled {
		st = t.status(rpc.TaskState_TASK_CANCELLED, e.cfg.ID)
		st.Error = "task cancelled"
		st.ErrorKind = int32(qerr.Canceled)
	}
	e.observeTask(st, time.Since(began))
	args := []any{"task", t.key.String(), "request_id", t.def.GetRequestId(), "state", st.State.String(), "duration", time.Since(began).Round(time.Microsecond)}
	if st.Error != "" {
		args = append(args, "error", st.Error)
	}
	e.log.l.Info("task finished", args...)
	e.report(st)
}

// execute runs t's plan and turns the outcome into a status.
func (e *Executor) execute(ctx context.Context, t *task) *rpc.TaskStatus {
	locs, err := e.runPlan(ctx, t)
	if err == nil {
		st := t.status(rpc.TaskState_TASK_SUCCESSFUL, e.cfg.ID)
		st.Locations, st.Metrics = locs, t.metrics
		return st
	}
	st := t.status(rpc.TaskState_TASK_FAILED, e.cfg.ID)
	st.Error = err.Error()
	st.ErrorKind = int32(qerr.KindOf(err))
	var fe *execop.FetchError
	if errors.As(err, &fe) {
		st.FetchFailure = &rpc.FetchFailure{
			ExecutorId:   fe.Location.Executor.ID,
			JobId:        fe.Location.JobID,
			StageId:      int32(fe.Location.StageID),
			MapPartition: int32(fe.Location.MapPartition),
		}
	}
	return st
}

// runPlan runs partition t.def.Id.Partition of it
// (or, for a whole-stage task, every partition) to the end and returns the
// locations of the files it wrote. A panic anywhere below becomes an
// internal error (this is a task root).
func (e *Executor) runPlan(ctx context.Context, t *task) (locs []*rpc.PartitionLocation, err error) {
	defer func() {
		if r := recover(); r != nil {
			e.log.l.Error("task panicked", "task", t.key.String(), "panic", r, "stack", string(debug.Stack()))
			locs, err = nil, qerr.Internalf("executor: task %s panicked: %v", t.key, r)
		}
	}()
	w, settings := t.stage, t.settings
	if w.Pinned {
		// Remember before writing, so that a whole-job sweep racing the
		// task never deletes cache files.
		e.mu.Lock()
		if e.pinned[w.JobID] == nil {
			e.pinned[w.JobID] = map[int]bool{}
		}
		e.pinned[w.JobID][w.StageID] = true
		e.mu.Unlock()
	}
	// The task's operators allocate through a recycler, so buffers released
	// by one batch serve the next; it is closed when the task returns.
	rec := execop.NewRecycler(e.cfg.Allocator, execop.DefaultTaskRecycleFree)
	defer rec.Close()
	tc := exec.NewTaskContext(execop.NewTaskAllocator(rec, settings.memoryLimit, e.pool), settings.batchSize)
	tc.WorkDir = e.cfg.WorkDir
	tc.SkipPartial = settings.skipPartial
	tc.ExecutorID = e.cfg.ID
	tc.Fetcher = e.fetcher
	tc.Maps = e.maps
	tc.MemoryTables = e.cfg.MemoryTables
	// Per-operator metrics go back with the status: the scheduler's job
	// page shows the stage plans with them (EXPLAIN ANALYZE figures).
	tc.EnableMetrics()
	if t.def.GetAllPartitions() {
		locs, err = e.runAll(ctx, tc, w, t.key)
	} else {
		// A task builds one partition of its stage; sibling partitions are other tasks.
		tc.SinglePartition = true
		locs, err = e.runPartition(ctx, tc, w, int(t.key.partition))
	}
	if err == nil {
		t.metrics = operatorMetrics(tc, w)
	}
	return locs, err
}

// operatorMetrics are the figures of every node of w that ran, numbered
// in pre-order (physical.PreOrder), as a task status carries them.
func operatorMetrics(tc *execop.TaskContext, w physical.Plan) []*rpc.OperatorMetrics {
	var out []*rpc.OperatorMetrics
	physical.PreOrder(w, func(i int, n physical.Plan) {
		if tc.NodeMetrics(n) == nil {
			return
		}
		f := tc.Figures(n)
		out = append(out, &rpc.OperatorMetrics{Node: int32(i), OutputRows: f.OutputRows, OutputBatches: f.OutputBatches,
			ElapsedNanos: int64(f.Elapsed), SpilledBytes: f.SpilledBytes,
			HashTablesStarted: f.Tables.Started[:], HashTablesByStats: f.Tables.ByStats, HashLayoutChanges: f.Tables.Changes,
			BatchesSkipped: f.BatchesSkipped})
	})
	return out
}

// runAll runs every partition of a whole stage (stage.Stage.Whole) in its
// own goroutine, all sharing tc, so that the plan's exchanges and join build
// sides are shared in memory as in the single-node engine. It returns the
// locations of every partition's files, in partition order. The first
// failure cancels the other partitions; runAll returns once all have
// stopped (each partition's writer removes its own unfinished files).
func (e *Executor) runAll(ctx context.Context, tc *execop.TaskContext, w *physical.ShuffleWriter, key taskKey) ([]*rpc.PartitionLocation, error) {
	n := w.OutputPartitions()
	parts := make([][]*rpc.PartitionLocation, n)
	g, gctx := errgroup.WithContext(ctx)
	for p := range n {
		g.Go(func() (err error) {
			defer func() {
				if r := recover(); r != nil {
					e.log.l.Error("task partition panicked", "task", key.String(), "partition", p, "panic", r, "stack", string(debug.Stack()))
					err = qerr.Internalf("executor: task %s partition %d panicked: %v", key, p, r)
				}
			}()
			parts[p], err = e.runPartition(gctx, tc, w, p)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	var locs []*rpc.PartitionLocation
	for _, l := range parts {
		locs = append(locs, l...)
	}
	return locs, nil
}

// runPartition builds, opens and drains map partition p of w in tc and
// returns the locations of the files it wrote.
func (e *Executor) runPartition(ctx context.Context, tc *execop.TaskContext, w *physical.ShuffleWriter, p int) (locs []*rpc.PartitionLocation, err error) {
	op, err := exec.Build(tc, w, p)
	if err != nil {
		return nil, err
	}
	defer func() {
		if cerr := op.Close(); err == nil && cerr != nil {
			locs, err = nil, cerr
		}
	}()
	if err := op.Open(ctx); err != nil {
		return nil, err
	}
	for {
		b, err := op.Next(ctx)
		if errors.Is(err, io.EOF) {
			return locs, nil
		}
		if err != nil {
			return nil, err
		}
		locs, err = e.appendLocations(locs, b, w, p)
		b.Release()
		if err != nil {
			return nil, err
		}
	}
}

// appendLocations turns a ShuffleWriteStatsSchema batch into locations of
// files this executor holds.
func (e *Executor) appendLocations(locs []*rpc.PartitionLocation, b arrow.RecordBatch, w *physical.ShuffleWriter, mapPartition int) ([]*rpc.PartitionLocation, error) {
	cols := [4]*array.Int64{}
	for i, name := range [4]string{"output_partition", "rows", "batches", "bytes"} {
		idx := b.Schema().FieldIndices(name)
		if len(idx) != 1 {
			return nil, qerr.Internalf("executor: shuffle writer stats have no column %q (schema %s)", name, b.Schema())
		}
		c, ok := b.Column(idx[0]).(*array.Int64)
		if !ok {
			return nil, qerr.Internalf("executor: shuffle writer stats column %q is %s, want int64", name, b.Column(idx[0]).DataType())
		}
		cols[i] = c
	}
	var colStats, inline *array.Binary
	if idx := b.Schema().FieldIndices("col_stats"); len(idx) == 1 {
		colStats, _ = b.Column(idx[0]).(*array.Binary)
	}
	if idx := b.Schema().FieldIndices("inline"); len(idx) == 1 {
		inline, _ = b.Column(idx[0]).(*array.Binary)
	}
	meta := e.rpcMeta()
	for r := range int(b.NumRows()) {
		var st []*rpc.ColumnStats
		if colStats != nil && colStats.IsValid(r) {
			if cols, ok := physical.DecodeColumnStats(colStats.Value(r)); ok {
				st = codec.EncodeColumnStats(cols)
			}
		}
		var data []byte
		if inline != nil && inline.IsValid(r) {
			data = bytes.Clone(inline.Value(r)) // the batch's buffers go with it
		}
		locs = append(locs, &rpc.PartitionLocation{
			JobId:           w.JobID,
			StageId:         int32(w.StageID),
			OutputPartition: int32(cols[0].Value(r)),
			MapPartition:    int32(mapPartition),
			Executor:        meta,
			Rows:            cols[1].Value(r),
			Batches:         cols[2].Value(r),
			Bytes:           cols[3].Value(r),
			ColStats:        st,
			Inline:          data,
		})
	}
	return locs, nil
}

// pendingStatus is a status waiting to reach the scheduler.
type pendingStatus struct {
	st       *rpc.TaskStatus
	deadline time.Time // dropped (and logged) when still unsent after this
}

// report queues st for the status reporter.
func (e *Executor) report(st *rpc.TaskStatus) {
	e.statusMu.Lock()
	e.statuses = append(e.statuses, pendingStatus{st: st, deadline: time.Now().Add(e.cfg.StatusRetryWindow)})
	e.statusMu.Unlock()
	select {
	case e.statusWake <- struct{}{}:
	default:
	}
}

// statusCallTimeout bounds one UpdateTaskStatus call.
const statusCallTimeout = 10 * time.Second

// reportLoop sends queued statuses in batches with UpdateTaskStatus,
// retrying transient failures with backoff until each status's deadline.
// Owner: Executor; exits when ctx (its lifetime) ends.
func (e *Executor) reportLoop(ctx context.Context) {
	defer e.wg.Done()
	failures := 0
	for {
		select {
		case <-ctx.Done():
			return
		case <-e.statusWake:
		}
		for {
			e.statusMu.Lock()
			batch := e.statuses
			e.statuses = nil
			e.statusMu.Unlock()
			if len(batch) == 0 {
				break
			}
			req := &rpc.UpdateTaskStatusRequest{ExecutorId: e.cfg.ID, Statuses: make([]*rpc.TaskStatus, len(batch))}
			for i, p := range batch {
				req.Statuses[i] = p.st
			}
			e.statusMu.Lock()
			e.sending = len(batch)
			e.statusMu.Unlock()
			cctx, cancel := context.WithTimeout(ctx, statusCallTimeout)
			_, err := e.sched.UpdateTaskStatus(cctx, req)
			cancel()
			if err == nil {
				e.statusMu.Lock()
				e.sending = 0
				e.statusMu.Unlock()
				failures = 0
				continue
			}
			if ctx.Err() != nil {
				return
			}
			if !transient(err) {
				e.log.error("scheduler refused task statuses; dropping them", err, "statuses", len(batch))
				e.statusMu.Lock()
				e.sending = 0
				e.statusMu.Unlock()
				continue
			}
			now := time.Now()
			keep := batch[:0]
			for _, p := range batch {
				if now.Before(p.deadline) {
					keep = append(keep, p)
				} else {
					e.log.error("dropping task status: scheduler unreachable", err, "task", keyOf(p.st.Id).String(), "state", p.st.State.String())
				}
			}
			e.statusMu.Lock()
			e.statuses = append(keep, e.statuses...)
			e.sending = 0
			e.statusMu.Unlock()
			if failures%10 == 0 {
				e.log.warn("sending task statuses failed; retrying", err, "statuses", len(keep))
			}
			failures++
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff(failures, 2*time.Second)):
			}
		}
	}
}

// transient reports whether a failed call to the scheduler is worth retrying.
func transient(err error) bool {
	switch status.Code(err) {
	case codes.Unavailable, codes.DeadlineExceeded, codes.ResourceExhausted, codes.Aborted, codes.Unknown, codes.Canceled:
		return true
	}
	return false
}
