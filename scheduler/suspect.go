package scheduler

import (
	"context"
	"fmt"
	"time"

	"github.com/quiverdb/quiver/rpc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

// Failure detection faster than the heartbeat timeout: a sign that an
// executor may be gone — its gRPC connection dropping, a launch failing on
// the connection, another executor's fetch from it failing — makes it
// suspected, and a probe confirms within about a second whether it still
// answers an RPC. A confirmed executor is lost at once; one that answers
// is cleared. The probe is an RPC on a new connection, not a bare TCP
// connect: a dying process's listening socket can still complete a
// handshake for a moment after its other connections dropped. A hung
// executor that still answers RPCs is left to the heartbeat timeout.

// Probe timing: probeAttempts RPCs of up to probeTimeout each,
// probeInterval apart; one answer clears the suspicion.
const (
	probeAttempts = 3
	probeTimeout  = 500 * time.Millisecond
	probeInterval = 200 * time.Millisecond
)

// evSuspect: something suggests the executor at addr (or with executorID,
// when known) is gone.
type evSuspect struct {
	executorID, addr string
	why              string
}

// evProbed: the result of probing a suspected executor.
type evProbed struct {
	executorID string
	alive      bool
	err        error
	why        string // the suspicion that led to the probe
}

// actProbe: check whether the executor at addr still accepts connections.
type actProbe struct {
	executorID, addr, why string
}

// suspect starts a probe of executor id unless one is running.
func (c *core) suspect(id, why string) {
	ex := c.executors[id]
	if ex == nil || ex.suspected {
		return
	}
	ex.suspected = true
	c.cfg.Logf("scheduler: executor %s (%s) suspected: %s; probing it", id, ex.addr(), why)
	c.actions = append(c.actions, actProbe{executorID: id, addr: ex.addr(), why: why})
}

// suspected handles evSuspect.
func (c *core) suspected(e evSuspect) {
	if e.executorID != "" {
		c.suspect(e.executorID, e.why)
		return
	}
	for _, id := range sortedKeys(c.executors) {
		if c.executors[id].addr() == e.addr {
			c.suspect(id, e.why)
		}
	}
}

// probed handles evProbed.
func (c *core) probed(e evProbed) {
	ex := c.executors[e.executorID]
	if ex == nil {
		return
	}
	ex.suspected = false
	if !e.alive {
		c.executorLost(e.executorID, fmt.Sprintf("%s, and it does not answer (%v)", e.why, e.err))
	}
}

// probe asks the executor at addr for an empty CancelTasks, which every
// live executor answers at once, until it answers or probeAttempts tries
// have failed.
func probe(ctx context.Context, addr string) error {
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer cc.Close()
	client := rpc.NewExecutorServiceClient(cc)
	for i := range probeAttempts {
		if i > 0 {
			select {
			case <-time.After(probeInterval):
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		pctx, cancel := context.WithTimeout(ctx, probeTimeout)
		_, err = client.CancelTasks(pctx, &rpc.CancelTasksRequest{}, grpc.WaitForReady(true))
		cancel()
		switch status.Code(err) {
		case codes.Unavailable, codes.DeadlineExceeded, codes.Canceled:
		default: // any answer, even an error, comes from a live process
			return nil
		}
	}
	return err
}

// runProbe performs actProbe; its goroutine is owned by s.wg.
func (s *Scheduler) runProbe(ctx context.Context, a actProbe) {
	s.goRun(func() {
		err := probe(ctx, a.addr)
		if ctx.Err() != nil {
			return
		}
		s.post(ctx, evProbed{executorID: a.executorID, alive: err == nil, err: err, why: a.why})
	})
}

// watchConn reports the executor at addr as suspected whenever its
// connection, once ready, drops (the executor's process died or its
// machine went away). It ends when the connection is closed or ctx is
// cancelled; its goroutine is owned by s.wg.
func (s *Scheduler) watchConn(ctx context.Context, addr string, cc *grpc.ClientConn) {
	s.goRun(func() {
		state := cc.GetState()
		for cc.WaitForStateChange(ctx, state) {
			next := cc.GetState()
			if next == connectivity.Shutdown {
				return
			}
			if state == connectivity.Ready && next != connectivity.Ready {
				s.post(ctx, evSuspect{addr: addr, why: "its connection dropped"})
			}
			state = next
		}
	})
}
