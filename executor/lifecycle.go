package executor

import (
	"context"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/quiverdb/quiver/qerr"
	"github.com/quiverdb/quiver/rpc"
)

// errDraining refuses a launch while draining. The code tells the scheduler
// the launch raced the drain: it places the tasks elsewhere without
// counting a failure against them or the executor.
var errDraining = status.Error(codes.FailedPrecondition, "executor: draining: not taking new tasks")

// deregisterTimeout bounds each DeregisterExecutor call.
const deregisterTimeout = 5 * time.Second

// Drain leaves the cluster on purpose (what SIGTERM does to `quiver
// executor`): it tells the scheduler to place no new task here and refuses
// new launches, lets the tasks already given to it (running or queued)
// finish for at most grace, cancels those still running after that, sends
// their statuses, deregisters (the scheduler forgets it at once instead of
// at the heartbeat timeout, re-placing whatever it had not finished) and
// closes. A scheduler that cannot be reached does not stop the drain: it
// then learns of the loss by the heartbeat timeout.
func (e *Executor) Drain(ctx context.Context, grace time.Duration) error {
	e.mu.Lock()
	if e.state != started {
		e.mu.Unlock()
		return e.Close()
	}
	e.draining = true
	running, queued := len(e.running), len(e.queue)
	e.mu.Unlock()
	e.log.info("draining", "running_tasks", running, "queued_tasks", queued, "grace", grace)
	e.deregister(ctx, true)

	deadline := time.Now().Add(grace)
	for {
		e.mu.Lock()
		busy := len(e.running) + len(e.queue)
		e.mu.Unlock()
		if busy == 0 {
			break
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			e.log.info("drain grace period over; cancelling the tasks still running", "tasks", busy)
			e.cancelAll()
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	e.flushStatuses(ctx, 5*time.Second)
	e.deregister(ctx, false)
	e.log.info("drained; leaving")
	return e.Close()
}

// cancelAll cancels every queued and running task (each reports
// TASK_CANCELLED) and waits briefly for the running ones to stop.
func (e *Executor) cancelAll() {
	var ids []*rpc.TaskId
	e.mu.Lock()
	for _, t := range e.queue {
		ids = append(ids, t.def.GetId())
	}
	for _, t := range e.running {
		ids = append(ids, t.def.GetId())
	}
	e.mu.Unlock()
	e.CancelTasks(context.Background(), &rpc.CancelTasksRequest{Tasks: ids})
	end := time.Now().Add(5 * time.Second)
	for time.Now().Before(end) && e.runningCount() > 0 {
		time.Sleep(10 * time.Millisecond)
	}
}

// flushStatuses waits, at most d, until every task status is sent.
func (e *Executor) flushStatuses(ctx context.Context, d time.Duration) {
	end := time.Now().Add(d)
	for time.Now().Before(end) && ctx.Err() == nil {
		e.statusMu.Lock()
		pending := len(e.statuses) + e.sending
		e.statusMu.Unlock()
		if pending == 0 {
			return
		}
		select {
		case e.statusWake <- struct{}{}:
		default:
		}
		time.Sleep(10 * time.Millisecond)
	}
	e.log.warn("drain: some task statuses were not sent", qerr.IOf("scheduler at %s unreachable", e.cfg.SchedulerAddr))
}

func (e *Executor) deregister(ctx context.Context, drain bool) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), deregisterTimeout)
	defer cancel()
	if _, err := e.sched.DeregisterExecutor(cctx, &rpc.DeregisterExecutorRequest{ExecutorId: e.cfg.ID, Drain: drain}); err != nil {
		e.log.warn("deregistering from the scheduler failed; it will notice by the heartbeat timeout", err, "drain", drain)
	}
}
