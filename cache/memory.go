package cache

import (
	"cmp"
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
)

// Option configures a backend.
type Option func(*Memory)

// WithClock makes the backend read the time from now instead of time.Now
// (tests use it to step time for TTL and LRU).
func WithClock(now func() time.Time) Option {
	return func(m *Memory) { m.now = now }
}

// Memory is the in-memory State: entries are lost when the process exits
// (their files become orphans that job-data cleanup reclaims). It is safe for
// concurrent use; one mutex guards everything, held only for map and slice
// work, never across I/O or waiting.
type Memory struct {
	mu      sync.Mutex
	entries map[Key]*entry
	stats   Stats // counters only; Entries and Bytes are computed by Stats()
	now     func() time.Time
	// version increases on every change to persisted state (materialized
	// entries and their hit records), so the durable backend writes only
	// when something changed and never writes an older snapshot over a
	// newer one.
	version uint64
	// onChange, if set, runs after mu is released whenever version moved.
	// Set once at construction, before the Memory is shared.
	onChange func()
}

// entry is a registry entry plus the channel its waiters block on.
type entry struct {
	Entry
	// done is non-nil exactly while the entry is Pending; it is closed (and
	// cleared) on the transition out of Pending, waking every Wait.
	done chan struct{}
}

var _ State = (*Memory)(nil)

// NewMemory returns an empty in-memory registry.
func NewMemory(opts ...Option) *Memory {
	m := &Memory{entries: make(map[Key]*entry), now: time.Now}
	for _, o := range opts {
		o(m)
	}
	return m
}

// lock takes mu and returns the function that releases it and then, if
// persisted state changed meanwhile, runs onChange outside the lock.
func (m *Memory) lock() (unlock func()) {
	m.mu.Lock()
	before := m.version
	return func() {
		changed := m.version != before
		m.mu.Unlock()
		if changed && m.onChange != nil {
			m.onChange()
		}
	}
}

// Lookup implements State.
func (m *Memory) Lookup(k Key) (Entry, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.entries[k]
	if !ok {
		return Entry{}, false
	}
	return e.clone(), true
}

// Begin implements State.
func (m *Memory) Begin(k Key, jobID, name string, opts map[string]string) (BeginResult, Entry) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e, ok := m.entries[k]; ok {
		if e.State == Pending {
			return AlreadyPending, e.clone()
		}
		return AlreadyMaterialized, e.clone()
	}
	e := &entry{
		Entry: Entry{
			Key:     k,
			Name:    name,
			State:   Pending,
			JobID:   jobID,
			StageID: UnknownStage,
			Created: m.now(),
			Options: opts,
		},
		done: make(chan struct{}),
	}
	e.Entry = e.clone() // own a copy of opts
	m.entries[k] = e
	m.stats.Misses++
	return Claimed, e.clone()
}

// SetStage implements State.
func (m *Memory) SetStage(k Key, jobID string, stageID int) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.entries[k]
	if !ok || e.State != Pending || e.JobID != jobID {
		return qerr.Execf("cache: set stage of %s for job %s: %s: %w", keyString(k), jobID, describe(e, ok), ErrStale)
	}
	e.StageID = stageID
	return nil
}

// describe says why a job does not own an entry, for ErrStale messages.
func describe(e *entry, ok bool) string {
	switch {
	case !ok:
		return "entry is absent (aborted, invalidated or its session closed)"
	case e.State == Pending:
		return "entry is pending for job " + e.JobID
	default:
		return "entry was materialized by job " + e.JobID
	}
}

// Complete implements State.
func (m *Memory) Complete(k Key, jobID string, stageID int, schema *arrow.Schema, locs [][]physical.PartitionLocation, disjoint []int) error {
	unlock := m.lock()
	defer unlock()
	e, ok := m.entries[k]
	if ok && e.State == Materialized && e.JobID == jobID {
		return nil // a duplicate completion
	}
	if !ok || e.State != Pending || e.JobID != jobID {
		m.stats.StaleCompletions++
		return qerr.Execf("cache: complete %s by job %s: %s: %w", keyString(k), jobID, describe(e, ok), ErrStale)
	}
	if schema == nil {
		return qerr.Internalf("cache: complete %s by job %s: schema is nil", keyString(k), jobID)
	}
	var rows, bytes int64
	for i, part := range locs {
		for _, l := range part {
			if l.JobID != jobID || l.StageID != stageID || l.OutputPartition != i {
				return qerr.Internalf("cache: complete %s by job %s stage %d: location %s is not output partition %d of that stage",
					keyString(k), jobID, stageID, l, i)
			}
			rows += l.Rows
			bytes += l.Bytes
		}
	}
	e.State = Materialized
	e.StageID = stageID
	e.Schema = schema
	e.Locations = Entry{Locations: locs}.clone().Locations
	e.Disjoint = slices.Clone(disjoint)
	e.Rows, e.Bytes = rows, bytes
	now := m.now()
	e.BuildTime = max(now.Sub(e.Created), 0)
	e.Created = now
	e.Heat, e.HeatAt = 1, now // the build counts as the first use
	close(e.done)
	e.done = nil
	m.stats.Materializations++
	m.version++
	return nil
}

// Abort implements State.
func (m *Memory) Abort(k Key, jobID string) (Entry, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.entries[k]
	if !ok || e.State != Pending || e.JobID != jobID {
		return Entry{}, false
	}
	m.removeLocked(e)
	m.stats.Aborts++
	return e.clone(), true
}

// Invalidate implements State.
func (m *Memory) Invalidate(k Key) (Entry, bool) { return m.InvalidateFor(k, CauseUncache) }

// InvalidateFor implements State.
func (m *Memory) InvalidateFor(k Key, cause Cause) (Entry, bool) {
	unlock := m.lock()
	defer unlock()
	e, ok := m.entries[k]
	if !ok {
		return Entry{}, false
	}
	m.invalidateLocked(e, cause)
	return e.clone(), true
}

// InvalidateExecutor implements State.
func (m *Memory) InvalidateExecutor(executorID string) []Entry {
	unlock := m.lock()
	defer unlock()
	var out []Entry
	for _, e := range m.entries {
		if e.State == Materialized && holds(e, executorID) {
			m.invalidateLocked(e, CauseExecutorLost)
			out = append(out, e.clone())
		}
	}
	sortByKey(out)
	return out
}

// holds reports whether any partition of e lives on executorID.
func holds(e *entry, executorID string) bool {
	for _, part := range e.Locations {
		for _, l := range part {
			if l.Executor.ID == executorID {
				return true
			}
		}
	}
	return false
}

// RemoveSession implements State.
func (m *Memory) RemoveSession(sessionID string) []Entry {
	unlock := m.lock()
	defer unlock()
	var out []Entry
	for k, e := range m.entries {
		if k.SessionID == sessionID {
			m.invalidateLocked(e, CauseSessionClosed)
			out = append(out, e.clone())
		}
	}
	sortByKey(out)
	return out
}

// invalidateLocked removes e and counts the removal under cause.
func (m *Memory) invalidateLocked(e *entry, cause Cause) {
	m.removeLocked(e)
	if int(cause) >= 0 && int(cause) < NumCauses {
		m.stats.Invalidations[cause]++
	}
}

// removeLocked deletes e from the map and wakes its waiters.
func (m *Memory) removeLocked(e *entry) {
	delete(m.entries, e.Key)
	if e.done != nil {
		close(e.done)
		e.done = nil
	}
	if e.State == Materialized {
		m.version++
	}
}

// PinnedStages implements State.
func (m *Memory) PinnedStages() map[[2]string]bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	pins := make(map[[2]string]bool, len(m.entries))
	for _, e := range m.entries {
		pins[pin(e.JobID, e.StageID)] = true
		for _, r := range e.Repairs {
			pins[pin(r.JobID, r.StageID)] = true
		}
		if e.RepairJob != "" {
			pins[pin(e.RepairJob, e.RepairStage)] = true
		}
	}
	return pins
}

// pin is the cleanup key of (jobID, stageID).
func pin(jobID string, stageID int) [2]string {
	if stageID == UnknownStage {
		return [2]string{jobID, AllStages}
	}
	return [2]string{jobID, strconv.Itoa(stageID)}
}

// List implements State.
func (m *Memory) List(sessionID string) []Entry {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Entry
	for k, e := range m.entries {
		if sessionID == "" || k.SessionID == sessionID {
			out = append(out, e.clone())
		}
	}
	slices.SortFunc(out, func(a, b Entry) int {
		return cmp.Or(
			strings.Compare(a.Key.SessionID, b.Key.SessionID),
			a.Created.Compare(b.Created),
			strings.Compare(a.Key.CacheID, b.Key.CacheID))
	})
	return out
}

// Touch implements State.
func (m *Memory) Touch(k Key) {
	unlock := m.lock()
	defer unlock()
	e, ok := m.entries[k]
	if !ok || e.State != Materialized {
		return
	}
	e.Hits++
	e.LastHit = m.now()
	e.Heat, e.HeatAt = e.heatAt(e.LastHit)+1, e.LastHit
	m.stats.Hits++
	m.version++
}

// AddBytesRead implements State.
func (m *Memory) AddBytesRead(n int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.stats.BytesRead += n
}

// Acquire implements State.
func (m *Memory) Acquire(k Key) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.entries[k]
	if !ok || e.State != Materialized {
		return false
	}
	e.Readers++
	return true
}

// Release implements State.
func (m *Memory) Release(k Key, jobID string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e, ok := m.entries[k]; ok && e.State == Materialized && e.JobID == jobID && e.Readers > 0 {
		e.Readers--
	}
}

// Wait implements State.
func (m *Memory) Wait(ctx context.Context, k Key) error {
	m.mu.Lock()
	e, ok := m.entries[k]
	if !ok || e.done == nil {
		m.mu.Unlock()
		return nil
	}
	done := e.done
	m.mu.Unlock()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return &qerr.Error{
			Kind: qerr.Canceled,
			Msg:  "cache: wait for pending cache " + keyString(k) + ": " + ctx.Err().Error(),
			Err:  ctx.Err(),
		}
	}
}

// Stats implements State.
func (m *Memory) Stats() Stats {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.stats
	s.Entries = len(m.entries)
	for _, e := range m.entries {
		if e.State == Materialized {
			s.Bytes += e.Bytes
		}
	}
	return s
}

// sortByKey orders entries by session then cache id, for stable results.
func sortByKey(es []Entry) {
	slices.SortFunc(es, func(a, b Entry) int { return compareKeys(a.Key, b.Key) })
}

func compareKeys(a, b Key) int {
	return cmp.Or(strings.Compare(a.SessionID, b.SessionID), strings.Compare(a.CacheID, b.CacheID))
}

// SetSources implements State.
func (m *Memory) SetSources(k Key, jobID string, srcs []Source) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.entries[k]
	if !ok || e.State != Pending || e.JobID != jobID {
		return qerr.Execf("cache: set sources of %s for job %s: %s: %w", keyString(k), jobID, describe(e, ok), ErrStale)
	}
	e.Sources = slices.Clone(srcs)
	return nil
}

// MarkStale implements State.
func (m *Memory) MarkStale(k Key, reason string) bool {
	unlock := m.lock()
	defer unlock()
	e, ok := m.entries[k]
	if !ok || e.State != Materialized {
		return false
	}
	if e.Stale != reason {
		e.Stale = reason
		m.version++
	}
	return true
}

// SetContentKey implements State.
func (m *Memory) SetContentKey(k Key, jobID, contentKey string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.entries[k]
	if !ok || e.State != Pending || e.JobID != jobID {
		return qerr.Execf("cache: set content key of %s for job %s: %s: %w", keyString(k), jobID, describe(e, ok), ErrStale)
	}
	e.ContentKey = contentKey
	return nil
}

// FindContent implements State.
func (m *Memory) FindContent(contentKey string, skip Key) (Entry, bool) {
	if contentKey == "" {
		return Entry{}, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var best *entry
	for _, e := range m.entries {
		if e.ContentKey != contentKey || e.Partial() || e.Key == skip {
			continue // a partial entry is repaired by its holder, not shared
		}
		switch {
		case best == nil,
			e.State == Materialized && best.State != Materialized,
			e.State == best.State && (e.Created.Before(best.Created) || e.Created.Equal(best.Created) && compareKeys(e.Key, best.Key) < 0):
			best = e
		}
	}
	if best == nil {
		return Entry{}, false
	}
	return best.clone(), true
}

// Attach implements State.
func (m *Memory) Attach(k Key, name string, opts map[string]string, from Key) (Entry, bool) {
	unlock := m.lock()
	defer unlock()
	if _, ok := m.entries[k]; ok {
		return Entry{}, false
	}
	src, ok := m.entries[from]
	if !ok || src.State != Materialized || src.Partial() {
		return Entry{}, false
	}
	e := &entry{Entry: src.clone()}
	e.Key, e.Name, e.Options = k, name, nil
	if opts != nil {
		e.Options = Entry{Options: opts}.clone().Options
	}
	e.Created, e.LastHit, e.Hits, e.Readers, e.Stale = m.now(), time.Time{}, 0, 0, ""
	e.Heat, e.HeatAt = 1, e.Created // BuildTime stays: it is what the data cost
	m.entries[k] = e
	m.version++
	return e.clone(), true
}

// Sharers implements State.
func (m *Memory) Sharers(e Entry) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for k, o := range m.entries {
		if k != e.Key && o.JobID == e.JobID && o.StageID == e.StageID && o.State == Materialized {
			n++
		}
	}
	return n
}
