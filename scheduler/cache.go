package scheduler

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/quiverdb/quiver/arrowpb"
	"github.com/quiverdb/quiver/cache"
	"github.com/quiverdb/quiver/logical"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
	"github.com/quiverdb/quiver/rpc"
	"github.com/quiverdb/quiver/settings"
)

// The dataset cache on the event loop (ARCHITECTURE.md §4). Everything here runs
// on the loop goroutine, like the rest of core.
//
// A query's Cache nodes are resolved before physical planning (lowerCaches):
// a materialized entry on live executors is a hit, lowered to a CacheReader;
// an absent one is claimed and its input submitted as a child job (a build)
// whose final stage is a pinned passthrough ShuffleWriter; a pending one is
// waited for. A waiting query stays QUEUED; every event ends with
// settleCaches, which starts the queries whose builds ended (resolving them
// again: a finished build is now a hit, a failed one is claimed again by the
// first waiter, up to maxCacheBuildAttempts failed builds per key and query).
// No goroutine blocks and nothing polls: the build job's end is the event.

const (
	// maxCacheBuildAttempts: a query fails once this many builds of one of
	// its caches have failed.
	maxCacheBuildAttempts = 3
	// maxCacheRestarts: a query re-run this many times because cached
	// input it read was lost fails on the next loss.
	maxCacheRestarts = 3
)

// Cache event outcomes (rpc.CacheEvent.outcome).
const (
	outcomeHit     = "hit"
	outcomeMiss    = "miss"
	outcomePending = "pending"
	// outcomeStale: the entry's sources changed, so it was invalidated and
	// rebuilt (strict consistency); the event's reason names the tables.
	outcomeStale = "stale"
)

// cacheBuild marks a job that materializes one cache entry.
type cacheBuild struct {
	key    cache.Key
	name   string
	parent string // the job that claimed the key
	// aborted: the job failed and its Abort released the claim, so the
	// jobs waiting for it count a failed build.
	aborted bool
	// repair, for a repair build (cache_repair.go), lists the partitions
	// it writes; parts is the entry's partition count.
	repair []int
	parts  int
	// sortBy: the entry's sort_by option (cache.SortBy).
	sortBy []cache.SortColumn
}

// sortByOf is n's sort_by option, parsed; nil when unset or malformed
// (entryOptions refuses a malformed one before any build).
func sortByOf(n *logical.Cache) []cache.SortColumn {
	for k, v := range n.Options {
		if strings.EqualFold(k, cache.SortByOption) {
			cols, err := cache.SortBy(map[string]string{cache.SortByOption: v})
			if err != nil {
				return nil
			}
			return cols
		}
	}
	return nil
}

// cacheEvent is one cache outcome of a job, for JobStatus.caches.
type cacheEvent struct {
	key        cache.Key
	name       string
	outcome    string
	partitions int
	bytes      int64
	reason     string
}

// reader is a reader count a job holds on the entry one build made.
type reader struct {
	key   cache.Key
	build string
}

// staleHit is a hit on a snapshot entry whose sources changed.
type staleHit struct {
	key    cache.Key
	reason string
}

// evicter is the sweeper's view of a registry (cache.Memory and
// cache.Durable implement it).
type evicter interface {
	Evict(now time.Time, defaultTTL time.Duration, maxBytes int64) []cache.Entry
	EvictSession(sessionID string, maxBytes int64) []cache.Entry
}

// newBuildJobID names a cache materialization job.
func newBuildJobID() string { return "cache-" + uuid.NewString() }

// ---- resolution ----

// lowerCaches resolves j's Cache nodes against the registry, outermost
// first: a hit's input is never looked at, and a miss's input (with any
// Cache nodes nested in it) is the child job's plan, resolved when the child
// starts, so nested caches are built innermost first. It returns the hits to
// lower to CacheReaders and whether j must wait for builds (j.waitingOn).
// Every Cache node is validated first, so a bad one fails the query before
// any entry is claimed.
func (c *core) lowerCaches(j *job) (map[cache.Key]*physical.CacheReader, bool, error) {
	if j.plan == nil { // tests that hand the loop a stage graph directly
		return nil, false, nil
	}
	if err := c.validateCaches(j, j.plan); err != nil {
		return nil, false, err
	}
	hits := map[cache.Key]*physical.CacheReader{}
	var walk func(p logical.Plan) error
	walk = func(p logical.Plan) error {
		n, ok := p.(*logical.Cache)
		if !ok {
			for _, ch := range p.Children() {
				if err := walk(ch); err != nil {
					return err
				}
			}
			return nil
		}
		key := cache.Key{SessionID: n.SessionID, CacheID: n.CacheID}
		if c.uncached[key] {
			// Uncached after this query was planned: the query computes
			// the input itself and builds no entry no name reaches.
			return walk(n.Input)
		}
		if _, ok := hits[key]; ok {
			return nil
		}
		if _, ok := j.waitingOn[key]; ok {
			return nil
		}
		r, buildJob, err := c.resolveCache(j, n, key)
		if err == errAwaitHolders {
			j.awaitHolders = true
			return nil
		}
		if err != nil {
			return err
		}
		if r != nil {
			hits[key] = r
			return nil
		}
		if j.waitingOn == nil {
			j.waitingOn = map[cache.Key]string{}
		}
		j.waitingOn[key] = buildJob
		return nil
	}
	j.awaitHolders = false
	if err := walk(j.plan); err != nil {
		return nil, false, err
	}
	if j.awaitHolders || len(j.waitingOn) > 0 {
		return nil, true, nil
	}
	return hits, false, nil
}

// validateCaches checks every Cache node of p: it names this job's session
// and its options are known and well formed.
func (c *core) validateCaches(j *job, p logical.Plan) error {
	if n, ok := p.(*logical.Cache); ok {
		if n.CacheID == "" {
			return qerr.Planf("scheduler: cache %s has no cache id", cacheLabel(n.Name, ""))
		}
		if n.SessionID != j.session && !c.globalRef(j, n) {
			return qerr.Planf("scheduler: cache %s belongs to session %q, not to this query's session %q: a cached dataset is usable only in the session that cached it",
				cacheLabel(n.Name, n.CacheID), n.SessionID, j.session)
		}
		if _, ok := c.sessions[j.session]; !ok {
			return qerr.Planf("scheduler: cache %s: session %q is closed", cacheLabel(n.Name, n.CacheID), j.session)
		}
		if _, err := entryOptions(n, settings.Values{}); err != nil {
			return err
		}
	}
	for _, ch := range p.Children() {
		if err := c.validateCaches(j, ch); err != nil {
			return err
		}
	}
	return nil
}

func cacheLabel(name, id string) string {
	if name != "" {
		return name
	}
	return id
}

// entryOptions validates a Cache node's options (lowercased keys; only ttl
// is known) and adds the session's default ttl (setting quiver.cache.ttl)
// when the node has none.
func entryOptions(n *logical.Cache, vals settings.Values) (map[string]string, error) {
	opts := map[string]string{}
	for k, v := range n.Options {
		lk := strings.ToLower(k)
		if _, ok := cache.Options[lk]; !ok {
			return nil, qerr.Planf("scheduler: cache %s: unknown option %q (known: %s)", cacheLabel(n.Name, n.CacheID), k, cache.OptionNames())
		}
		opts[lk] = v
	}
	for _, check := range cache.Options {
		if err := check(opts); err != nil {
			return nil, qerr.Planf("scheduler: cache %s: %w", cacheLabel(n.Name, n.CacheID), err)
		}
	}
	if _, ok := opts[cache.TTLOption]; !ok {
		if v, ok := vals.Lookup(settings.CacheTTL); ok {
			opts[cache.TTLOption] = v
		}
	}
	return opts, nil
}

// resolveCache resolves one Cache node: a CacheReader for a usable hit, or
// the id of the build job to wait for (claiming the key and starting the
// build on a miss).
func (c *core) resolveCache(j *job, n *logical.Cache, key cache.Key) (*physical.CacheReader, string, error) {
	if c.globalRef(j, n) {
		r, err := c.resolveGlobalRef(j, n, key)
		return r, "", err
	}
	for range 3 { // a dead hit becomes a miss; a lost race, a hit
		e, ok := c.caches.Lookup(key)
		if ok && e.State == cache.Materialized {
			if c.holdersDead(e) && c.reloadedAwaitingHolders(e) {
				// The scheduler restarted with its state: the executors
				// holding the entry may not have registered again yet.
				// Wait for them (a register event or a tick starts the
				// job again) rather than build a second copy.
				return nil, "", errAwaitHolders
			}
			if cache.IsTable(e.Options) {
				r, err := c.tableHit(n, key, e)
				return r, "", err
			}
			if c.holdersDead(e) {
				// Validate-on-read: never read from a dead executor.
				if removed, ok := c.caches.InvalidateFor(key, cache.CauseExecutorLost); ok {
					c.dropEntry(removed, "executor "+strings.Join(c.deadHolders(removed), ", ")+" lost")
				}
				continue
			}
			if changed := cache.Changed(e.Sources, c.sourcesOf(j, n)); len(changed) > 0 {
				reason := cache.StaleReason(changed)
				if cons, _ := cache.Consistency(e.Options); cons == cache.ConsistencySnapshot {
					c.caches.MarkStale(key, reason)
					j.staleHits = append(j.staleHits, staleHit{key, "stale snapshot: " + reason})
				} else {
					if removed, ok := c.caches.InvalidateFor(key, cache.CauseSourceChanged); ok {
						c.dropEntry(removed, reason)
					}
					c.recordEvent(j, key, n.Name, outcomeStale, cache.Entry{})
					c.setEventReason(j, key, reason)
					continue
				}
			}
			if e.Partial() {
				if e.Stale != "" {
					// A snapshot's missing partitions cannot be computed
					// again from sources that changed: rebuild it whole.
					if removed, ok := c.caches.InvalidateFor(key, cache.CauseSourceChanged); ok {
						c.dropEntry(removed, e.Stale)
					}
					continue
				}
				if id := c.resolvePartial(j, n, key, e); id != "" {
					return nil, id, nil
				}
				continue
			}
			return &physical.CacheReader{Key: key, Name: cacheLabel(n.Name, e.Name), OutSchema: e.Schema, Locations: e.Locations, Disjoint: e.Disjoint}, "", nil
		}
		if ok {
			c.recordEvent(j, key, n.Name, outcomePending, e)
			return nil, e.JobID, nil
		}
		if isTableRead(n) {
			return nil, "", tableGone(n)
		}
		opts, err := entryOptions(n, j.settings)
		if err != nil {
			return nil, "", err
		}
		srcs := c.sourcesOf(j, n)
		ck := tenantContentKey(j.tenant, contentKey(n, srcs))
		if f, ok := c.caches.FindContent(ck, cache.Key{}); ok {
			switch {
			case f.State == cache.Materialized && c.holdersDead(f) && c.reloadedAwaitingHolders(f):
				// As for a hit: another entry's data (a global entry, say)
				// may be back with executors that have not registered yet.
				return nil, "", errAwaitHolders
			case f.State == cache.Materialized && !c.holdersDead(f) && len(cache.Changed(f.Sources, srcs)) == 0:
				// The same data is materialized (in this session or
				// another): attach to it, one copy on disk.
				if a, ok := c.caches.Attach(key, n.Name, opts, f.Key); ok {
					c.recordEvent(j, key, n.Name, outcomeHit, a)
					c.setEventReason(j, key, sharedReason(f))
					return &physical.CacheReader{Key: key, Name: cacheLabel(n.Name, a.Name), OutSchema: a.Schema, Locations: a.Locations, Disjoint: a.Disjoint}, "", nil
				}
			case f.State == cache.Pending:
				// Being built for another cache: wait, then attach.
				c.recordEvent(j, key, n.Name, outcomePending, f)
				return nil, f.JobID, nil
			}
		}
		if err := c.estimateTooBig(j, n); err != nil {
			return nil, "", err
		}
		childID := newBuildJobID()
		res, e := c.caches.Begin(key, childID, n.Name, opts)
		switch res {
		case cache.Claimed:
			if err := c.caches.SetSources(key, childID, srcs); err != nil {
				return nil, "", err
			}
			if err := c.caches.SetContentKey(key, childID, ck); err != nil {
				return nil, "", err
			}
			c.recordEvent(j, key, n.Name, outcomeMiss, e)
			c.startBuild(j, n, key, childID)
			return nil, childID, nil
		case cache.AlreadyPending:
			c.recordEvent(j, key, n.Name, outcomePending, e)
			return nil, e.JobID, nil
		}
	}
	return nil, "", qerr.Internalf("scheduler: cache %s: could not resolve it (the entry kept changing)", cacheLabel(n.Name, n.CacheID))
}

// reloadedAwaitingHolders reports whether e was reloaded from the state of
// an earlier run while its executors may still be registering again.
func (c *core) reloadedAwaitingHolders(e cache.Entry) bool {
	return e.Created.Before(c.started) && c.now().Before(c.started.Add(c.cfg.HeartbeatTimeout))
}

// dropEntry deletes a removed entry's files and remembers why it went, so
// that EXPLAIN can say why the cache is now a miss.
func (c *core) dropEntry(e cache.Entry, why string) {
	c.deleteEntryFiles(e)
	if c.gone == nil {
		c.gone = map[cache.Key]goneEntry{}
	}
	if len(c.gone) >= maxGone {
		var oldest cache.Key
		var at time.Time
		for k, g := range c.gone {
			if at.IsZero() || g.at.Before(at) {
				oldest, at = k, g.at
			}
		}
		delete(c.gone, oldest)
	}
	c.gone[e.Key] = goneEntry{name: e.Name, why: why, at: c.now()}
}

// maxGone bounds the removal records kept for EXPLAIN.
const maxGone = 4096

// goneEntry is why an entry was removed.
type goneEntry struct {
	name, why string
	at        time.Time
}

// deadHolders lists the executors holding e's partitions that are gone.
func (c *core) deadHolders(e cache.Entry) []string {
	var out []string
	for _, id := range e.Executors() {
		if c.executors[id] == nil {
			out = append(out, id)
		}
	}
	return out
}

// holdersDead reports whether any executor holding e's partitions is gone.
func (c *core) holdersDead(e cache.Entry) bool {
	for _, id := range e.Executors() {
		if c.executors[id] == nil {
			return true
		}
	}
	return false
}

// startBuild submits the Cache node's input as its own job, in the same
// session, with the parent's settings; its final stage is pinned.
func (c *core) startBuild(parent *job, n *logical.Cache, key cache.Key, childID string) {
	child := c.newJob(childID, parent.session, "cache "+cacheLabel(n.Name, n.CacheID), parent.settings, n.Input)
	child.requestID = parent.requestID // the build is part of the request that missed
	c.registerJob(child)
	child.build = &cacheBuild{key: key, name: n.Name, parent: parent.id, sortBy: sortByOf(n)}
	// The child reads a subset of the parent's files: its nested caches
	// are checked against the parent's fingerprints, with no second stat.
	child.files = parent.files
	c.startJob(child)
}

// commitHits takes a reader count on every hit (released when j ends or
// restarts), records the hits and remembers the readers j was planned with.
func (c *core) commitHits(j *job, hits map[cache.Key]*physical.CacheReader) {
	keys := make([]cache.Key, 0, len(hits))
	for k := range hits {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b cache.Key) int {
		return strings.Compare(a.SessionID+"/"+a.CacheID, b.SessionID+"/"+b.CacheID)
	})
	for _, k := range keys {
		if c.caches.Acquire(k) {
			e, _ := c.caches.Lookup(k)
			j.readers = append(j.readers, reader{key: k, build: e.JobID})
		}
		// A query reading back the entry it built itself is not a hit.
		if i := slices.IndexFunc(j.events, func(ev cacheEvent) bool { return ev.key == k }); i < 0 || j.events[i].outcome == outcomeHit || j.events[i].outcome == outcomePending {
			c.caches.Touch(k)
		}
		e, _ := c.caches.Lookup(k)
		c.recordEvent(j, k, hits[k].Name, outcomeHit, e)
	}
	for _, sh := range j.staleHits {
		if _, ok := hits[sh.key]; ok {
			c.setEventReason(j, sh.key, sh.reason)
		}
	}
	j.staleHits = nil
	if len(hits) > 0 {
		j.hits = hits
	}
}

func (c *core) releaseReaders(j *job) {
	for _, r := range j.readers {
		c.caches.Release(r.key, r.build)
	}
	j.readers = nil
}

// recordEvent notes a cache outcome of j: one event per key, keeping the
// first outcome (so a query that built its cache says "miss" even though it
// then read it as a hit) except that a later rebuild is always a miss; sizes
// come from the entry once it is materialized.
func (c *core) recordEvent(j *job, key cache.Key, name, outcome string, e cache.Entry) {
	i := slices.IndexFunc(j.events, func(ev cacheEvent) bool { return ev.key == key })
	if i < 0 {
		j.events = append(j.events, cacheEvent{key: key, name: cacheLabel(name, e.Name), outcome: outcome})
		i = len(j.events) - 1
	} else if outcome == outcomeMiss && j.events[i].outcome != outcomeStale {
		j.events[i].outcome = outcomeMiss
	} else if outcome == outcomeStale {
		j.events[i].outcome = outcomeStale
	}
	if e.State == cache.Materialized {
		j.events[i].partitions, j.events[i].bytes = len(e.Locations), e.Bytes
	}
	c.publishEvents(j)
}

// setEventReason sets the reason of j's event for key and publishes it.
func (c *core) setEventReason(j *job, key cache.Key, reason string) {
	if i := slices.IndexFunc(j.events, func(ev cacheEvent) bool { return ev.key == key }); i >= 0 {
		j.events[i].reason = reason
		c.publishEvents(j)
	}
}

// publishEvents stores the snapshot of j's events its watchers send.
func (c *core) publishEvents(j *job) {
	evs := make([]*rpc.CacheEvent, len(j.events))
	for k, ev := range j.events {
		evs[k] = &rpc.CacheEvent{CacheId: ev.key.CacheID, Name: ev.name, Outcome: ev.outcome, Partitions: int32(ev.partitions), Bytes: ev.bytes, Reason: ev.reason}
	}
	j.published.Store(&evs)
	c.dirty[j.id] = true
}

// ---- builds and waiters ----

// buildPlanned narrows a build's pin from its whole job to its final stage.
// If the entry is gone (uncached or its session closed while planning),
// the build is cancelled and false returned.
func (c *core) buildPlanned(j *job) bool {
	if j.build == nil {
		return true
	}
	if j.build.repair != nil {
		return c.repairPlanned(j)
	}
	if err := c.caches.SetStage(j.build.key, j.id, j.final); err != nil {
		c.endJob(j, rpc.JobState_JOB_CANCELLED, fmt.Sprintf("job %s: its cache entry was removed while it was being built", j.id), qerr.Canceled)
		return false
	}
	return true
}

// jobEndedCaches runs once when j ends, any way: it releases j's readers,
// counts the bytes it read back, and completes or aborts j's build (deleting
// the build's files unless they became the entry).
func (c *core) jobEndedCaches(j *job) {
	c.releaseReaders(j)
	if s := c.sessions[j.session]; s != nil {
		s.lastUsed = c.now()
	}
	if j.state == rpc.JobState_JOB_SUCCESSFUL {
		for _, r := range j.hits {
			var n int64
			for _, part := range r.Locations {
				for _, l := range part {
					n += l.Bytes
				}
			}
			c.caches.AddBytesRead(n)
		}
	}
	b := j.build
	if b == nil {
		return
	}
	if b.repair != nil {
		if !c.repairEnded(j) {
			c.deleteBuildFiles(j)
		}
		return
	}
	kept := false
	if j.state == rpc.JobState_JOB_SUCCESSFUL {
		fs := j.stages[j.final]
		// The final stage's writer is a passthrough: cache partition i is
		// its input's partition i, so the input's disjoint columns hold.
		err := c.caches.Complete(b.key, j.id, j.final, j.schema, stageLocations(fs), physical.DisjointColumns(fs.plan.Input))
		switch {
		case err == nil:
			kept = true
		case !errors.Is(err, cache.ErrStale):
			c.cfg.Logf("scheduler: job %s: record cache %s: %v", j.id, cacheLabel(b.name, b.key.CacheID), err)
			// An entry that cannot be completed must not stay pending.
			if _, ok := c.caches.Abort(b.key, j.id); ok {
				b.aborted = true
			}
		}
	} else if _, ok := c.caches.Abort(b.key, j.id); ok {
		b.aborted = true
	}
	if !kept {
		c.deleteBuildFiles(j)
	}
}

// errAwaitHolders: a hit's executors have not registered since the
// scheduler started; the job waits for them (lowerCaches).
var errAwaitHolders = errors.New("cache holders not registered yet")

// retryAwaitingHolders starts again the jobs waiting for the executors of
// their hits to register after a scheduler restart; past the heartbeat
// timeout they are lost, and the hit becomes a miss.
func (c *core) retryAwaitingHolders() {
	for _, jid := range c.activeJobs() {
		if j := c.jobs[jid]; j != nil && !j.terminal() && j.awaitHolders && len(j.waitingOn) == 0 {
			c.startJob(j)
		}
	}
}

// settleCaches starts the waiting jobs whose builds have ended: each is
// resolved again (the first to find a key absent claims it anew; the others
// wait for that build). A job that has seen maxCacheBuildAttempts failed
// builds of one key, or one failed with an error a retry cannot fix, fails
// with the build's error. It repeats until nothing changes, since starting
// one job may end another's wait.
func (c *core) settleCaches() {
	if !slices.ContainsFunc(c.activeJobs(), func(id string) bool {
		j := c.jobs[id]
		return j != nil && !j.terminal() && len(j.waitingOn) > 0
	}) {
		return
	}
	for progress := true; progress; {
		progress = false
		for _, jid := range c.activeJobs() {
			j := c.jobs[jid]
			if j == nil || j.terminal() || len(j.waitingOn) == 0 {
				continue
			}
			for _, key := range sortedCacheKeys(j.waitingOn) {
				buildID := j.waitingOn[key]
				if e, ok := c.caches.Lookup(key); ok && e.State == cache.Pending && e.JobID == buildID {
					continue // still building
				}
				if b := c.jobs[buildID]; b != nil && !b.terminal() {
					continue // still building another cache of the same content
				}
				delete(j.waitingOn, key)
				b := c.jobs[buildID]
				if b == nil || b.build == nil || !b.build.aborted {
					continue // built, or removed without failing: resolve again
				}
				if j.buildFailures == nil {
					j.buildFailures = map[cache.Key]int{}
				}
				j.buildFailures[key]++
				if n := j.buildFailures[key]; n >= maxCacheBuildAttempts || !retryable(b.errKind) {
					c.endJob(j, rpc.JobState_JOB_FAILED,
						fmt.Sprintf("job %s: building cache %s failed (%d of at most %d attempts): %s",
							j.id, cacheLabel(b.build.name, key.CacheID), n, maxCacheBuildAttempts, b.errMsg),
						b.errKind)
					break
				}
			}
			if !j.terminal() && len(j.waitingOn) == 0 {
				c.startJob(j)
				progress = true
			}
		}
	}
}

func sortedCacheKeys(m map[cache.Key]string) []cache.Key {
	ks := make([]cache.Key, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.SortFunc(ks, func(a, b cache.Key) int {
		return strings.Compare(a.SessionID+"/"+a.CacheID, b.SessionID+"/"+b.CacheID)
	})
	return ks
}

// ---- file deletion ----

// deleteEntryFiles deletes a removed entry's pinned stage on every live
// executor holding one of its partitions, naming the stage explicitly (the
// executor deletes a pinned stage only when named). A pending entry has no
// files yet: its build deletes them when it ends (deleteBuildFiles).
func (c *core) deleteEntryFiles(e cache.Entry) {
	if e.StageID == cache.UnknownStage || e.JobID == "" {
		return
	}
	if c.caches.Sharers(e) > 0 {
		return // another entry holds the same files: the last holder deletes them
	}
	holders := e.Executors()
	if e.Partial() || len(e.Repairs) > 0 {
		// Files of lost partitions may be back with their executor (its
		// work dir keeps the directories of jobs an entry names).
		holders = sortedKeys(c.executors)
	}
	for _, id := range holders {
		ex := c.executors[id]
		if ex == nil {
			continue
		}
		for _, o := range e.Outputs() {
			c.actions = append(c.actions, actRemove{executorID: id, addr: ex.addr(), req: &rpc.RemoveJobDataRequest{
				JobId: o.JobID, StageIds: []int32{int32(o.StageID)},
			}})
		}
	}
}

// deleteBuildFiles deletes every stage of a build job whose output did not
// become (or no longer is) a cache entry, pinned or not.
func (c *core) deleteBuildFiles(j *job) {
	if len(j.order) == 0 {
		return
	}
	ids := make([]int32, len(j.order))
	for i, id := range j.order {
		ids[i] = int32(id)
	}
	for _, eid := range sortedKeys(j.touched) {
		if ex := c.executors[eid]; ex != nil {
			c.actions = append(c.actions, actRemove{executorID: eid, addr: ex.addr(), req: &rpc.RemoveJobDataRequest{
				JobId: j.id, StageIds: slices.Clone(ids),
			}})
		}
	}
}

// ---- losses ----

// cacheFetchFailed handles a task's fetch failure that names a cache
// entry's pinned stage (read by one of j's CacheReaders), not a stage of
// j: the entry is invalidated and its files deleted, and j re-runs from
// scratch, now missing the cache. It reports whether it handled ff.
func (c *core) cacheFetchFailed(j *job, t *task, ff *rpc.FetchFailure) bool {
	jid, sid := ff.GetJobId(), int(ff.GetStageId())
	if jid == "" || jid == j.id {
		return false
	}
	var key cache.Key
	found := false
	for _, k := range sortedReaderKeys(j.hits) {
		if readsStage(j.hits[k], jid, sid) {
			key, found = k, true
			break
		}
	}
	if !found {
		return false
	}
	t.state = taskFailed
	if e, ok := c.caches.Lookup(key); ok && cache.IsTable(e.Options) {
		c.failJob(j, tableUnreadable(e, ff.GetExecutorId()))
		return true
	}
	if e, ok := c.caches.Lookup(key); ok && e.State == cache.Materialized && e.JobID == jid && e.StageID == sid {
		if removed, ok := c.caches.InvalidateFor(key, cache.CauseFetchFailed); ok {
			c.dropEntry(removed, "its files could not be read from executor "+ff.GetExecutorId())
		}
	}
	c.restartJob(j, fmt.Sprintf("cached input %s could not be read from executor %s", key.CacheID, ff.GetExecutorId()))
	return true
}

func sortedReaderKeys(m map[cache.Key]*physical.CacheReader) []cache.Key {
	ks := make([]cache.Key, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.SortFunc(ks, func(a, b cache.Key) int {
		return strings.Compare(a.SessionID+"/"+a.CacheID, b.SessionID+"/"+b.CacheID)
	})
	return ks
}

func readsStage(r *physical.CacheReader, jobID string, stageID int) bool {
	for _, part := range r.Locations {
		for _, l := range part {
			if l.JobID == jobID && l.StageID == stageID {
				return true
			}
		}
	}
	return false
}

// restartJob re-runs j from scratch: its running tasks are cancelled, its
// own shuffle output deleted, its readers released, and it is resolved and
// planned again. Tasks of the new run start at an attempt number no status
// of the old run carries.
func (c *core) restartJob(j *job, why string) {
	j.restarts++
	if j.restarts > maxCacheRestarts {
		c.endJob(j, rpc.JobState_JOB_FAILED,
			fmt.Sprintf("job %s: its cached input was lost %d times (limit %d); last: %s", j.id, j.restarts, maxCacheRestarts, why), qerr.IO)
		return
	}
	c.cancelTasks(j, true)
	c.removeJobData(j, slices.Clone(j.order))
	base := j.attemptBase
	for _, s := range j.stages {
		for _, t := range s.tasks {
			base = max(base, t.attempt+1)
		}
	}
	j.attemptBase = base
	c.releaseReaders(j)
	j.hits = nil
	j.stages, j.order, j.final, j.schema = map[int]*stage{}, nil, 0, nil
	j.planned = false
	j.planGen++
	j.state = rpc.JobState_JOB_QUEUED
	c.dirty[j.id] = true
	c.startJob(j)
}

// reconcileCaches, when a registering executor reports the job directories
// it holds (held not nil), treats the partitions on it of every entry
// missing one of those directories as lost with it (a wiped or replaced
// work dir; they would fail at read-back): the entry becomes partial, or is
// dropped when nothing of it is left elsewhere.
func (c *core) reconcileCaches(executorID string, held map[string]bool) {
	if held == nil {
		return
	}
	var gone []cache.Key
	for _, e := range c.caches.List("") {
		if e.State == cache.Materialized && filesGone(e, executorID, held) {
			gone = append(gone, e.Key)
		}
	}
	if len(gone) == 0 {
		return
	}
	// Its partitions there are lost; the others still serve.
	removed, partial := c.caches.LoseExecutor(executorID, gone...)
	for _, e := range removed {
		c.dropEntry(e, "its files are gone from executor "+executorID)
	}
	for _, e := range partial {
		c.log.Info("cache partial", "cache", e.Key.CacheID, "name", e.Name, "executor", executorID, "missing", len(e.Missing), "partitions", len(e.Locations))
	}
}

// closeSessionCaches drops the session's entries (deleting their files) and
// cancels its jobs that build, wait for or read a cache.
func (c *core) closeSessionCaches(id string) {
	for _, e := range c.caches.RemoveSession(id) {
		c.dropEntry(e, "session closed")
	}
	for k := range c.uncached {
		if k.SessionID == id {
			delete(c.uncached, k)
		}
	}
	for _, jid := range c.activeJobs() {
		j := c.jobs[jid]
		if j == nil || j.terminal() || j.session != id {
			continue
		}
		if j.build != nil || len(j.waitingOn) > 0 || len(j.readers) > 0 {
			c.endJob(j, rpc.JobState_JOB_CANCELLED, fmt.Sprintf("job %s: session %s was closed", j.id, id), qerr.Canceled)
		}
	}
}

// ---- eviction ----

// sweepCaches runs on every tick: it evicts expired entries and, past the
// byte cap, the least recently used ones nobody reads (deleting their
// files), then closes idle sessions.
func (c *core) sweepCaches(now time.Time) {
	if ev, ok := c.caches.(evicter); ok {
		for _, e := range ev.Evict(now, c.cfg.CacheTTL, c.cacheMaxBytes) {
			c.dropEntry(e, "evicted (ttl or byte cap) at "+now.UTC().Format(time.TimeOnly))
		}
		for _, id := range sortedKeys(c.sessions) {
			if q := c.sessions[id].cacheQuota; q > 0 {
				for _, e := range ev.EvictSession(id, q) {
					c.dropEntry(e, "evicted by the session's quota at "+now.UTC().Format(time.TimeOnly))
				}
			}
		}
	}
	for _, id := range sortedKeys(c.sessions) {
		s := c.sessions[id]
		timeout := c.cfg.SessionIdleTimeout
		if s.hasIdle {
			timeout = s.idleTimeout
		}
		if timeout <= 0 || now.Sub(s.lastUsed) <= timeout || c.sessionBusy(id) {
			continue
		}
		c.cfg.Logf("scheduler: session %s idle for %s: closing it", id, now.Sub(s.lastUsed).Round(time.Second))
		c.closeSession(id)
	}
}

// sessionBusy reports whether the session has a job that has not ended.
func (c *core) sessionBusy(id string) bool {
	for _, jid := range c.activeJobs() {
		if j := c.jobs[jid]; j != nil && j.session == id && !j.terminal() {
			return true
		}
	}
	return false
}

// ---- settings ----

// applySessionSettings takes the session's own quiver.session.idle_timeout
// and cache quota.
func (c *core) applySessionSettings(s *session) {
	c.applyQuerySettings(s, s.settings)
}

// applyQuerySettings applies the settings of a query (checked when it was
// submitted) that change more than the query: quiver.session.idle_timeout
// and quiver.cache.max_bytes to its session (the latter as the session's
// quota: the scheduler's cap, Config.CacheMaxBytes, is no session's to
// change, and a quota above it is refused); quiver.cache.ttl is read when
// an entry is claimed.
func (c *core) applyQuerySettings(s *session, vals settings.Values) error {
	if d, ok := vals.Duration(settings.SessionIdleTimeout); ok {
		s.idleTimeout, s.hasIdle = d, true
	}
	if n, ok := vals.Int(settings.CacheMaxBytes); ok {
		if c.cacheMaxBytes > 0 && n > c.cacheMaxBytes {
			return qerr.Planf("scheduler: quiver.cache.max_bytes = %s: the scheduler caps the cache at %s (--cache-max-bytes); a session may only set a lower quota of its own",
				physical.FormatBytes(n), physical.FormatBytes(c.cacheMaxBytes))
		}
		s.cacheQuota = n // 0: no quota of its own; the cap still holds
	}
	return nil
}

// cacheLimit is the most bytes one entry of the session may hold: the
// scheduler's cap, or the session's lower quota (0: no limit).
func (c *core) cacheLimit(sessionID string) int64 {
	limit := c.cacheMaxBytes
	if s := c.sessions[sessionID]; s != nil && s.cacheQuota > 0 && (limit == 0 || s.cacheQuota < limit) {
		limit = s.cacheQuota
	}
	return limit
}

// checkBuildSize fails build job j once the output its final stage has
// written passes the cache limit, so an entry that could never be kept
// (the sweeper would evict it at once, and the next query build it again)
// fails with a clear error instead.
func (c *core) checkBuildSize(j *job, s *stage) {
	limit := c.cacheLimit(j.session)
	if j.build == nil || !s.final || limit <= 0 || j.terminal() {
		return
	}
	var n int64
	for _, t := range s.tasks {
		if t.state != taskSuccessful {
			continue
		}
		for _, l := range t.locations {
			n += l.Bytes
		}
	}
	if n > limit {
		c.endJob(j, rpc.JobState_JOB_FAILED, fmt.Sprintf("cache %s: its data passed %s, over the cache limit of %s (quiver.cache.max_bytes): it is not kept",
			cacheLabel(j.build.name, j.build.key.CacheID), physical.FormatBytes(n), physical.FormatBytes(limit)), qerr.Resources)
	}
}

// estimateTooBig refuses, before any build starts, an entry whose input
// is estimated at more than twice the cache limit from the tables' known
// row counts (an estimate over a table of unknown size decides nothing).
func (c *core) estimateTooBig(j *job, n *logical.Cache) error {
	limit := c.cacheLimit(j.session)
	if limit <= 0 {
		return nil
	}
	known := true
	logical.Inspect(n.Input, func(p logical.Plan) bool {
		if s, ok := p.(*logical.Scan); ok && (s.Table == nil || s.Table.Rows < 0) {
			known = false
		}
		return known
	})
	if !known {
		return nil
	}
	est := logical.Estimate(n.Input).Rows * rowWidth(n.Input.Schema())
	if est > 2*float64(limit) {
		return qerr.Resourcesf("cache %s: its data is estimated at %s, over the cache limit of %s (quiver.cache.max_bytes): it is not built",
			cacheLabel(n.Name, n.CacheID), physical.FormatBytes(int64(est)), physical.FormatBytes(limit))
	}
	return nil
}

// rowWidth is a row's approximate bytes in a cache file: fixed-width
// columns their width, others a small guess (a string's offset and a few
// bytes of text), plus a validity bit.
func rowWidth(s *logical.Schema) float64 {
	w := 0.0
	for _, f := range s.Arrow().Fields() {
		if fw, ok := f.Type.(interface{ BitWidth() int }); ok && fw.BitWidth() > 0 {
			w += float64(fw.BitWidth()) / 8
		} else {
			w += 12
		}
		w += 0.125
	}
	return w
}

// ---- cache RPCs ----

func (c *core) touchSession(id string) {
	if s := c.sessions[id]; s != nil {
		s.lastUsed = c.now()
	}
}

// listCaches is ListCaches: the session's entries and its tenant's global
// ones, each with what a query
// would do with it now as far as the loop knows (live holders; the files'
// check is the handler's, off the loop), their sources, and the session's
// lately removed entries.
func (c *core) listCaches(sessionID string) cacheList {
	c.touchSession(sessionID)
	out := cacheList{infos: []*rpc.CacheInfo{}}
	entries := c.caches.List(sessionID)
	if tenant, ok := c.sessionTenant(sessionID); ok {
		entries = append(entries, c.caches.List(cache.GlobalSession(tenant))...)
	}
	for _, e := range entries {
		info := c.withShared(cacheInfo(e), e)
		switch {
		case e.State == cache.Pending:
			info.Check = outcomePending
		case c.holdersDead(e):
			info.Check, info.Reason = outcomeMiss, "executor "+strings.Join(c.deadHolders(e), ", ")+" lost"
		case e.Partial():
			info.Check, info.Reason = outcomePartial, partialReason(e)
		case e.Stale != "":
			info.Check, info.Reason = outcomeStale, e.Stale+snapshotServed
		default:
			info.Check = outcomeHit
		}
		cons, _ := cache.Consistency(e.Options)
		out.infos = append(out.infos, info)
		out.sources = append(out.sources, e.Sources)
		out.snapshot = append(out.snapshot, cons == cache.ConsistencySnapshot)
	}
	for _, k := range sortedGone(c.gone) {
		if k.SessionID == sessionID {
			g := c.gone[k]
			out.removed = append(out.removed, &rpc.CacheInfo{SessionId: k.SessionID, CacheId: k.CacheID, Name: g.name, Check: outcomeMiss, Reason: g.why})
		}
	}
	return out
}

// snapshotServed ends the reason of a stale entry a query still reads.
const snapshotServed = " (snapshot: served as it is)"

// cacheList is the loop's answer to ListCaches: sources parallels infos.
type cacheList struct {
	infos    []*rpc.CacheInfo
	sources  [][]cache.Source
	snapshot []bool // consistency 'snapshot': a stale entry is still served
	removed  []*rpc.CacheInfo
}

func sortedGone(m map[cache.Key]goneEntry) []cache.Key {
	ks := make([]cache.Key, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.SortFunc(ks, func(a, b cache.Key) int {
		return strings.Compare(a.SessionID+"/"+a.CacheID, b.SessionID+"/"+b.CacheID)
	})
	return ks
}

// checkFiles re-checks, off the loop, the file sources of the entries a
// ListCaches found hits: one whose files changed is stale (a strict one is
// rebuilt by the next query that reads it). Memory tables' versions are the
// client's to compare.
func checkFiles(l cacheList) {
	var paths []string
	for i, info := range l.infos {
		if info.Check != outcomeHit {
			continue
		}
		for _, s := range l.sources[i] {
			if s.Path != "" {
				paths = append(paths, s.Path)
			}
		}
	}
	if len(paths) == 0 {
		return
	}
	files := statFiles(paths)
	for i, info := range l.infos {
		if info.Check != outcomeHit {
			continue
		}
		var rec, cur []cache.Source
		for _, s := range l.sources[i] {
			if s.Path == "" {
				continue
			}
			rec = append(rec, s)
			f := files[s.Path]
			f.Table = s.Table
			cur = append(cur, f)
		}
		if changed := cache.Changed(rec, cur); len(changed) > 0 {
			info.Check, info.Reason = outcomeStale, cache.StaleReason(changed)+" (rebuilt by the next query)"
			if _, global := cache.GlobalTenant(info.SessionId); global {
				// Read by name, it cannot be rebuilt (resolveGlobalRef).
				info.Reason = cache.StaleReason(changed) + " (dropped by the next query that reads it; declare it again)"
			}
			if l.snapshot[i] {
				info.Reason = cache.StaleReason(changed) + snapshotServed
			}
		}
	}
}

func cacheInfo(e cache.Entry) *rpc.CacheInfo {
	info := &rpc.CacheInfo{
		SessionId: e.Key.SessionID, CacheId: e.Key.CacheID, Name: e.Name, State: entryState(e),
		Partitions: int32(len(e.Locations)), Rows: e.Rows, Bytes: e.Bytes, Executors: e.Executors(),
		Hits: e.Hits, CreatedUnixMs: e.Created.UnixMilli(),
	}
	for _, c := range e.Disjoint {
		info.Disjoint = append(info.Disjoint, int32(c))
	}
	if !e.LastHit.IsZero() {
		info.LastHitUnixMs = e.LastHit.UnixMilli()
	}
	info.Stale = e.Stale
	info.Scope = entryScope(e)
	if _, ok := cache.GlobalTenant(e.Key.SessionID); ok && e.Schema != nil {
		info.Schema, _ = arrowpb.EncodeSchema(e.Schema) // without it the entry is only listed
	}
	return info
}

// withShared sets info's count of entries sharing e's data.
func (c *core) withShared(info *rpc.CacheInfo, e cache.Entry) *rpc.CacheInfo {
	if e.State == cache.Materialized {
		info.Shared = int32(c.caches.Sharers(e))
	}
	return info
}

// uncache is Uncache: drop one entry of the session and delete its files.
// A pending entry's build finishes unreferenced and deletes its own output.
// Unless rebuild (REFRESH CACHE), the id is retired: a query planned with
// it before computes the input without building an entry. A pending
// entry's build is cancelled.
func (c *core) uncache(sessionID, cacheID string, rebuild bool) bool {
	c.touchSession(sessionID)
	k := cache.Key{SessionID: sessionID, CacheID: cacheID}
	if !rebuild {
		if c.uncached == nil {
			c.uncached = map[cache.Key]bool{}
		}
		c.uncached[k] = true
	}
	why := "uncached"
	if rebuild {
		why = "refreshed"
	}
	tenant, live := c.sessionTenant(sessionID)
	e, ok := c.caches.InvalidateFor(k, cache.CauseUncache)
	if !ok {
		// UNCACHE TABLE of a name of the tenant's global name space.
		if !live || rebuild {
			return false
		}
		g, ok := c.caches.InvalidateFor(cache.Key{SessionID: cache.GlobalSession(tenant), CacheID: cacheID}, cache.CauseUncache)
		if ok {
			c.dropEntry(g, why)
		}
		return ok
	}
	c.dropEntry(e, why)
	if live && cache.IsGlobal(e.Options) {
		// The global entry it made or attached to goes with it.
		c.dropGlobalCaches(tenant, e, why)
	}
	building := e.RepairJob // a partial entry's repair
	if e.State == cache.Pending {
		building = e.JobID
	}
	if b := c.jobs[building]; building != "" && b != nil && !b.terminal() && b.build != nil && b.build.key == k {
		c.endJob(b, rpc.JobState_JOB_CANCELLED, fmt.Sprintf("job %s: cache %s was uncached while it was being built", b.id, cacheLabel(b.build.name, cacheID)), qerr.Canceled)
	}
	return true
}

// clearCaches is ClearCaches: drop every entry of the session.
func (c *core) clearCaches(sessionID string) int {
	n := 0
	for _, e := range c.caches.List(sessionID) {
		if c.uncache(sessionID, e.Key.CacheID, false) {
			n++
		}
	}
	c.touchSession(sessionID)
	return n
}
