package scheduler

import (
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
	"github.com/quiverdb/quiver/rpc"
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
}

// stage is one stage of a job's graph.
type stage struct {
	id        int
	plan      *physical.ShuffleWriter // as split: inputs are UnresolvedShuffles
	resolved  physical.Plan           // plan with readers for completed inputs; nil before the first resolve
	encoded   []byte                  // physical/codec encoding of resolved, sent with every task
	inputs    []int
	consumers []int
	final     bool
	state     stageState
	tasks     []*task
	rollbacks int // times lost output was recomputed, against StageRetries
}

// job is a submitted query.
type job struct {
	id, session, name string
	settings          map[string]string
	state             rpc.JobState
	errMsg            string
	errKind           qerr.Kind
	submitted         time.Time
	finished          time.Time
	planned           bool
	stages            map[int]*stage
	order             []int // stage ids in dependency order
	final             int
	schema            *arrow.Schema // the result schema: the final stage's input schema
	resultSchema      []byte
	touched           map[string]bool // executors that ran any task of the job
	watchers          []chan *rpc.JobStatus
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
	seq            int // registration order: the bias policy's order
	launchFailures int // consecutive failed LaunchTasks calls
}

func (e *executorState) addr() string { return hostPort(e.meta.Host, e.grpcPort) }

func (e *executorState) free() int { return e.vcores - e.running }

type session struct {
	settings map[string]string
	created  time.Time
}

// plannedStage is a stage as the planning step hands it to the loop.
type plannedStage struct {
	ID     int
	Plan   *physical.ShuffleWriter
	Inputs []int
	Final  bool
}

// delayedCleanup removes stages of a finished job once due.
type delayedCleanup struct {
	due    time.Time
	jobID  string
	stages []int
}
