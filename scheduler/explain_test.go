package scheduler

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	logicalcodec "github.com/quiverdb/quiver/logical/codec"
	"github.com/quiverdb/quiver/rpc"
)

// TestExplainQueryPlansWithoutRunning: ExplainQuery answers with the plan
// and the cut a job would get from this scheduler (its target partitions
// and exchange mode), refuses an unknown session before decoding, and
// creates no job.
func TestExplainQueryPlansWithoutRunning(t *testing.T) {
	s := startScheduler(t, Config{})
	c := dial(t, s.Addr())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := c.ExplainQuery(ctx, &rpc.ExplainQueryRequest{SessionId: "nope", LogicalPlan: []byte{1, 2, 3}}); status.Code(err) != codes.NotFound {
		t.Fatalf("unknown session: got %v, want NotFound", err)
	}
	sess, err := c.CreateSession(ctx, &rpc.CreateSessionRequest{ProtocolVersion: rpc.ProtocolVersion})
	if err != nil {
		t.Fatal(err)
	}
	plan, err := logicalcodec.Encode(tpchLogical(t, tpchCatalog(t), 3))
	if err != nil {
		t.Fatal(err)
	}
	r, err := c.ExplainQuery(ctx, &rpc.ExplainQueryRequest{SessionId: sess.SessionId, LogicalPlan: plan,
		Settings: map[string]string{"quiver.target_partitions": "3", "quiver.exchange_mode": "shuffle"}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(r.PhysicalPlan, "HashJoinExec") {
		t.Errorf("physical plan of TPC-H q3 without a join:\n%s", r.PhysicalPlan)
	}
	d := r.DistributedPlan
	if !strings.Contains(d, "exchange_mode=shuffle, 0 executors alive") || !strings.Contains(d, "3 target partitions") || strings.Contains(d, "whole") {
		t.Errorf("distributed plan does not show the scheduler's choices:\n%s", d)
	}
	if _, err := c.ExplainQuery(ctx, &rpc.ExplainQueryRequest{SessionId: sess.SessionId, LogicalPlan: plan,
		Settings: map[string]string{"quiver.exchange_mode": "sideways"}}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("bad setting: got %v, want InvalidArgument", err)
	}
	jobs := -1
	if err := s.inspect(ctx, func(c *core) { jobs = len(c.jobs) }); err != nil {
		t.Fatal(err)
	}
	if jobs != 0 {
		t.Errorf("ExplainQuery made %d jobs, want none", jobs)
	}
}
