package quiver

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver/auth"
	"github.com/quiverdb/quiver/catalog"
	"github.com/quiverdb/quiver/exec/execop"
	"github.com/quiverdb/quiver/executor"
	"github.com/quiverdb/quiver/logical"
	lcodec "github.com/quiverdb/quiver/logical/codec"
	"github.com/quiverdb/quiver/physical"
	pcodec "github.com/quiverdb/quiver/physical/codec"
	"github.com/quiverdb/quiver/qerr"
	"github.com/quiverdb/quiver/rpc"
	"github.com/quiverdb/quiver/scheduler"
	"github.com/quiverdb/quiver/settings"
	"google.golang.org/grpc"
)

// remote is a session's connection to a scheduler: a cluster (Connect) or
// the standalone one the session started in its own process.
type remote struct {
	conn      *grpc.ClientConn
	client    rpc.SchedulerServiceClient
	sessionID string
	fetcher   *executor.FlightFetcher
	// standalone daemons this session started and must stop, last first.
	owned      []interface{ Close() error }
	standalone bool
}

// dialScheduler connects to addr and opens a session there.
func dialScheduler(ctx context.Context, addr string, mem memory.Allocator, st settings.Values, token auth.Token, tls auth.TLS) (*remote, error) {
	conn, err := grpc.NewClient(addr, append([]grpc.DialOption{tls.DialOption()}, token.DialOptions()...)...)
	if err != nil {
		return nil, qerr.IOf("connect to scheduler %s: %w", addr, err)
	}
	client := rpc.NewSchedulerServiceClient(conn)
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	resp, err := client.CreateSession(cctx, &rpc.CreateSessionRequest{ProtocolVersion: rpc.ProtocolVersion, Settings: st.Wire()}, grpc.WaitForReady(true))
	if err != nil {
		conn.Close()
		return nil, qerr.IOf("scheduler %s: create session: %w", addr, err)
	}
	return &remote{conn: conn, client: client, sessionID: resp.SessionId, fetcher: executor.NewFlightFetcher(mem).WithAuth(token).WithTLS(tls)}, nil
}

func (r *remote) close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := r.client.CloseSession(ctx, &rpc.CloseSessionRequest{SessionId: r.sessionID})
	r.fetcher.Close()
	r.conn.Close()
	for i := len(r.owned) - 1; i >= 0; i-- {
		r.owned[i].Close()
	}
	if err != nil {
		return qerr.IOf("close session: %w", err)
	}
	return nil
}

// Connect returns a session on the cluster whose scheduler listens at addr.
// Tables made in SQL (CREATE TABLE, CREATE TABLE AS) keep their rows on the
// cluster's executors; batches registered from this process
// (RegisterRecords, LoadIntoMemory) cannot be read there.
// The cluster runs the queries: no scheduler or executor starts in this
// process (WithStandaloneCluster and WithLocalExecution do not apply).
func Connect(ctx context.Context, addr string, opts ...Option) (*Session, error) {
	s, cfg, err := newSession(ctx, opts)
	if err != nil {
		return nil, err
	}
	r, err := dialScheduler(ctx, addr, s.mem, s.settings, cfg.token, cfg.tls)
	if err != nil {
		s.Close()
		return nil, err
	}
	s.remote = r
	s.id = r.sessionID // cache keys are (scheduler session, cache id)
	return s, nil
}

// startStandalone starts a scheduler and n executors in this process on
// loopback ports, with work dirs under a temporary directory, and connects.
func (s *Session) startStandalone(ctx context.Context, n int, workDir string) error {
	// The daemons of a standalone cluster are part of this program: they
	// stay quiet; errors reach the user through the queries they fail.
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	sch, err := scheduler.New(scheduler.Config{BindAddr: "127.0.0.1:0", Logger: quiet})
	if err != nil {
		return err
	}
	if err := sch.Start(ctx); err != nil {
		return err
	}
	owned := []interface{ Close() error }{sch}
	fail := func(err error) error {
		for i := len(owned) - 1; i >= 0; i-- {
			owned[i].Close()
		}
		return err
	}
	for i := 0; i < n; i++ {
		ex, err := executor.New(executor.Config{
			SchedulerAddr: sch.Addr(),
			BindAddr:      "127.0.0.1:0",
			WorkDir:       workDir + "/executor-" + strconv.Itoa(i),
			MemoryTables:  s.memoryTable,
			Allocator:     s.mem,
			Logger:        quiet,
		})
		if err != nil {
			return fail(err)
		}
		if err := ex.Start(ctx); err != nil {
			return fail(err)
		}
		owned = append(owned, ex)
	}
	r, err := dialScheduler(ctx, sch.Addr(), s.mem, s.settings, auth.Token{}, auth.TLS{})
	if err != nil {
		return fail(err)
	}
	r.owned = owned
	r.standalone = true
	s.remote = r
	s.id = r.sessionID // cache keys are (scheduler session, cache id)
	return nil
}

// startRemote submits df's optimized plan as a job, waits for it and
// returns an operator over its result partitions in order. Its calls to
// the scheduler carry one fresh request id, which a failure carries too
// (RequestIDOf).
func (df *DataFrame) startRemote(ctx context.Context, st settings.Values, info *QueryInfo, analyze bool) (*execution, error) {
	rid := rpc.NewRequestID()
	x, err := df.submitRemote(rpc.WithRequestID(ctx, rid), st, info, analyze)
	return x, withRequestID(err, rid)
}

func (df *DataFrame) submitRemote(ctx context.Context, st settings.Values, info *QueryInfo, analyze bool) (*execution, error) {
	s := df.s
	lp, err := s.optimize(ctx, df.plan, nil)
	if err != nil {
		return nil, err
	}
	if lp, err = s.readTablesOnExecutors(lp); err != nil {
		return nil, err
	}
	if err := s.checkShippable(lp); err != nil {
		return nil, err
	}
	if lp, err = s.stampVersions(lp); err != nil {
		return nil, err
	}
	b, err := lcodec.Encode(lp)
	if err != nil {
		return nil, err
	}
	r := s.remote
	req := &rpc.ExecuteQueryRequest{SessionId: r.sessionID, LogicalPlan: b, Settings: st.Wire(), Sql: df.sqlText, Analyze: analyze}
	resp, err := r.submit(ctx, req)
	if err != nil && unknownSession(err) {
		// The scheduler closed the session (idle): re-open it and retry once.
		dropped, rerr := s.reopen(ctx)
		if rerr != nil {
			return nil, qerr.IOf("submit query: %w; re-opening the session: %w", err, rerr)
		}
		if info != nil {
			info.Caches = append(info.Caches, dropped...)
		}
		resp, err = r.submit(ctx, req)
	}
	if err != nil {
		if unreachable(err) && ctx.Err() == nil {
			return nil, qerr.Unavailablef("submit query: the scheduler is unreachable: %w", err)
		}
		return nil, qerr.IOf("submit query: %w", err)
	}
	var progress func(JobProgress)
	if info != nil {
		progress = info.OnProgress
	}
	status, err := r.wait(ctx, resp.JobId, progress)
	if err != nil {
		return nil, err
	}
	s.noteBuilt(status.GetCaches())
	locs := make([][]physical.PartitionLocation, len(status.Result))
	for i, p := range status.Result {
		for _, l := range p.Locations {
			// The scheduler's answer is checked like any location off the
			// wire before this process dials the executor it names.
			loc, err := pcodec.DecodeLocation(l)
			if err != nil {
				return nil, qerr.Internalf("job %s: result partition %d: %w", resp.JobId, i, err)
			}
			locs[i] = append(locs[i], loc)
		}
	}
	schema := df.plan.Schema().Arrow()
	op := &resultReader{jobID: resp.JobId, fetcher: r.fetcher, locs: locs, schema: schema}
	return &execution{op: op, jobID: resp.JobId, status: status}, nil
}

// checkShippable refuses plans a cluster cannot run: in-process memory
// tables live in this process, which only a standalone cluster's executors
// share (tables whose rows are on the executors ship as their segments).
func (s *Session) checkShippable(p logical.Plan) error {
	if s.remote.standalone {
		return nil
	}
	var err error
	logical.Inspect(p, func(n logical.Plan) bool {
		if sc, ok := n.(*logical.Scan); ok && sc.Table.Format == catalog.Memory && !sc.Table.OnExecutors && err == nil {
			err = qerr.NotImplementedf("table %q is in this process's memory; a cluster's executors cannot read it (register it from files)", sc.Table.Name)
		}
		return err == nil
	})
	return err
}

// wait follows the job until it ends; canceling ctx cancels the job.
func (r *remote) wait(ctx context.Context, jobID string, progress func(JobProgress)) (*rpc.JobStatus, error) {
	stream, err := r.client.WatchJob(ctx, &rpc.WatchJobRequest{JobId: jobID})
	if err != nil {
		return nil, qerr.IOf("watch job %s: %w", jobID, err)
	}
	for {
		st, err := stream.Recv()
		if err != nil {
			if ctx.Err() != nil {
				// The cancel outlives ctx but keeps its metadata (the
				// query's request id).
				cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
				r.client.CancelJob(cctx, &rpc.CancelJobRequest{JobId: jobID})
				cancel()
				return nil, ctx.Err()
			}
			// The scheduler went away (or restarted, forgetting the job)
			// before the job delivered anything: running the statement
			// again is safe.
			return nil, qerr.Unavailablef("job %s: lost the scheduler (the statement can be run again): %w", jobID, err)
		}
		// The final counts are reported too, so that a job that ends before
		// its first running update (a fast one) still reports its size.
		if progress != nil && (st.State == rpc.JobState_JOB_RUNNING || st.State == rpc.JobState_JOB_SUCCESSFUL) {
			progress(JobProgress{StagesDone: int(st.StagesDone), StagesTotal: int(st.StagesTotal), TasksDone: int(st.TasksDone), TasksTotal: int(st.TasksTotal)})
		}
		switch st.State {
		case rpc.JobState_JOB_SUCCESSFUL:
			return st, nil
		case rpc.JobState_JOB_FAILED:
			// A job the scheduler failed itself carries its error's whole
			// text, kind prefix included: the error reads with one prefix.
			kind := qerr.Kind(st.ErrorKind)
			return nil, &qerr.Error{Kind: kind, Msg: strings.TrimPrefix(st.Error, kind.String()+": ")}
		case rpc.JobState_JOB_CANCELLED:
			return nil, &qerr.Error{Kind: qerr.Canceled, Msg: "job " + jobID + " was cancelled"}
		}
	}
}

// resultReader streams a job's result files, partition by partition.
type resultReader struct {
	jobID   string
	fetcher *executor.FlightFetcher
	locs    [][]physical.PartitionLocation
	schema  *arrow.Schema
	part    int
	idx     int
	cur     execop.Operator
}

// lost reports a failed read of a result file: the executor holding it
// may have gone since the job ended, so the statement may simply be run
// again (a retryable error), unless ctx ended.
func (r *resultReader) lost(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return err
	}
	return qerr.Unavailablef("reading the result of job %s (the executor holding it may be gone; the statement can be run again): %w", r.jobID, err)
}

func (r *resultReader) Open(ctx context.Context) error { return nil }

func (r *resultReader) Next(ctx context.Context) (arrow.RecordBatch, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if r.cur == nil {
			for r.part < len(r.locs) && r.idx >= len(r.locs[r.part]) {
				r.part, r.idx = r.part+1, 0
			}
			if r.part >= len(r.locs) {
				return nil, io.EOF
			}
			op, err := r.fetcher.Fetch(ctx, r.locs[r.part][r.idx])
			if err != nil {
				return nil, r.lost(ctx, err)
			}
			r.idx++
			if err := op.Open(ctx); err != nil {
				op.Close()
				return nil, r.lost(ctx, err)
			}
			r.cur = op
		}
		b, err := r.cur.Next(ctx)
		if errors.Is(err, io.EOF) {
			r.cur.Close()
			r.cur = nil
			continue
		}
		if err != nil {
			return nil, r.lost(ctx, err)
		}
		if b.NumRows() == 0 {
			b.Release()
			continue
		}
		// Result columns take the query's output names.
		out := arrowRename(b, r.schema)
		return out, nil
	}
}

func (r *resultReader) Close() error {
	if r.cur != nil {
		r.cur.Close()
		r.cur = nil
	}
	r.part = len(r.locs)
	return nil
}

// arrowRename returns b with schema's field names (the same columns); it
// takes over b's reference.
func arrowRename(b arrow.RecordBatch, schema *arrow.Schema) arrow.RecordBatch {
	if b.Schema().Equal(schema) || int(b.NumCols()) != schema.NumFields() {
		return b
	}
	out := array.NewRecordBatch(schema, b.Columns(), b.NumRows())
	b.Release()
	return out
}

// Reconnecting. A scheduler restarting (kill -9 included) is unreachable
// for a moment; a query submitted meanwhile waits for it with backoff
// rather than failing at once, up to submitPatience. The session keeps its
// id: a scheduler with a state directory knows it again, and one without
// is told it again (reopen).
const (
	submitPatience   = 15 * time.Second
	submitBackoffMin = 50 * time.Millisecond
	submitBackoffMax = time.Second
)

// unreachable reports whether err is gRPC's answer for a server it cannot
// reach (refused, reset, not yet listening).
func unreachable(err error) bool {
	return status.Code(err) == codes.Unavailable
}

// submit calls ExecuteQuery, retrying with backoff while the scheduler is
// unreachable (at most submitPatience, never past ctx). gRPC answers
// Unavailable when a call found no connection to send on, so the query was
// not submitted; when a connection broke mid-call, the scheduler that may
// have taken it is gone with its jobs.
func (r *remote) submit(ctx context.Context, req *rpc.ExecuteQueryRequest) (*rpc.ExecuteQueryResponse, error) {
	deadline := time.Now().Add(submitPatience)
	wait := submitBackoffMin
	for {
		resp, err := r.client.ExecuteQuery(ctx, req)
		if err == nil || !unreachable(err) || time.Now().Add(wait).After(deadline) {
			return resp, err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, err
		case <-t.C:
		}
		wait = min(2*wait, submitBackoffMax)
	}
}
