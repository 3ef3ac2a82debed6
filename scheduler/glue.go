package scheduler

import (
	"context"
	"net"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver/cache"
	"github.com/quiverdb/quiver/logical"
	logicalcodec "github.com/quiverdb/quiver/logical/codec"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/physical/codec"
	"github.com/quiverdb/quiver/physical/planner"
	stages "github.com/quiverdb/quiver/physical/stage"
	"github.com/quiverdb/quiver/qerr"
	"github.com/quiverdb/quiver/rpc"
	"github.com/quiverdb/quiver/settings"
)

// This file connects the state machine to the planning packages and the
// wire types.

// planJob plans a job's logical plan into stages; it runs outside the loop.
func planJob(ctx context.Context, a actPlan) evPlanned {
	cfg := planner.Config{TargetPartitions: a.targetPartitions, MaxRecursionDepth: a.maxRecursion, ShareCTEs: true}
	if len(a.caches) > 0 {
		cfg.Caches = cacheResolver(a.caches)
	}
	pp, err := planner.New(cfg).Plan(ctx, a.plan)
	if err == nil && len(a.sortBy) > 0 {
		pp, err = sortPartitions(pp, a.sortBy)
	}
	if err != nil {
		return evPlanned{jobID: a.jobID, gen: a.gen, err: err}
	}
	g, err := stages.Split(a.jobID, pp, stages.Options{Compression: a.compression, PinFinal: a.pinFinal, InMemory: a.inMemory, InlineLimit: a.inlineLimit})
	if err != nil {
		return evPlanned{jobID: a.jobID, gen: a.gen, err: err}
	}
	out := make([]plannedStage, len(g.Stages))
	for i, s := range g.Stages {
		out[i] = plannedStage{ID: s.ID, Plan: s.Plan, Inputs: s.Inputs, Final: s.Final, Whole: s.Whole}
	}
	return evPlanned{jobID: a.jobID, gen: a.gen, stages: out, schema: g.Final().Plan.Input.Schema()}
}

// sortPartitions sorts each output partition of a cache build's plan by
// cols (cache.SortByOption): per partition, so the cache keeps its
// partitions and its zone maps bound narrow ranges within each.
func sortPartitions(p physical.Plan, cols []cache.SortColumn) (physical.Plan, error) {
	schema := p.Schema()
	names := make([]string, schema.NumFields())
	for i, f := range schema.Fields() {
		names[i] = f.Name
	}
	keys := make([]physical.SortKey, len(cols))
	for i, c := range cols {
		idx, err := cache.SortColumnIndex(c.Name, names)
		if err != nil {
			return nil, err
		}
		f := schema.Field(idx)
		keys[i] = physical.SortKey{Expr: &physical.Column{Index: idx, Name: f.Name, Type: f.Type}, Asc: !c.Desc, NullsFirst: c.Desc}
	}
	return &physical.Sort{Input: p, Keys: keys, Fetch: -1, PreservePartitioning: true}, nil
}

// maxRecursion is the setting quiver.max_recursion_depth (its default when
// the session did not set it).
func maxRecursion(vals settings.Values) int64 {
	n, _ := vals.Int(settings.MaxRecursionDepth)
	return n
}

// cacheResolver lowers the Cache nodes the loop resolved as hits to their
// CacheReaders; any other Cache node runs its input. The map is read-only
// once handed to the planner.
type cacheResolver map[physical.CacheKey]*physical.CacheReader

func (r cacheResolver) ResolveCache(n *logical.Cache) (*physical.CacheReader, bool) {
	cr, ok := r[physical.CacheKey{SessionID: n.SessionID, CacheID: n.CacheID}]
	return cr, ok
}

// planStages is planJob's logical-plan-free half for callers that already
// hold a physical plan (tests).
func planStages(jobID string, pp physical.Plan) ([]plannedStage, error) {
	g, err := stages.Split(jobID, pp, stages.Options{})
	if err != nil {
		return nil, err
	}
	out := make([]plannedStage, len(g.Stages))
	for i, s := range g.Stages {
		out[i] = plannedStage{ID: s.ID, Plan: s.Plan, Inputs: s.Inputs, Final: s.Final}
	}
	return out, nil
}

// decodeLogical decodes ExecuteQueryRequest.logical_plan.
func decodeLogical(b []byte) (logical.Plan, error) { return logicalcodec.Decode(b) }

func resolvePlan(plan physical.Plan, stageID int, locs [][]physical.PartitionLocation) physical.Plan {
	return stages.Resolve(plan, stageID, locs)
}

func unresolvePlan(plan physical.Plan, stageID int) physical.Plan {
	if plan == nil {
		return nil
	}
	return stages.Unresolve(plan, stageID)
}

func encodePlan(p physical.Plan) ([]byte, error) { return codec.Encode(p) }

func serializeSchema(s *arrow.Schema) ([]byte, error) {
	if s == nil {
		return nil, qerr.Internalf("scheduler: job has no result schema")
	}
	return flight.SerializeSchema(s, memory.DefaultAllocator), nil
}

func hostPort(host string, port int) string { return net.JoinHostPort(host, strconv.Itoa(port)) }

func locationsFromRPC(ls []*rpc.PartitionLocation) []physical.PartitionLocation {
	out := make([]physical.PartitionLocation, 0, len(ls))
	for _, l := range ls {
		e := l.GetExecutor()
		out = append(out, physical.PartitionLocation{
			JobID: l.GetJobId(), StageID: int(l.GetStageId()), OutputPartition: int(l.GetOutputPartition()),
			MapPartition: int(l.GetMapPartition()),
			Executor:     physical.ExecutorMeta{ID: e.GetId(), Host: e.GetHost(), FlightPort: int(e.GetFlightPort())},
			Rows:         l.GetRows(), Batches: l.GetBatches(), Bytes: l.GetBytes(),
			Stats: colStats(l.GetColStats()), Inline: inline(l.GetInline()),
		})
	}
	return out
}

// inline is a task's reported inline file, dropped when it is larger than
// any writer may make (the location then names a file that does not
// exist, and reading it fails as a lost file would).
func inline(b []byte) []byte {
	if len(b) == 0 || len(b) > physical.MaxInlineBytes {
		return nil
	}
	return b
}

// colStats are a task's reported column statistics of a file; malformed
// ones are dropped (the entry then knows nothing of its columns).
func colStats(ms []*rpc.ColumnStats) []physical.ColumnStats {
	st, err := codec.DecodeColumnStats(ms)
	if err != nil {
		return nil
	}
	return st
}

// locationsToRPC converts locations for a JobStatus; executors still known
// fill in their gRPC port and vcores.
func locationsToRPC(ls []physical.PartitionLocation, execs map[string]*executorState) []*rpc.PartitionLocation {
	out := make([]*rpc.PartitionLocation, len(ls))
	for i, l := range ls {
		meta := &rpc.ExecutorMeta{Id: l.Executor.ID, Host: l.Executor.Host, FlightPort: int32(l.Executor.FlightPort), GrpcPort: int32(l.Executor.FlightPort)}
		if e := execs[l.Executor.ID]; e != nil {
			meta.GrpcPort, meta.Vcores = int32(e.grpcPort), int32(e.vcores)
		}
		out[i] = &rpc.PartitionLocation{
			JobId: l.JobID, StageId: int32(l.StageID), OutputPartition: int32(l.OutputPartition),
			MapPartition: int32(l.MapPartition), Executor: meta, Rows: l.Rows, Batches: l.Batches, Bytes: l.Bytes,
			Inline: l.Inline,
		}
	}
	return out
}
