package executor_test

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/quiverdb/quiver/exec/memcheck"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/physical/codec"
	"github.com/quiverdb/quiver/rpc"
)

// corpusInput reads one input of a committed fuzz corpus.
func corpusInput(t *testing.T, path string) []byte {
	t.Helper()
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(text)), "\n")
	s, err := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(lines[len(lines)-1], "[]byte("), ")"))
	if err != nil {
		t.Fatal(err)
	}
	return []byte(s)
}

// TestLaunchRefusesHostileTasks: a request holding a forged plan (the Arrow
// schema whose field count once made a worker ask for ~377 GB and killed
// the executor) is refused whole with InvalidArgument, before anything is
// queued: its valid sibling task does not run either, and the executor
// keeps serving.
func TestLaunchRefusesHostileTasks(t *testing.T) {
	mem := memcheck.New(t)
	sched := newFakeScheduler()
	e := startExecutor(t, startScheduler(t, sched), mem, nil)
	c := executorClient(t, e)
	good, err := codec.Encode(&physical.ShuffleWriter{Input: nationScan(t), JobID: "j", StageID: 1})
	if err != nil {
		t.Fatal(err)
	}
	goodDef := &rpc.TaskDefinition{Id: &rpc.TaskId{JobId: "j", StageId: 1}, Plan: good}
	for name, plan := range map[string][]byte{
		"forged field count": corpusInput(t, "../physical/codec/testdata/fuzz/FuzzDecode/crash_forged_field_count"),
		"shuffle partitions": corpusInput(t, "../physical/codec/testdata/fuzz/FuzzDecode/crash_shuffle_partitions"),
	} {
		bad := &rpc.TaskDefinition{Id: &rpc.TaskId{JobId: "j", StageId: 1, Partition: 1}, Plan: plan}
		_, err := c.LaunchTasks(context.Background(), &rpc.LaunchTasksRequest{Tasks: []*rpc.TaskDefinition{goodDef, bad}})
		if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "codec:") {
			t.Errorf("%s: got %v, want InvalidArgument naming the codec", name, err)
		}
	}
	// A plan of another job or stage than its task id is refused too.
	other := &rpc.TaskDefinition{Id: &rpc.TaskId{JobId: "k", StageId: 1}, Plan: good}
	if _, err := c.LaunchTasks(context.Background(), &rpc.LaunchTasksRequest{Tasks: []*rpc.TaskDefinition{other}}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("plan of another job: got %v, want InvalidArgument", err)
	}
	select {
	case st := <-sched.statuses:
		t.Fatalf("a task of a refused request ran: %v", st)
	case <-time.After(300 * time.Millisecond):
	}
	if _, err := c.LaunchTasks(context.Background(), &rpc.LaunchTasksRequest{Tasks: []*rpc.TaskDefinition{goodDef}}); err != nil {
		t.Fatal(err)
	}
	if st := waitStatus(t, sched); st.State != rpc.TaskState_TASK_SUCCESSFUL {
		t.Fatalf("valid task after refused ones: %v", st)
	}
}
