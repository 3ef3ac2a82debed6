package executor_test

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/quiverdb/quiver/exec/execop"
	"github.com/quiverdb/quiver/exec/exectest"
	"github.com/quiverdb/quiver/exec/memcheck"
	"github.com/quiverdb/quiver/executor"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/physical/codec"
	"github.com/quiverdb/quiver/qerr"
	"github.com/quiverdb/quiver/rpc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

const nationPath = "../tpch/sf0.01/nation.parquet"

// nationScan is a one-partition scan of nation.parquet.
func nationScan(t *testing.T) *physical.Scan {
	t.Helper()
	f, err := os.Open(nationPath)
	if err != nil {
		t.Fatalf("no TPC-H data: %v", err)
	}
	defer f.Close()
	tab, err := pqarrow.ReadTable(context.Background(), f, nil, pqarrow.ArrowReadProperties{}, memory.NewGoAllocator())
	if err != nil {
		t.Fatal(err)
	}
	defer tab.Release()
	abs, err := filepath.Abs(nationPath)
	if err != nil {
		t.Fatal(err)
	}
	return &physical.Scan{Table: "nation", Format: physical.FormatParquet, FileSchema: tab.Schema(), Partitions: [][]string{{abs}}, Fetch: -1}
}

// launch sends one task to e.
func launch(t *testing.T, c rpc.ExecutorServiceClient, w *physical.ShuffleWriter, partition int, settings map[string]string) *rpc.TaskId {
	t.Helper()
	plan, err := codec.Encode(w)
	if err != nil {
		t.Fatal(err)
	}
	id := &rpc.TaskId{JobId: w.JobID, StageId: int32(w.StageID), Partition: int32(partition)}
	_, err = c.LaunchTasks(context.Background(), &rpc.LaunchTasksRequest{Tasks: []*rpc.TaskDefinition{{Id: id, Plan: plan, Settings: settings}}})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// toLocation converts a reported location (as the scheduler would).
func toLocation(t *testing.T, l *rpc.PartitionLocation) physical.PartitionLocation {
	t.Helper()
	loc, err := codec.DecodeLocation(l)
	if err != nil {
		t.Fatal(err)
	}
	return signed(loc)
}

// fetchInts fetches every location over Flight and returns column col
// (int32 or int64) of all rows, sorted.
func fetchInts(t *testing.T, mem memory.Allocator, locs []physical.PartitionLocation, col string) []int64 {
	t.Helper()
	f := executor.NewFlightFetcher(mem)
	defer f.Close()
	ctx := context.Background()
	var out []int64
	for _, loc := range locs {
		op, err := f.Fetch(ctx, loc)
		if err != nil {
			t.Fatal(err)
		}
		if err := op.Open(ctx); err != nil {
			t.Fatal(err)
		}
		for {
			b, err := op.Next(ctx)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			idx := b.Schema().FieldIndices(col)
			if len(idx) != 1 {
				t.Fatalf("no column %s in %s", col, b.Schema())
			}
			switch a := b.Column(idx[0]).(type) {
			case *array.Int32:
				for i := range a.Len() {
					out = append(out, int64(a.Value(i)))
				}
			case *array.Int64:
				out = append(out, a.Int64Values()...)
			default:
				t.Fatalf("column %s is %s", col, a.DataType())
			}
			b.Release()
		}
		op.Close()
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

func checkNationKeys(t *testing.T, keys []int64) {
	t.Helper()
	if len(keys) != 25 {
		t.Fatalf("got %d nations, want 25", len(keys))
	}
	for i, k := range keys {
		if k != int64(i) {
			t.Fatalf("nation keys %v, want 0..24", keys)
		}
	}
}

func TestTaskWritesShuffleFilesServedOverFlight(t *testing.T) {
	mem := memcheck.New(t)
	sched := newFakeScheduler()
	e := startExecutor(t, startScheduler(t, sched), mem, nil)
	scan := nationScan(t)
	region := scan.FileSchema.FieldIndices("n_regionkey")[0]
	w := &physical.ShuffleWriter{Input: scan, JobID: "job-1", StageID: 1, N: 3,
		Keys: []physical.Expr{&physical.Column{Index: region, Name: "n_regionkey", Type: scan.FileSchema.Field(region).Type}}}
	id := launch(t, executorClient(t, e), w, 0, map[string]string{"quiver.batch_size": "7", "quiver.memory_limit": "64MB"})

	st := waitStatus(t, sched)
	if st.State != rpc.TaskState_TASK_SUCCESSFUL {
		t.Fatalf("task %v: %s %s", st.Id, st.State, st.Error)
	}
	if st.Id.JobId != id.JobId || st.Id.StageId != 1 || st.ExecutorId != e.Meta().ID {
		t.Errorf("status names task %v on %s", st.Id, st.ExecutorId)
	}
	var locs []physical.PartitionLocation
	var rows int64
	for _, l := range st.Locations {
		loc := toLocation(t, l)
		if loc.Executor != e.Meta() || loc.JobID != "job-1" || loc.StageID != 1 || loc.MapPartition != 0 {
			t.Errorf("location %+v", loc)
		}
		if l.Executor.GrpcPort != l.Executor.FlightPort || l.Executor.Vcores != 2 {
			t.Errorf("executor meta %v", l.Executor)
		}
		rows += loc.Rows
		locs = append(locs, loc)
	}
	if len(locs) != 3 || rows != 25 {
		t.Fatalf("%d locations with %d rows, want 3 with 25", len(locs), rows)
	}
	checkNationKeys(t, fetchInts(t, mem, locs, "n_nationkey"))
}

// TestTaskReadsAnotherExecutorsOutput runs stage 1 on one executor and
// stage 2 (a ShuffleReader of stage 1) on another, which fetches over
// Flight.
func TestTaskReadsAnotherExecutorsOutput(t *testing.T) {
	mem := memcheck.New(t)
	sched := newFakeScheduler()
	addr := startScheduler(t, sched)
	e1 := startExecutor(t, addr, mem, nil)
	e2 := startExecutor(t, addr, mem, nil)
	scan := nationScan(t)
	launch(t, executorClient(t, e1), &physical.ShuffleWriter{Input: scan, JobID: "j2", StageID: 1}, 0, nil)
	st := waitStatus(t, sched)
	if st.State != rpc.TaskState_TASK_SUCCESSFUL || len(st.Locations) != 1 {
		t.Fatalf("stage 1: %s %s %v", st.State, st.Error, st.Locations)
	}
	reader := &physical.ShuffleReader{StageID: 1, OutSchema: scan.Schema(), Locations: [][]physical.PartitionLocation{{toLocation(t, st.Locations[0])}}}
	launch(t, executorClient(t, e2), &physical.ShuffleWriter{Input: reader, JobID: "j2", StageID: 2, N: 1}, 0, nil)
	st = waitStatus(t, sched)
	if st.State != rpc.TaskState_TASK_SUCCESSFUL || len(st.Locations) != 1 {
		t.Fatalf("stage 2: %s %s %v", st.State, st.Error, st.Locations)
	}
	loc := toLocation(t, st.Locations[0])
	if loc.Executor.ID != e2.Meta().ID || loc.Rows != 25 {
		t.Errorf("stage 2 location %+v", loc)
	}
	checkNationKeys(t, fetchInts(t, mem, []physical.PartitionLocation{loc}, "n_nationkey"))
}

func TestTaskFailureReportsKind(t *testing.T) {
	mem := memcheck.New(t)
	sched := newFakeScheduler()
	e := startExecutor(t, startScheduler(t, sched), mem, nil)
	c := executorClient(t, e)
	scan := nationScan(t)
	scan.Partitions = [][]string{{filepath.Join(t.TempDir(), "missing.parquet")}}
	launch(t, c, &physical.ShuffleWriter{Input: scan, JobID: "bad", StageID: 1}, 0, nil)
	st := waitStatus(t, sched)
	if st.State != rpc.TaskState_TASK_FAILED || qerr.Kind(st.ErrorKind) != qerr.IO || st.Error == "" || st.FetchFailure != nil {
		t.Errorf("missing file: got %s kind %s %q fetch %v; want FAILED, io error", st.State, qerr.Kind(st.ErrorKind), st.Error, st.FetchFailure)
	}

	// A bad setting, a plan that does not decode and an invalid task id are
	// refused outright, before anything is queued (see TestLaunchRefusesHostileTasks).
	plan, err := codec.Encode(&physical.ShuffleWriter{Input: nationScan(t), JobID: "bad", StageID: 2})
	if err != nil {
		t.Fatal(err)
	}
	for name, def := range map[string]*rpc.TaskDefinition{
		"bad setting":  {Id: &rpc.TaskId{JobId: "bad", StageId: 2}, Plan: plan, Settings: map[string]string{"quiver.batch_size": "lots"}},
		"garbage plan": {Id: &rpc.TaskId{JobId: "bad", StageId: 3}, Plan: []byte("not a plan")},
		"bad job id":   {Id: &rpc.TaskId{JobId: "../x"}},
	} {
		_, err = c.LaunchTasks(context.Background(), &rpc.LaunchTasksRequest{Tasks: []*rpc.TaskDefinition{def}})
		if status.Code(err) != codes.InvalidArgument {
			t.Errorf("%s: got %v, want InvalidArgument", name, err)
		}
	}
}

func TestTaskPanicIsInternalError(t *testing.T) {
	mem := memcheck.New(t)
	sched := newFakeScheduler()
	e := startExecutor(t, startScheduler(t, sched), mem, func(c *executor.Config) {
		c.MemoryTables = func(string) ([][]arrow.RecordBatch, bool) { panic("boom") }
	})
	schema := arrow.NewSchema([]arrow.Field{{Name: "a", Type: arrow.PrimitiveTypes.Int64}}, nil)
	launch(t, executorClient(t, e), &physical.ShuffleWriter{Input: exectest.MemoryScan("t", schema, 1), JobID: "p", StageID: 1}, 0, nil)
	st := waitStatus(t, sched)
	if st.State != rpc.TaskState_TASK_FAILED || st.Error == "" {
		t.Errorf("got %s %q, want FAILED", st.State, st.Error)
	}
}

func TestTaskUsesMemoryTables(t *testing.T) {
	mem := memcheck.New(t)
	schema := arrow.NewSchema([]arrow.Field{{Name: "n_nationkey", Type: arrow.PrimitiveTypes.Int64}}, nil)
	tables := exectest.Tables{"t": {exectest.Batches(t, mem, schema, `[{"n_nationkey":0},{"n_nationkey":1},{"n_nationkey":2}]`, 1, 2)}}
	t.Cleanup(tables.Release) // after the executor closes
	sched := newFakeScheduler()
	e := startExecutor(t, startScheduler(t, sched), mem, func(c *executor.Config) { c.MemoryTables = tables.Lookup })
	launch(t, executorClient(t, e), &physical.ShuffleWriter{Input: exectest.MemoryScan("t", schema, 1), JobID: "m", StageID: 1, Compression: physical.CompressZstd}, 0, nil)
	st := waitStatus(t, sched)
	if st.State != rpc.TaskState_TASK_SUCCESSFUL || len(st.Locations) != 1 {
		t.Fatalf("got %s %q", st.State, st.Error)
	}
	got := fetchInts(t, mem, []physical.PartitionLocation{toLocation(t, st.Locations[0])}, "n_nationkey")
	if len(got) != 3 || got[0] != 0 || got[2] != 2 {
		t.Errorf("got %v, want [0 1 2]", got)
	}
}

func TestFetchFailureIsReported(t *testing.T) {
	mem := memcheck.New(t)
	sched := newFakeScheduler()
	addr := startScheduler(t, sched)
	e := startExecutor(t, addr, mem, nil)
	other := startExecutor(t, addr, mem, nil) // alive, but without the file
	scan := nationScan(t)
	lost := signed(physical.PartitionLocation{JobID: "ff", StageID: 1, OutputPartition: 0, MapPartition: 4, Executor: other.Meta()})
	reader := &physical.ShuffleReader{StageID: 1, OutSchema: scan.Schema(), Locations: [][]physical.PartitionLocation{{lost}}}
	launch(t, executorClient(t, e), &physical.ShuffleWriter{Input: reader, JobID: "ff", StageID: 2}, 0, nil)
	st := waitStatus(t, sched)
	ff := st.FetchFailure
	if st.State != rpc.TaskState_TASK_FAILED || ff == nil {
		t.Fatalf("got %s %q fetch failure %v", st.State, st.Error, ff)
	}
	if ff.ExecutorId != other.Meta().ID || ff.JobId != "ff" || ff.StageId != 1 || ff.MapPartition != 4 {
		t.Errorf("fetch failure %v, want executor %s job ff stage 1 map 4", ff, other.Meta().ID)
	}
}

func TestRemoveJobDataKeepsPinnedStages(t *testing.T) {
	mem := memcheck.New(t)
	sched := newFakeScheduler()
	e := startExecutor(t, startScheduler(t, sched), mem, nil)
	c := executorClient(t, e)
	ctx := context.Background()
	work := e.WorkDir()
	for _, s := range []int{1, 2, 3} {
		writeShuffleFile(t, work, "rj", s, 0, 0, []int{1})
	}
	writeShuffleFile(t, work, "other", 1, 0, 0, []int{1})
	exists := func(p ...string) bool {
		_, err := os.Stat(filepath.Join(append([]string{work}, p...)...))
		return err == nil
	}

	if _, err := c.RemoveJobData(ctx, &rpc.RemoveJobDataRequest{JobId: "rj", StageIds: []int32{1}}); err != nil {
		t.Fatal(err)
	}
	if exists("rj", "1") || !exists("rj", "2") || !exists("rj", "3") {
		t.Errorf("removing stage 1 of rj: stages left 1:%v 2:%v 3:%v", exists("rj", "1"), exists("rj", "2"), exists("rj", "3"))
	}
	if _, err := c.RemoveJobData(ctx, &rpc.RemoveJobDataRequest{JobId: "rj", PinnedStageIds: []int32{2}}); err != nil {
		t.Fatal(err)
	}
	if !exists("rj", "2", "0", "data-0.arrow") || exists("rj", "3") {
		t.Errorf("whole-job removal with stage 2 pinned: 2:%v 3:%v", exists("rj", "2"), exists("rj", "3"))
	}
	if _, err := c.RemoveJobData(ctx, &rpc.RemoveJobDataRequest{JobId: "rj", StageIds: []int32{2}}); err != nil {
		t.Fatal(err)
	}
	if exists("rj") {
		t.Errorf("job dir rj left after its last stage was removed")
	}
	if !exists("other", "1", "0", "data-0.arrow") {
		t.Errorf("another job's data was removed")
	}
	for _, bad := range []*rpc.RemoveJobDataRequest{{JobId: ".."}, {JobId: "../other"}, {JobId: ""}, {JobId: "other", StageIds: []int32{-1}}} {
		if _, err := c.RemoveJobData(ctx, bad); status.Code(err) != codes.InvalidArgument {
			t.Errorf("RemoveJobData(%v): got %v, want InvalidArgument", bad, err)
		}
	}
	if !exists("other", "1", "0", "data-0.arrow") {
		t.Errorf("a refused request removed data")
	}

	// A stage whose writer ran here as Pinned survives a whole-job sweep
	// even when the request does not list it.
	launch(t, c, &physical.ShuffleWriter{Input: nationScan(t), JobID: "cache", StageID: 1, Pinned: true}, 0, nil)
	if st := waitStatus(t, sched); st.State != rpc.TaskState_TASK_SUCCESSFUL {
		t.Fatalf("pinned task: %s %s", st.State, st.Error)
	}
	writeShuffleFile(t, work, "cache", 0, 0, 0, []int{1})
	if _, err := c.RemoveJobData(ctx, &rpc.RemoveJobDataRequest{JobId: "cache"}); err != nil {
		t.Fatal(err)
	}
	if !exists("cache", "1", "0", "data-0.arrow") || exists("cache", "0") {
		t.Errorf("sweep of job cache: pinned stage 1 kept %v, stage 0 kept %v", exists("cache", "1"), exists("cache", "0"))
	}
	if _, err := c.RemoveJobData(ctx, &rpc.RemoveJobDataRequest{JobId: "cache", StageIds: []int32{1}}); err != nil {
		t.Fatal(err)
	}
	if exists("cache") {
		t.Errorf("explicit removal of the pinned stage left job dir cache")
	}
}

func TestRegistrationAndHeartbeats(t *testing.T) {
	mem := memcheck.New(t)
	sched := newFakeScheduler()
	e := startExecutor(t, startScheduler(t, sched), mem, func(c *executor.Config) { c.ID = "exec-7"; c.VCores = 3 })
	<-sched.registered
	sched.mu.Lock()
	reg := sched.registrations[0]
	sched.reregister = true
	sched.mu.Unlock()
	m := reg.Executor
	if reg.ProtocolVersion != rpc.ProtocolVersion || m.Id != "exec-7" || m.Host != "127.0.0.1" || m.Vcores != 3 || m.GrpcPort != m.FlightPort || int(m.FlightPort) != e.Meta().FlightPort {
		t.Errorf("registration %v", reg)
	}
	// The next heartbeat asks for a new registration.
	select {
	case <-sched.registered:
	case <-time.After(10 * time.Second):
		t.Fatal("no re-registration after a heartbeat asked for one")
	}
	sched.mu.Lock()
	beats := sched.heartbeats
	sched.mu.Unlock()
	if beats == 0 {
		t.Error("no heartbeats")
	}
}

// TestStartWaitsForScheduler starts the executor before the scheduler:
// Start retries until the scheduler comes up.
func TestStartWaitsForScheduler(t *testing.T) {
	mem := memcheck.New(t)
	port := deadPort(t)
	addr := "127.0.0.1:" + itoa(port)
	sched := newFakeScheduler()
	done := make(chan struct{})
	go func() {
		defer close(done)
		time.Sleep(300 * time.Millisecond)
		lis, err := listenRetry(addr)
		if err != nil {
			t.Error(err)
			return
		}
		serveScheduler(t, sched, lis)
	}()
	e := startExecutor(t, addr, mem, nil)
	<-done
	if e.Addr() == "" {
		t.Fatal("no address")
	}
	select {
	case <-sched.registered:
	default:
		t.Error("Start returned before registering")
	}
}

// TestStartGivesUp checks Start returns when its context ends and the
// scheduler never answers, leaving nothing running.
func TestStartGivesUp(t *testing.T) {
	e, err := executor.New(executor.Config{SchedulerAddr: "127.0.0.1:" + itoa(deadPort(t)), WorkDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	if err := e.Start(ctx); err == nil {
		t.Fatal("Start succeeded without a scheduler")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Start took %s to give up", d)
	}
	if err := e.Close(); err != nil {
		t.Error(err)
	}
}

var _ execop.ShuffleFetcher = (*executor.FlightFetcher)(nil)

// TestSchedulerRestart stops the scheduler while a task runs: the status is
// retried until a new scheduler comes up on the same address, and the
// executor registers with it again.
func TestSchedulerRestart(t *testing.T) {
	mem := memcheck.New(t)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	first := newFakeScheduler()
	srv := grpc.NewServer()
	rpc.RegisterSchedulerServiceServer(srv, first)
	served := make(chan struct{})
	go func() { defer close(served); srv.Serve(lis) }()
	e := startExecutor(t, addr, mem, nil)
	srv.Stop()
	<-served

	launch(t, executorClient(t, e), &physical.ShuffleWriter{Input: nationScan(t), JobID: "restart", StageID: 1}, 0, nil)
	time.Sleep(200 * time.Millisecond) // the status fails to send at least once
	second := newFakeScheduler()
	lis2, err := listenRetry(addr)
	if err != nil {
		t.Fatal(err)
	}
	serveScheduler(t, second, lis2)
	if st := waitStatus(t, second); st.State != rpc.TaskState_TASK_SUCCESSFUL {
		t.Errorf("status after restart: %s %s", st.State, st.Error)
	}
	select {
	case <-second.registered:
	case <-time.After(10 * time.Second):
		t.Error("no registration with the restarted scheduler")
	}
}

// TestCloseDuringStart closes an executor whose Start is still trying to
// reach the scheduler: Start gives up at once.
func TestCloseDuringStart(t *testing.T) {
	e, err := executor.New(executor.Config{SchedulerAddr: "127.0.0.1:" + itoa(deadPort(t)), WorkDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() { errc <- e.Start(context.Background()) }()
	time.Sleep(200 * time.Millisecond)
	if err := e.Close(); err != nil {
		t.Error(err)
	}
	select {
	case err := <-errc:
		if err == nil {
			t.Error("Start succeeded after Close")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Start did not return after Close")
	}
}
