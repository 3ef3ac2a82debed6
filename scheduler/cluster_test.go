package scheduler

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/quiverdb/quiver/catalog"
	"github.com/quiverdb/quiver/executor"
	"github.com/quiverdb/quiver/logical"
	"github.com/quiverdb/quiver/logical/optimizer"
	"github.com/quiverdb/quiver/rpc"
	"github.com/quiverdb/quiver/sql"
)

// End to end in one process: a scheduler and two real executors on
// loopback, TPC-H queries planned here, results fetched over Flight.

const tpchDir = "../tpch"

var tpchTables = []string{"region", "nation", "part", "supplier", "partsupp", "customer", "orders", "lineitem"}

func tpchCatalog(t testing.TB) *catalog.Catalog {
	t.Helper()
	cat := catalog.New()
	for _, name := range tpchTables {
		tab, err := catalog.OpenTable(name, catalog.Parquet, filepath.Join(tpchDir, "sf0.01", name+".parquet"), nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := cat.RegisterTable(tab, false); err != nil {
			t.Fatal(err)
		}
	}
	return cat
}

func tpchLogical(t testing.TB, cat *catalog.Catalog, q int) logical.Plan {
	t.Helper()
	text, err := os.ReadFile(filepath.Join(tpchDir, "queries", fmt.Sprintf("q%02d.sql", q)))
	if err != nil {
		t.Fatal(err)
	}
	lp, err := sql.NewPlanner(cat).PlanQuery(string(text))
	if err != nil {
		t.Fatalf("q%02d: plan: %v", q, err)
	}
	if lp, err = optimizer.New().Optimize(context.Background(), lp, nil); err != nil {
		t.Fatalf("q%02d: optimize: %v", q, err)
	}
	return lp
}

// answer reads an answer file: its header and its rows (| separated).
func answer(t testing.TB, q int) (header []string, rows [][]string) {
	t.Helper()
	f, err := os.Open(filepath.Join(tpchDir, "answers", fmt.Sprintf("q%02d.csv", q)))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Split(sc.Text(), "|")
		if header == nil {
			header = fields
			continue
		}
		rows = append(rows, fields)
	}
	return header, rows
}

type cluster struct {
	sched  *Scheduler
	execs  []*executor.Executor
	dirs   []string
	conn   *grpc.ClientConn
	client rpc.SchedulerServiceClient
}

func startCluster(t *testing.T, ctx context.Context, cfg Config, nExec int, mem memory.Allocator) *cluster {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	c := &cluster{sched: s}
	// The work dirs are made before the cleanup that closes the executors
	// is registered, so they are removed after it (cleanups run last
	// first): an executor still writing never races their removal.
	dirs := make([]string, nExec)
	for i := range dirs {
		dirs[i] = t.TempDir()
	}
	t.Cleanup(func() {
		if c.conn != nil {
			c.conn.Close()
		}
		for _, e := range c.execs {
			if err := e.Close(); err != nil {
				t.Errorf("close executor: %v", err)
			}
		}
		if err := s.Close(); err != nil {
			t.Errorf("close scheduler: %v", err)
		}
	})
	for i := range nExec {
		dir := dirs[i]
		e, err := executor.New(executor.Config{
			SchedulerAddr: s.Addr(), BindAddr: "127.0.0.1:0", WorkDir: dir, VCores: 2,
			ID: fmt.Sprintf("exec-%d", i+1), HeartbeatInterval: 100 * time.Millisecond, Allocator: mem,
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := e.Start(ctx); err != nil {
			t.Fatal(err)
		}
		c.execs = append(c.execs, e)
		c.dirs = append(c.dirs, dir)
	}
	c.conn, err = grpc.NewClient(s.Addr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	c.client = rpc.NewSchedulerServiceClient(c.conn)
	// Wait until every executor has registered.
	deadline := time.Now().Add(10 * time.Second)
	for {
		var n int
		if err := s.inspect(ctx, func(c *core) { n = len(c.executors) }); err != nil {
			t.Fatal(err)
		}
		if n == nExec {
			return c
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d executors registered", n, nExec)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (c *cluster) session(t *testing.T, ctx context.Context, settings map[string]string) string {
	t.Helper()
	r, err := c.client.CreateSession(ctx, &rpc.CreateSessionRequest{ProtocolVersion: rpc.ProtocolVersion, Settings: settings})
	if err != nil {
		t.Fatal(err)
	}
	return r.SessionId
}

// watch follows a job to its terminal status.
func (c *cluster) watch(t *testing.T, ctx context.Context, jobID string) *rpc.JobStatus {
	t.Helper()
	stream, err := c.client.WatchJob(ctx, &rpc.WatchJobRequest{JobId: jobID})
	if err != nil {
		t.Fatal(err)
	}
	var last *rpc.JobStatus
	for {
		st, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			if last == nil {
				t.Fatal("watch ended without a status")
			}
			return last
		}
		if err != nil {
			t.Fatalf("watch %s: %v", jobID, err)
		}
		last = st
	}
}

// fetch reads every result partition of a successful job over Flight.
func fetchResult(t *testing.T, ctx context.Context, mem memory.Allocator, st *rpc.JobStatus) (*arrow.Schema, []arrow.RecordBatch) {
	t.Helper()
	schema, err := flight.DeserializeSchema(st.ResultSchema, mem)
	if err != nil {
		t.Fatal(err)
	}
	f := executor.NewFlightFetcher(mem)
	defer f.Close()
	var out []arrow.RecordBatch
	for _, part := range st.Result {
		for i, l := range locationsFromRPC(part.Locations) {
			l.Ticket = string(part.Locations[i].Ticket) // the scheduler's signed ticket
			op, err := f.Fetch(ctx, l)
			if err != nil {
				t.Fatalf("fetch %s: %v", l, err)
			}
			if err := op.Open(ctx); err != nil {
				t.Fatalf("open %s: %v", l, err)
			}
			for {
				b, err := op.Next(ctx)
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatalf("read %s: %v", l, err)
				}
				out = append(out, b)
			}
			if err := op.Close(); err != nil {
				t.Fatal(err)
			}
		}
	}
	return schema, out
}

func TestClusterTPCH(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster test")
	}
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := startCluster(t, ctx, Config{HeartbeatTimeout: 5 * time.Second, FinalStageCleanupDelay: 30 * time.Second}, 2, mem)
	sess := c.session(t, ctx, map[string]string{"quiver.target_partitions": "3"})
	cat := tpchCatalog(t)

	for q := 1; q <= 22; q++ {
		t.Run(fmt.Sprintf("q%02d", q), func(t *testing.T) {
			st := c.runTPCH(t, ctx, mem, sess, cat, q)
			if c.whole(t, ctx, st.JobId) {
				t.Error("a whole stage on two executors: the exchanges must be shuffles")
			}
		})
	}
}

// TestClusterOneExecutorInMemory: with one executor, each job runs as one
// whole stage (one task of all partitions, exchanges in memory); with
// quiver.exchange_mode=shuffle it is cut into stages as on a cluster.
func TestClusterOneExecutorInMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster test")
	}
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := startCluster(t, ctx, Config{HeartbeatTimeout: 5 * time.Second, FinalStageCleanupDelay: 30 * time.Second}, 1, mem)
	auto := c.session(t, ctx, map[string]string{"quiver.target_partitions": "3"})
	shuffle := c.session(t, ctx, map[string]string{"quiver.target_partitions": "3", "quiver.exchange_mode": "shuffle"})
	// A session's settings are checked when it is created.
	_, err := c.client.CreateSession(ctx, &rpc.CreateSessionRequest{ProtocolVersion: rpc.ProtocolVersion, Settings: map[string]string{"quiver.exchange_mode": "memory"}})
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), `scheduler: setting quiver.exchange_mode: want one of auto, shuffle, got "memory"`) {
		t.Errorf("CreateSession with a bad setting: %v", err)
	}
	cat := tpchCatalog(t)
	for _, q := range []int{1, 3, 13, 18, 21, 22} {
		t.Run(fmt.Sprintf("q%02d", q), func(t *testing.T) {
			if st := c.runTPCH(t, ctx, mem, auto, cat, q); st.StagesTotal != 1 || st.TasksTotal != 1 || !c.whole(t, ctx, st.JobId) {
				t.Errorf("auto mode: %d stages, %d tasks; want one whole stage", st.StagesTotal, st.TasksTotal)
			}
			if st := c.runTPCH(t, ctx, mem, shuffle, cat, q); c.whole(t, ctx, st.JobId) {
				t.Errorf("shuffle mode ran a whole stage (%d stages)", st.StagesTotal)
			}
		})
	}
}

// whole reports whether job ran as one whole stage.
func (c *cluster) whole(t *testing.T, ctx context.Context, jobID string) bool {
	t.Helper()
	var w bool
	if err := c.sched.inspect(ctx, func(c *core) {
		if j := c.jobs[jobID]; j != nil && len(j.order) == 1 {
			w = j.stages[j.order[0]].whole
		}
	}); err != nil {
		t.Fatal(err)
	}
	return w
}

// runTPCH runs TPC-H query q in session sess, checks its row count and
// first column against the answer and returns the job's final status.
func (c *cluster) runTPCH(t *testing.T, ctx context.Context, mem memory.Allocator, sess string, cat *catalog.Catalog, q int) *rpc.JobStatus {
	t.Helper()
	jobID := c.submit(t, ctx, sess, tpchLogical(t, cat, q))
	st := c.watch(t, ctx, jobID)
	if st.State != rpc.JobState_JOB_SUCCESSFUL {
		t.Fatalf("job %s: %s", st.State, st.Error)
	}
	if st.StagesDone != st.StagesTotal || st.TasksDone != st.TasksTotal {
		t.Errorf("status %d/%d stages, %d/%d tasks", st.StagesDone, st.StagesTotal, st.TasksDone, st.TasksTotal)
	}
	schema, batches := fetchResult(t, ctx, mem, st)
	defer func() {
		for _, b := range batches {
			b.Release()
		}
	}()
	header, rows := answer(t, q)
	if schema.NumFields() != len(header) {
		t.Fatalf("%d result columns, answer has %d", schema.NumFields(), len(header))
	}
	n := 0
	for _, b := range batches {
		n += int(b.NumRows())
	}
	if n != len(rows) {
		t.Fatalf("%d rows, answer has %d", n, len(rows))
	}
	// Spot-check: the first column's values as a multiset (result
	// partitions come back in any order unless the query sorts).
	if n > 0 {
		want := map[string]int{}
		for _, r := range rows {
			want[r[0]]++
		}
		for _, b := range batches {
			col := b.Column(0)
			for i := range col.Len() {
				want[valueString(col, i)]--
			}
		}
		for v, k := range want {
			if k != 0 {
				t.Errorf("column %s value %q: count off by %d (type %s)", header[0], v, k, schema.Field(0).Type)
				break
			}
		}
	}
	return st
}

// valueString renders a cell like the answer files for the spot check.
func valueString(a arrow.Array, i int) string {
	if a.IsNull(i) {
		return ""
	}
	switch a := a.(type) {
	case *array.String:
		return a.Value(i)
	case *array.Int64:
		return fmt.Sprint(a.Value(i))
	case *array.Int32:
		return fmt.Sprint(a.Value(i))
	case *array.Decimal128:
		return a.Value(i).ToString(a.DataType().(*arrow.Decimal128Type).Scale)
	}
	return a.ValueStr(i)
}
