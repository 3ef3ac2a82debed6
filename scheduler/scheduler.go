package scheduler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus/collectors"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/quiverdb/quiver/qerr"
	"github.com/quiverdb/quiver/rpc"
)

// MaxMessageBytes bounds one gRPC message the scheduler receives (gRPC's
// default is 4 MiB). A request is read into memory whole before any handler
// runs, so this bounds what one call can make the scheduler hold; plans with
// long IN lists or VALUES need more than the default.
const MaxMessageBytes = 64 << 20

// rpcTimeout bounds every RPC the scheduler makes to an executor.
const rpcTimeout = 10 * time.Second

// connectParams cap gRPC's reconnect backoff (120s by default) so that an
// executor that comes back is reached again within seconds.
var connectParams = grpc.ConnectParams{
	Backoff:           backoff.Config{BaseDelay: 100 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: 3 * time.Second},
	MinConnectTimeout: 5 * time.Second,
}

// Scheduler is the distributed scheduler: a gRPC SchedulerService, an
// optional REST view, and the event loop that owns all state.
//
// Call order: New, Start (once), then Close (idempotent). Addr and RestAddr
// are valid after Start. All methods are safe for concurrent use.
type Scheduler struct {
	cfg    Config
	log    *slog.Logger
	events chan any
	// loopDone is closed when the event loop has exited; callers waiting
	// for a reply select on it so they never hang after Close.
	loopDone chan struct{}
	core     *core // touched only by the loop goroutine once started

	mu       sync.Mutex
	started  bool
	closed   bool
	stop     context.CancelFunc
	lis      net.Listener
	restLis  net.Listener
	grpcSrv  *grpc.Server
	restSrv  *http.Server
	conns    map[string]*grpc.ClientConn // executor gRPC address → connection
	queues   map[string]*rpcQueue        // executor gRPC address → its RPCs in issue order
	wg       sync.WaitGroup              // the loop, servers and action goroutines
	closeErr error
	// shuttingDown is set by Shutdown: /healthz then answers 503.
	shuttingDown atomic.Bool
}

// New validates cfg and returns an unstarted scheduler.
func New(cfg Config) (*Scheduler, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if cfg.BindAddr == "" {
		cfg.BindAddr = "127.0.0.1:0"
	}
	s := &Scheduler{
		cfg:      cfg,
		log:      cfg.logger(),
		events:   make(chan any, 64),
		loopDone: make(chan struct{}),
		core:     newCore(cfg, time.Now),
		conns:    map[string]*grpc.ClientConn{},
		queues:   map[string]*rpcQueue{},
	}
	s.core.m.reg.MustRegister(newStateCollector(s),
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return s, nil
}

// Start listens on BindAddr (and RestAddr), starts the event loop and
// serves; it returns once both listeners accept connections. The servers
// and the loop run until Close; ctx bounds only the start itself.
func (s *Scheduler) Start(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started || s.closed {
		return qerr.Internalf("scheduler: Start called twice or after Close")
	}
	var lc net.ListenConfig
	lis, err := lc.Listen(ctx, "tcp", s.cfg.BindAddr)
	if err != nil {
		return qerr.IOf("scheduler: listen on %s: %w", s.cfg.BindAddr, err)
	}
	var restLis net.Listener
	if s.cfg.RestAddr != "" {
		restLis, err = lc.Listen(ctx, "tcp", s.cfg.RestAddr)
		if err != nil {
			lis.Close()
			return qerr.IOf("scheduler: listen for REST on %s: %w", s.cfg.RestAddr, err)
		}
	}
	s.started = true
	s.lis, s.restLis = lis, restLis
	runCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	s.stop = stop

	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer close(s.loopDone)
		s.loop(runCtx)
	}()

	// The executors' calls need the cluster's token: with a tenant's, a
	// client could register as an executor and learn the ticket key.
	sopts := append([]grpc.ServerOption{grpc.MaxRecvMsgSize(MaxMessageBytes)}, s.cfg.AuthToken.ServerOptions(
		rpc.SchedulerService_RegisterExecutor_FullMethodName, rpc.SchedulerService_Heartbeat_FullMethodName,
		rpc.SchedulerService_UpdateTaskStatus_FullMethodName, rpc.SchedulerService_DeregisterExecutor_FullMethodName)...)
	sopts = append(sopts, rpc.RequestIDServerOptions()...)
	s.grpcSrv = grpc.NewServer(append(sopts, s.cfg.TLS.ServerOptions()...)...)
	rpc.RegisterSchedulerServiceServer(s.grpcSrv, &service{s: s})
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		if err := s.grpcSrv.Serve(lis); err != nil && !errors.Is(err, grpc.ErrServerStopped) {
			s.log.Error("gRPC server stopped", "err", err)
		}
	}()
	if restLis != nil {
		s.restSrv = &http.Server{Handler: s.cfg.AuthToken.HTTP(s.restHandler(), openRoute), ReadHeaderTimeout: 10 * time.Second}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			if err := s.restSrv.Serve(s.cfg.TLS.Listener(restLis)); err != nil && !errors.Is(err, http.ErrServerClosed) {
				s.log.Error("REST server stopped", "err", err)
			}
		}()
	}
	return nil
}

// Addr is the gRPC address the scheduler listens on ("" before Start).
func (s *Scheduler) Addr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lis == nil {
		return ""
	}
	return s.lis.Addr().String()
}

// RestAddr is the REST address ("" when REST is off or before Start).
func (s *Scheduler) RestAddr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.restLis == nil {
		return ""
	}
	return s.restLis.Addr().String()
}

// Close stops serving (open WatchJob streams end), stops the loop, waits for
// every goroutine the scheduler started and closes its executor
// connections. It is idempotent.
func (s *Scheduler) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return s.closeErr
	}
	s.closed = true
	started := s.started
	s.mu.Unlock()
	if !started {
		return nil
	}
	s.grpcSrv.Stop()
	if s.restSrv != nil {
		s.restSrv.Close()
	}
	s.stop()
	s.wg.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	for addr, cc := range s.conns {
		if err := cc.Close(); err != nil && s.closeErr == nil {
			s.closeErr = qerr.IOf("scheduler: close connection to %s: %w", addr, err)
		}
	}
	s.conns = map[string]*grpc.ClientConn{}
	return s.closeErr
}

// loop is the event loop: the only goroutine that touches s.core. It exits
// when ctx is cancelled (Close).
func (s *Scheduler) loop(ctx context.Context) {
	ticker := time.NewTicker(s.cfg.tickInterval())
	defer ticker.Stop()
	for {
		var ev any
		select {
		case <-ctx.Done():
			return
		case now := <-ticker.C:
			ev = evTick{now: now}
		case ev = <-s.events:
		}
		s.handle(ctx, ev)
	}
}

// handle applies one event and performs the actions it produced. A panic
// while handling is a bug: it is logged and the loop carries on, so one bad
// event does not take the scheduler down.
func (s *Scheduler) handle(ctx context.Context, ev any) {
	defer func() {
		if r := recover(); r != nil {
			s.log.Error("panic handling an event", "event", fmt.Sprintf("%T", ev), "panic", r, "stack", string(debug.Stack()))
			s.core.actions = nil
		}
	}()
	s.core.handle(ev)
	for _, a := range s.core.takeActions() {
		s.perform(ctx, a)
	}
}

// post sends ev to the loop; false when ctx ended or the loop is gone.
func (s *Scheduler) post(ctx context.Context, ev any) bool {
	select {
	case s.events <- ev:
		return true
	case <-ctx.Done():
		return false
	case <-s.loopDone:
		return false
	}
}

// ask posts ev and waits for its reply on reply.
func ask[T any](ctx context.Context, s *Scheduler, ev any, reply chan T) (T, error) {
	var zero T
	if !s.post(ctx, ev) {
		return zero, stopped(ctx)
	}
	select {
	case r := <-reply:
		return r, nil
	case <-ctx.Done():
		return zero, stopped(ctx)
	case <-s.loopDone:
		return zero, stopped(ctx)
	}
}

func stopped(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return qerr.Internalf("scheduler: shutting down")
}

// perform runs one action of the loop in its own goroutine (owned by s.wg,
// ending when its RPC returns or ctx is cancelled); results that matter go
// back to the loop as events.
func (s *Scheduler) perform(ctx context.Context, a any) {
	switch a := a.(type) {
	case actPlan:
		s.goRun(func() {
			ev := s.safePlan(ctx, a)
			s.post(ctx, ev)
		})
	case actStat:
		s.goRun(func() {
			ev := evStatted{jobID: a.jobID, gen: a.gen}
			func() {
				defer func() {
					if r := recover(); r != nil {
						s.cfg.Logf("scheduler: stat files of job %s panicked: %v", a.jobID, r)
					}
				}()
				ev.files = statFiles(a.paths)
			}()
			s.post(ctx, ev)
		})
	case actLaunch:
		s.enqueue(ctx, a.addr, func() {
			err := s.call(ctx, a.addr, func(ctx context.Context, c rpc.ExecutorServiceClient) error {
				_, err := c.LaunchTasks(ctx, &rpc.LaunchTasksRequest{Tasks: a.tasks})
				return err
			})
			if err != nil {
				ids := make([]*rpc.TaskId, len(a.tasks))
				for i, t := range a.tasks {
					ids[i] = t.GetId()
				}
				s.post(ctx, evLaunchFailed{executorID: a.executorID, tasks: ids, err: err,
					refused: status.Code(err) == codes.InvalidArgument, draining: status.Code(err) == codes.FailedPrecondition})
			}
		})
	case actCancel:
		s.enqueue(ctx, a.addr, func() {
			err := s.call(ctx, a.addr, func(ctx context.Context, c rpc.ExecutorServiceClient) error {
				_, err := c.CancelTasks(ctx, &rpc.CancelTasksRequest{Tasks: a.tasks})
				return err
			})
			if err != nil && ctx.Err() == nil {
				s.log.Warn("cancel tasks failed", "executor", a.executorID, "tasks", len(a.tasks), "err", err)
			}
		})
	case actRemove:
		s.enqueue(ctx, a.addr, func() {
			err := s.call(ctx, a.addr, func(ctx context.Context, c rpc.ExecutorServiceClient) error {
				_, err := c.RemoveJobData(ctx, a.req)
				return err
			})
			if err != nil && ctx.Err() == nil {
				s.log.Warn("remove job data failed", "job", a.req.GetJobId(), "stages", a.req.GetStageIds(), "executor", a.executorID, "err", err)
			}
		})
	case actProbe:
		s.runProbe(ctx, a)
	case actDropExecutor:
		s.mu.Lock()
		cc := s.conns[a.addr]
		delete(s.conns, a.addr)
		q := s.queues[a.addr]
		delete(s.queues, a.addr)
		s.mu.Unlock()
		if q != nil {
			q.drop()
		}
		if cc != nil {
			cc.Close() // queued RPCs to it now fail at once
		}
	default:
		s.log.Error("unknown action", "action", fmt.Sprintf("%T", a))
	}
}

// rpcQueue runs one executor's RPCs one at a time in the order the loop
// issued them, so a task's launch always reaches the executor before its
// cancel, and a job's cleanup after both. Its worker goroutine is owned by
// s.wg; it exits when ctx is cancelled (Close) or, once dropped (the
// executor was lost), when the queue is empty.
type rpcQueue struct {
	mu      sync.Mutex
	fns     []func()
	dropped bool
	wake    chan struct{} // capacity 1
}

func (q *rpcQueue) push(f func()) {
	q.mu.Lock()
	q.fns = append(q.fns, f)
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

func (q *rpcQueue) drop() {
	q.mu.Lock()
	q.dropped = true
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

func (q *rpcQueue) run(ctx context.Context) {
	for {
		q.mu.Lock()
		fns, dropped := q.fns, q.dropped
		q.fns = nil
		q.mu.Unlock()
		for _, f := range fns {
			f() // each call has its own deadline and ends when ctx does
		}
		if len(fns) > 0 {
			continue
		}
		if dropped {
			return
		}
		select {
		case <-q.wake:
		case <-ctx.Done():
			return
		}
	}
}

// enqueue adds f to the RPC queue of the executor at addr.
func (s *Scheduler) enqueue(ctx context.Context, addr string, f func()) {
	s.mu.Lock()
	q := s.queues[addr]
	if q == nil {
		q = &rpcQueue{wake: make(chan struct{}, 1)}
		s.queues[addr] = q
		s.goRun(func() { q.run(ctx) })
	}
	s.mu.Unlock()
	q.push(f)
}

func (s *Scheduler) goRun(f func()) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		f()
	}()
}

// safePlan plans a job, turning a planner panic into the job's error.
func (s *Scheduler) safePlan(ctx context.Context, a actPlan) (ev evPlanned) {
	defer func() {
		if r := recover(); r != nil {
			ev = evPlanned{jobID: a.jobID, err: qerr.Internalf("scheduler: planning job %s panicked: %v", a.jobID, r)}
		}
	}()
	return planJob(ctx, a)
}

// call runs f against the executor at addr with a deadline.
func (s *Scheduler) call(ctx context.Context, addr string, f func(context.Context, rpc.ExecutorServiceClient) error) error {
	cc, err := s.conn(ctx, addr)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, rpcTimeout)
	defer cancel()
	return f(ctx, rpc.NewExecutorServiceClient(cc))
}

// conn returns the connection to the executor at addr, creating it (and
// its watcher, which lives until ctx ends or the connection is closed) on
// first use.
func (s *Scheduler) conn(ctx context.Context, addr string) (*grpc.ClientConn, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, qerr.Internalf("scheduler: shutting down")
	}
	if cc := s.conns[addr]; cc != nil {
		return cc, nil
	}
	opts := append([]grpc.DialOption{s.cfg.TLS.DialOption(), grpc.WithConnectParams(connectParams)}, s.cfg.AuthToken.DialOptions()...)
	cc, err := grpc.NewClient(addr, opts...)
	if err != nil {
		return nil, qerr.IOf("scheduler: connect to executor at %s: %w", addr, err)
	}
	s.conns[addr] = cc
	s.watchConn(ctx, addr, cc)
	return cc, nil
}

// inspect runs fn on the loop and waits for it.
func (s *Scheduler) inspect(ctx context.Context, fn func(c *core)) error {
	done := make(chan struct{})
	if !s.post(ctx, evInspect{fn: fn, done: done}) {
		return stopped(ctx)
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-s.loopDone:
		return stopped(ctx)
	}
}
