package executor_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/quiverdb/quiver/exec/exectest"
	"github.com/quiverdb/quiver/exec/memcheck"
	"github.com/quiverdb/quiver/exec/spill"
	"github.com/quiverdb/quiver/executor"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
	"github.com/quiverdb/quiver/rpc"
)

// TestExecutorMemoryLimit: a task that sets no quiver.memory_limit of its
// own still cannot hold more than the executor's --memory-limit; it fails
// with a resources error that names that limit, the executor's count goes
// back to zero, and the executor goes on running tasks that fit.
func TestExecutorMemoryLimit(t *testing.T) {
	mem := memcheck.New(t)
	schema := arrow.NewSchema([]arrow.Field{{Name: "a", Type: arrow.PrimitiveTypes.Int64}}, nil)
	const rows = 200_000 // 1.6 MB of values, every one its own group
	b := array.NewInt64Builder(mem)
	for i := range rows {
		b.Append(int64(rows - i))
	}
	col := b.NewArray()
	b.Release()
	big := array.NewRecordBatch(schema, []arrow.Array{col}, rows)
	col.Release()
	small := exectest.Batches(t, mem, schema, `[{"a":3},{"a":1},{"a":2}]`)
	tables := exectest.Tables{"big": {{big}}, "small": {small}}
	t.Cleanup(tables.Release) // after the executor closes

	sched := newFakeScheduler()
	e := startExecutor(t, startScheduler(t, sched), mem, func(c *executor.Config) {
		c.MemoryTables = tables.Lookup
		c.MemoryLimit = 4 << 20
	})
	c := executorClient(t, e)
	// array_agg without GROUP BY keeps its one list of rows in memory (its
	// ORDER BY and DISTINCT would need every row at once, so it cannot
	// spill): 200,000 rows do not fit in 4 MiB.
	groupOf := func(table string) *physical.HashAggregate {
		a := &physical.Column{Index: 0, Name: "a", Type: arrow.PrimitiveTypes.Int64}
		return &physical.HashAggregate{Input: exectest.MemoryScan(table, schema, 1), Mode: physical.AggSingle,
			Aggs: []physical.AggregateExpr{{Func: physical.AggArrayAgg, Type: arrow.ListOf(arrow.PrimitiveTypes.Int64), Name: "as",
				Arg: &physical.ScalarFunc{Name: physical.PairFunc, Args: []physical.Expr{a}, Type: physical.RowType(arrow.PrimitiveTypes.Int64)}}}}
	}

	launch(t, c, &physical.ShuffleWriter{Input: groupOf("big"), JobID: "big", StageID: 1}, 0, nil)
	st := waitStatus(t, sched)
	if st.State != rpc.TaskState_TASK_FAILED || qerr.Kind(st.ErrorKind) != qerr.Resources || !strings.Contains(st.Error, "executor's memory limit") {
		t.Fatalf("big grouping: got %s kind %s %q; want a resources failure naming the executor's memory limit", st.State, qerr.Kind(st.ErrorKind), st.Error)
	}
	// A query's own limit cannot raise the executor's.
	launch(t, c, &physical.ShuffleWriter{Input: groupOf("big"), JobID: "big2", StageID: 1}, 0, map[string]string{"quiver.memory_limit": "1GiB"})
	if st := waitStatus(t, sched); st.State != rpc.TaskState_TASK_FAILED || qerr.Kind(st.ErrorKind) != qerr.Resources {
		t.Fatalf("big grouping with a larger session limit: got %s kind %s %q; want a resources failure", st.State, qerr.Kind(st.ErrorKind), st.Error)
	}
	waitMemory(t, e, 0)

	launch(t, c, &physical.ShuffleWriter{Input: groupOf("small"), JobID: "small", StageID: 1}, 0, nil)
	if st := waitStatus(t, sched); st.State != rpc.TaskState_TASK_SUCCESSFUL {
		t.Fatalf("small grouping after the failure: got %s %q", st.State, st.Error)
	}
	waitMemory(t, e, 0)
}

// waitMemory waits until the executor's tasks hold want bytes (a task's
// buffers are returned just after its status is sent).
func waitMemory(t *testing.T, e *executor.Executor, want int64) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for e.MemoryInUse() != want {
		if time.Now().After(deadline) {
			t.Fatalf("executor memory in use: %d bytes, want %d", e.MemoryInUse(), want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestStaleSpillFilesRemovedAtStart: spill files a killed executor left in
// its work dir are gone once an executor starts on it.
func TestStaleSpillFilesRemovedAtStart(t *testing.T) {
	dir := t.TempDir()
	stale := filepath.Join(dir, spill.DirName, "sort-1.arrows")
	if err := os.MkdirAll(filepath.Dir(stale), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(stale, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	startExecutor(t, startScheduler(t, newFakeScheduler()), memcheck.New(t), func(c *executor.Config) { c.WorkDir = dir })
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Fatalf("stale spill file still there after start: %v", err)
	}
}
