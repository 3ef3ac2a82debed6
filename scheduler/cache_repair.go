package scheduler

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/quiverdb/quiver/cache"
	"github.com/quiverdb/quiver/logical"
	"github.com/quiverdb/quiver/qerr"
	"github.com/quiverdb/quiver/rpc"
	"github.com/quiverdb/quiver/settings"
)

// Per-partition rebuild (ARCHITECTURE.md §4). When an executor holding some
// partitions of an entry is lost, the entry becomes partial
// (cache.State.LoseExecutor) instead of going whole. The next query that
// reads it starts a repair build: the cache node's input planned again at
// the entry's partition count with shuffle exchanges, whose upstream stages
// run as usual and whose final stage runs only the missing partitions' tasks
// (the others are kept: marked done, never launched). The query waits for it
// like for any build and then reads the surviving partitions where they are
// and the rebuilt ones where they were written.

// outcomePartial: the entry had lost partitions; the query had them rebuilt
// (only those) before reading it.
const outcomePartial = "partial"

// cacheExecutorLost makes the entries with partitions on the lost executor
// partial where their other partitions survive, and drops the rest
// (deleting their files on the others).
func (c *core) cacheExecutorLost(id string) {
	removed, partial := c.caches.LoseExecutor(id)
	for _, e := range removed {
		c.dropEntry(e, "executor "+id+" lost")
	}
	for _, e := range partial {
		c.log.Info("cache partial", "cache", e.Key.CacheID, "name", e.Name, "executor", id, "missing", len(e.Missing), "partitions", len(e.Locations))
	}
}

// lostPartitions says which partitions a partial entry lacks.
func lostPartitions(e cache.Entry) string {
	parts := make([]string, len(e.Missing))
	for i, p := range e.Missing {
		parts[i] = strconv.Itoa(p)
	}
	return fmt.Sprintf("partition%s %s of %d lost with an executor", plural(len(parts)), strings.Join(parts, ", "), len(e.Locations))
}

// partialReason says what a partial entry lacks and what happens next.
func partialReason(e cache.Entry) string {
	what := lostPartitions(e)
	if e.RepairJob != "" {
		return what + "; being rebuilt"
	}
	return what + "; the next query rebuilds only those"
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// resolvePartial is resolveCache for a partial entry e of a live holder
// set: it returns the repair build to wait for, starting one if none runs.
func (c *core) resolvePartial(j *job, n *logical.Cache, key cache.Key, e cache.Entry) string {
	c.recordEvent(j, key, n.Name, outcomePartial, cache.Entry{})
	c.setEventReason(j, key, lostPartitions(e))
	if e.RepairJob != "" {
		return e.RepairJob
	}
	childID := newBuildJobID()
	if _, ok := c.caches.BeginRepair(key, childID); !ok {
		return "" // it changed under us: resolve again
	}
	vals := j.settings
	var err error
	// The same partitioning as the entry, and stage boundaries at every
	// exchange, so the final stage has one task per partition.
	if vals, err = vals.With(settings.TargetPartitions.Name, strconv.Itoa(len(e.Locations))); err == nil {
		vals, err = vals.With(settings.ExchangeMode.Name, ExchangeShuffle)
	}
	child := c.addJob(childID, j.session, "cache repair "+cacheLabel(n.Name, n.CacheID), vals, n.Input)
	child.build = &cacheBuild{key: key, name: n.Name, parent: j.id, repair: slices.Clone(e.Missing), parts: len(e.Locations), sortBy: sortByOf(n)}
	child.files = j.files
	if err != nil {
		c.failJob(child, qerr.Internalf("scheduler: repair of cache %s: %w", cacheLabel(n.Name, n.CacheID), err))
		return childID
	}
	c.startJob(child)
	return childID
}

// repairPlanned checks a repair build's plan and narrows its pin to its
// final stage. A final stage that does not have one task per partition of
// the entry (the input no longer plans to the same partitioning) cannot
// repair it: the entry is dropped and the job cancelled, so its readers
// build it whole. It reports whether j goes on.
func (c *core) repairPlanned(j *job) bool {
	b := j.build
	fs := j.stages[j.final]
	if fs.whole || fs.plan.OutputPartitions() != b.parts {
		if removed, ok := c.caches.InvalidateFor(b.key, cache.CauseExecutorLost); ok {
			c.dropEntry(removed, fmt.Sprintf("its input plans to %d partitions now, not %d: rebuilt whole", fs.plan.OutputPartitions(), b.parts))
		}
		c.endJob(j, rpc.JobState_JOB_CANCELLED, fmt.Sprintf("job %s: the cache it repairs no longer plans to its partitions", j.id), qerr.Canceled)
		return false
	}
	if err := c.caches.SetRepairStage(b.key, j.id, j.final); err != nil {
		c.endJob(j, rpc.JobState_JOB_CANCELLED, fmt.Sprintf("job %s: its cache entry was removed while it was being repaired", j.id), qerr.Canceled)
		return false
	}
	return true
}

// keepRepaired marks the tasks of a repair build's final stage whose
// partitions the entry still has as done: they never run.
func keepRepaired(j *job, s *stage) {
	if j.build == nil || j.build.repair == nil || !s.final {
		return
	}
	for _, t := range s.tasks {
		if !slices.Contains(j.build.repair, t.partition) && t.state != taskSuccessful {
			t.state, t.kept = taskSuccessful, true
		}
	}
}

// repairEnded merges a repair build's output into its entry, or ends the
// repair without data (the entry stays partial); it reports whether the
// build's files became part of the entry.
func (c *core) repairEnded(j *job) bool {
	b := j.build
	if j.state == rpc.JobState_JOB_SUCCESSFUL {
		err := c.caches.CompleteRepair(b.key, j.id, j.final, stageLocations(j.stages[j.final]))
		if err == nil {
			return true
		}
		if !errors.Is(err, cache.ErrStale) {
			c.cfg.Logf("scheduler: job %s: repair cache %s: %v", j.id, cacheLabel(b.name, b.key.CacheID), err)
			if removed, ok := c.caches.InvalidateFor(b.key, cache.CauseExecutorLost); ok {
				c.dropEntry(removed, "its repair failed: "+err.Error())
			}
		}
		return false
	}
	if c.caches.AbortRepair(b.key, j.id) {
		b.aborted = true
	}
	return false
}

// entryState is the state SHOW CACHES gives: the registry's, or partial.
func entryState(e cache.Entry) string {
	if e.State == cache.Materialized && e.Partial() {
		return outcomePartial
	}
	return e.State.String()
}

// filesGone reports whether a registering executor that holds the job
// directories held lacks one holding e's partitions on it.
func filesGone(e cache.Entry, executorID string, held map[string]bool) bool {
	for _, part := range e.Locations {
		for _, l := range part {
			if l.Executor.ID == executorID && !held[l.JobID] {
				return true
			}
		}
	}
	return false
}
