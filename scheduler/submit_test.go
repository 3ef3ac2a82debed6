package scheduler

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/quiverdb/quiver/logical"
)

// submit queues plan as a job of session sess and returns its id.
// TODO(scheduler): go through ExecuteQuery once logical/codec lands.
func (c *cluster) submit(t *testing.T, ctx context.Context, sess string, plan logical.Plan) string {
	t.Helper()
	id := uuid.NewString()
	reply := make(chan error, 1)
	rerr, err := ask(ctx, c.sched, evSubmit{jobID: id, session: sess, plan: plan, reply: reply}, reply)
	if err != nil || rerr != nil {
		t.Fatal(err, rerr)
	}
	return id
}
