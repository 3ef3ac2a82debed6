package executor

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/quiverdb/quiver/auth"
	"github.com/quiverdb/quiver/exec/execop"
	"github.com/quiverdb/quiver/exec/filemap"
	"github.com/quiverdb/quiver/exec/spill"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
	"github.com/quiverdb/quiver/rpc"
	"google.golang.org/grpc"
	gbackoff "google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Executor is one executor process: a gRPC server (ExecutorService and
// Arrow Flight on one port), VCores task workers, a status reporter and a
// heartbeat loop.
//
// Call order: New, Start once, then Close (also valid without Start, and
// after a failed Start). Addr and Meta are valid after Start. Safe for
// concurrent use.
//
// Goroutines: Start launches the gRPC server, the workers, the status
// reporter and the heartbeat loop; all are owned by the Executor, exit when
// Close cancels the lifetime context (or stops the server), and Close
// waits for them.
type Executor struct {
	rpc.UnimplementedExecutorServiceServer

	cfg     Config
	log     loggerT
	fetcher *FlightFetcher
	// maps keeps the local cache files every task reads mapped between
	// tasks; stage directories are forgotten as they are removed, and
	// everything at Close.
	maps *filemap.FileMaps
	// pool counts the memory of every running task against
	// Config.MemoryLimit.
	pool *execop.AccountingAllocator
	// lastFetch is when the Flight service last began or ended a fetch.
	lastFetch atomic.Int64
	// ticketKey is the scheduler's Flight ticket key, from the last
	// registration (nil before the first: every DoGet is refused).
	ticketKey atomic.Pointer[auth.TicketKey]

	// Set by Start before any goroutine that reads them starts.
	meta     physical.ExecutorMeta
	grpcPort int
	sched    rpc.SchedulerServiceClient

	wg sync.WaitGroup // every goroutine Start launched; Add only under mu while not closed

	mu        sync.Mutex
	srv       *grpc.Server
	schedConn *grpc.ClientConn
	stop      context.CancelFunc // cancels the lifetime context
	state     lifecycle
	queue     []*task                 // launched, not yet running (FIFO)
	running   map[taskKey]*task       // running tasks by key
	pinned    map[string]map[int]bool // job → stages whose writers were Pinned here
	wake      chan struct{}           // a task was queued (capacity VCores)

	statusMu   sync.Mutex
	statuses   []pendingStatus // waiting to be sent
	sending    int             // statuses taken by reportLoop and not yet sent or re-queued
	statusWake chan struct{}   // capacity 1: statuses were added

	// m are the executor's metrics (metrics.go), served on MetricsAddr by
	// metricsSrv; draining (guarded by mu) refuses new tasks (Drain).
	m          *metrics
	metricsSrv *http.Server
	metricsLis net.Listener
	draining   bool
}

type lifecycle int

const (
	created lifecycle = iota
	started
	closed
)

// New validates cfg and creates the work dir; nothing listens until Start.
func New(cfg Config) (*Executor, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(cfg.WorkDir)
	if err != nil {
		return nil, qerr.IOf("executor: work dir %s: %w", cfg.WorkDir, err)
	}
	cfg.WorkDir = abs
	if err := os.MkdirAll(cfg.WorkDir, 0o755); err != nil {
		return nil, qerr.IOf("executor: creating work dir %s: %w", cfg.WorkDir, err)
	}
	// Spill files belong to the tasks of a running process: any found now
	// are a killed run's.
	if err := os.RemoveAll(filepath.Join(cfg.WorkDir, spill.DirName)); err != nil {
		return nil, qerr.IOf("executor: removing old spill files in %s: %w", cfg.WorkDir, err)
	}
	e := &Executor{
		cfg:        cfg,
		log:        loggerT{cfg.Logger.With("executor", cfg.ID)},
		fetcher:    NewFlightFetcher(cfg.Allocator),
		pool:       execop.NewPool(max(cfg.MemoryLimit, 0)),
		maps:       filemap.NewFileMaps(),
		running:    map[taskKey]*task{},
		pinned:     map[string]map[int]bool{},
		wake:       make(chan struct{}, cfg.VCores),
		statusWake: make(chan struct{}, 1),
	}
	e.m = newMetrics(e)
	e.fetcher.observe = e.m.observeFetch
	e.fetcher.WithAuth(cfg.AuthToken).WithTLS(cfg.TLS)
	return e, nil
}

// Start listens on BindAddr, serves ExecutorService and Flight, starts the
// workers, then registers with the scheduler, retrying with backoff until
// that succeeds or ctx ends (then it stops everything and returns the
// error), and starts heartbeats. It returns once serving and registered.
// ctx bounds only Start itself, not the executor's life.
func (e *Executor) Start(ctx context.Context) error {
	e.mu.Lock()
	if e.state != created {
		e.mu.Unlock()
		return qerr.Internalf("executor: Start called twice or after Close")
	}
	e.state = started
	e.mu.Unlock()

	lis, err := net.Listen("tcp", e.cfg.BindAddr)
	if err != nil {
		return qerr.IOf("executor: listening on %s: %w", e.cfg.BindAddr, err)
	}
	bindHost, _, _ := net.SplitHostPort(e.cfg.BindAddr)
	_, portStr, _ := net.SplitHostPort(lis.Addr().String())
	e.grpcPort, _ = strconv.Atoi(portStr)
	host := e.cfg.AdvertiseHost
	if host == "" {
		host = bindHost
		if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
			host = "127.0.0.1"
		}
	}
	e.meta = physical.ExecutorMeta{ID: e.cfg.ID, Host: host, FlightPort: e.grpcPort}

	dial := append([]grpc.DialOption{e.cfg.TLS.DialOption(), grpc.WithConnectParams(connectParams)}, e.cfg.AuthToken.DialOptions()...)
	conn, err := grpc.NewClient(e.cfg.SchedulerAddr, dial...)
	if err != nil {
		lis.Close()
		return qerr.Planf("executor: scheduler address %s: %w", e.cfg.SchedulerAddr, err)
	}
	// Only the scheduler (the cluster's token) launches, cancels and removes;
	// Flight takes any token of the cluster, its tickets say what may be read.
	sopts := append([]grpc.ServerOption{grpc.MaxRecvMsgSize(MaxMessageBytes)}, e.cfg.AuthToken.ServerOptions("/quiver.rpc.ExecutorService/")...)
	srv := grpc.NewServer(append(sopts, e.cfg.TLS.ServerOptions()...)...)
	rpc.RegisterExecutorServiceServer(srv, e)
	flight.RegisterFlightServiceServer(srv, &flightServer{workDir: e.cfg.WorkDir, key: e.flightTicketKey, m: e.m, lastFetch: &e.lastFetch})
	lctx, stop := context.WithCancel(context.Background())

	// Publish and launch under e.mu, so that a concurrent Close either sees
	// nothing started or everything it must stop, and never races wg.Add.
	e.mu.Lock()
	if e.state == closed {
		e.mu.Unlock()
		stop()
		lis.Close()
		conn.Close()
		return qerr.Execf("executor: closed while starting")
	}
	if err := e.startMetrics(); err != nil {
		e.mu.Unlock()
		stop()
		lis.Close()
		conn.Close()
		return err
	}
	e.srv, e.schedConn, e.stop = srv, conn, stop
	e.sched = rpc.NewSchedulerServiceClient(conn)
	e.wg.Add(1)
	go func() { // owner: Executor; exits when Close stops the server
		defer e.wg.Done()
		if err := srv.Serve(lis); err != nil && !errors.Is(err, grpc.ErrServerStopped) {
			e.log.error("grpc server stopped", err)
		}
	}()
	for range e.cfg.VCores {
		e.wg.Add(1)
		go e.worker(lctx)
	}
	e.wg.Add(1)
	go e.reportLoop(lctx)
	e.mu.Unlock()

	if err := e.register(ctx, lctx); err != nil {
		e.Close()
		return err
	}
	e.mu.Lock()
	if e.state == closed {
		e.mu.Unlock()
		return qerr.Execf("executor: closed while starting")
	}
	e.wg.Add(1)
	go e.heartbeatLoop(lctx)
	e.mu.Unlock()
	e.log.info("executor started", "addr", e.Addr(), "work_dir", e.cfg.WorkDir, "vcores", e.cfg.VCores)
	return nil
}

// Addr is the host:port the executor serves gRPC and Flight on (the bound
// address, with the advertised host).
func (e *Executor) Addr() string {
	return net.JoinHostPort(e.meta.Host, strconv.Itoa(e.grpcPort))
}

// Meta identifies this executor in shuffle locations.
func (e *Executor) Meta() physical.ExecutorMeta { return e.meta }

// ID is the executor's id.
func (e *Executor) ID() string { return e.cfg.ID }

// WorkDir is the absolute work directory.
func (e *Executor) WorkDir() string { return e.cfg.WorkDir }

// Fetcher is the executor's Flight fetcher (shared by its tasks).
func (e *Executor) Fetcher() *FlightFetcher { return e.fetcher }

// Maps returns the registry of the cache files kept mapped between the
// tasks that read them (execop.TaskContext.Maps of every task).
func (e *Executor) Maps() *filemap.FileMaps { return e.maps }

func (e *Executor) rpcMeta() *rpc.ExecutorMeta {
	return &rpc.ExecutorMeta{
		Id:         e.meta.ID,
		Host:       e.meta.Host,
		GrpcPort:   int32(e.grpcPort),
		FlightPort: int32(e.meta.FlightPort),
		Vcores:     int32(e.cfg.VCores),
	}
}

// Close stops serving, cancels queued and running tasks (without reporting
// them: the scheduler sees the executor go), waits for every goroutine and
// closes connections. It does not wait on the scheduler. Idempotent.
func (e *Executor) Close() error {
	e.mu.Lock()
	if e.state == closed {
		e.mu.Unlock()
		return nil
	}
	e.state = closed
	e.queue = nil
	stop, srv, conn, msrv := e.stop, e.srv, e.schedConn, e.metricsSrv
	e.mu.Unlock()
	e.stopMetrics(msrv)

	if stop != nil {
		stop()
	}
	if srv != nil {
		// Stop (not GracefulStop): open Flight streams and RPCs end now.
		srv.Stop()
	}
	e.wg.Wait()
	e.maps.Close() // no task runs any more; batches still held keep their pages
	var errs []error
	if conn != nil {
		errs = append(errs, conn.Close())
	}
	errs = append(errs, e.fetcher.Close())
	return errors.Join(errs...)
}

// LaunchTasks queues tasks; they run in order as workers free up, and each
// reports its outcome with UpdateTaskStatus. A task already queued or
// running (same job, stage, partition and attempt) is ignored.
//
// The request is checked whole before anything is queued: task ids,
// settings and plans (decoded here, not by the worker, so that hostile bytes
// are refused with InvalidArgument and never reach a task). One invalid task
// refuses the whole request and changes nothing.
func (e *Executor) LaunchTasks(ctx context.Context, req *rpc.LaunchTasksRequest) (*rpc.LaunchTasksResponse, error) {
	e.mu.Lock()
	st, draining := e.state, e.draining
	e.mu.Unlock()
	if draining {
		return nil, errDraining
	}
	if st != started {
		return nil, status.Error(codes.Unavailable, "executor: shutting down")
	}
	tasks := make([]*task, 0, len(req.GetTasks()))
	for _, def := range req.GetTasks() {
		t, err := checkTask(def)
		if err != nil {
			return nil, status.Error(codes.InvalidArgument, err.Error())
		}
		tasks = append(tasks, t)
	}
	e.mu.Lock()
	if e.draining {
		e.mu.Unlock()
		return nil, errDraining
	}
	if e.state != started {
		e.mu.Unlock()
		return nil, status.Error(codes.Unavailable, "executor: shutting down")
	}
	n := 0
	for _, t := range tasks {
		if e.known(t.key) {
			continue
		}
		e.queue = append(e.queue, t)
		n++
	}
	e.mu.Unlock()
	for range n {
		select {
		case e.wake <- struct{}{}:
		default: // every worker already has a wake-up pending
		}
	}
	return &rpc.LaunchTasksResponse{}, nil
}

// checkTask validates one task definition and decodes its plan and
// settings; the error is in the caller's terms.
func checkTask(def *rpc.TaskDefinition) (*task, error) {
	id := def.GetId()
	if id == nil {
		return nil, qerr.Internalf("executor: task without an id")
	}
	if !physical.ValidJobID(id.JobId) || id.StageId < 0 || id.Partition < 0 || id.Attempt < 0 {
		return nil, qerr.Internalf("executor: invalid task id %v", id)
	}
	t := &task{key: keyOf(id), def: def}
	var err error
	if t.settings, err = parseTaskSettings(def.GetSettings()); err != nil {
		return nil, fmt.Errorf("executor: task %s: %w", t.key, err)
	}
	if t.stage, err = decodeStage(def.GetPlan()); err != nil {
		return nil, fmt.Errorf("executor: task %s: %w", t.key, err)
	}
	if t.stage.JobID != t.key.job || t.stage.StageID != int(t.key.stage) {
		return nil, qerr.Internalf("executor: task %s carries the plan of job %s stage %d", t.key, t.stage.JobID, t.stage.StageID)
	}
	if def.GetAllPartitions() && t.key.partition != 0 {
		return nil, qerr.Internalf("executor: whole-stage task %s must have partition 0", t.key)
	}
	return t, nil
}

// known reports whether a task with key is queued or running. e.mu is held.
func (e *Executor) known(k taskKey) bool {
	if _, ok := e.running[k]; ok {
		return true
	}
	for _, q := range e.queue {
		if q.key == k {
			return true
		}
	}
	return false
}

// CancelTasks cancels the named tasks: a queued task is dropped, a running
// one has its context cancelled; each reports TASK_CANCELLED. Unknown tasks
// (finished, or never launched here) are ignored.
func (e *Executor) CancelTasks(ctx context.Context, req *rpc.CancelTasksRequest) (*rpc.CancelTasksResponse, error) {
	want := map[taskKey]bool{}
	for _, id := range req.GetTasks() {
		want[keyOf(id)] = true
	}
	var dropped []*task
	e.mu.Lock()
	kept := e.queue[:0]
	for _, t := range e.queue {
		if want[t.key] {
			dropped = append(dropped, t)
			continue
		}
		kept = append(kept, t)
	}
	clear(e.queue[len(kept):])
	e.queue = kept
	for k := range want {
		if t, ok := e.running[k]; ok {
			t.cancelled = true
			t.cancel()
		}
	}
	e.mu.Unlock()
	for _, t := range dropped {
		e.report(t.status(rpc.TaskState_TASK_CANCELLED, e.cfg.ID))
	}
	return &rpc.CancelTasksResponse{}, nil
}

// RemoveJobData deletes the job's stage directories under the work dir:
// the listed stages, or every stage when none is listed, never the stages
// in pinned_stage_ids, and, when none is listed, never a stage whose
// writer ran here as Pinned (a cache's files survive any whole-job sweep;
// they go only when named explicitly).
func (e *Executor) RemoveJobData(ctx context.Context, req *rpc.RemoveJobDataRequest) (*rpc.RemoveJobDataResponse, error) {
	if !physical.ValidJobID(req.GetJobId()) {
		return nil, status.Errorf(codes.InvalidArgument, "executor: invalid job id %q", req.GetJobId())
	}
	keep := map[int]bool{}
	for _, s := range req.GetPinnedStageIds() {
		keep[int(s)] = true
	}
	stages := make([]int, 0, len(req.GetStageIds()))
	for _, s := range req.GetStageIds() {
		if s < 0 {
			return nil, status.Errorf(codes.InvalidArgument, "executor: negative stage id %d", s)
		}
		stages = append(stages, int(s))
	}
	e.mu.Lock()
	if len(stages) == 0 {
		for s := range e.pinned[req.JobId] {
			keep[s] = true
		}
	}
	e.mu.Unlock()
	removed, err := removeJobData(e.cfg.WorkDir, req.JobId, stages, keep, e.maps)
	e.mu.Lock()
	for _, s := range removed {
		delete(e.pinned[req.JobId], s)
	}
	if len(e.pinned[req.JobId]) == 0 {
		delete(e.pinned, req.JobId)
	}
	e.mu.Unlock()
	if err != nil {
		return nil, status.Errorf(codes.Internal, "%v", err)
	}
	return &rpc.RemoveJobDataResponse{}, nil
}

// MaxMessageBytes bounds one gRPC message the executor receives, on
// ExecutorService and Flight alike (gRPC's default is 4 MiB). A request is
// read into memory whole before any handler runs; LaunchTasks carries the
// plans of many tasks, so it needs more than the default.
const MaxMessageBytes = 64 << 20

// connectParams caps gRPC's reconnect backoff (120s by default) so that a
// scheduler or peer that comes back is reached within seconds.
var connectParams = grpc.ConnectParams{
	Backoff:           gbackoff.Config{BaseDelay: 100 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: 3 * time.Second},
	MinConnectTimeout: 5 * time.Second,
}

// backoff returns the wait before retry n (0-based): 50ms doubling to max.
func backoff(n int, max time.Duration) time.Duration {
	d := 50 * time.Millisecond
	for i := 0; i < n && d < max; i++ {
		d *= 2
	}
	return min(d, max)
}

// MemoryInUse is the memory the executor's running tasks hold now, in
// bytes, as counted against Config.MemoryLimit.
func (e *Executor) MemoryInUse() int64 { return e.pool.Current() }
