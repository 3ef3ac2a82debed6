package executor_test

import (
	"context"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver/auth"
	"github.com/quiverdb/quiver/executor"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/rpc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// testTicketKey is the fake scheduler's Flight ticket key, sent to every
// executor that registers with it.
var testTicketKey = func() auth.TicketKey {
	k, err := auth.NewTicketKey()
	if err != nil {
		panic(err)
	}
	return k
}()

// signed returns l with a ticket the fake scheduler signed, valid for an
// hour (as the scheduler signs the locations it sends).
func signed(l physical.PartitionLocation) physical.PartitionLocation {
	l.Ticket = string(testTicketKey.Sign(auth.Ticket{JobID: l.JobID, StageID: l.StageID, OutputPartition: l.OutputPartition,
		MapPartition: l.MapPartition, Expires: time.Now().Add(time.Hour)}))
	return l
}

// fakeScheduler is the executor's peer in these tests: it records what the
// executor tells it. It is not the thing under test.
type fakeScheduler struct {
	rpc.UnimplementedSchedulerServiceServer

	mu            sync.Mutex
	registrations []*rpc.RegisterExecutorRequest
	heartbeats    int
	reregister    bool // answer the next heartbeat with reregister
	statuses      chan *rpc.TaskStatus
	registered    chan struct{} // one send per registration (buffered)
	live          []string      // RegisterExecutorResponse.live_jobs
	noKey         bool          // answer registrations without a ticket key
	// calls records task statuses and deregistrations in arrival order
	// ("status CANCELLED", "drain", "leave").
	calls []string
}

func newFakeScheduler() *fakeScheduler {
	return &fakeScheduler{statuses: make(chan *rpc.TaskStatus, 100), registered: make(chan struct{}, 100)}
}

func (s *fakeScheduler) RegisterExecutor(_ context.Context, req *rpc.RegisterExecutorRequest) (*rpc.RegisterExecutorResponse, error) {
	s.mu.Lock()
	s.registrations = append(s.registrations, req)
	live, noKey := s.live, s.noKey
	s.mu.Unlock()
	s.registered <- struct{}{}
	resp := &rpc.RegisterExecutorResponse{LiveJobs: live, TicketKey: testTicketKey.Bytes()}
	if noKey {
		resp.TicketKey = nil
	}
	return resp, nil
}

func (s *fakeScheduler) Heartbeat(_ context.Context, req *rpc.HeartbeatRequest) (*rpc.HeartbeatResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.heartbeats++
	re := s.reregister
	s.reregister = false
	return &rpc.HeartbeatResponse{Reregister: re}, nil
}

func (s *fakeScheduler) UpdateTaskStatus(_ context.Context, req *rpc.UpdateTaskStatusRequest) (*rpc.UpdateTaskStatusResponse, error) {
	for _, st := range req.Statuses {
		s.mu.Lock()
		s.calls = append(s.calls, "status "+strings.TrimPrefix(st.State.String(), "TASK_"))
		s.mu.Unlock()
		s.statuses <- st
	}
	return &rpc.UpdateTaskStatusResponse{}, nil
}

// startScheduler serves s on a loopback port until the test ends.
func startScheduler(t *testing.T, s *fakeScheduler) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return serveScheduler(t, s, lis)
}

func serveScheduler(t *testing.T, s *fakeScheduler, lis net.Listener) string {
	srv := grpc.NewServer()
	rpc.RegisterSchedulerServiceServer(srv, s)
	done := make(chan struct{})
	go func() { defer close(done); srv.Serve(lis) }()
	t.Cleanup(func() { srv.Stop(); <-done })
	return lis.Addr().String()
}

// startExecutor starts an executor against schedAddr; it is closed when the
// test ends.
func startExecutor(t *testing.T, schedAddr string, mem memory.Allocator, edit func(*executor.Config)) *executor.Executor {
	t.Helper()
	cfg := executor.Config{
		SchedulerAddr:     schedAddr,
		BindAddr:          "127.0.0.1:0",
		WorkDir:           t.TempDir(),
		VCores:            2,
		HeartbeatInterval: 50 * time.Millisecond,
		Allocator:         mem,
		Logger:            slog.New(slog.NewTextHandler(testWriter{t}, nil)),
	}
	if edit != nil {
		edit(&cfg)
	}
	e, err := executor.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := e.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := e.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return e
}

// executorClient is a gRPC client of e's ExecutorService, closed when the
// test ends.
func executorClient(t *testing.T, e *executor.Executor) rpc.ExecutorServiceClient {
	t.Helper()
	c, err := grpc.NewClient(e.Addr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return rpc.NewExecutorServiceClient(c)
}

// waitStatus returns the next task status, failing the test after a timeout.
func waitStatus(t *testing.T, s *fakeScheduler) *rpc.TaskStatus {
	t.Helper()
	select {
	case st := <-s.statuses:
		return st
	case <-time.After(20 * time.Second):
		t.Fatal("no task status within 20s")
		return nil
	}
}

// deadPort returns a loopback port nothing listens on.
func deadPort(t *testing.T) int {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := lis.Addr().(*net.TCPAddr).Port
	lis.Close()
	return port
}

// testWriter sends log lines to the test log (shown on failure or -v).
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(string(p))
	return len(p), nil
}

func itoa(n int) string { return strconv.Itoa(n) }

// listenRetry listens on addr, retrying briefly (the port was just freed).
func listenRetry(addr string) (net.Listener, error) {
	var err error
	for range 50 {
		var lis net.Listener
		if lis, err = net.Listen("tcp", addr); err == nil {
			return lis, nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return nil, err
}
