package scheduler

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/quiverdb/quiver/qerr"
	"github.com/quiverdb/quiver/rpc"
)

// Leaving on purpose: an executor draining and deregistering, and the
// scheduler itself shutting down.

// evDrain: the executor stops taking tasks (DeregisterExecutor with drain).
type evDrain struct {
	executorID string
	reply      chan bool
}

// evDeregister: the executor leaves now.
type evDeregister struct {
	executorID string
	reply      chan bool
}

// evShutdown: the scheduler stops accepting jobs; with failAll it also
// ends every job still running. The reply is the number of jobs not ended.
type evShutdown struct {
	failAll bool
	reply   chan int
}

// drain stops placing tasks on the executor; its running tasks go on.
func (c *core) drain(id string) bool {
	ex := c.executors[id]
	if ex == nil {
		return false
	}
	if !ex.draining {
		ex.draining = true
		c.log.Info("executor draining", "executor", id, "addr", ex.addr(), "running_tasks", ex.running)
	}
	return true
}

// deregister forgets the executor at once, exactly as a lost one (its
// running tasks are placed again, output still needed is recomputed, its
// cache entries are invalidated).
func (c *core) deregister(id string) bool {
	if c.executors[id] == nil {
		return false
	}
	c.executorLost(id, "deregistered (shutting down)")
	return true
}

// launchRefusedDraining: the executor refused a launch because it is
// draining. Its tasks go back to pending, not counted as failures, and no
// more are placed there.
func (c *core) launchRefusedDraining(e evLaunchFailed) {
	if ex := c.executors[e.executorID]; ex != nil {
		ex.draining = true
	}
	for _, id := range e.tasks {
		j, _, t := c.lookup(id)
		if t == nil {
			continue
		}
		c.release(t)
		t.state, t.executor = taskPending, ""
		t.attempt++
		c.dirty[j.id] = true
		c.onTasksRequeued(1)
	}
}

// shutdown refuses new jobs from now on; with failAll it ends the jobs
// still running as failed, so that their clients hear why at once.
func (c *core) shutdown(failAll bool) int {
	if !c.shuttingDown {
		c.shuttingDown = true
		c.log.Info("scheduler shutting down: no new jobs accepted")
	}
	n := 0
	for _, id := range c.activeJobs() {
		j := c.jobs[id]
		if j == nil || j.terminal() {
			continue
		}
		if failAll {
			c.endJob(j, rpc.JobState_JOB_FAILED, fmt.Sprintf("job %s: the scheduler shut down before the job finished", j.id), qerr.IO)
			continue
		}
		n++
	}
	return n
}

// errShuttingDown refuses a job submitted during shutdown.
var errShuttingDown = status.Error(codes.Unavailable, "scheduler: shutting down: not accepting new jobs")

// Shutdown stops accepting jobs, waits up to grace for the running ones to
// finish, fails those still running, gives their watchers a moment to hear
// it, then closes the scheduler. It is what SIGTERM does to `quiver
// scheduler`.
func (s *Scheduler) Shutdown(ctx context.Context, grace time.Duration) error {
	s.shuttingDown.Store(true)
	// Poll the loop until no job runs, the grace ends or ctx does: jobs end
	// on the loop, which has no "all ended" event to wait on.
	deadline := time.Now().Add(grace)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		reply := make(chan int, 1)
		if n, err := ask(ctx, s, evShutdown{reply: reply}, reply); err != nil || n == 0 {
			break
		}
		select {
		case <-ctx.Done():
		case <-time.After(50 * time.Millisecond):
		}
	}
	reply := make(chan int, 1)
	if _, err := ask(ctx, s, evShutdown{failAll: true, reply: reply}, reply); err == nil {
		// Every job has ended and its watchers' channels hold the terminal
		// status: let the WatchJob streams send it before the server stops.
		s.stopGRPCGracefully(2 * time.Second)
	}
	return s.Close()
}

// stopGRPCGracefully lets open calls end, at most d, then stops the server.
func (s *Scheduler) stopGRPCGracefully(d time.Duration) {
	s.mu.Lock()
	srv := s.grpcSrv
	s.mu.Unlock()
	if srv == nil {
		return
	}
	done := make(chan struct{})
	go func() { // owner: this call; ends when GracefulStop returns (forced by Stop below)
		defer func() { recover() }()
		srv.GracefulStop()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(d):
		srv.Stop()
		<-done
	}
}

// DeregisterExecutor: an executor leaving on purpose (see rpc).
func (h *service) DeregisterExecutor(ctx context.Context, req *rpc.DeregisterExecutorRequest) (*rpc.DeregisterExecutorResponse, error) {
	if req.GetExecutorId() == "" {
		return nil, status.Error(codes.InvalidArgument, "scheduler: deregister executor: need an executor id")
	}
	reply := make(chan bool, 1)
	var ev any = evDeregister{executorID: req.GetExecutorId(), reply: reply}
	if req.GetDrain() {
		ev = evDrain{executorID: req.GetExecutorId(), reply: reply}
	}
	known, err := ask(ctx, h.s, ev, reply)
	if err != nil {
		return nil, grpcErr(err)
	}
	return &rpc.DeregisterExecutorResponse{Known: known}, nil
}
