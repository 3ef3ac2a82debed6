package scheduler

import (
	"context"
	"net"
	"testing"

	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
	"github.com/quiverdb/quiver/rpc"
	"google.golang.org/grpc"
)

// TestSuspectedExecutorLostOnProbe: a fetch failure naming an executor
// starts one probe of it (not one per failure); a failed probe loses it at
// once — its output is recomputed elsewhere without waiting for the
// heartbeat timeout — and a probe that answers clears the suspicion.
func TestSuspectedExecutorLostOnProbe(t *testing.T) {
	h := newHarness(t, Config{})
	h.register("e1", 1)
	h.register("e2", 1)
	h.submit("j", chain("j"))
	h.succeed("j", 1, 0, 2) // output on e1
	h.succeed("j", 1, 1, 2) // output on e2
	acts := h.fail("j", 2, 0, qerr.IO, &rpc.FetchFailure{ExecutorId: "e2", JobId: "j", StageId: 1, MapPartition: 1})
	probes := ofType[actProbe](acts)
	if len(probes) != 1 || probes[0].executorID != "e2" || probes[0].addr != "127.0.0.1:1000" {
		t.Fatalf("probes after a fetch failure: %+v, want one of e2", probes)
	}
	// A second sign while the probe runs starts no second probe.
	if got := ofType[actProbe](h.send(evSuspect{executorID: "e2", why: "its connection dropped"})); len(got) != 0 {
		t.Fatalf("a second probe started: %+v", got)
	}

	// e2 answers: it stays.
	h.send(evProbed{executorID: "e2", alive: true, why: probes[0].why})
	if ex := h.c.executors["e2"]; ex == nil || ex.suspected {
		t.Fatalf("e2 after answering its probe: %+v", ex)
	}

	// Suspected again by its address (a dropped connection knows no id),
	// and this time it does not answer: lost now.
	h.send(evRegister{meta: physical.ExecutorMeta{ID: "e2", Host: "127.0.0.1", FlightPort: 2000}, grpcPort: 2000, vcores: 1, reply: make(chan struct{}, 1)})
	acts = h.send(evSuspect{addr: "127.0.0.1:2000", why: "its connection dropped"})
	if p := ofType[actProbe](acts); len(p) != 1 || p[0].executorID != "e2" {
		t.Fatalf("no probe for a new suspicion: %v", acts)
	}
	acts = h.send(evProbed{executorID: "e2", alive: false, err: net.ErrClosed, why: "its connection dropped"})
	if _, ok := h.c.executors["e2"]; ok {
		t.Fatal("e2 not lost after its probe failed")
	}
	if len(ofType[actDropExecutor](acts)) != 1 {
		t.Fatalf("no drop action: %v", acts)
	}
}

// TestLaunchFailureSuspects: a launch that fails on the connection (not
// refused as invalid) starts a probe at once; a refused one does not.
func TestLaunchFailureSuspects(t *testing.T) {
	h := newHarness(t, Config{})
	h.register("e1", 2)
	h.submit("j", chain("j"))
	id := &rpc.TaskId{JobId: "j", StageId: 1, Partition: 0}
	if got := ofType[actProbe](h.send(evLaunchFailed{executorID: "e1", tasks: []*rpc.TaskId{id}, err: net.ErrClosed, refused: true})); len(got) != 0 {
		t.Fatalf("a refused launch started a probe: %+v", got)
	}
	id = &rpc.TaskId{JobId: "j", StageId: 1, Partition: 1}
	if got := ofType[actProbe](h.send(evLaunchFailed{executorID: "e1", tasks: []*rpc.TaskId{id}, err: net.ErrClosed})); len(got) != 1 {
		t.Fatalf("a failed launch started %d probes, want 1", len(got))
	}
}

// TestProbe: a server that answers (even with an error) is alive; a
// listener that accepts connections but never answers, and a closed port,
// are not.
func TestProbe(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	rpc.RegisterExecutorServiceServer(srv, rpc.UnimplementedExecutorServiceServer{})
	done := make(chan struct{})
	go func() { defer close(done); srv.Serve(lis) }()
	if err := probe(context.Background(), lis.Addr().String()); err != nil {
		t.Fatalf("probe of a serving executor: %v", err)
	}
	srv.Stop()
	<-done

	mute, err := net.Listen("tcp", "127.0.0.1:0") // accepts into its backlog, never speaks
	if err != nil {
		t.Fatal(err)
	}
	defer mute.Close()
	if err := probe(context.Background(), mute.Addr().String()); err == nil {
		t.Fatal("probe of a listener that never answers succeeded")
	}
	addr := mute.Addr().String()
	mute.Close()
	if err := probe(context.Background(), addr); err == nil {
		t.Fatal("probe of a closed port succeeded")
	}
}
