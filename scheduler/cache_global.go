package scheduler

import (
	"github.com/quiverdb/quiver/cache"
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
// UNCACHE TABLE of its name removes it. Content keys are scoped by tenant,
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
