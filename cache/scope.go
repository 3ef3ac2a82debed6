package cache

import (
	"strings"

	"github.com/quiverdb/quiver/qerr"
)

// ScopeOption is the entry option that says how long an entry lives:
// ScopeSession (the default) ends with its session; ScopeGlobal keeps a
// materialized entry after its session closes, as its tenant's global entry,
// until TTL, eviction or UNCACHE.
const (
	ScopeOption  = "scope"
	ScopeSession = "session"
	ScopeGlobal  = "global"
)

// Scope returns opts' scope option (session when unset), or an error naming
// the allowed values.
func Scope(opts map[string]string) (string, error) {
	v, ok := opts[ScopeOption]
	if !ok {
		return ScopeSession, nil
	}
	switch strings.ToLower(v) {
	case ScopeSession:
		return ScopeSession, nil
	case ScopeGlobal:
		return ScopeGlobal, nil
	}
	return "", qerr.Planf("cache: option %s must be %q or %q, got %q", ScopeOption, ScopeSession, ScopeGlobal, v)
}

// IsGlobal reports whether opts ask for scope 'global'.
func IsGlobal(opts map[string]string) bool {
	s, err := Scope(opts)
	return err == nil && s == ScopeGlobal
}

// globalPrefix starts the session id of a tenant's global name space; a
// session id is a UUID, so it never starts so.
const globalPrefix = "global:"

// GlobalSession is the session id under which tenant's global entries are
// kept once the sessions that made them have closed.
func GlobalSession(tenant string) string { return globalPrefix + tenant }

// GlobalTenant returns the tenant of a global name space's session id, and
// false for an ordinary session's id.
func GlobalTenant(sessionID string) (string, bool) {
	return strings.CutPrefix(sessionID, globalPrefix)
}
