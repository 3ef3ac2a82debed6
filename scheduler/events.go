package scheduler

import (
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver/cache"
	"github.com/quiverdb/quiver/logical"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/rpc"
	"github.com/quiverdb/quiver/settings"
)

// Events are what the loop reacts to. Those with a reply channel are sent by
// a waiting caller; the channel has capacity 1 so the loop never blocks on it.

type evCreateSession struct {
	id       string
	tenant   string          // the caller's (auth.Identity)
	settings settings.Values // checked by the handler
	reply    chan struct{}
}

type evCloseSession struct {
	id    string
	reply chan struct{}
}

// evSubmit: a job is queued (ExecuteQuery).
type evSubmit struct {
	jobID, session, name string
	sql                  string            // the statement's text ("" from DataFrame clients)
	requestID            string            // the submitting call's (rpc.RequestID)
	analyze              bool              // EXPLAIN ANALYZE: the status carries the stages' figures
	settings             map[string]string // as received; submit checks them
	plan                 logical.Plan
	reply                chan error
}

// evPlanned: the planning goroutine finished a job's stage graph (or failed).
type evPlanned struct {
	jobID  string
	gen    int // the job's planGen when planning started
	stages []plannedStage
	schema *arrow.Schema
	err    error
}

// evTaskStatus: an executor reported task statuses.
type evTaskStatus struct {
	executorID string
	statuses   []*rpc.TaskStatus
}

// evLaunchFailed: LaunchTasks to an executor failed; its tasks never started.
type evLaunchFailed struct {
	executorID string
	tasks      []*rpc.TaskId
	err        error
	// refused: the executor answered that the request is invalid. It is
	// healthy, so the failure does not count towards declaring it lost.
	refused bool
	// draining: the executor is leaving (the launch raced its drain): the
	// tasks are placed again without a failure counted (lifecycle.go).
	draining bool
}

type evRegister struct {
	meta     physical.ExecutorMeta
	grpcPort int
	vcores   int
	// held, when not nil, are the job directories the executor holds: its
	// cache entries over any other job lost their files.
	held  map[string]bool
	reply chan struct{}
}

type evHeartbeat struct {
	executorID string
	// memReserved and memLimit are the executor's task memory (bytes).
	memReserved, memLimit int64
	reply                 chan bool // true: unknown executor, register again
}

type evCancel struct {
	jobID string
	reply chan cancelReply
}

type cancelReply struct {
	found, cancelled bool
}

type evWatch struct {
	jobID string
	reply chan watchReply
}

type watchReply struct {
	ch  chan *rpc.JobStatus
	err error
	// caches is the job's published cache events, read by the handler to
	// fill JobStatus.caches (atomic: written only by the loop).
	caches *atomic.Pointer[[]*rpc.CacheEvent]
}

// evListCaches, evUncache and evClearCaches are the cache RPCs.
type evListCaches struct {
	session string
	reply   chan cacheList
}

type evUncache struct {
	session, cacheID string
	rebuild          bool // REFRESH CACHE: the id stays usable
	reply            chan bool
}

type evClearCaches struct {
	session string
	reply   chan int
}

// evUnwatch: a watcher went away.
type evUnwatch struct {
	jobID string
	ch    chan *rpc.JobStatus
}

// evTick: time passed (heartbeat expiry, grace period, delayed cleanup).
type evTick struct{ now time.Time }

// evInspect runs fn on the loop (read-only views for REST and tests).
type evInspect struct {
	fn   func(c *core)
	done chan struct{}
}

// Actions are what the loop asks the runtime to do outside the loop.

type actPlan struct {
	jobID            string
	gen              int
	plan             logical.Plan
	targetPartitions int
	// maxRecursion is quiver.max_recursion_depth (planner.Config.MaxRecursionDepth).
	maxRecursion int64
	compression  physical.Compression
	// inlineLimit is quiver.shuffle_inline_bytes (stage.Options.InlineLimit).
	inlineLimit int64
	// caches lowers the plan's cache hits to these readers (read-only
	// once sent); pinFinal marks a cache materialization job.
	caches   map[physical.CacheKey]*physical.CacheReader
	pinFinal bool
	// sortBy sorts each partition of a cache build's output by these
	// columns before the pinned writer (cache.SortByOption).
	sortBy []cache.SortColumn
	// inMemory splits the job into one whole stage with in-memory
	// exchanges (it runs on one executor).
	inMemory bool
}

type actLaunch struct {
	executorID, addr string
	tasks            []*rpc.TaskDefinition
}

type actCancel struct {
	executorID, addr string
	tasks            []*rpc.TaskId
}

type actRemove struct {
	executorID, addr string
	req              *rpc.RemoveJobDataRequest
}

// actDropExecutor: the executor is lost; close its connection.
type actDropExecutor struct {
	executorID, addr string
}
