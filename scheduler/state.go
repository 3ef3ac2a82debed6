package scheduler

import (
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver/cache"
	"github.com/quiverdb/quiver/logical"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
	"github.com/quiverdb/quiver/rpc"
	"github.com/quiverdb/quiver/settings"
)

// The types in this file are owned by the event loop: only core's methods,
// running on the loop goroutine, read or write them.

type stageState int

const (
	// stageUnresolved: some input stage has not completed (or was rolled back).
	stageUnresolved stageState = iota
	// stageRunning: resolved; its unfinished tasks are queued or running.
	stageRunning
	stageSuccessful
	stageFailed
)

func (s stageState) String() string {
	return [...]string{"unresolved", "running", "successful", "failed"}[s]
}

type taskState int

const (
	taskPending taskState = iota // waiting for a slot (or for its stage to resolve)
	taskRunning                  // launched on executor, no final status yet
	taskSuccessful
	taskFailed
)

func (s taskState) String() string {
	return [...]string{"pending", "running", "successful", "failed"}[s]
}

// task is one partition of a stage. Only statuses naming the current
// attempt are applied; older attempts' reports are stale and ignored.
type task struct {
	partition int
	attempt   int
	failures  int // failures counted against TaskRetries
	state     taskState
	// executor runs the task (running) or holds its output (successful).
	executor  string
	locations []physical.PartitionLocation
	failedOn  map[string]bool // executors it failed on: placed elsewhere if possible
	lastErr   string
	metrics   []*rpc.OperatorMetrics // what its last success reported (analyze.go)
	// kept: a repair build's final-stage task whose partition the entry
	// still has; done without running, and not shown.
	kept bool
}

// stage is one stage of a job's graph.
type stage struct {
	id        int
	plan      *physical.ShuffleWriter // as split: inputs are UnresolvedShuffles
	resolved  physical.Plan           // plan with readers for completed inputs; nil before the first resolve
	encoded   []byte                  // physical/codec encoding of resolved, sent with every task
	signed    time.Time               // when encoded's Flight tickets were signed (tickets.go)
	inputs    []int
	consumers []int
	final     bool
	// whole: the stage runs as one task of all its partitions, exchanges in
	// memory (stage.Stage.Whole); its one task has partition 0.
	whole     bool
	state     stageState
	tasks     []*task
	rollbacks int // times lost output was recomputed, against StageRetries
}

// job is a submitted query.
type job struct {
	id, session, name string
	settings          settings.Values // the session's, then the query's over them
	state             rpc.JobState
	errMsg            string
	errKind           qerr.Kind
	submitted         time.Time
	started           time.Time // planned: its tasks may run
	finished          time.Time
	sql               string // the statement's text, when the client sent it
	requestID         string // the submitting call's request id: in its log lines and its tasks
	tenant            string // its session's tenant (tenants.go)
	planned           bool
	stages            map[int]*stage
	order             []int // stage ids in dependency order
	final             int
	schema            *arrow.Schema // the result schema: the final stage's input schema
	resultSchema      []byte
	touched           map[string]bool // executors that ran any task of the job
	watchers          []chan *rpc.JobStatus

	// Dataset cache (cache.go).

	// plan is the submitted logical plan, kept so the job can be resolved
	// again after the cache builds it waits for, or re-run from scratch.
	plan logical.Plan
	// build is set on a cache materialization job (a child job).
	build *cacheBuild
	// waitingOn maps each cache key the job waits for to the job building
	// it; the job is planned once it is empty.
	waitingOn map[cache.Key]string
	// buildFailures counts, per key, failed builds this job waited for.
	buildFailures map[cache.Key]int
	// hits are the CacheReaders the job was planned with; readers the keys
	// it holds a reader count on (released when it ends or restarts).
	hits    map[cache.Key]*physical.CacheReader
	readers []reader
	// events are the job's cache outcomes in first-seen order; published is
	// their immutable snapshot for WatchJob handlers (other goroutines).
	events    []cacheEvent
	published atomic.Pointer[[]*rpc.CacheEvent]
	// restarts counts re-runs after a cached input was lost; planGen tells
	// a stale planning result from the current one; attemptBase is the
	// first attempt number of tasks created after a restart, so no status
	// of an earlier run matches a new task.
	restarts, planGen, attemptBase int
	// files are the fingerprints of the files under the job's Cache nodes,
	// taken once off the loop before its caches are first resolved (nil:
	// not yet); statting is set while that stat runs (lineage.go).
	files    map[string]cache.Source
	statting bool
	// staleHits are the snapshot hits of the current resolution whose
	// sources changed; commitHits gives their events the reason.
	staleHits []staleHit
	// awaitHolders: a hit's executors have not registered again since the
	// scheduler restarted; the job is started again on the next event.
	awaitHolders bool
}

func (j *job) terminal() bool {
	return j.state == rpc.JobState_JOB_SUCCESSFUL || j.state == rpc.JobState_JOB_FAILED || j.state == rpc.JobState_JOB_CANCELLED
}

// executorState is a registered executor as the loop sees it.
type executorState struct {
	meta           physical.ExecutorMeta
	grpcPort       int
	vcores         int
	running        int // tasks launched here without a final status yet
	lastSeen       time.Time
	registered     time.Time
	seq            int  // registration order: the bias policy's order
	launchFailures int  // consecutive failed LaunchTasks calls
	suspected      bool // a probe of it is running (suspect.go)
	// draining: the executor is leaving; no new task is placed on it.
	draining bool
	// memReserved and memLimit are its task memory at the last heartbeat.
	memReserved, memLimit int64
}

func (e *executorState) addr() string { return hostPort(e.meta.Host, e.grpcPort) }

func (e *executorState) free() int {
	if e.draining {
		return 0
	}
	return e.vcores - e.running
}

type session struct {
	tenant   string // the creating token's tenant (tenants.go)
	settings settings.Values
	created  time.Time
	// lastUsed is the last request or job end of the session (idle expiry).
	lastUsed time.Time
	// idleTimeout overrides Config.SessionIdleTimeout when hasIdle.
	idleTimeout time.Duration
	hasIdle     bool
	// cacheQuota is the session's own quiver.cache.max_bytes (0: none): a
	// cap on its entries below the scheduler's.
	cacheQuota int64
}

// plannedStage is a stage as the planning step hands it to the loop.
type plannedStage struct {
	ID     int
	Plan   *physical.ShuffleWriter
	Inputs []int
	Final  bool
	Whole  bool
}

// delayedCleanup removes stages of a finished job once due.
type delayedCleanup struct {
	due    time.Time
	jobID  string
	stages []int
}
