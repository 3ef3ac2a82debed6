package cache

import (
	"fmt"
	"slices"

	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
)

// Per-partition rebuild (ARCHITECTURE.md §4). An executor loss takes the
// partitions it held; the rest of a cache is still good. LoseExecutor keeps
// such an entry as partial — Missing lists the lost partitions, the others
// stay pinned where they are — and the next reader has the scheduler run a
// repair build of only the missing partitions (BeginRepair, then
// CompleteRepair merges its output, or AbortRepair leaves the entry
// partial). An entry sharing its files with another (Attach) is removed
// instead: its holders could not agree on one repair.

// LoseExecutor implements State.
func (m *Memory) LoseExecutor(executorID string, only ...Key) (removed, partial []Entry) {
	unlock := m.lock()
	defer unlock()
	var hit []*entry
	for k, e := range m.entries {
		if len(only) > 0 && !slices.Contains(only, k) {
			continue
		}
		if e.State == Materialized && holds(e, executorID) {
			hit = append(hit, e)
		}
	}
	slices.SortFunc(hit, func(a, b *entry) int { return compareKeys(a.Key, b.Key) })
	shared := func(e *entry) bool {
		for _, o := range m.entries {
			if o != e && o.State == Materialized && o.JobID == e.JobID && o.StageID == e.StageID {
				return true
			}
		}
		return false
	}
	for _, e := range hit {
		var lost []int
		for p, part := range e.Locations {
			if slices.ContainsFunc(part, func(l physical.PartitionLocation) bool { return l.Executor.ID == executorID }) {
				lost = append(lost, p)
			}
		}
		missing := append(slices.Clone(e.Missing), lost...)
		slices.Sort(missing)
		missing = slices.Compact(missing)
		if e.RepairJob != "" || shared(e) || len(missing) >= len(e.Locations) {
			m.invalidateLocked(e, CauseExecutorLost)
			removed = append(removed, e.clone())
			continue
		}
		for _, p := range lost {
			e.Locations[p] = nil
		}
		e.Missing = missing
		e.recount()
		m.stats.Partials++
		m.version++
		partial = append(partial, e.clone())
	}
	return removed, partial
}

// recount sets Rows and Bytes from the locations.
func (e *entry) recount() {
	e.Rows, e.Bytes = 0, 0
	for _, part := range e.Locations {
		for _, l := range part {
			e.Rows += l.Rows
			e.Bytes += l.Bytes
		}
	}
}

// BeginRepair implements State.
func (m *Memory) BeginRepair(k Key, jobID string) (Entry, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.entries[k]
	if !ok || e.State != Materialized || !e.Partial() || e.RepairJob != "" {
		return Entry{}, false
	}
	e.RepairJob, e.RepairStage = jobID, UnknownStage
	e.done = make(chan struct{})
	return e.clone(), true
}

// repairOf returns k's entry if jobID runs its repair.
func (m *Memory) repairOf(k Key, jobID string) (*entry, error) {
	e, ok := m.entries[k]
	if !ok || e.State != Materialized || e.RepairJob != jobID {
		why := "entry is absent (removed while it was repaired)"
		if ok {
			why = fmt.Sprintf("entry is not being repaired by job %s", jobID)
		}
		return nil, qerr.Execf("cache: repair of %s by job %s: %s: %w", keyString(k), jobID, why, ErrStale)
	}
	return e, nil
}

// SetRepairStage implements State.
func (m *Memory) SetRepairStage(k Key, jobID string, stageID int) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, err := m.repairOf(k, jobID)
	if err != nil {
		return err
	}
	e.RepairStage = stageID
	return nil
}

// CompleteRepair implements State.
func (m *Memory) CompleteRepair(k Key, jobID string, stageID int, locs [][]physical.PartitionLocation) error {
	unlock := m.lock()
	defer unlock()
	e, err := m.repairOf(k, jobID)
	if err != nil {
		m.stats.StaleCompletions++
		return err
	}
	if len(locs) > len(e.Locations) {
		return qerr.Internalf("cache: repair of %s by job %s: %d output partitions, the entry has %d", keyString(k), jobID, len(locs), len(e.Locations))
	}
	for p := range e.Locations {
		var part []physical.PartitionLocation
		if p < len(locs) {
			part = locs[p]
		}
		missing := slices.Contains(e.Missing, p)
		if missing && len(part) == 0 {
			return qerr.Internalf("cache: repair of %s by job %s: missing partition %d was not written", keyString(k), jobID, p)
		}
		if !missing && len(part) > 0 {
			return qerr.Internalf("cache: repair of %s by job %s: wrote partition %d, which was not missing", keyString(k), jobID, p)
		}
		for _, l := range part {
			if l.JobID != jobID || l.StageID != stageID || l.OutputPartition != p {
				return qerr.Internalf("cache: repair of %s by job %s stage %d: location %s is not output partition %d of that stage", keyString(k), jobID, stageID, l, p)
			}
		}
	}
	for _, p := range e.Missing {
		e.Locations[p] = slices.Clone(locs[p])
	}
	e.Missing = nil
	e.Repairs = append(e.Repairs, StageRef{JobID: jobID, StageID: stageID})
	e.RepairJob, e.RepairStage = "", 0
	e.recount()
	close(e.done)
	e.done = nil
	m.stats.Repairs++
	m.version++
	return nil
}

// AbortRepair implements State.
func (m *Memory) AbortRepair(k Key, jobID string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, err := m.repairOf(k, jobID)
	if err != nil {
		return false
	}
	e.RepairJob, e.RepairStage = "", 0
	close(e.done)
	e.done = nil
	return true
}
