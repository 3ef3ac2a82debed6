package executor_test

import (
	"context"
	"runtime"
	"testing"

	"github.com/quiverdb/quiver/exec/memcheck"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/rpc"
)

// Tasks reading a cache share one mapping of each cache file, and removing
// the cache's stage forgets its mappings.
func TestCacheFilesStayMappedUntilRemoved(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("files are mapped only on linux")
	}
	mem := memcheck.New(t)
	sched := newFakeScheduler()
	e := startExecutor(t, startScheduler(t, sched), mem, nil)
	c := executorClient(t, e)
	scan := nationScan(t)

	launch(t, c, &physical.ShuffleWriter{Input: scan, JobID: "cache", StageID: 1, Pinned: true}, 0, nil)
	st := waitStatus(t, sched)
	if st.State != rpc.TaskState_TASK_SUCCESSFUL || len(st.Locations) != 1 {
		t.Fatalf("cache build: %s %s %v", st.State, st.Error, st.Locations)
	}
	locs := [][]physical.PartitionLocation{{toLocation(t, st.Locations[0])}}
	reader := &physical.CacheReader{Key: physical.CacheKey{SessionID: "s", CacheID: "c"}, Name: "nation", OutSchema: scan.Schema(), Locations: locs}
	plain := &physical.ShuffleReader{StageID: 1, OutSchema: scan.Schema(), Locations: locs}

	// A plain shuffle read maps its file for itself.
	launch(t, c, &physical.ShuffleWriter{Input: plain, JobID: "q0", StageID: 1, N: 1}, 0, nil)
	if st := waitStatus(t, sched); st.State != rpc.TaskState_TASK_SUCCESSFUL {
		t.Fatalf("shuffle read: %s %s", st.State, st.Error)
	}
	if n := e.Maps().Len(); n != 0 {
		t.Fatalf("a shuffle read left %d files mapped", n)
	}
	for _, job := range []string{"q1", "q2"} {
		launch(t, c, &physical.ShuffleWriter{Input: reader, JobID: job, StageID: 1, N: 1}, 0, nil)
		st := waitStatus(t, sched)
		if st.State != rpc.TaskState_TASK_SUCCESSFUL || len(st.Locations) != 1 {
			t.Fatalf("query %s: %s %s", job, st.State, st.Error)
		}
		if loc := toLocation(t, st.Locations[0]); loc.Rows != 25 {
			t.Errorf("query %s read %d rows, want 25", job, loc.Rows)
		}
		checkNationKeys(t, fetchInts(t, mem, []physical.PartitionLocation{toLocation(t, st.Locations[0])}, "n_nationkey"))
		if n := e.Maps().Len(); n != 1 {
			t.Errorf("after query %s: %d files mapped, want the cache's 1", job, n)
		}
	}
	// A whole-job sweep keeps the pinned stage, and so its mapping.
	if _, err := c.RemoveJobData(context.Background(), &rpc.RemoveJobDataRequest{JobId: "cache"}); err != nil {
		t.Fatal(err)
	}
	if n := e.Maps().Len(); n != 1 {
		t.Errorf("after a sweep that kept the pinned stage: %d files mapped, want 1", n)
	}
	if _, err := c.RemoveJobData(context.Background(), &rpc.RemoveJobDataRequest{JobId: "cache", StageIds: []int32{1}}); err != nil {
		t.Fatal(err)
	}
	if n := e.Maps().Len(); n != 0 {
		t.Errorf("after removing the cache's stage: %d files still mapped", n)
	}
}
