package codec

import (
	"context"
	"testing"

	"github.com/quiverdb/quiver/logical"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/physical/planner"
	"github.com/quiverdb/quiver/rpc"
	"github.com/quiverdb/quiver/sql"
)

// A write's FileSink and FileCommit round-trip, partitioned or not; paths
// that are not a staging directory beside the target, and partition
// columns the input lacks, are refused.
func TestWriteRoundTrip(t *testing.T) {
	ctx := context.Background()
	q, err := sql.NewPlanner(tpchCatalog(t)).PlanQuery("SELECT n_nationkey, n_name, n_regionkey FROM nation")
	if err != nil {
		t.Fatal(err)
	}
	var commit *physical.FileCommit
	for _, parts := range [][]int{nil, {2}} {
		w, err := logical.NewWrite(q, "/data/out", "/data/.out"+physical.StagingMark+"1", true,
			logical.WriteOptions{Format: "csv", PartitionBy: parts, Delimiter: '|', Header: true})
		if err != nil {
			t.Fatal(err)
		}
		pp, err := planner.New(planner.Config{TargetPartitions: 3}).Plan(ctx, w)
		if err != nil {
			t.Fatal(err)
		}
		roundTrip(t, pp)
		commit = pp.(*physical.FileCommit)
	}
	sinkOf := func(m *rpc.PhysicalPlan) *rpc.PhysicalFileSink {
		return m.GetFileCommit().Input.GetCoalesce().Input.GetFileSink()
	}
	for name, mutate := range map[string]func(*rpc.PhysicalPlan){
		"commit staging not hidden": func(m *rpc.PhysicalPlan) { m.GetFileCommit().Staging = "/data/tmp" },
		"commit target elsewhere":   func(m *rpc.PhysicalPlan) { m.GetFileCommit().Target = "/etc/out" },
		"sink staging relative":     func(m *rpc.PhysicalPlan) { sinkOf(m).Staging = ".out" + physical.StagingMark },
		"sink partition column":     func(m *rpc.PhysicalPlan) { sinkOf(m).Spec.PartitionBy = []int32{7} },
		"sink delimiter":            func(m *rpc.PhysicalPlan) { sinkOf(m).Spec.Delimiter = -5 },
		"sink spec":                 func(m *rpc.PhysicalPlan) { sinkOf(m).Spec = nil },
	} {
		t.Run(name, func(t *testing.T) {
			m, err := EncodePlan(commit)
			if err != nil {
				t.Fatal(err)
			}
			mutate(m)
			if _, err := DecodePlan(m); err == nil {
				t.Fatal("decoded a bad write")
			}
		})
	}
}
