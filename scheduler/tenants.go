package scheduler

import (
	"context"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/quiverdb/quiver/auth"
	"github.com/quiverdb/quiver/cache"
)

// Tenants. A session belongs to the tenant of the token that created it
// (auth.Identity; the default tenant without auth), and its jobs and cache
// entries with it. A caller sees, watches, cancels and uncaches only its
// own tenant's (a cluster token sees every tenant's): another tenant's
// session or job is answered exactly as an unknown one, so its existence
// does not leak. Caches are shared by content only within a tenant
// (tenantContentKey).

// sessionTenant is the tenant of a live session.
func (c *core) sessionTenant(id string) (string, bool) {
	s := c.sessions[id]
	if s == nil {
		return "", false
	}
	return s.tenant, true
}

// entryTenant is the tenant of a cache entry: its session's, or its global
// name space's. An entry of a
// session not open now (reloaded from a durable registry before its client
// came back) has none, and only a cluster token sees it.
func (c *core) entryTenant(sessionID string) string {
	if t, ok := cache.GlobalTenant(sessionID); ok {
		return t
	}
	t, _ := c.sessionTenant(sessionID)
	return t
}

// tenantContentKey scopes a cache content key to a tenant, so that two
// tenants' caches of the same data never share one copy (nor learn of each
// other's by a hit). The empty key (nothing to share) stays empty.
func tenantContentKey(tenant, key string) string {
	if key == "" {
		return ""
	}
	return tenant + "\x00" + key
}

// visibleSession fails with NotFound, as for an unknown session, when the
// session is live and belongs to a tenant the caller may not see.
func (s *Scheduler) visibleSession(ctx context.Context, what, id string) error {
	caller := auth.IdentityFrom(ctx)
	var tenant string
	var live bool
	if err := s.inspect(ctx, func(c *core) { tenant, live = c.sessionTenant(id) }); err != nil {
		return grpcErr(err)
	}
	if live && !caller.CanSee(tenant) {
		return status.Errorf(codes.NotFound, "scheduler: %s: unknown session %q", what, id)
	}
	return nil
}

// visibleJob fails with NotFound, as for an unknown job, when the job
// belongs to a tenant the caller may not see.
func (s *Scheduler) visibleJob(ctx context.Context, what, id string) error {
	caller := auth.IdentityFrom(ctx)
	if caller.Cluster {
		return nil
	}
	var tenant string
	var known bool
	if err := s.inspect(ctx, func(c *core) {
		if j := c.jobs[id]; j != nil {
			tenant, known = j.tenant, true
		}
	}); err != nil {
		return grpcErr(err)
	}
	if known && !caller.CanSee(tenant) {
		return status.Errorf(codes.NotFound, "scheduler: %s: unknown job %q", what, id)
	}
	return nil
}

// canSeeJob is the REST views' check of one job, on the loop.
func canSeeJob(caller auth.Identity, j *job) bool {
	return j != nil && caller.CanSee(j.tenant)
}
