package scheduler

import (
	"context"
	"testing"

	"github.com/quiverdb/quiver/logical"
	logicalcodec "github.com/quiverdb/quiver/logical/codec"
	"github.com/quiverdb/quiver/rpc"
)

// submit encodes plan and runs it as a job of session sess through
// ExecuteQuery; it returns the job id.
func (c *cluster) submit(t *testing.T, ctx context.Context, sess string, plan logical.Plan) string {
	t.Helper()
	b, err := logicalcodec.Encode(plan)
	if err != nil {
		t.Fatal(err)
	}
	r, err := c.client.ExecuteQuery(ctx, &rpc.ExecuteQueryRequest{SessionId: sess, LogicalPlan: b})
	if err != nil {
		t.Fatal(err)
	}
	return r.JobId
}
