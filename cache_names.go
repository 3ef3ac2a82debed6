package quiver

import (
	"context"
	"maps"
)

// Cache names have one owner: the session's catalog maps each CACHE TABLE
// name to its cache id, and the scheduler's registry keys entries by id,
// keeping a name only as a label for logs and events. Every statement that
// ends a name drops it from the catalog first and then asks the scheduler
// to remove the entry; an entry whose removal the scheduler does not
// confirm is an orphan: SHOW CACHES leaves it out and the session removes
// it again before its next cache statement. So the catalog never names an
// entry the scheduler has retired, and no name is shown that the catalog
// does not hold. Two kinds of entry are named otherwise: a memory table's
// segments by the table (the catalog's too), and a global entry in its
// tenant's global name space, which the scheduler holds.

// forgetEntry removes the entry of id, whose name the catalog no longer
// holds, from the scheduler; if the scheduler does not confirm it, id
// becomes an orphan and the error is returned.
func (s *Session) forgetEntry(ctx context.Context, id string) error {
	cctx, cancel := cleanupCtx(ctx)
	defer cancel()
	if _, err := s.uncacheID(cctx, id); err != nil {
		s.addOrphans(id)
		return err
	}
	return nil
}

// sweepOrphans asks the scheduler again to remove each orphan; those it
// confirms stop being orphans.
func (s *Session) sweepOrphans(ctx context.Context) {
	for id := range s.orphanSet() {
		if ctx.Err() != nil {
			return
		}
		if _, err := s.uncacheID(ctx, id); err == nil {
			s.orphanMu.Lock()
			delete(s.orphans, id)
			s.orphanMu.Unlock()
		}
	}
}

func (s *Session) addOrphans(ids ...string) {
	s.orphanMu.Lock()
	defer s.orphanMu.Unlock()
	if s.orphans == nil {
		s.orphans = map[string]bool{}
	}
	for _, id := range ids {
		s.orphans[id] = true
	}
}

func (s *Session) clearOrphans() {
	s.orphanMu.Lock()
	defer s.orphanMu.Unlock()
	s.orphans = nil
}

// orphanSet returns a copy of the orphans.
func (s *Session) orphanSet() map[string]bool {
	s.orphanMu.Lock()
	defer s.orphanMu.Unlock()
	return maps.Clone(s.orphans)
}
