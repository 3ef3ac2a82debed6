package scheduler

import (
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/quiverdb/quiver/cache"
	"github.com/quiverdb/quiver/logical"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
	"github.com/quiverdb/quiver/rpc"
	"github.com/quiverdb/quiver/settings"
)

// maxLaunchFailures consecutive failed LaunchTasks calls mark an executor lost.
const maxLaunchFailures = 3

// finishedJobRetention: terminal jobs are forgotten this long after they end.
const finishedJobRetention = time.Hour

// core is the scheduler's state machine. It is not safe for concurrent use:
// the event loop goroutine is its only user (tests drive it directly). Each
// call to handle may append actions; the caller takes them with takeActions
// and performs them.
type core struct {
	cfg       Config
	now       func() time.Time
	sessions  map[string]*session
	jobs      map[string]*job
	jobOrder  []string // submission order, ended jobs kept for finishedJobRetention (status, REST)
	active    []string // the jobs not ended, in submission order: the scheduling order (activeJobs)
	executors map[string]*executorState
	execSeq   int
	rrLast    int // round_robin: seq of the executor picked last
	// noExecSince is when the executor set last became empty (zero while
	// some executor is alive).
	noExecSince time.Time
	delayed     []delayedCleanup
	dirty       map[string]bool // jobs whose watchers must hear of a change
	actions     []any
	// caches is the dataset-cache registry; cacheMaxBytes the byte cap of
	// the eviction sweeper (Config.CacheMaxBytes; sessions only lower
	// their own quota under it).
	caches        cache.State
	cacheMaxBytes int64
	// uncached are the keys UNCACHE retired (until their session closes):
	// a query planned with one before reads its input uncached.
	uncached map[cache.Key]bool
	// gone records why entries were removed (dropEntry), for EXPLAIN.
	gone map[cache.Key]goneEntry
	// started is when the loop's state began: entries reloaded from a
	// durable registry wait up to a heartbeat timeout past it for their
	// executors to register again.
	started time.Time
	// m and log observe the loop (observe.go); seenInval is the cache
	// invalidation counts last logged.
	m         *metrics
	log       *slog.Logger
	seenInval []int64
	// shuttingDown: Shutdown began; new jobs are refused.
	shuttingDown bool
}

func newCore(cfg Config, now func() time.Time) *core {
	caches := cfg.CacheState
	if caches == nil {
		caches = cache.NewMemory(cache.WithClock(now))
	}
	c := &core{
		cfg:           cfg,
		now:           now,
		sessions:      map[string]*session{},
		jobs:          map[string]*job{},
		executors:     map[string]*executorState{},
		noExecSince:   now(),
		dirty:         map[string]bool{},
		caches:        caches,
		cacheMaxBytes: cfg.CacheMaxBytes,
		started:       now(),
		m:             newMetrics(),
		log:           cfg.logger(),
		seenInval:     make([]int64, cache.NumCauses),
	}
	if cfg.Sessions != nil {
		c.sessions = cfg.Sessions.restore(now())
	}
	return c
}

func (c *core) takeActions() []any {
	a := c.actions
	c.actions = nil
	return a
}

// handle applies one event, then places queued tasks and notifies watchers.
func (c *core) handle(ev any) {
	switch e := ev.(type) {
	case evCreateSession:
		if sess := c.sessions[e.id]; sess != nil {
			// A client re-opening a session that is still live: keep it.
			sess.lastUsed = c.now()
			e.reply <- struct{}{}
			break
		}
		sess := &session{tenant: e.tenant, settings: e.settings, created: c.now(), lastUsed: c.now()}
		c.sessions[e.id] = sess
		c.applySessionSettings(sess)
		c.storeSession(e.id, sess)
		c.onSessionOpened(e.id)
		e.reply <- struct{}{}
	case evCloseSession:
		c.closeSession(e.id)
		e.reply <- struct{}{}
	case evSubmit:
		e.reply <- c.submit(e)
	case evPlanned:
		c.planned(e)
	case evStatted:
		c.statted(e)
	case evTaskStatus:
		if ex := c.executors[e.executorID]; ex != nil {
			ex.lastSeen = c.now()
		}
		for _, st := range e.statuses {
			c.taskStatus(e.executorID, st)
		}
	case evLaunchFailed:
		c.launchFailed(e)
	case evSuspect:
		c.suspected(e)
	case evProbed:
		c.probed(e)
	case evRegister:
		c.register(e)
		e.reply <- struct{}{}
	case evHeartbeat:
		ex := c.executors[e.executorID]
		if ex != nil {
			ex.lastSeen = c.now()
			ex.memReserved, ex.memLimit = e.memReserved, e.memLimit
		}
		e.reply <- ex == nil
	case evCancel:
		e.reply <- c.cancel(e.jobID)
	case evWatch:
		r := c.watch(e.jobID)
		if j := c.jobs[e.jobID]; j != nil && r.err == nil {
			r.caches = &j.published
		}
		e.reply <- r
	case evUnwatch:
		if j := c.jobs[e.jobID]; j != nil {
			j.watchers = slices.DeleteFunc(j.watchers, func(ch chan *rpc.JobStatus) bool { return ch == e.ch })
		}
	case evTick:
		c.tick(e.now)
	case evInspect:
		e.fn(c)
		close(e.done)
	case evDeregister:
		e.reply <- c.deregister(e.executorID)
	case evDrain:
		e.reply <- c.drain(e.executorID)
	case evShutdown:
		e.reply <- c.shutdown(e.failAll)
	case evListCaches:
		e.reply <- c.listCaches(e.session)
	case evUncache:
		e.reply <- c.uncache(e.session, e.cacheID, e.rebuild)
	case evClearCaches:
		e.reply <- c.clearCaches(e.session)
	default:
		c.log.Error("unknown event", "event", fmt.Sprintf("%T", ev))
	}
	c.settleCaches()
	c.retryAwaitingHolders()
	c.placeCacheReads()
	c.schedule()
	c.notify()
	c.logCacheStats()
}

// ---- sessions ----

// closeSession forgets a session, drops its cache entries (deleting their
// files on the executors that hold them; a materialized one of scope
// 'global' stays as its tenant's global entry) and cancels its jobs that build,
// wait for or read its caches.
func (c *core) closeSession(id string) {
	tenant, live := c.sessionTenant(id)
	if live {
		c.onSessionClosed(id)
		c.keepGlobalCaches(id, tenant)
	}
	delete(c.sessions, id)
	if c.cfg.Sessions != nil {
		c.cfg.Sessions.remove(id)
	}
	c.closeSessionCaches(id)
}

// storeSession records the session in the session store, if any: one small
// record, written off the loop.
func (c *core) storeSession(id string, s *session) {
	if c.cfg.Sessions != nil {
		c.cfg.Sessions.put(id, s.record())
	}
}

// ---- jobs ----

func (c *core) submit(e evSubmit) error {
	if c.shuttingDown {
		return errShuttingDown
	}
	sess, ok := c.sessions[e.session]
	if !ok {
		return qerr.Planf("scheduler: unknown session %q: create one with CreateSession first", e.session)
	}
	sess.lastUsed = c.now()
	// A bad setting fails the job, not the call: the client learns why
	// from the job's status like from any other planning error.
	query, err := settings.Decode("scheduler", e.settings)
	j := c.newJob(e.jobID, e.session, e.name, sess.settings.Merge(query), e.plan)
	j.sql, j.requestID, j.analyze = clipSQL(e.sql), e.requestID, e.analyze
	c.registerJob(j)
	if err != nil {
		c.failJob(j, err)
		return nil
	}
	idle, hasIdle, quota := sess.idleTimeout, sess.hasIdle, sess.cacheQuota
	if err := c.applyQuerySettings(sess, j.settings); err != nil {
		c.failJob(j, err)
		return nil
	}
	if sess.idleTimeout != idle || sess.hasIdle != hasIdle || sess.cacheQuota != quota {
		c.storeSession(e.session, sess)
	}
	c.startJob(j)
	return nil
}

// activeJobs returns the jobs not ended, in submission order, as a copy
// the caller may hold while it ends or adds jobs. Ended jobs leave c.active
// here, each once, so that scheduling walks only live jobs however many
// ended ones jobOrder keeps.
func (c *core) activeJobs() []string {
	keep := c.active[:0]
	for _, id := range c.active {
		if j := c.jobs[id]; j != nil && !j.terminal() {
			keep = append(keep, id)
		}
	}
	clear(c.active[len(keep):])
	c.active = keep
	return slices.Clone(keep)
}

// addJob makes and registers a queued job (newJob, then registerJob).
func (c *core) addJob(id, sessionID, name string, vals settings.Values, plan logical.Plan) *job {
	j := c.newJob(id, sessionID, name, vals, plan)
	c.registerJob(j)
	return j
}

// newJob makes a queued job without registering it (registerJob), so the
// caller can fill in what the submit line logs first.
func (c *core) newJob(id, sessionID, name string, vals settings.Values, plan logical.Plan) *job {
	tenant, _ := c.sessionTenant(sessionID)
	return &job{
		id: id, session: sessionID, name: name, settings: vals, plan: plan, tenant: tenant,
		state: rpc.JobState_JOB_QUEUED, submitted: c.now(),
		stages: map[int]*stage{}, touched: map[string]bool{},
	}
}

// registerJob adds j to the loop's jobs and logs its submission.
func (c *core) registerJob(j *job) {
	c.jobs[j.id] = j
	c.jobOrder = append(c.jobOrder, j.id)
	c.active = append(c.active, j.id)
	c.dirty[j.id] = true
	c.onJobSubmitted(j)
}

// startJob resolves the job's Cache nodes (lowerCaches) and, unless it must
// wait for cache builds, asks for its physical planning. A waiting job stays
// QUEUED; settleCaches starts it again when the builds end.
func (c *core) startJob(j *job) {
	if c.needStat(j) {
		return
	}
	hits, wait, err := c.lowerCaches(j)
	if err != nil {
		c.failJob(j, err)
		return
	}
	if wait {
		return
	}
	c.commitHits(j, hits)
	c.actions = append(c.actions, actPlan{
		jobID: j.id, gen: j.planGen, plan: j.plan, targetPartitions: c.targetPartitions(j.settings),
		compression: physical.Compression(j.settings.Text(settings.ShuffleCompression)),
		inlineLimit: inlineLimit(j.settings),
		caches:      hits, pinFinal: j.build != nil, inMemory: c.inMemory(j.settings.Text(settings.ExchangeMode)),
		maxRecursion: maxRecursion(j.settings), sortBy: buildSortBy(j),
	})
}

// inlineLimit is quiver.shuffle_inline_bytes of vals.
func inlineLimit(vals settings.Values) int64 {
	n, _ := vals.Int(settings.ShuffleInlineBytes)
	return n
}

// buildSortBy is the sort_by option of j's cache build, if it is one.
func buildSortBy(j *job) []cache.SortColumn {
	if j.build == nil {
		return nil
	}
	return j.build.sortBy
}

// Exchange modes, the values of the setting quiver.exchange_mode.
const (
	// ExchangeAuto (the default) keeps a job's exchanges in memory, as one
	// whole stage, when exactly one executor is alive at planning time;
	// otherwise every exchange is a stage boundary with shuffle files.
	ExchangeAuto = settings.ExchangeAuto
	// ExchangeShuffle always cuts stages at every exchange.
	ExchangeShuffle = settings.ExchangeShuffle
)

// inMemory reports whether a job planned now in mode runs as whole stages
// (one, and one more per shared CTE): in auto mode, when exactly one
// executor is alive. The job can still run anywhere (a whole stage reads
// at most the files of the job's other whole stages, over Flight when they
// are elsewhere), so an executor registering or lost later does not
// invalidate the choice.
func (c *core) inMemory(mode string) bool {
	return mode == ExchangeAuto && len(c.executors) == 1
}

// targetPartitions is the setting quiver.target_partitions, else the sum of
// the live executors' vcores (at least 1) capped at the setting's maximum:
// a session that never set it sends nothing, so this default applies, and
// vcores come from executors (the scheduler keeps a task per partition of
// every stage).
func (c *core) targetPartitions(vals settings.Values) int {
	if n, ok := vals.Int(settings.TargetPartitions); ok {
		return int(n)
	}
	n := 0
	for _, e := range c.executors {
		n += e.vcores
	}
	return min(max(n, 1), int(settings.TargetPartitions.Max))
}

func (c *core) planned(e evPlanned) {
	j := c.jobs[e.jobID]
	if j == nil || j.terminal() || e.gen != j.planGen || j.planned {
		return
	}
	if e.err != nil {
		c.failJob(j, e.err)
		return
	}
	if len(e.stages) == 0 {
		c.failJob(j, qerr.Internalf("scheduler: job %s: the stage planner returned no stages", j.id))
		return
	}
	for _, ps := range e.stages {
		if _, dup := j.stages[ps.ID]; dup || ps.Plan == nil {
			c.failJob(j, qerr.Internalf("scheduler: job %s: stage %d is duplicated or has no plan", j.id, ps.ID))
			return
		}
		if ps.Whole != e.stages[0].Whole {
			c.failJob(j, qerr.Internalf("scheduler: job %s: stage %d is whole but stage %d is not, or the other way round", j.id, ps.ID, e.stages[0].ID))
			return
		}
		j.stages[ps.ID] = &stage{id: ps.ID, plan: ps.Plan, inputs: ps.Inputs, final: ps.Final, whole: ps.Whole}
		j.order = append(j.order, ps.ID)
		if ps.Final {
			j.final = ps.ID
		}
	}
	for _, id := range j.order {
		for _, in := range j.stages[id].inputs {
			p := j.stages[in]
			if p == nil {
				c.failJob(j, qerr.Internalf("scheduler: job %s: stage %d reads unknown stage %d", j.id, id, in))
				return
			}
			p.consumers = append(p.consumers, id)
		}
	}
	if j.final == 0 {
		j.final = j.order[len(j.order)-1]
		j.stages[j.final].final = true
	}
	j.schema = e.schema
	if j.schema == nil {
		j.schema = j.stages[j.final].plan.Input.Schema()
	}
	j.planned = true
	j.started = c.now()
	j.state = rpc.JobState_JOB_RUNNING
	c.dirty[j.id] = true
	if !c.buildPlanned(j) {
		return
	}
	c.resolveReady(j)
}

// resolveReady resolves every unresolved stage whose inputs have all
// completed: their locations replace its UnresolvedShuffles and its
// unfinished tasks are queued.
func (c *core) resolveReady(j *job) {
	for _, id := range j.order {
		s := j.stages[id]
		if s.state != stageUnresolved || j.terminal() {
			continue
		}
		ready := true
		for _, in := range s.inputs {
			if j.stages[in].state != stageSuccessful {
				ready = false
				break
			}
		}
		if !ready {
			continue
		}
		plan := s.resolved
		if plan == nil {
			plan = s.plan
		}
		for _, in := range s.inputs {
			plan = resolvePlan(plan, in, stageLocations(j.stages[in]))
		}
		s.resolved = plan
		if err := c.encodeStage(s); err != nil {
			c.failJob(j, qerr.Internalf("scheduler: job %s: encode stage %d: %w", j.id, s.id, err))
			return
		}
		s.state = stageRunning
		n := plan.OutputPartitions()
		if s.whole {
			n = 1
		}
		if s.tasks == nil || len(s.tasks) != n {
			s.tasks = make([]*task, n)
			for p := range s.tasks {
				s.tasks[p] = &task{partition: p, attempt: j.attemptBase}
			}
			keepRepaired(j, s)
		}
		c.dirty[j.id] = true
		if n == 0 || allSuccessful(s) {
			c.stageSucceeded(j, s)
			return // stageSucceeded resolved the rest
		}
	}
}

func allSuccessful(s *stage) bool {
	for _, t := range s.tasks {
		if t.state != taskSuccessful {
			return false
		}
	}
	return true
}

// stageLocations groups a completed stage's output by output partition,
// each partition's files in map-partition order.
func stageLocations(s *stage) [][]physical.PartitionLocation {
	n := s.plan.OutputN()
	for _, t := range s.tasks {
		for _, l := range t.locations {
			n = max(n, l.OutputPartition+1)
		}
	}
	out := make([][]physical.PartitionLocation, n)
	for _, t := range s.tasks {
		for _, l := range t.locations {
			if l.OutputPartition >= 0 {
				out[l.OutputPartition] = append(out[l.OutputPartition], l)
			}
		}
	}
	return out
}

func (c *core) stageSucceeded(j *job, s *stage) {
	s.state = stageSuccessful
	c.onStageSucceeded(j, s)
	c.dirty[j.id] = true
	if s.final {
		c.jobSucceeded(j)
		return
	}
	c.resolveReady(j)
}

func (c *core) jobSucceeded(j *job) {
	schema, err := serializeSchema(j.schema)
	if err != nil {
		c.failJob(j, qerr.Internalf("scheduler: job %s: serialize result schema: %w", j.id, err))
		return
	}
	j.resultSchema = schema
	j.state = rpc.JobState_JOB_SUCCESSFUL
	j.finished = c.now()
	c.dirty[j.id] = true
	c.onJobEnded(j)
	var inter []int
	for _, id := range j.order {
		if id != j.final {
			inter = append(inter, id)
		}
	}
	c.removeJobData(j, inter)
	c.delayed = append(c.delayed, delayedCleanup{due: c.now().Add(c.cfg.FinalStageCleanupDelay), jobID: j.id, stages: []int{j.final}})
	c.jobEndedCaches(j)
}

// failJob ends j with err (FAILED, or CANCELLED when err is a cancellation
// requested through CancelJob), cancels its running tasks and removes its data.
func (c *core) failJob(j *job, err error) {
	c.endJob(j, rpc.JobState_JOB_FAILED, err.Error(), qerr.KindOf(err))
}

func (c *core) endJob(j *job, state rpc.JobState, msg string, kind qerr.Kind) {
	if j.terminal() {
		return
	}
	j.state, j.errMsg, j.errKind, j.finished = state, msg, kind, c.now()
	c.dirty[j.id] = true
	c.onJobEnded(j)
	c.cancelTasks(j, true)
	c.removeJobData(j, slices.Clone(j.order))
	c.jobEndedCaches(j)
}

// cancelTasks cancels j's running tasks on their executors; with
// failStages it also marks its unfinished stages failed.
func (c *core) cancelTasks(j *job, failStages bool) {
	byExec := map[string][]*rpc.TaskId{}
	for _, id := range j.order {
		s := j.stages[id]
		if failStages && (s.state == stageRunning || s.state == stageUnresolved) {
			s.state = stageFailed
		}
		for _, t := range s.tasks {
			if t.state == taskRunning {
				byExec[t.executor] = append(byExec[t.executor], c.taskID(j, s, t))
				c.release(t)
				t.state = taskFailed
			}
		}
	}
	for _, eid := range sortedKeys(byExec) {
		if ex := c.executors[eid]; ex != nil {
			c.actions = append(c.actions, actCancel{executorID: eid, addr: ex.addr(), tasks: byExec[eid]})
		}
	}
}

func (c *core) cancel(jobID string) cancelReply {
	j := c.jobs[jobID]
	if j == nil {
		return cancelReply{}
	}
	if j.terminal() {
		return cancelReply{found: true}
	}
	c.endJob(j, rpc.JobState_JOB_CANCELLED, fmt.Sprintf("job %s was cancelled", j.id), qerr.Canceled)
	return cancelReply{found: true, cancelled: true}
}

// ---- tasks ----

func (c *core) taskID(j *job, s *stage, t *task) *rpc.TaskId {
	return &rpc.TaskId{JobId: j.id, StageId: int32(s.id), Partition: int32(t.partition), Attempt: int32(t.attempt)}
}

// release frees the slot t held on its executor.
func (c *core) release(t *task) {
	if ex := c.executors[t.executor]; ex != nil && ex.running > 0 {
		ex.running--
	}
}

// lookup finds the running task a status or launch failure is about; nil
// when unknown or stale (an older attempt, or the task is no longer running).
func (c *core) lookup(id *rpc.TaskId) (*job, *stage, *task) {
	j := c.jobs[id.GetJobId()]
	if j == nil || j.terminal() {
		return nil, nil, nil
	}
	s := j.stages[int(id.GetStageId())]
	if s == nil || int(id.GetPartition()) < 0 || int(id.GetPartition()) >= len(s.tasks) {
		return nil, nil, nil
	}
	t := s.tasks[id.GetPartition()]
	if t.attempt != int(id.GetAttempt()) || t.state != taskRunning {
		return nil, nil, nil
	}
	return j, s, t
}

func (c *core) taskStatus(executorID string, st *rpc.TaskStatus) {
	j, s, t := c.lookup(st.GetId())
	if t == nil {
		return
	}
	switch st.GetState() {
	case rpc.TaskState_TASK_SUCCESSFUL:
		c.release(t)
		t.state = taskSuccessful
		if executorID != "" {
			t.executor = executorID
		}
		t.locations = locationsFromRPC(st.GetLocations())
		taskMetrics(t, st)
		c.onTaskSucceeded(t)
		c.dirty[j.id] = true
		c.checkBuildSize(j, s)
		if j.terminal() {
			return
		}
		if s.state == stageRunning && allSuccessful(s) {
			c.stageSucceeded(j, s)
		}
	case rpc.TaskState_TASK_FAILED, rpc.TaskState_TASK_CANCELLED:
		c.release(t)
		c.dirty[j.id] = true
		if ff := st.GetFetchFailure(); ff != nil && st.GetState() == rpc.TaskState_TASK_FAILED {
			if ff.GetExecutorId() != "" {
				c.suspect(ff.GetExecutorId(), "a fetch from it failed")
			}
			if c.cacheFetchFailed(j, t, ff) {
				return
			}
			c.fetchFailed(j, s, t, ff)
			return
		}
		kind := qerr.Kind(st.GetErrorKind())
		msg := st.GetError()
		if st.GetState() == rpc.TaskState_TASK_CANCELLED {
			kind, msg = qerr.Canceled, "cancelled by the executor"
		}
		c.taskFailed(j, s, t, executorID, kind, msg)
	}
}

// retryable reports whether a task failure of this kind may succeed on a
// retry. Planning, execution (bad data, division by zero) and
// not-implemented errors are deterministic: they fail the job at once.
func retryable(k qerr.Kind) bool {
	switch k {
	// A memory limit is the session's, per task: the task needs as much on
	// any executor, so running it again only fails again.
	case qerr.Plan, qerr.Execution, qerr.NotImplemented, qerr.Resources:
		return false
	}
	return true
}

func (c *core) taskFailed(j *job, s *stage, t *task, executorID string, kind qerr.Kind, msg string) {
	t.failures++
	t.lastErr = msg
	if executorID != "" {
		if t.failedOn == nil {
			t.failedOn = map[string]bool{}
		}
		t.failedOn[executorID] = true
	}
	if !retryable(kind) || t.failures > c.cfg.TaskRetries {
		t.state = taskFailed
		c.onTaskFailed(j, s, t, executorID, false)
		c.endJob(j, rpc.JobState_JOB_FAILED,
			fmt.Sprintf("job %s: stage %d task %d failed (attempt %d of %d): %s", j.id, s.id, t.partition, t.failures, c.cfg.TaskRetries+1, msg),
			kind)
		return
	}
	t.state = taskPending
	t.attempt++
	c.onTaskFailed(j, s, t, executorID, true)
}

// fetchFailed: a task of consumer could not read a file of the producing
// stage. The consumer task is not at fault (it is retried without counting
// a failure); the producer's map outputs on the executor that could not
// serve are lost and recomputed.
func (c *core) fetchFailed(j *job, consumer *stage, t *task, ff *rpc.FetchFailure) {
	p := j.stages[int(ff.GetStageId())]
	if p == nil || p == consumer || ff.GetJobId() != "" && ff.GetJobId() != j.id {
		c.taskFailed(j, consumer, t, "", qerr.Internal, fmt.Sprintf("fetch failure names stage %d of job %s, which this task does not read", ff.GetStageId(), ff.GetJobId()))
		return
	}
	t.state = taskPending
	t.attempt++
	c.onTasksRequeued(1)
	lost := ff.GetExecutorId()
	mp := int(ff.GetMapPartition())
	c.rollback(j, p, func(pt *task) bool {
		if lost != "" {
			return pt.executor == lost
		}
		return pt.partition == mp
	}, fmt.Sprintf("fetch failure reading stage %d map partition %d from executor %s", p.id, mp, lost))
}

// rollback marks the successful tasks of p that lost matches as lost,
// re-queues them, and unresolves p's consumers that are not done yet (their
// running tasks are cancelled) so they re-resolve when p completes again.
func (c *core) rollback(j *job, p *stage, lost func(*task) bool, why string) {
	var redo []*task
	for _, pt := range p.tasks {
		if pt.state == taskSuccessful && lost(pt) {
			redo = append(redo, pt)
		}
	}
	if len(redo) == 0 {
		return
	}
	p.rollbacks++
	if p.rollbacks > c.cfg.StageRetries {
		c.endJob(j, rpc.JobState_JOB_FAILED,
			fmt.Sprintf("job %s: stage %d lost its output %d times (limit %d); last: %s", j.id, p.id, p.rollbacks, c.cfg.StageRetries, why),
			qerr.IO)
		return
	}
	for _, pt := range redo {
		pt.state, pt.locations, pt.executor = taskPending, nil, ""
		pt.attempt++
	}
	c.onStageRetry(j, p, len(redo), why)
	if p.state == stageSuccessful {
		p.state = stageRunning
		// An input of p rolled back while p was done (a shared stage that
		// another reader still needed) holds no output p's re-run tasks
		// could read: p waits for it and re-resolves.
		for _, in := range p.inputs {
			if j.stages[in].state != stageSuccessful {
				p.resolved = unresolvePlan(p.resolved, in)
				p.state = stageUnresolved
			}
		}
	}
	c.dirty[j.id] = true
	for _, cid := range p.consumers {
		cs := j.stages[cid]
		if cs.state == stageSuccessful || cs.state == stageFailed {
			continue
		}
		// An unresolved consumer may still hold readers of p from an
		// earlier resolve (another input was rolled back): drop them too.
		cs.resolved = unresolvePlan(cs.resolved, p.id)
		if cs.state != stageRunning {
			continue
		}
		cs.state = stageUnresolved
		byExec := map[string][]*rpc.TaskId{}
		for _, ct := range cs.tasks {
			if ct.state == taskRunning {
				byExec[ct.executor] = append(byExec[ct.executor], c.taskID(j, cs, ct))
				c.release(ct)
				ct.state = taskPending
				ct.attempt++
			}
		}
		for _, eid := range sortedKeys(byExec) {
			if ex := c.executors[eid]; ex != nil {
				c.actions = append(c.actions, actCancel{executorID: eid, addr: ex.addr(), tasks: byExec[eid]})
			}
		}
	}
}

func (c *core) launchFailed(e evLaunchFailed) {
	if e.draining {
		c.launchRefusedDraining(e)
		return
	}
	for _, id := range e.tasks {
		j, s, t := c.lookup(id)
		if t == nil {
			continue
		}
		c.release(t)
		c.dirty[j.id] = true
		if e.refused {
			// Our plan or settings were invalid: a bug, not retried.
			c.taskFailed(j, s, t, e.executorID, qerr.Internal, fmt.Sprintf("launch on executor %s: %v", e.executorID, e.err))
			continue
		}
		// The task never started: the executor is at fault, not the task,
		// so it goes elsewhere without counting a failure (the executor is
		// probed, and lost after maxLaunchFailures in a row, so this ends).
		if t.failedOn == nil {
			t.failedOn = map[string]bool{}
		}
		t.failedOn[e.executorID] = true
		t.lastErr = fmt.Sprintf("launch on executor %s: %v", e.executorID, e.err)
		t.state = taskPending
		t.attempt++
		c.onTasksRequeued(1)
	}
	if ex := c.executors[e.executorID]; ex != nil && !e.refused {
		c.suspect(e.executorID, "a launch on it failed")
		ex.launchFailures++
		if ex.launchFailures >= maxLaunchFailures {
			c.executorLost(e.executorID, fmt.Sprintf("%d launches failed in a row", ex.launchFailures))
		}
	}
}

// ---- executors ----

func (c *core) register(e evRegister) {
	now := c.now()
	c.reconcileCaches(e.meta.ID, e.held)
	if ex := c.executors[e.meta.ID]; ex != nil {
		// Re-registration (the executor restarted, or we did): refresh
		// where it listens; its slot accounting stays.
		ex.meta, ex.grpcPort, ex.vcores, ex.lastSeen, ex.launchFailures = e.meta, e.grpcPort, max(e.vcores, 1), now, 0
		return
	}
	c.execSeq++
	ex := &executorState{
		meta: e.meta, grpcPort: e.grpcPort, vcores: max(e.vcores, 1),
		lastSeen: now, registered: now, seq: c.execSeq,
	}
	c.executors[e.meta.ID] = ex
	c.noExecSince = time.Time{}
	// An executor restarted on the work dir of a lost one keeps the
	// directories of the jobs still live (liveJobIDs); each of those jobs
	// counts it among the executors its cleanup reaches, so they go when
	// the job's data does, and a job that already ended has the stages it
	// no longer needs removed there now.
	for _, jid := range c.liveJobIDs() {
		j := c.jobs[jid]
		if j == nil {
			continue
		}
		j.touched[e.meta.ID] = true
		if j.terminal() {
			c.removeJobDataOn(j, slices.DeleteFunc(slices.Clone(j.order), func(id int) bool { return id == j.final }), []string{e.meta.ID})
		}
	}
	c.onExecutorJoined(ex)
}

// liveJobIDs lists, sorted, the jobs whose data executors must keep: every
// job not ended, every ended job whose result files wait for their delayed
// cleanup, and every job holding a cache entry. A registering executor
// deletes the directories of the others (orphans of a restart or of its
// own loss).
func (c *core) liveJobIDs() []string {
	ids := map[string]bool{}
	for _, id := range c.activeJobs() {
		ids[id] = true
	}
	for _, d := range c.delayed {
		ids[d.jobID] = true
	}
	for _, e := range c.caches.List("") {
		for _, o := range e.Outputs() {
			ids[o.JobID] = true
		}
	}
	return sortedKeys(ids)
}

// executorLost forgets an executor: its running tasks are re-queued and the
// completed stage output it held that is still needed is recomputed.
func (c *core) executorLost(id, why string) {
	ex := c.executors[id]
	if ex == nil {
		return
	}
	c.onExecutorLost(ex, why)
	delete(c.executors, id)
	c.actions = append(c.actions, actDropExecutor{executorID: id, addr: ex.addr()})
	if len(c.executors) == 0 {
		c.noExecSince = c.now()
	}
	for _, jid := range c.activeJobs() {
		j := c.jobs[jid]
		if j == nil || j.terminal() || !j.planned {
			continue
		}
		for _, sid := range j.order {
			for _, t := range j.stages[sid].tasks {
				if t.state == taskRunning && t.executor == id {
					t.state, t.executor = taskPending, ""
					t.attempt++
					if t.failedOn == nil {
						t.failedOn = map[string]bool{}
					}
					t.failedOn[id] = true
					c.dirty[j.id] = true
					c.onTasksRequeued(1)
				}
			}
		}
		for _, sid := range j.order {
			p := j.stages[sid]
			if p.final || j.terminal() {
				continue
			}
			needed := false
			for _, cid := range p.consumers {
				if j.stages[cid].state != stageSuccessful {
					needed = true
				}
			}
			if needed {
				c.rollback(j, p, func(t *task) bool { return t.executor == id }, "executor "+id+" lost: "+why)
			}
		}
	}
	c.cacheExecutorLost(id)
}

func (c *core) tick(now time.Time) {
	for _, id := range sortedKeys(c.executors) {
		if ex := c.executors[id]; now.Sub(ex.lastSeen) > c.cfg.HeartbeatTimeout {
			c.executorLost(id, fmt.Sprintf("no heartbeat for %s", now.Sub(ex.lastSeen).Round(time.Millisecond)))
		}
	}
	if len(c.executors) == 0 {
		for _, jid := range c.activeJobs() {
			j := c.jobs[jid]
			if j == nil || j.terminal() {
				continue
			}
			since := c.noExecSince
			if j.submitted.After(since) {
				since = j.submitted
			}
			if now.Sub(since) >= c.cfg.ExecutorGracePeriod {
				c.endJob(j, rpc.JobState_JOB_FAILED,
					fmt.Sprintf("job %s: no executors available for %s", j.id, c.cfg.ExecutorGracePeriod), qerr.Resources)
			}
		}
	}
	keep := c.delayed[:0]
	for _, d := range c.delayed {
		if now.Before(d.due) {
			keep = append(keep, d)
			continue
		}
		if j := c.jobs[d.jobID]; j != nil {
			c.removeJobData(j, d.stages)
		}
	}
	c.delayed = keep
	// Forget long-finished jobs whose cleanup is done.
	pending := map[string]bool{}
	for _, d := range c.delayed {
		pending[d.jobID] = true
	}
	order := c.jobOrder[:0]
	for _, jid := range c.jobOrder {
		j := c.jobs[jid]
		if j.terminal() && !pending[jid] && now.Sub(j.finished) > finishedJobRetention {
			delete(c.jobs, jid)
			continue
		}
		order = append(order, jid)
	}
	c.jobOrder = order
	c.sweepCaches(now)
}

// ---- cleanup ----

// pinned lists the stages of j cleanup must keep: those the cache registry
// pins (every stage of a job pinned with cache.AllStages: a build whose
// output stage is not known yet), those cfg.Pinned names, and those whose
// writer is itself pinned (a cache materialization). Deleting a cache's
// files is explicit (deleteEntryFiles, deleteBuildFiles), never cleanup.
func (c *core) pinned(j *job) []int {
	set := c.caches.PinnedStages()
	if c.cfg.Pinned != nil {
		for k, v := range c.cfg.Pinned() {
			set[k] = set[k] || v
		}
	}
	all := set[[2]string{j.id, cache.AllStages}]
	var out []int
	for _, id := range j.order {
		if all || set[[2]string{j.id, strconv.Itoa(id)}] || j.stages[id].plan.Pinned {
			out = append(out, id)
		}
	}
	for k := range set {
		if k[0] != j.id {
			continue
		}
		if id, err := strconv.Atoi(k[1]); err == nil && !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	sort.Ints(out)
	return out
}

// removeJobData asks every live executor that ran tasks of j to delete the
// given stages' files, never the pinned ones.
func (c *core) removeJobData(j *job, stages []int) {
	c.removeJobDataOn(j, stages, sortedKeys(j.touched))
}

// removeJobDataOn is removeJobData on the executors eids only.
func (c *core) removeJobDataOn(j *job, stages []int, eids []string) {
	pinned := c.pinned(j)
	var ids []int32
	for _, id := range stages {
		if !slices.Contains(pinned, id) {
			ids = append(ids, int32(id))
		}
	}
	if len(ids) == 0 {
		return
	}
	pins := make([]int32, len(pinned))
	for i, p := range pinned {
		pins[i] = int32(p)
	}
	for _, eid := range eids {
		ex := c.executors[eid]
		if ex == nil {
			continue
		}
		c.actions = append(c.actions, actRemove{executorID: eid, addr: ex.addr(), req: &rpc.RemoveJobDataRequest{
			JobId: j.id, StageIds: slices.Clone(ids), PinnedStageIds: slices.Clone(pins),
		}})
	}
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
