package scheduler

import (
	"context"
	"fmt"

	"github.com/quiverdb/quiver/cache"
	"github.com/quiverdb/quiver/logical"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/physical/planner"
	stages "github.com/quiverdb/quiver/physical/stage"
	"github.com/quiverdb/quiver/rpc"
	"github.com/quiverdb/quiver/settings"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// ExplainQuery answers EXPLAIN [DISTRIBUTED] on a cluster: the query is
// planned and cut into stages by the same code, with the same choices
// (target partitions, exchange mode, compression, cache hits), as
// ExecuteQuery's job would be at this moment; nothing runs and no cache
// entry is claimed or touched.
func (h *service) ExplainQuery(ctx context.Context, req *rpc.ExplainQueryRequest) (*rpc.ExplainQueryResponse, error) {
	// As ExecuteQuery: the session is checked before anything is decoded,
	// another tenant's answered as unknown (tenants.go).
	if err := h.s.visibleSession(ctx, "explain query", req.GetSessionId()); err != nil {
		return nil, err
	}
	var (
		known   bool
		choices explainChoices
		list    cacheList
		entries map[cache.Key]cache.Entry
		vals    settings.Values
		setErr  error
	)
	if err := h.s.inspect(ctx, func(c *core) {
		sess, ok := c.sessions[req.GetSessionId()]
		if !ok {
			return
		}
		known = true
		var query settings.Values
		query, setErr = settings.Decode("scheduler", req.GetSettings())
		if setErr != nil {
			return
		}
		vals = sess.settings.Merge(query)
		choices = c.explainChoices(vals)
		list = c.listCaches(req.GetSessionId())
		entries = map[cache.Key]cache.Entry{}
		for _, e := range c.caches.List(req.GetSessionId()) {
			entries[e.Key] = e
		}
	}); err != nil {
		return nil, grpcErr(err)
	}
	if !known {
		return nil, status.Errorf(codes.NotFound, "scheduler: unknown session %q: create one with CreateSession first", req.GetSessionId())
	}
	if setErr != nil {
		return nil, grpcErr(setErr)
	}
	plan, err := decodeLogical(req.GetLogicalPlan())
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "scheduler: explain query: decode logical plan: %v", err)
	}
	checkFiles(list) // stats: here, never on the loop
	// Entries a query would read as they are become CacheReaders; any other
	// Cache node shows its input, which the job would run (after building
	// the entry in a build job of its own).
	hits := explainResolver{}
	for i, info := range list.infos {
		if info.GetCheck() != outcomeHit && !(info.GetCheck() == outcomeStale && list.snapshot[i]) {
			continue
		}
		k := cache.Key{SessionID: info.GetSessionId(), CacheID: info.GetCacheId()}
		if e, ok := entries[k]; ok && e.State == cache.Materialized {
			hits[k] = e
		}
	}
	pp, err := planner.New(planner.Config{TargetPartitions: choices.targetPartitions, Caches: hits}).Plan(ctx, plan)
	if err != nil {
		return nil, grpcErr(err)
	}
	g, err := stages.Split("explain", pp, stages.Options{Compression: choices.compression, InMemory: choices.inMemory})
	if err != nil {
		return nil, grpcErr(err)
	}
	return &rpc.ExplainQueryResponse{
		PhysicalPlan:    physical.Indent(pp),
		DistributedPlan: choices.how + "\n" + g.String(),
		Caches:          list.infos,
		Removed:         list.removed,
	}, nil
}

// explainChoices are the planning choices a job submitted now would get.
type explainChoices struct {
	targetPartitions int
	compression      physical.Compression
	inMemory         bool
	how              string // the choice of cut, in words
}

func (c *core) explainChoices(vals settings.Values) explainChoices {
	mode := vals.Text(settings.ExchangeMode)
	ch := explainChoices{
		targetPartitions: c.targetPartitions(vals),
		compression:      physical.Compression(vals.Text(settings.ShuffleCompression)),
		inMemory:         c.inMemory(mode),
	}
	alive := fmt.Sprintf("%d executor", len(c.executors))
	if len(c.executors) != 1 {
		alive += "s"
	}
	if ch.inMemory {
		ch.how = fmt.Sprintf("exchange_mode=%s, %s alive: one whole stage run as one task, exchanges in memory; %d target partitions", mode, alive, ch.targetPartitions)
	} else {
		ch.how = fmt.Sprintf("exchange_mode=%s, %s alive: a stage per exchange, shuffle files between them; %d target partitions", mode, alive, ch.targetPartitions)
	}
	return ch
}

// explainResolver lowers the Cache nodes whose entries a query would read
// now to the CacheReader the job's planning would make.
type explainResolver map[cache.Key]cache.Entry

func (r explainResolver) ResolveCache(n *logical.Cache) (*physical.CacheReader, bool) {
	k := cache.Key{SessionID: n.SessionID, CacheID: n.CacheID}
	e, ok := r[k]
	if !ok {
		return nil, false
	}
	return &physical.CacheReader{Key: k, Name: cacheLabel(n.Name, e.Name), OutSchema: e.Schema, Locations: e.Locations, Disjoint: e.Disjoint}, true
}
