package quiver

import (
	"context"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/quiverdb/quiver/rpc"
)

// Sessions that come back (ARCHITECTURE.md §4). The scheduler closes a
// session idle past quiver.session.idle_timeout, dropping its caches; the
// client is not closed with it. Its next query finds the session unknown,
// re-opens it under the same id (cache keys name it) with the session's
// settings, and runs. The tables and views need no re-sending: they live in
// this session's catalog, and plans carry them. CACHE TABLE declarations
// stay, now lazy (built again on first use), and the query's cache lines
// say which were dropped and why.

// unknownSession reports whether err is the scheduler's answer for a
// session it does not know (closed after its idle timeout).
func unknownSession(err error) bool {
	st, ok := status.FromError(err)
	return ok && st.Code() == codes.NotFound && strings.Contains(st.Message(), "unknown session")
}

// reopen re-creates the session on the scheduler under its id (after an
// idle expiry, or a scheduler restart) and returns one cache line per CACHE
// TABLE declaration whose data went with the old session.
func (s *Session) reopen(ctx context.Context) ([]CacheEvent, error) {
	r := s.remote
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	s.mu.Lock()
	wire := s.settings.Wire()
	s.mu.Unlock()
	if _, err := r.client.CreateSession(cctx, &rpc.CreateSessionRequest{ProtocolVersion: rpc.ProtocolVersion, Settings: wire, ResumeSessionId: r.sessionID}); err != nil {
		return nil, err
	}
	// A scheduler restarted with its state keeps the entries: only those
	// it no longer has were dropped.
	kept := map[string]bool{}
	if resp, err := r.client.ListCaches(cctx, &rpc.ListCachesRequest{SessionId: r.sessionID}); err == nil {
		for _, c := range resp.GetCaches() {
			kept[c.GetCacheId()] = true
		}
	}
	s.cat.MarkAllLazy()
	s.builtMu.Lock()
	built := s.built
	s.built = nil
	for id := range kept {
		if built[id] {
			if s.built == nil {
				s.built = map[string]bool{}
			}
			s.built[id] = true
		}
	}
	s.builtMu.Unlock()
	var dropped []CacheEvent
	for _, ct := range s.cat.AllCached() {
		if built[ct.CacheID] && !kept[ct.CacheID] {
			dropped = append(dropped, CacheEvent{Name: ct.Name, CacheID: ct.CacheID, Outcome: "dropped",
				Reason: "the scheduler closed the idle session; declared again, built on next use"})
		}
	}
	return dropped, nil
}

// noteBuilt records the caches a finished query found materialized or
// built.
func (s *Session) noteBuilt(evs []*rpc.CacheEvent) {
	if len(evs) == 0 {
		return
	}
	s.builtMu.Lock()
	defer s.builtMu.Unlock()
	if s.built == nil {
		s.built = map[string]bool{}
	}
	for _, e := range evs {
		s.built[e.GetCacheId()] = true
	}
}
