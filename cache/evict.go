package cache

import (
	"math"
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

// HeatHalfLife is how fast an entry's uses age (Entry.Heat): a hit this
// long ago counts half as much as one now.
const HeatHalfLife = 10 * time.Minute

// minBuildTime stands for the build time of an entry that has none (built
// faster than the clock ticks, or recorded before build times were kept),
// so that its value still grows with its hits.
const minBuildTime = time.Millisecond

// heatAt is e's Heat aged to now.
func (e Entry) heatAt(now time.Time) float64 {
	if e.HeatAt.IsZero() {
		return 0
	}
	age := now.Sub(e.HeatAt)
	if age <= 0 {
		return e.Heat
	}
	return e.Heat * math.Exp2(-float64(age)/float64(HeatHalfLife))
}

// Value is what keeping e is worth per byte at now: what rebuilding it
// would cost (its build time) times how much it is used (its aged uses,
// Heat), divided by the bytes it holds. The sweeper over a byte cap
// evicts the entries of least value first, so a large entry that was cheap
// to build and is rarely read goes before a small costly one read often,
// and an entry nobody reads any more loses its value as its uses age.
func (e Entry) Value(now time.Time) float64 {
	return max(e.BuildTime, minBuildTime).Seconds() * e.heatAt(now) / float64(max(e.Bytes, 1))
}

// byValue orders entries for eviction at now: least value first, then the
// least recently used, then by key (a total order: the choice is
// deterministic).
func byValue(now time.Time) func(a, b *entry) int {
	return func(a, b *entry) int {
		va, vb := a.Value(now), b.Value(now)
		switch {
		case va < vb:
			return -1
		case va > vb:
			return 1
		}
		if c := a.lastUsed().Compare(b.lastUsed()); c != 0 {
			return c
		}
		return compareKeys(a.Key, b.Key)
	}
}

// Expired returns the keys the eviction sweeper should remove at now, without
// removing them: first every materialized entry unused (since its last hit, or
// its materialization if never hit) for longer than its time to live — the
// entry's ttl option, else defaultTTL; 0 means no expiry — then, while the
// remaining materialized entries total more than maxBytes (0 = no cap), those
// of least Value. An entry with Readers > 0 is never returned, nor a memory
// table's (TableOption: the only copy of its rows), and pending entries are
// never returned: they hold no data yet.
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
// then entries of least value first.
func (m *Memory) expiredLocked(now time.Time, defaultTTL time.Duration, maxBytes int64) []*entry {
	var victims, live []*entry
	var remaining int64
	for _, e := range m.entries {
		if e.State != Materialized {
			continue
		}
		if e.Readers == 0 && !IsTable(e.Options) {
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
	slices.SortFunc(live, byValue(now))
	for _, e := range live {
		if remaining <= maxBytes {
			break
		}
		victims = append(victims, e)
		remaining -= e.Bytes
	}
	return victims
}

// EvictSession removes entries of sessionID nobody reads, least Value
// first, until the session's materialized entries total at most
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
		if e.Readers == 0 && !IsTable(e.Options) {
			live = append(live, e)
		}
	}
	if maxBytes <= 0 || total <= maxBytes {
		return nil
	}
	slices.SortFunc(live, byValue(m.now()))
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
