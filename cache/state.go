package cache

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/quiverdb/quiver/physical"
)

// Key identifies a cache entry: (session id, cache id). The cache id is the
// UUID minted by one df.Cache() call or CACHE TABLE statement.
type Key = physical.CacheKey

// keyString renders k for error messages.
func keyString(k Key) string { return k.SessionID + "/" + k.CacheID }

// BeginResult is the outcome of State.Begin.
type BeginResult int

const (
	// Claimed: the key was absent and the caller's job now owns a Pending entry;
	// it must end the claim with Complete or Abort.
	Claimed BeginResult = iota
	// AlreadyPending: another (or the same) job is building the entry; Wait for it.
	AlreadyPending
	// AlreadyMaterialized: the entry is ready to read.
	AlreadyMaterialized
)

func (r BeginResult) String() string {
	switch r {
	case Claimed:
		return "claimed"
	case AlreadyPending:
		return "already pending"
	case AlreadyMaterialized:
		return "already materialized"
	default:
		return fmt.Sprintf("BeginResult(%d)", int(r))
	}
}

// EntryState is where an entry is in its lifecycle. An absent entry has no
// state: it is simply not in the registry.
type EntryState int

const (
	// Pending: a job has claimed the key and is building the cached output.
	Pending EntryState = iota + 1
	// Materialized: the output exists as pinned shuffle files at Locations.
	Materialized
)

func (s EntryState) String() string {
	switch s {
	case Pending:
		return "pending"
	case Materialized:
		return "materialized"
	default:
		return fmt.Sprintf("EntryState(%d)", int(s))
	}
}

// UnknownStage is Entry.StageID of a Pending entry whose output stage is not
// known yet (see State.SetStage).
const UnknownStage = -1

// AllStages is the stage half of a pin that protects every stage of a job: a
// Pending entry whose output stage is not known yet pins its whole job.
const AllStages = "*"

// Entry is a snapshot of one registry entry. Entries returned by a State are
// copies: the caller may keep and modify them freely.
type Entry struct {
	Key   Key
	Name  string // the CACHE TABLE name, or "" for df.Cache()
	State EntryState
	// JobID is the job that owns the claim (Pending) or produced the output
	// (Materialized).
	JobID string
	// StageID is the stage whose shuffle output is the cached data, pinned
	// against cleanup; UnknownStage while Pending until SetStage.
	StageID int
	Schema  *arrow.Schema // nil while Pending
	// Locations are the pinned shuffle files, indexed by output partition.
	Locations [][]physical.PartitionLocation
	// Disjoint lists the columns whose values never occur in two
	// partitions (see Registry.Complete).
	Disjoint []int
	Rows     int64
	Bytes    int64
	// Created is when the key was claimed, reset to the materialization time by
	// Complete. LastHit is the last Touch (zero if never hit).
	Created time.Time
	LastHit time.Time
	Hits    int64
	Options map[string]string // CACHE TABLE OPTIONS, e.g. "ttl"
	// Readers counts running queries reading the entry (Acquire/Release);
	// eviction never removes an entry with Readers > 0.
	Readers int
	// Sources is the entry's lineage, fingerprinted when its build was
	// claimed (SetSources); a hit compares it with the sources' current
	// fingerprints.
	Sources []Source
	// Stale, when set, says which sources changed since the build of an
	// entry kept with consistency 'snapshot' (MarkStale).
	Stale string
	// ContentKey fingerprints what the entry holds: its input plan and its
	// sources' fingerprints ("" when it may not be shared). Entries with
	// one content key may share one copy of the data (Attach).
	ContentKey string
	// BuildTime is how long the build took (claim to Complete); with Heat
	// and Bytes it gives the entry's value to the eviction sweeper (Value).
	BuildTime time.Duration
	// Heat counts the entry's uses — its materialization and every hit —
	// each aged by half every HeatHalfLife since it happened; HeatAt is
	// when Heat was last brought up to date.
	Heat   float64
	HeatAt time.Time
	// Missing lists, sorted, the output partitions whose files went with a
	// lost executor (LoseExecutor): an entry with Missing is partial, its
	// other partitions still pinned where they are, until a repair build
	// writes the missing ones again (BeginRepair, CompleteRepair). Their
	// Locations are empty meanwhile.
	Missing []int
	// Repairs are the outputs of completed repair builds holding some of
	// the entry's partitions, besides (JobID, StageID); pinned like it.
	Repairs []StageRef
	// RepairJob is the repair build running for Missing ("" when none);
	// RepairStage its output stage, UnknownStage until SetRepairStage.
	// Neither is persisted: a repair in flight at a crash is lost with its
	// job, and the entry stays partial.
	RepairJob   string
	RepairStage int
}

// StageRef names one job's stage.
type StageRef struct {
	JobID   string `json:"job_id"`
	StageID int    `json:"stage_id"`
}

// Partial reports whether some of e's partitions are missing.
func (e Entry) Partial() bool { return len(e.Missing) > 0 }

// Outputs lists the (job, stage) outputs holding e's files: its build's
// and its repairs'.
func (e Entry) Outputs() []StageRef {
	return append([]StageRef{{JobID: e.JobID, StageID: e.StageID}}, e.Repairs...)
}

// Executors returns the distinct ids of the executors holding the entry's
// partitions, sorted. The hit path validates them against the live set.
func (e Entry) Executors() []string {
	var ids []string
	for _, part := range e.Locations {
		for _, l := range part {
			ids = append(ids, l.Executor.ID)
		}
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}

// lastUsed is the time eviction ranks an entry by: its last hit, or its
// materialization if it was never hit.
func (e Entry) lastUsed() time.Time {
	if e.LastHit.After(e.Created) {
		return e.LastHit
	}
	return e.Created
}

// clone returns a deep copy of e so a snapshot never aliases registry state.
func (e Entry) clone() Entry {
	if e.Locations != nil {
		locs := make([][]physical.PartitionLocation, len(e.Locations))
		for i, p := range e.Locations {
			locs[i] = slices.Clone(p)
		}
		e.Locations = locs
	}
	e.Disjoint = slices.Clone(e.Disjoint)
	e.Sources = slices.Clone(e.Sources)
	e.Missing = slices.Clone(e.Missing)
	e.Repairs = slices.Clone(e.Repairs)
	if e.Options != nil {
		opts := make(map[string]string, len(e.Options))
		for k, v := range e.Options {
			opts[k] = v
		}
		e.Options = opts
	}
	return e
}

// ErrStale is wrapped by the error Complete (and SetStage) return when the
// caller's job does not own the entry: it was aborted, invalidated, removed
// with its session, claimed anew by another job, or materialized by another
// job. The caller must treat its output as unreferenced and unpin it.
var ErrStale = errors.New("stale cache completion")

// Cause is why an entry was invalidated; Stats counts invalidations per cause.
type Cause int

const (
	// CauseUncache: UNCACHE TABLE, CLEAR CACHE or an explicit Invalidate.
	CauseUncache Cause = iota
	// CauseExecutorLost: an executor holding a partition was lost (or found
	// dead by validate-on-read).
	CauseExecutorLost
	// CauseSessionClosed: the owning session was closed.
	CauseSessionClosed
	// CauseEvicted: the eviction sweeper removed it (TTL or byte cap).
	CauseEvicted
	// CauseFetchFailed: reading the entry back failed (a file is gone).
	CauseFetchFailed
	// CauseSourceChanged: a source the entry was built from changed (strict
	// consistency), or a table or view it reads was replaced or dropped.
	CauseSourceChanged

	// NumCauses is the number of causes, the length of Stats.Invalidations.
	NumCauses = int(CauseSourceChanged) + 1
)

func (c Cause) String() string {
	switch c {
	case CauseUncache:
		return "uncache"
	case CauseExecutorLost:
		return "executor_lost"
	case CauseSessionClosed:
		return "session_closed"
	case CauseEvicted:
		return "evicted"
	case CauseFetchFailed:
		return "fetch_failed"
	case CauseSourceChanged:
		return "source_changed"
	default:
		return fmt.Sprintf("Cause(%d)", int(c))
	}
}

// Stats are the registry's counters since it was created (they are not
// persisted by the durable backend) plus its current size.
type Stats struct {
	Hits             int64 // Touch calls on a materialized entry
	Misses           int64 // Begin calls that claimed the key
	Materializations int64 // Complete calls that promoted a Pending entry
	Aborts           int64 // Abort calls that cleared a claim
	StaleCompletions int64 // Complete calls that returned ErrStale
	// Invalidations counts removed entries (pending or materialized) per Cause.
	Invalidations [NumCauses]int64
	BytesRead     int64 // bytes read back from cached output (AddBytesRead)
	Partials      int64 // entries made partial by an executor loss (LoseExecutor)
	Repairs       int64 // repair builds that completed an entry (CompleteRepair)

	Entries int   // current entries, pending and materialized
	Bytes   int64 // current bytes of materialized entries
}

// State is the cache registry. Implementations are safe for concurrent use;
// every method is atomic with respect to the others. Methods that remove
// entries return them so the caller can unpin and delete their shuffle files;
// the registry never touches files itself.
type State interface {
	// Lookup returns a copy of k's entry. It records nothing: a query that
	// uses a hit calls Touch.
	Lookup(k Key) (Entry, bool)
	// Begin atomically claims an absent key for jobID, creating a Pending
	// entry with name and a copy of opts (Claimed). Otherwise it changes
	// nothing and reports the entry found (AlreadyPending or
	// AlreadyMaterialized). The returned entry is the one now registered.
	Begin(k Key, jobID, name string, opts map[string]string) (BeginResult, Entry)
	// SetStage records the output stage of jobID's Pending claim on k, so the
	// pin narrows from the whole job to that stage. Not owning the claim is
	// ErrStale.
	SetStage(k Key, jobID string, stageID int) error
	// Complete promotes k from Pending to Materialized if jobID owns the
	// claim, recording the output; every location must belong to (jobID,
	// stageID) and locs[i] to output partition i. Completing an entry that
	// jobID already materialized is a no-op returning nil; anything else
	// returns an error wrapping ErrStale and changes nothing. Waiters wake.
	// disjoint lists the columns whose values never occur in two partitions
	// (physical.DisjointColumns of the building plan; nil: none known).
	Complete(k Key, jobID string, stageID int, schema *arrow.Schema, locs [][]physical.PartitionLocation, disjoint []int) error
	// Abort removes k if it is Pending and owned by jobID, returning it and
	// waking its waiters; otherwise it changes nothing and returns false.
	Abort(k Key, jobID string) (Entry, bool)
	// Invalidate is InvalidateFor(k, CauseUncache).
	Invalidate(k Key) (Entry, bool)
	// InvalidateFor removes k in any state and returns it; a later Complete of
	// its job is stale. Waiters wake.
	InvalidateFor(k Key, cause Cause) (Entry, bool)
	// InvalidateExecutor removes every materialized entry with a partition on
	// executorID (whole entries: a cache is never served with holes) and
	// returns them sorted by key.
	InvalidateExecutor(executorID string) []Entry
	// LoseExecutor is what an executor loss does to the entries with a
	// partition on executorID: an entry that keeps some partitions on other
	// executors becomes partial (its partitions on executorID are Missing,
	// the rest stay pinned) and is returned in partial; one that would
	// keep none, shares its files with another entry, or is being repaired
	// is removed (CauseExecutorLost) and returned in removed. Both sorted by
	// key. With only, just those entries are considered (an executor that
	// registers again without some of their files).
	LoseExecutor(executorID string, only ...Key) (removed, partial []Entry)
	// BeginRepair claims the repair of partial entry k for jobID: it
	// returns the entry and true, or false when k is not partial or a
	// repair is already running (Lookup names it). Waiters on k block until
	// the repair ends.
	BeginRepair(k Key, jobID string) (Entry, bool)
	// SetRepairStage records the repair build's output stage, narrowing its
	// pin from the whole job to that stage; ErrStale if jobID does not own
	// k's repair.
	SetRepairStage(k Key, jobID string, stageID int) error
	// CompleteRepair merges the repair's output into k: locs, indexed by
	// output partition, must hold exactly the Missing partitions, each from
	// (jobID, stageID). The entry is whole again. ErrStale if jobID does not
	// own k's repair (the entry was removed meanwhile): the caller deletes
	// the repair's files.
	CompleteRepair(k Key, jobID string, stageID int, locs [][]physical.PartitionLocation) error
	// AbortRepair ends jobID's repair of k without data: k stays partial.
	AbortRepair(k Key, jobID string) bool
	// RemoveSession removes every entry of sessionID, pending ones too, and
	// returns them sorted by key.
	RemoveSession(sessionID string) []Entry
	// PinnedStages returns the (job id, strconv.Itoa(stage id)) pairs that
	// job-data cleanup must skip: one per entry, pending ones included; a
	// Pending entry whose stage is unknown pins (job id, AllStages).
	PinnedStages() map[[2]string]bool
	// List returns copies of the entries of sessionID ("" = every session),
	// sorted by session, creation time and cache id.
	List(sessionID string) []Entry
	// Touch records a hit on a materialized entry (Hits, LastHit, Stats.Hits).
	Touch(k Key)
	// AddBytesRead adds n bytes read back from cached output to the stats.
	AddBytesRead(n int64)
	// Acquire registers a reader of materialized k, protecting it from
	// eviction, and reports whether k was materialized. Each successful
	// Acquire must be paired with one Release once the query stops reading.
	Acquire(k Key) bool
	// Release ends a reader registered by Acquire on the entry jobID built;
	// it is a no-op if that entry was removed meanwhile, even if k now names
	// a newer build (whose readers are not the caller's to drop).
	Release(k Key, jobID string)
	// Wait blocks until the Pending claim on k seen at the call ends
	// (materialized, aborted or removed) or ctx ends, and returns nil at once
	// if k is not Pending. It is event-driven: a channel closed on every
	// transition out of Pending. Another job may claim k again after an abort,
	// so callers loop: Begin, Wait on AlreadyPending, Begin again.
	Wait(ctx context.Context, k Key) error
	// Stats returns the counters.
	Stats() Stats
	// SetSources records the lineage of jobID's Pending claim on k (taken
	// before the build reads anything, so a change during the build shows
	// as stale later). Not owning the claim is ErrStale.
	SetSources(k Key, jobID string, srcs []Source) error
	// MarkStale records on materialized k that its sources changed (reason
	// names them) while it keeps serving; false if k is not materialized.
	MarkStale(k Key, reason string) bool
	// SetContentKey records the content key of jobID's Pending claim on k.
	// Not owning the claim is ErrStale.
	SetContentKey(k Key, jobID, contentKey string) error
	// FindContent returns an entry other than skip holding contentKey, a
	// materialized one first (the least recently created), else a pending
	// one; the zero Key skips nothing.
	FindContent(contentKey string, skip Key) (Entry, bool)
	// Attach registers absent k as materialized over the data of
	// materialized from (same job, stage and files: one copy, a reference
	// per holder), with its own name, options and counters, and returns
	// it; false if k exists or from is not materialized.
	Attach(k Key, name string, opts map[string]string, from Key) (Entry, bool)
	// Sharers counts the other entries over the same data as e (the same
	// job and stage): e's files may be deleted only when it is 0.
	Sharers(e Entry) int
}
