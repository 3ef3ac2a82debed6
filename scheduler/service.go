package scheduler

import (
	"context"
	"errors"

	"github.com/quiverdb/quiver/auth"
	"github.com/quiverdb/quiver/cache"
	"github.com/quiverdb/quiver/settings"

	"github.com/google/uuid"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
	"github.com/quiverdb/quiver/rpc"
)

// service implements rpc.SchedulerServiceServer on top of the event loop:
// every handler validates its request, sends the loop an event and waits for
// the reply with the request's context.
type service struct {
	rpc.UnimplementedSchedulerServiceServer
	s *Scheduler
}

// maxVCores bounds the vcores an executor may register with.
const maxVCores = 4096

// grpcErr maps an error to a gRPC status (context errors keep their codes).
func grpcErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, context.Canceled):
		return status.Error(codes.Canceled, err.Error())
	case errors.Is(err, context.DeadlineExceeded):
		return status.Error(codes.DeadlineExceeded, err.Error())
	}
	switch qerr.KindOf(err) {
	case qerr.Plan:
		return status.Error(codes.InvalidArgument, err.Error())
	case qerr.NotImplemented:
		return status.Error(codes.Unimplemented, err.Error())
	}
	return status.Error(codes.Internal, err.Error())
}

func checkProtocol(what string, v uint32) error {
	if v != rpc.ProtocolVersion {
		return status.Errorf(codes.FailedPrecondition,
			"scheduler: %s speaks protocol version %d, this scheduler speaks version %d: upgrade the older side", what, v, rpc.ProtocolVersion)
	}
	return nil
}

func (h *service) CreateSession(ctx context.Context, req *rpc.CreateSessionRequest) (*rpc.CreateSessionResponse, error) {
	if err := checkProtocol("client", req.GetProtocolVersion()); err != nil {
		return nil, err
	}
	id := uuid.NewString()
	if r := req.GetResumeSessionId(); r != "" {
		u, err := uuid.Parse(r)
		if err != nil || u.String() != r {
			return nil, status.Errorf(codes.InvalidArgument, "scheduler: create session: resume session id %q is not a session id", r)
		}
		id = r
	}
	vals, err := settings.Decode("scheduler", req.GetSettings())
	if err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	caller := auth.IdentityFrom(ctx)
	if req.GetResumeSessionId() != "" {
		var tenant string
		var live bool
		if err := h.s.inspect(ctx, func(c *core) { tenant, live = c.sessionTenant(id) }); err != nil {
			return nil, grpcErr(err)
		}
		if live && tenant != caller.Tenant {
			return nil, status.Errorf(codes.PermissionDenied, "scheduler: create session: session %q belongs to another tenant", id)
		}
	}
	reply := make(chan struct{}, 1)
	if _, err := ask(ctx, h.s, evCreateSession{id: id, tenant: caller.Tenant, settings: vals, reply: reply}, reply); err != nil {
		return nil, grpcErr(err)
	}
	return &rpc.CreateSessionResponse{SessionId: id}, nil
}

func (h *service) CloseSession(ctx context.Context, req *rpc.CloseSessionRequest) (*rpc.CloseSessionResponse, error) {
	if err := h.s.visibleSession(ctx, "close session", req.GetSessionId()); err != nil {
		return nil, err
	}
	reply := make(chan struct{}, 1)
	if _, err := ask(ctx, h.s, evCloseSession{id: req.GetSessionId(), reply: reply}, reply); err != nil {
		return nil, grpcErr(err)
	}
	return &rpc.CloseSessionResponse{}, nil
}

func (h *service) ExecuteQuery(ctx context.Context, req *rpc.ExecuteQueryRequest) (*rpc.ExecuteQueryResponse, error) {
	// Who asks before what is asked: a caller without a session gets
	// nothing decoded (decoding is the costly and exposed part). The check
	// reads the loop's state without touching it; the submit below checks
	// again, as the session may close meanwhile.
	known := false
	caller := auth.IdentityFrom(ctx)
	if err := h.s.inspect(ctx, func(c *core) {
		tenant, live := c.sessionTenant(req.GetSessionId())
		known = live && caller.CanSee(tenant)
	}); err != nil {
		return nil, grpcErr(err)
	}
	if !known {
		return nil, status.Errorf(codes.NotFound, "scheduler: unknown session %q: create one with CreateSession first", req.GetSessionId())
	}
	plan, err := decodeLogical(req.GetLogicalPlan())
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "scheduler: execute query: decode logical plan: %v", err)
	}
	id := uuid.NewString()
	reply := make(chan error, 1)
	ev := evSubmit{jobID: id, session: req.GetSessionId(), name: req.GetJobName(), sql: req.GetSql(), requestID: rpc.RequestID(ctx), settings: req.GetSettings(), plan: plan, reply: reply}
	rerr, err := ask(ctx, h.s, ev, reply)
	if err != nil {
		return nil, grpcErr(err)
	}
	if rerr != nil {
		if errors.Is(rerr, errShuttingDown) {
			return nil, rerr
		}
		if qerr.KindOf(rerr) == qerr.Plan {
			return nil, status.Error(codes.NotFound, rerr.Error())
		}
		return nil, grpcErr(rerr)
	}
	return &rpc.ExecuteQueryResponse{JobId: id}, nil
}

// WatchJob streams the job's status on every change until a terminal one.
// Statuses are coalesced: a slow watcher sees the latest, never a stale
// one, and always the terminal status.
func (h *service) WatchJob(req *rpc.WatchJobRequest, stream rpc.SchedulerService_WatchJobServer) error {
	ctx := stream.Context()
	if err := h.s.visibleJob(ctx, "watch job", req.GetJobId()); err != nil {
		return err
	}
	reply := make(chan watchReply, 1)
	r, err := ask(ctx, h.s, evWatch{jobID: req.GetJobId(), reply: reply}, reply)
	if err != nil {
		return grpcErr(err)
	}
	if r.err != nil {
		return status.Error(codes.NotFound, r.err.Error())
	}
	for {
		select {
		case st, ok := <-r.ch:
			if !ok {
				return nil
			}
			if r.caches != nil {
				if evs := r.caches.Load(); evs != nil && len(*evs) > 0 {
					// The status may be shared with other watchers: send a
					// copy carrying the job's cache events.
					st = proto.Clone(st).(*rpc.JobStatus)
					st.Caches = *evs
				}
			}
			if err := stream.Send(st); err != nil {
				h.s.post(context.WithoutCancel(ctx), evUnwatch{jobID: req.GetJobId(), ch: r.ch})
				return err
			}
		case <-ctx.Done():
			// The watcher went away: drop it. The loop may be gone too,
			// which post notices.
			h.s.post(context.WithoutCancel(ctx), evUnwatch{jobID: req.GetJobId(), ch: r.ch})
			return grpcErr(ctx.Err())
		case <-h.s.loopDone:
			return status.Error(codes.Unavailable, "scheduler: shutting down")
		}
	}
}

func (h *service) CancelJob(ctx context.Context, req *rpc.CancelJobRequest) (*rpc.CancelJobResponse, error) {
	if err := h.s.visibleJob(ctx, "cancel job", req.GetJobId()); err != nil {
		return nil, err
	}
	reply := make(chan cancelReply, 1)
	r, err := ask(ctx, h.s, evCancel{jobID: req.GetJobId(), reply: reply}, reply)
	if err != nil {
		return nil, grpcErr(err)
	}
	if !r.found {
		return nil, status.Errorf(codes.NotFound, "scheduler: cancel job: unknown job %q", req.GetJobId())
	}
	return &rpc.CancelJobResponse{Cancelled: r.cancelled}, nil
}

func (h *service) RegisterExecutor(ctx context.Context, req *rpc.RegisterExecutorRequest) (*rpc.RegisterExecutorResponse, error) {
	if err := checkProtocol("executor", req.GetProtocolVersion()); err != nil {
		return nil, err
	}
	m := req.GetExecutor()
	if m.GetId() == "" || m.GetHost() == "" || m.GetGrpcPort() <= 0 || m.GetGrpcPort() > 65535 {
		return nil, status.Errorf(codes.InvalidArgument, "scheduler: register executor: need an id, a host and a gRPC port, got id=%q host=%q port=%d", m.GetId(), m.GetHost(), m.GetGrpcPort())
	}
	if m.GetVcores() > maxVCores || m.GetFlightPort() > 65535 {
		// vcores set how many tasks go to the executor and, summed, how
		// many partitions a query gets.
		return nil, status.Errorf(codes.InvalidArgument, "scheduler: register executor: %d vcores and Flight port %d; want at most %d vcores and a port up to 65535", m.GetVcores(), m.GetFlightPort(), maxVCores)
	}
	flightPort := m.GetFlightPort()
	if flightPort <= 0 {
		flightPort = m.GetGrpcPort()
	}
	reply := make(chan struct{}, 1)
	ev := evRegister{
		meta:     physical.ExecutorMeta{ID: m.GetId(), Host: m.GetHost(), FlightPort: int(flightPort)},
		grpcPort: int(m.GetGrpcPort()), vcores: int(m.GetVcores()), reply: reply,
	}
	if req.GetReportsJobs() {
		ev.held = make(map[string]bool, len(req.GetJobs()))
		for _, j := range req.GetJobs() {
			ev.held[j] = true
		}
	}
	if _, err := ask(ctx, h.s, ev, reply); err != nil {
		return nil, grpcErr(err)
	}
	var live []string
	if err := h.s.inspect(ctx, func(c *core) { live = c.liveJobIDs() }); err != nil {
		return nil, grpcErr(err)
	}
	return &rpc.RegisterExecutorResponse{LiveJobs: live, TicketKey: h.s.cfg.TicketKey.Bytes()}, nil
}

func (h *service) Heartbeat(ctx context.Context, req *rpc.HeartbeatRequest) (*rpc.HeartbeatResponse, error) {
	reply := make(chan bool, 1)
	unknown, err := ask(ctx, h.s, evHeartbeat{executorID: req.GetExecutorId(), memReserved: req.GetMemoryReserved(), memLimit: req.GetMemoryLimit(), reply: reply}, reply)
	if err != nil {
		return nil, grpcErr(err)
	}
	return &rpc.HeartbeatResponse{Reregister: unknown}, nil
}

func (h *service) UpdateTaskStatus(ctx context.Context, req *rpc.UpdateTaskStatusRequest) (*rpc.UpdateTaskStatusResponse, error) {
	if !h.s.post(ctx, evTaskStatus{executorID: req.GetExecutorId(), statuses: req.GetStatuses()}) {
		return nil, grpcErr(stopped(ctx))
	}
	return &rpc.UpdateTaskStatusResponse{}, nil
}

// ListCaches lists the session's cache entries.
func (h *service) ListCaches(ctx context.Context, req *rpc.ListCachesRequest) (*rpc.ListCachesResponse, error) {
	if req.GetSessionId() == "" {
		return nil, status.Error(codes.InvalidArgument, "scheduler: list caches: need a session id")
	}
	if err := h.s.visibleSession(ctx, "list caches", req.GetSessionId()); err != nil {
		return nil, err
	}
	reply := make(chan cacheList, 1)
	l, err := ask(ctx, h.s, evListCaches{session: req.GetSessionId(), reply: reply}, reply)
	if err != nil {
		return nil, grpcErr(err)
	}
	checkFiles(l) // stats: here, never on the loop
	return &rpc.ListCachesResponse{Caches: l.infos, Stats: wireStats(h.s.core.caches.Stats()), Removed: l.removed}, nil
}

// wireStats converts the registry's counters (the registry is safe for
// concurrent use, so this runs outside the event loop).
func wireStats(st cache.Stats) *rpc.CacheStats {
	out := &rpc.CacheStats{Hits: st.Hits, Misses: st.Misses, Materializations: st.Materializations,
		Aborts: st.Aborts, BytesRead: st.BytesRead, Invalidations: map[string]int64{}, Partials: st.Partials, Repairs: st.Repairs}
	for c := range cache.Cause(cache.NumCauses) {
		out.Invalidations[c.String()] = st.Invalidations[c]
	}
	return out
}

// Uncache drops one cache entry of the session and deletes its files;
// removed is false when there was no such entry.
func (h *service) Uncache(ctx context.Context, req *rpc.UncacheRequest) (*rpc.UncacheResponse, error) {
	if req.GetSessionId() == "" || req.GetCacheId() == "" {
		return nil, status.Error(codes.InvalidArgument, "scheduler: uncache: need a session id and a cache id")
	}
	if err := h.s.visibleSession(ctx, "uncache", req.GetSessionId()); err != nil {
		return nil, err
	}
	reply := make(chan bool, 1)
	removed, err := ask(ctx, h.s, evUncache{session: req.GetSessionId(), cacheID: req.GetCacheId(), rebuild: req.GetRebuild(), reply: reply}, reply)
	if err != nil {
		return nil, grpcErr(err)
	}
	return &rpc.UncacheResponse{Removed: removed}, nil
}

// ClearCaches drops every cache entry of the session and deletes their files.
func (h *service) ClearCaches(ctx context.Context, req *rpc.ClearCachesRequest) (*rpc.ClearCachesResponse, error) {
	if req.GetSessionId() == "" {
		return nil, status.Error(codes.InvalidArgument, "scheduler: clear caches: need a session id")
	}
	if err := h.s.visibleSession(ctx, "clear caches", req.GetSessionId()); err != nil {
		return nil, err
	}
	reply := make(chan int, 1)
	n, err := ask(ctx, h.s, evClearCaches{session: req.GetSessionId(), reply: reply}, reply)
	if err != nil {
		return nil, grpcErr(err)
	}
	return &rpc.ClearCachesResponse{Removed: int32(n)}, nil
}
