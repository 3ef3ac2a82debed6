package cache

import (
	"slices"
	"time"

	"github.com/quiverdb/quiver/qerr"
	"github.com/quiverdb/quiver/settings"
)

// TTLOption is the entry option (CACHE TABLE ... OPTIONS ('ttl' '30m'))
// that overrides the sweeper's default time to live for one entry.
const TTLOption = "ttl"

// ParseTTL returns the ttl option of opts, parsed as every duration
// setting is (settings.ParseDuration), and whether it is set. "0" (or any
// zero duration) means the entry never expires. Callers validate options
// with it when a cache is declared, so a bad value is reported to the user
// instead of silently ignored.
func ParseTTL(opts map[string]string) (time.Duration, bool, error) {
	s, ok := opts[TTLOption]
	if !ok {
		return 0, false, nil
	}
	d, err := settings.ParseDuration(s)
	if err != nil {
		return 0, true, qerr.Planf("cache: option %s (0: never expire): %w", TTLOption, err)
	}
	return d, true, nil
}

// ttlOf is e's time to live: its own option if valid, else defaultTTL.
func ttlOf(e *entry, defaultTTL time.Duration) time.Duration {
	if d, ok, err := ParseTTL(e.Options); ok && err == nil {
		return d
	}
	return defaultTTL
}

// Expired returns the keys the eviction sweeper should remove at now, without
// removing them: first every materialized entry unused (since its last hit, or
// its materialization if never hit) for longer than its time to live — the
// entry's ttl option, else defaultTTL; 0 means no expiry — then, while the
// remaining materialized entries total more than maxBytes (0 = no cap), the
// least recently used of them. An entry with Readers > 0 is never returned,
// and pending entries are never returned: they hold no data yet.
//
// Between Expired and a later InvalidateFor a query may start reading an
// entry; Evict does both atomically and is what a sweeper should call.
func (m *Memory) Expired(now time.Time, defaultTTL time.Duration, maxBytes int64) []Key {
	m.mu.Lock()
	defer m.mu.Unlock()
	victims := m.expiredLocked(now, defaultTTL, maxBytes)
	keys := make([]Key, len(victims))
	for i, e := range victims {
		keys[i] = e.Key
	}
	return keys
}

// Evict removes what Expired would return, counting them as CauseEvicted,
// and returns the removed entries (in Expired's order) so the caller can
// unpin and delete their files.
func (m *Memory) Evict(now time.Time, defaultTTL time.Duration, maxBytes int64) []Entry {
	unlock := m.lock()
	defer unlock()
	victims := m.expiredLocked(now, defaultTTL, maxBytes)
	out := make([]Entry, len(victims))
	for i, e := range victims {
		m.invalidateLocked(e, CauseEvicted)
		out[i] = e.clone()
	}
	return out
}

// expiredLocked picks the eviction victims: TTL-expired entries sorted by key,
// then LRU entries oldest first.
func (m *Memory) expiredLocked(now time.Time, defaultTTL time.Duration, maxBytes int64) []*entry {
	var victims, live []*entry
	var remaining int64
	for _, e := range m.entries {
		if e.State != Materialized {
			continue
		}
		if e.Readers == 0 {
			if ttl := ttlOf(e, defaultTTL); ttl > 0 && now.Sub(e.lastUsed()) > ttl {
				victims = append(victims, e)
				continue
			}
			live = append(live, e)
		}
		remaining += e.Bytes
	}
	slices.SortFunc(victims, func(a, b *entry) int { return compareKeys(a.Key, b.Key) })
	if maxBytes <= 0 || remaining <= maxBytes {
		return victims
	}
	slices.SortFunc(live, func(a, b *entry) int {
		if c := a.lastUsed().Compare(b.lastUsed()); c != 0 {
			return c
		}
		return compareKeys(a.Key, b.Key)
	})
	for _, e := range live {
		if remaining <= maxBytes {
			break
		}
		victims = append(victims, e)
		remaining -= e.Bytes
	}
	return victims
}

// EvictSession removes entries of sessionID nobody reads, least recently
// used first, until the session's materialized entries total at most
// maxBytes (its own quota under the scheduler's cap), counting them as
// CauseEvicted; it returns the removed entries.
func (m *Memory) EvictSession(sessionID string, maxBytes int64) []Entry {
	unlock := m.lock()
	defer unlock()
	var live []*entry
	var total int64
	for k, e := range m.entries {
		if k.SessionID != sessionID || e.State != Materialized {
			continue
		}
		total += e.Bytes
		if e.Readers == 0 {
			live = append(live, e)
		}
	}
	if maxBytes <= 0 || total <= maxBytes {
		return nil
	}
	slices.SortFunc(live, func(a, b *entry) int {
		if c := a.lastUsed().Compare(b.lastUsed()); c != 0 {
			return c
		}
		return compareKeys(a.Key, b.Key)
	})
	var out []Entry
	for _, e := range live {
		if total <= maxBytes {
			break
		}
		m.invalidateLocked(e, CauseEvicted)
		out = append(out, e.clone())
		total -= e.Bytes
	}
	return out
}
