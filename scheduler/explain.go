package scheduler

import (
	"context"
	"fmt"
	"strings"

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
		if tenant, ok := c.sessionTenant(req.GetSessionId()); ok {
			for _, e := range c.caches.List(cache.GlobalSession(tenant)) {
				entries[e.Key] = e // read by name (globalRef)
			}
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
	// A query stats the files its Cache nodes read before resolving them;
	// so does EXPLAIN, to tell which nodes would attach to shared data.
	files := statFiles(planFiles(plan))
	var shared explainShares
	if err := h.s.inspect(ctx, func(c *core) {
		shared = c.explainShared(req.GetSessionId(), vals, plan, files)
	}); err != nil {
		return nil, grpcErr(err)
	}
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
	for k, e := range shared.hits {
		hits[k] = e
	}
	list.infos = append(list.infos, shared.infos...)
	pp, err := planner.New(planner.Config{TargetPartitions: choices.targetPartitions, MaxRecursionDepth: maxRecursion(vals), Caches: hits, ShareCTEs: true}).Plan(ctx, plan)
	if err != nil {
		return nil, grpcErr(err)
	}
	g, err := stages.Split("explain", pp, stages.Options{Compression: choices.compression, InMemory: choices.inMemory})
	if err != nil {
		return nil, grpcErr(err)
	}
	return &rpc.ExplainQueryResponse{
		PhysicalPlan:    physical.Indent(pp),
		DistributedPlan: choices.describe(len(g.Stages)) + "\n" + g.String(),
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

// describe is how, for a graph of n stages: in memory, more than one stage
// means shared CTEs, each computed in a whole stage of its own.
func (ch explainChoices) describe(n int) string {
	if !ch.inMemory || n == 1 {
		return ch.how
	}
	return strings.Replace(ch.how, "one whole stage run as one task",
		fmt.Sprintf("%d whole stages (one per shared CTE, then the query), each run as one task", n), 1)
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

// explainShares are the Cache nodes of an EXPLAINed plan, without an entry
// of their own, whose query would attach to another entry's data: their
// marks and the entries a hit would read.
type explainShares struct {
	infos []*rpc.CacheInfo
	hits  map[cache.Key]cache.Entry
}

// explainShared decides, as resolveCache does for a query, what becomes of
// each Cache node of plan that has no entry of its own, or one the query
// would drop (ownEntryDropped) before looking for its content: one whose content
// key (with files' fingerprints) is materialized on live executors over
// unchanged sources is a hit on that data, one whose content is being built
// is pending, and one whose data awaits its executors' registration after a
// restart is pending too; any other is a miss, whose input may hold more.
// It claims, attaches and touches nothing.
func (c *core) explainShared(sessionID string, vals settings.Values, plan logical.Plan, files map[string]cache.Source) explainShares {
	out := explainShares{hits: map[cache.Key]cache.Entry{}}
	tenant, ok := c.sessionTenant(sessionID)
	if !ok {
		return out
	}
	seen := map[cache.Key]bool{}
	var walk func(p logical.Plan)
	walk = func(p logical.Plan) {
		n, ok := p.(*logical.Cache)
		if !ok {
			for _, ch := range p.Children() {
				walk(ch)
			}
			return
		}
		k := cache.Key{SessionID: n.SessionID, CacheID: n.CacheID}
		if seen[k] || n.SessionID != sessionID {
			return // another session's node fails the query (validateCaches)
		}
		seen[k] = true
		if c.uncached[k] {
			walk(n.Input)
			return
		}
		own := ""
		if e, ok := c.caches.Lookup(k); ok {
			why, dropped := c.ownEntryDropped(e, n, files)
			if !dropped {
				return // its own entry, marked from the session's list
			}
			own = " (its own entry dropped: " + why + ")"
		}
		opts, err := entryOptions(n, vals)
		if err != nil {
			return // the query fails on it
		}
		scope, _ := cache.Scope(opts)
		srcs := lineageOf(files, n)
		info := &rpc.CacheInfo{SessionId: sessionID, CacheId: n.CacheID, Name: n.Name, Scope: scope}
		// The query looks for the content after dropping the node's own
		// entry, so that entry is never what it finds.
		f, found := c.caches.FindContent(tenantContentKey(tenant, contentKey(n, srcs)), k)
		switch {
		case !found:
		case f.State == cache.Materialized && c.holdersDead(f) && c.reloadedAwaitingHolders(f):
			info.Check, info.Reason = outcomePending, sharedReason(f)+", once its executors register again"+own
		case f.State == cache.Materialized && !c.holdersDead(f) && len(cache.Changed(f.Sources, srcs)) == 0:
			info.Check, info.Reason = outcomeHit, sharedReason(f)+own
			out.hits[k] = f
		case f.State == cache.Pending:
			info.Check, info.Reason = outcomePending, sharedReason(f)+", being built"+own
		}
		if info.Check == "" {
			walk(n.Input) // a miss: its build job resolves what it holds
			return
		}
		out.infos = append(out.infos, info)
	}
	walk(plan)
	return out
}

// ownEntryDropped reports whether a query resolving n would drop e, n's own
// entry, and then look for n's content elsewhere, as resolveCache does with
// an entry whose executors are lost or a strict one whose sources changed
// (files holds the sources' fingerprints now); why says which.
func (c *core) ownEntryDropped(e cache.Entry, n *logical.Cache, files map[string]cache.Source) (why string, dropped bool) {
	if e.State != cache.Materialized || cache.IsTable(e.Options) || isTableRead(n) {
		return "", false
	}
	if c.holdersDead(e) {
		if c.reloadedAwaitingHolders(e) {
			return "", false
		}
		return "executor " + strings.Join(c.deadHolders(e), ", ") + " lost", true
	}
	if changed := cache.Changed(e.Sources, lineageOf(files, n)); len(changed) > 0 {
		if cons, _ := cache.Consistency(e.Options); cons != cache.ConsistencySnapshot {
			return cache.StaleReason(changed), true
		}
	}
	if e.Partial() && e.Stale != "" {
		return e.Stale, true // a stale snapshot's lost partitions are rebuilt whole
	}
	return "", false
}
