package executor

import (
	"context"
	"time"

	"github.com/quiverdb/quiver/auth"
	"github.com/quiverdb/quiver/qerr"
	"github.com/quiverdb/quiver/rpc"
)

// registerCallTimeout bounds one RegisterExecutor call.
const registerCallTimeout = 5 * time.Second

// register registers with the scheduler, retrying transient failures with
// backoff until it succeeds or start or life ends. A refusal (e.g. a
// protocol version mismatch) is returned at once.
func (e *Executor) register(start, life context.Context) error {
	for attempt := 0; ; attempt++ {
		err := e.registerOnce(start)
		if err == nil {
			return nil
		}
		if !transient(err) {
			return qerr.Execf("executor: scheduler at %s refused registration: %w", e.cfg.SchedulerAddr, err)
		}
		if attempt == 0 || attempt%10 == 0 {
			e.log.warn("scheduler unreachable; retrying registration", err, "scheduler", e.cfg.SchedulerAddr)
		}
		select {
		case <-start.Done():
			return qerr.IOf("executor: registering with scheduler at %s: gave up (%v): %w", e.cfg.SchedulerAddr, start.Err(), err)
		case <-life.Done():
			return qerr.Execf("executor: closed while registering with scheduler at %s", e.cfg.SchedulerAddr)
		case <-time.After(backoff(attempt, 2*time.Second)):
		}
	}
}

// registerOnce registers and then deletes the job directories of the work
// dir that the scheduler does not name as live (a previous run's, or ones
// whose cleanup this executor missed while it was lost).
func (e *Executor) registerOnce(ctx context.Context) error {
	cctx, cancel := context.WithTimeout(ctx, registerCallTimeout)
	defer cancel()
	sent := time.Now()
	req := &rpc.RegisterExecutorRequest{ProtocolVersion: rpc.ProtocolVersion, Executor: e.rpcMeta()}
	if jobs, err := heldJobs(e.cfg.WorkDir); err == nil {
		req.Jobs, req.ReportsJobs = jobs, true
	}
	resp, err := e.sched.RegisterExecutor(cctx, req)
	if err != nil {
		return err
	}
	if b := resp.GetTicketKey(); len(b) > 0 {
		key, err := auth.TicketKeyFrom(b)
		if err != nil {
			return qerr.Internalf("executor: the scheduler's registration answer: %w", err)
		}
		e.ticketKey.Store(&key)
	}
	keep := make(map[string]bool, len(resp.GetLiveJobs()))
	for _, id := range resp.GetLiveJobs() {
		keep[id] = true
	}
	removed, err := sweepOrphans(e.cfg.WorkDir, keep, sent, e.maps)
	if err != nil {
		e.log.warn("sweeping orphaned job directories", err)
	}
	if len(removed) > 0 {
		e.log.info("removed orphaned job directories", "jobs", len(removed))
	}
	return nil
}

// flightTicketKey is the key the Flight service verifies tickets with:
// the one the scheduler sent at the last registration (a scheduler that
// restarted sends a new one, and tickets signed by the old are refused).
func (e *Executor) flightTicketKey() auth.TicketKey {
	if k := e.ticketKey.Load(); k != nil {
		return *k
	}
	return auth.TicketKey{}
}

// heartbeatLoop sends a heartbeat every HeartbeatInterval until ctx (the
// executor's lifetime) ends. When the scheduler asks (reregister) or comes
// back after being unreachable, it registers again. Failures are logged,
// never fatal. Owner: Executor.
func (e *Executor) heartbeatLoop(ctx context.Context) {
	defer e.wg.Done()
	tick := time.NewTicker(e.cfg.HeartbeatInterval)
	defer tick.Stop()
	timeout := max(e.cfg.HeartbeatInterval, time.Second)
	lost := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		cctx, cancel := context.WithTimeout(ctx, timeout)
		resp, err := e.sched.Heartbeat(cctx, &rpc.HeartbeatRequest{ExecutorId: e.cfg.ID, RunningTasks: int32(e.runningCount()),
			MemoryReserved: e.pool.Current(), MemoryLimit: e.pool.Limit()})
		cancel()
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			if !lost {
				e.log.warn("heartbeat failed; will keep trying", err, "scheduler", e.cfg.SchedulerAddr)
			}
			lost = true
			continue
		}
		if !resp.GetReregister() && !lost {
			continue
		}
		e.mu.Lock()
		draining := e.draining
		e.mu.Unlock()
		if draining {
			continue // leaving: the scheduler forgetting us is the point
		}
		if err := e.registerOnce(ctx); err != nil {
			if ctx.Err() != nil {
				return
			}
			e.log.warn("re-registration failed; will retry", err)
			lost = true
			continue
		}
		lost = false
		e.log.info("registered again with the scheduler", "scheduler", e.cfg.SchedulerAddr)
	}
}
