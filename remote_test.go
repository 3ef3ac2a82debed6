package quiver_test

import (
	"context"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quiverdb/quiver"
	"github.com/quiverdb/quiver/qerr"
	"github.com/quiverdb/quiver/rpc"
	"google.golang.org/grpc"
)

// badResultScheduler is a scheduler whose every job succeeds with one
// result file at loc.
type badResultScheduler struct {
	rpc.UnimplementedSchedulerServiceServer
	loc *rpc.PartitionLocation
}

func (badResultScheduler) CreateSession(context.Context, *rpc.CreateSessionRequest) (*rpc.CreateSessionResponse, error) {
	return &rpc.CreateSessionResponse{SessionId: "s1"}, nil
}

func (badResultScheduler) CloseSession(context.Context, *rpc.CloseSessionRequest) (*rpc.CloseSessionResponse, error) {
	return &rpc.CloseSessionResponse{}, nil
}

func (badResultScheduler) ExecuteQuery(context.Context, *rpc.ExecuteQueryRequest) (*rpc.ExecuteQueryResponse, error) {
	return &rpc.ExecuteQueryResponse{JobId: "job1"}, nil
}

func (f badResultScheduler) WatchJob(req *rpc.WatchJobRequest, stream grpc.ServerStreamingServer[rpc.JobStatus]) error {
	return stream.Send(&rpc.JobStatus{JobId: req.JobId, State: rpc.JobState_JOB_SUCCESSFUL,
		Result: []*rpc.PartitionLocations{{Locations: []*rpc.PartitionLocation{f.loc}}}})
}

// TestResultLocationsChecked: the result locations a scheduler sends are
// decoded with the codec's checks before the client dials the executor
// they name. A job id that is not one (here a path) is refused, and the
// "executor" it names is never contacted.
func TestResultLocationsChecked(t *testing.T) {
	executor, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var dialed atomic.Int32
	accepted := make(chan struct{})
	go func() { // ends when the listener closes
		defer close(accepted)
		for {
			c, err := executor.Accept()
			if err != nil {
				return
			}
			dialed.Add(1)
			c.Close()
		}
	}()
	defer func() { executor.Close(); <-accepted }()

	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	rpc.RegisterSchedulerServiceServer(srv, badResultScheduler{loc: &rpc.PartitionLocation{
		JobId:    "../../etc",
		Executor: &rpc.ExecutorMeta{Id: "e1", Host: "127.0.0.1", FlightPort: int32(executor.Addr().(*net.TCPAddr).Port)},
	}})
	served := make(chan struct{})
	go func() { defer close(served); srv.Serve(lis) }()
	defer func() { srv.Stop(); <-served }()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := quiver.Connect(ctx, lis.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	df, err := s.SQL(ctx, "SELECT 1 AS x")
	if err != nil {
		t.Fatal(err)
	}
	_, err = df.Collect(ctx)
	if !qerr.Is(err, qerr.Internal) || !strings.Contains(err.Error(), "invalid job id") {
		t.Errorf("a result location with a bad job id: %v, want an internal error naming the job id", err)
	}
	if n := dialed.Load(); n != 0 {
		t.Errorf("the client dialed the executor of a bad location %d times", n)
	}
}
