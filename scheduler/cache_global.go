package scheduler

import (
	"slices"
	"strings"

	"github.com/quiverdb/quiver/cache"
	"github.com/quiverdb/quiver/logical"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
)

// Global caches. An entry with OPTIONS ('scope' 'global') is an ordinary
// entry of its session while the session lives. When the session closes
// (by its client or idle expiry), a materialized one is kept as its
// tenant's global entry: an entry of the tenant's global name space
// (cache.GlobalSession) over the same files, so nothing is copied or
// rebuilt. It lives until its TTL, eviction or UNCACHE. A later session of
// the same tenant reaches it by content — the same CACHE TABLE (or
// df.Cache) over unchanged sources attaches to it as to any entry holding
// the same data — and sees it by name in SHOW CACHES with scope global;
// UNCACHE TABLE of its name removes it. A session may also read it by name
// without declaring it: when the client finds no table, view or cache of
// that name of its own, it plans a reference to the global entry (a Cache
// node of the tenant's global name space over an input that is never run),
// which resolves only to that entry: a hit, or an error saying it is gone,
// never a build. Content keys are scoped by tenant,
// and a global entry's tenant is its name space's, so another tenant never
// reaches, lists or removes it.

// keepGlobalCaches moves the closing session's materialized global-scope
// entries into its tenant's global name space. A global entry over the same
// data is kept as it is; one of the same name over other data is replaced,
// so a name holds one global entry per tenant.
func (c *core) keepGlobalCaches(sessionID, tenant string) {
	gs := cache.GlobalSession(tenant)
	for _, e := range c.caches.List(sessionID) {
		if e.State != cache.Materialized || e.Partial() || !cache.IsGlobal(e.Options) || c.holdersDead(e) {
			continue
		}
		held := false
		for _, g := range c.caches.List(gs) {
			switch {
			case sameData(g, e):
				held = true
			case e.Name != "" && g.Name == e.Name:
				if removed, ok := c.caches.InvalidateFor(g.Key, cache.CauseUncache); ok {
					c.dropEntry(removed, "replaced by the global cache "+e.Name+" of session "+sessionID)
				}
			}
		}
		if held {
			continue
		}
		if g, ok := c.caches.Attach(cache.Key{SessionID: gs, CacheID: e.Key.CacheID}, e.Name, e.Options, e.Key); ok {
			c.log.Info("cache kept as global", "cache", g.Key.CacheID, "name", g.Name, "tenant", tenant, "session", sessionID)
		}
	}
}

// dropGlobalCaches removes the tenant's global entries over the data of e
// (an uncached global-scope entry) or of its name.
func (c *core) dropGlobalCaches(tenant string, e cache.Entry, why string) {
	for _, g := range c.caches.List(cache.GlobalSession(tenant)) {
		if g.Key == e.Key || !(sameData(g, e) || e.Name != "" && g.Name == e.Name) {
			continue
		}
		if removed, ok := c.caches.InvalidateFor(g.Key, cache.CauseUncache); ok {
			c.dropEntry(removed, why)
		}
	}
}

// sameData reports whether two materialized entries hold the same files.
func sameData(a, b cache.Entry) bool {
	return a.State == cache.Materialized && b.State == cache.Materialized && a.JobID == b.JobID && a.StageID == b.StageID
}

// entryScope is what SHOW CACHES says of an entry's scope.
func entryScope(e cache.Entry) string {
	if _, ok := cache.GlobalTenant(e.Key.SessionID); ok || cache.IsGlobal(e.Options) {
		return cache.ScopeGlobal
	}
	return cache.ScopeSession
}

// sharedReason is the reason a cache event or EXPLAIN gives for a node
// that attaches to f's data.
func sharedReason(f cache.Entry) string {
	if _, ok := cache.GlobalTenant(f.Key.SessionID); ok {
		return "shared with the global cache " + cacheLabel(f.Name, f.Key.CacheID)
	}
	return "shared with " + cacheLabel(f.Name, f.Key.CacheID)
}

// globalRef reports whether n refers to a global entry of j's tenant by
// name (its session id is the tenant's global name space).
func (c *core) globalRef(j *job, n *logical.Cache) bool {
	return n.SessionID == cache.GlobalSession(j.tenant)
}

// globalRefFiles lists the files the global entries j's plan refers to by
// name were built from, for the stat a query makes before resolving them.
func (c *core) globalRefFiles(j *job) []string {
	var out []string
	logical.Inspect(j.plan, func(p logical.Plan) bool {
		n, ok := p.(*logical.Cache)
		if !ok || !c.globalRef(j, n) {
			return true
		}
		if e, ok := c.caches.Lookup(cache.Key{SessionID: n.SessionID, CacheID: n.CacheID}); ok {
			for _, s := range e.Sources {
				if s.Path != "" {
					out = append(out, s.Path)
				}
			}
		}
		return false
	})
	slices.Sort(out)
	return slices.Compact(out)
}

// resolveGlobalRef resolves a reference by name to a global entry: a
// CacheReader when the entry is there on live executors over unchanged
// files (or is a snapshot, served and marked stale), errAwaitHolders while
// a reloaded entry's executors may still register, and otherwise an error
// saying why it cannot be read; its input is never built or run.
func (c *core) resolveGlobalRef(j *job, n *logical.Cache, key cache.Key) (*physical.CacheReader, error) {
	name := cacheLabel(n.Name, n.CacheID)
	again := "declare it again with CACHE TABLE " + name + " OPTIONS ('scope' 'global') AS ..."
	e, ok := c.caches.Lookup(key)
	if !ok || e.State != cache.Materialized {
		why := "it was removed"
		if g, ok := c.gone[key]; ok {
			why = g.why
		}
		return nil, qerr.Planf("global cache %s is gone (%s): %s", name, why, again)
	}
	if c.holdersDead(e) && c.reloadedAwaitingHolders(e) {
		return nil, errAwaitHolders
	}
	if c.holdersDead(e) {
		why := "executor " + strings.Join(c.deadHolders(e), ", ") + " lost"
		if removed, ok := c.caches.InvalidateFor(key, cache.CauseExecutorLost); ok {
			c.dropEntry(removed, why)
		}
		return nil, qerr.Planf("global cache %s is gone (%s): %s", name, why, again)
	}
	if e.Partial() {
		return nil, qerr.Planf("global cache %s lost partitions (%s), which only its declaration can rebuild: %s", name, partialReason(e), again)
	}
	var rec, cur []cache.Source
	for _, s := range e.Sources {
		if s.Path == "" {
			continue // a memory table's version is its client's to compare
		}
		rec = append(rec, s)
		f, ok := j.files[s.Path]
		if !ok {
			f = cache.Source{Path: s.Path, Missing: true}
		}
		f.Table = s.Table
		cur = append(cur, f)
	}
	if changed := cache.Changed(rec, cur); len(changed) > 0 {
		reason := cache.StaleReason(changed)
		if cons, _ := cache.Consistency(e.Options); cons == cache.ConsistencySnapshot {
			c.caches.MarkStale(key, reason)
			j.staleHits = append(j.staleHits, staleHit{key, "stale snapshot: " + reason})
		} else {
			if removed, ok := c.caches.InvalidateFor(key, cache.CauseSourceChanged); ok {
				c.dropEntry(removed, reason)
			}
			return nil, qerr.Planf("global cache %s is gone (%s): %s", name, reason, again)
		}
	}
	return &physical.CacheReader{Key: key, Name: cacheLabel(n.Name, e.Name), OutSchema: e.Schema, Locations: e.Locations, Disjoint: e.Disjoint}, nil
}
