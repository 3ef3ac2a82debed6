package executor_test

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/quiverdb/quiver/exec/memcheck"
	"github.com/quiverdb/quiver/executor"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/rpc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// hangingPeer is a Flight server whose DoGet never sends anything: a task
// reading from it runs until cancelled.
type hangingPeer struct {
	flight.BaseFlightServer
	entered  chan struct{}
	released chan struct{} // closed by release: DoGet then answers NotFound
	once     sync.Once
}

func (p *hangingPeer) DoGet(_ *flight.Ticket, s flight.FlightService_DoGetServer) error {
	p.entered <- struct{}{}
	select {
	case <-s.Context().Done():
		return s.Context().Err()
	case <-p.released:
		return status.Error(codes.NotFound, "released")
	}
}

func (p *hangingPeer) release() { p.once.Do(func() { close(p.released) }) }

// startHangingPeer serves a hangingPeer until the test ends and returns it
// with its executor meta.
func startHangingPeer(t *testing.T) (*hangingPeer, physical.ExecutorMeta) {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &hangingPeer{entered: make(chan struct{}, 10), released: make(chan struct{})}
	srv := grpc.NewServer()
	flight.RegisterFlightServiceServer(srv, p)
	done := make(chan struct{})
	go func() { defer close(done); srv.Serve(lis) }()
	t.Cleanup(func() { srv.Stop(); <-done })
	return p, physical.ExecutorMeta{ID: "hanging", Host: "127.0.0.1", FlightPort: lis.Addr().(*net.TCPAddr).Port}
}

// longTask is a stage that reads from the hanging peer.
func longTask(peer physical.ExecutorMeta, job string, stage int) *physical.ShuffleWriter {
	schema := arrow.NewSchema([]arrow.Field{{Name: "a", Type: arrow.PrimitiveTypes.Int64}}, nil)
	loc := signed(physical.PartitionLocation{JobID: job, StageID: stage - 1, Executor: peer})
	return &physical.ShuffleWriter{JobID: job, StageID: stage,
		Input: &physical.ShuffleReader{StageID: stage - 1, OutSchema: schema, Locations: [][]physical.PartitionLocation{{loc}}}}
}

func waitEntered(t *testing.T, p *hangingPeer) {
	t.Helper()
	select {
	case <-p.entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the task never reached the peer")
	}
}

func TestCancelTasksStopsLongTask(t *testing.T) {
	mem := memcheck.New(t)
	sched := newFakeScheduler()
	e := startExecutor(t, startScheduler(t, sched), mem, func(c *executor.Config) { c.VCores = 1 })
	peer, meta := startHangingPeer(t)
	c := executorClient(t, e)
	running := launch(t, c, longTask(meta, "long", 2), 0, nil)
	queued := launch(t, c, longTask(meta, "long", 3), 0, nil) // waits for the one vcore
	waitEntered(t, peer)

	start := time.Now()
	if _, err := c.CancelTasks(context.Background(), &rpc.CancelTasksRequest{Tasks: []*rpc.TaskId{running, queued}}); err != nil {
		t.Fatal(err)
	}
	got := map[int32]rpc.TaskState{}
	for range 2 {
		st := waitStatus(t, sched)
		got[st.Id.StageId] = st.State
	}
	if got[2] != rpc.TaskState_TASK_CANCELLED || got[3] != rpc.TaskState_TASK_CANCELLED {
		t.Errorf("statuses %v, want both cancelled", got)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("cancellation took %s", d)
	}
}

func TestCloseWithRunningTasksReturnsPromptly(t *testing.T) {
	mem := memcheck.New(t)
	sched := newFakeScheduler()
	e := startExecutor(t, startScheduler(t, sched), mem, nil)
	peer, meta := startHangingPeer(t)
	c := executorClient(t, e)
	for stage := 2; stage < 6; stage++ { // 2 run, 2 wait in the queue
		launch(t, c, longTask(meta, "closing", stage), 0, nil)
	}
	waitEntered(t, peer)
	waitEntered(t, peer)
	start := time.Now()
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("Close took %s with running tasks", d)
	}
	if _, err := c.LaunchTasks(context.Background(), &rpc.LaunchTasksRequest{}); err == nil {
		t.Error("LaunchTasks after Close succeeded")
	}
}
