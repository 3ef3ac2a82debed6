package executor_test

import (
	"context"
	"path/filepath"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver/exec/exectest"
	"github.com/quiverdb/quiver/exec/memcheck"
	"github.com/quiverdb/quiver/executor"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/physical/codec"
	"github.com/quiverdb/quiver/qerr"
	"github.com/quiverdb/quiver/rpc"
)

// launchWhole sends w to e as one whole-stage task (all partitions).
func launchWhole(t *testing.T, c rpc.ExecutorServiceClient, w *physical.ShuffleWriter) {
	t.Helper()
	plan, err := codec.Encode(w)
	if err != nil {
		t.Fatal(err)
	}
	id := &rpc.TaskId{JobId: w.JobID, StageId: int32(w.StageID)}
	if _, err := c.LaunchTasks(context.Background(), &rpc.LaunchTasksRequest{Tasks: []*rpc.TaskDefinition{{Id: id, Plan: plan, AllPartitions: true}}}); err != nil {
		t.Fatal(err)
	}
}

// TestWholeStageTask runs a plan with an in-memory hash exchange as one
// task: every partition runs, sharing the exchange, and the task reports
// the file of each.
func TestWholeStageTask(t *testing.T) {
	mem := memcheck.New(t)
	sched := newFakeScheduler()
	e := startExecutor(t, startScheduler(t, sched), mem, nil)
	scan := nationScan(t)
	region := scan.FileSchema.FieldIndices("n_regionkey")[0]
	key := &physical.Column{Index: region, Name: "n_regionkey", Type: scan.FileSchema.Field(region).Type}
	// One scan partition spread over three by an in-memory repartition:
	// built one partition per task, partitions 1 and 2 would never run.
	w := &physical.ShuffleWriter{Input: &physical.Repartition{Input: scan, Keys: []physical.Expr{key}, N: 3}, JobID: "whole-1", StageID: 1}
	launchWhole(t, executorClient(t, e), w)
	st := waitStatus(t, sched)
	if st.State != rpc.TaskState_TASK_SUCCESSFUL {
		t.Fatalf("task %v: %s %s", st.Id, st.State, st.Error)
	}
	var locs []physical.PartitionLocation
	var rows int64
	seen := map[int]bool{}
	for _, l := range st.Locations {
		loc := toLocation(t, l)
		if loc.Executor != e.Meta() || loc.OutputPartition != loc.MapPartition || seen[loc.OutputPartition] {
			t.Errorf("location %+v", loc)
		}
		seen[loc.OutputPartition] = true
		rows += loc.Rows
		locs = append(locs, loc)
	}
	if len(locs) != 3 || rows != 25 {
		t.Fatalf("%d locations with %d rows, want 3 with 25", len(locs), rows)
	}
	checkNationKeys(t, fetchInts(t, mem, locs, "n_nationkey"))
	// Each output partition holds whole regions: the exchange hashed them.
	regions := map[int64]int{}
	for _, loc := range locs {
		for _, r := range fetchInts(t, mem, []physical.PartitionLocation{loc}, "n_regionkey") {
			if p, ok := regions[r]; ok && p != loc.OutputPartition {
				t.Errorf("region %d in partitions %d and %d", r, p, loc.OutputPartition)
			}
			regions[r] = loc.OutputPartition
		}
	}
}

// TestWholeStageTaskFailure: one failing partition fails the task with its
// error and stops the others (goleak checks that they all ended).
func TestWholeStageTaskFailure(t *testing.T) {
	mem := memcheck.New(t)
	sched := newFakeScheduler()
	e := startExecutor(t, startScheduler(t, sched), mem, func(c *executor.Config) {
		c.MemoryTables = func(string) ([][]arrow.RecordBatch, bool) { panic("boom") }
	})
	c := executorClient(t, e)
	scan := nationScan(t)
	scan.Partitions = [][]string{scan.Partitions[0][:1], {filepath.Join(t.TempDir(), "missing.parquet")}}
	launchWhole(t, c, &physical.ShuffleWriter{Input: &physical.Repartition{Input: scan, N: 4}, JobID: "whole-2", StageID: 1})
	if st := waitStatus(t, sched); st.State != rpc.TaskState_TASK_FAILED || qerr.Kind(st.ErrorKind) != qerr.IO {
		t.Errorf("missing file: got %s kind %s %q; want FAILED, io error", st.State, qerr.Kind(st.ErrorKind), st.Error)
	}
	schema := arrow.NewSchema([]arrow.Field{{Name: "a", Type: arrow.PrimitiveTypes.Int64}}, nil)
	launchWhole(t, c, &physical.ShuffleWriter{Input: exectest.MemoryScan("t", schema, 3), JobID: "whole-3", StageID: 1})
	if st := waitStatus(t, sched); st.State != rpc.TaskState_TASK_FAILED || qerr.Kind(st.ErrorKind) != qerr.Internal {
		t.Errorf("panicking partition: got %s kind %s %q; want FAILED, internal", st.State, qerr.Kind(st.ErrorKind), st.Error)
	}
	// A whole-stage task must be partition 0: LaunchTasks refuses others.
	plan, err := codec.Encode(&physical.ShuffleWriter{Input: nationScan(t), JobID: "whole-4", StageID: 1})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.LaunchTasks(context.Background(), &rpc.LaunchTasksRequest{Tasks: []*rpc.TaskDefinition{{
		Id: &rpc.TaskId{JobId: "whole-4", StageId: 1, Partition: 2}, Plan: plan, AllPartitions: true}}})
	if status.Code(err) != codes.InvalidArgument {
		t.Errorf("whole task of partition 2: got %v, want InvalidArgument", err)
	}
}
