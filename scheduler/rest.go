package scheduler

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/quiverdb/quiver/auth"
	"github.com/quiverdb/quiver/cache"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/rpc"
)

// The REST view: read-only JSON snapshots taken on the event loop.

// ExecutorInfo is one executor in GET /api/executors.
type ExecutorInfo struct {
	ID            string    `json:"id"`
	Host          string    `json:"host"`
	Port          int       `json:"port"`
	FlightPort    int       `json:"flight_port"`
	VCores        int       `json:"vcores"`
	RunningTasks  int       `json:"running_tasks"`
	LastHeartbeat time.Time `json:"last_heartbeat"`
	Registered    time.Time `json:"registered"`
	Draining      bool      `json:"draining,omitempty"`
	// MemoryReserved is what its running tasks held at the last heartbeat;
	// MemoryLimit its limit for all of them (0: none).
	MemoryReserved int64 `json:"memory_reserved"`
	MemoryLimit    int64 `json:"memory_limit"`
}

// JobInfo is one job in GET /api/jobs and GET /api/job/{id} (with Stages).
type JobInfo struct {
	ID          string     `json:"id"`
	Name        string     `json:"name,omitempty"`
	Session     string     `json:"session"`
	State       string     `json:"state"`
	StagesDone  int        `json:"stages_done"`
	StagesTotal int        `json:"stages_total"`
	TasksDone   int        `json:"tasks_done"`
	TasksTotal  int        `json:"tasks_total"`
	Error       string     `json:"error,omitempty"`
	Submitted   time.Time  `json:"submitted"`
	Finished    *time.Time `json:"finished,omitempty"`
	// SQL is the statement's text ("" for DataFrame queries); Started is
	// when the job was planned; ElapsedMS runs from submit to the end (or
	// to now while it runs); Rows is the result's row count once it succeeded.
	SQL       string     `json:"sql,omitempty"`
	Started   *time.Time `json:"started,omitempty"`
	ElapsedMS int64      `json:"elapsed_ms"`
	Rows      *int64     `json:"rows,omitempty"`
	// Caches are the job's cache outcomes; BuildsCache is the cache id a
	// cache materialization job builds.
	Caches      []CacheEventInfo `json:"caches,omitempty"`
	BuildsCache string           `json:"builds_cache,omitempty"`
	Stages      []StageInfo      `json:"stages,omitempty"`
}

// CacheEventInfo is one cache outcome of a job.
type CacheEventInfo struct {
	CacheID    string `json:"cache_id"`
	Name       string `json:"name,omitempty"`
	Outcome    string `json:"outcome"` // hit | miss | pending
	Partitions int    `json:"partitions"`
	Bytes      int64  `json:"bytes"`
}

// CacheEntryInfo is one entry in GET /api/caches. A global entry (Scope
// global, kept after its session closed) has no session: SessionID is
// empty and Tenant names its owner.
type CacheEntryInfo struct {
	SessionID  string     `json:"session_id,omitempty"`
	Scope      string     `json:"scope"` // session | global
	Tenant     string     `json:"tenant,omitempty"`
	CacheID    string     `json:"cache_id"`
	Name       string     `json:"name,omitempty"`
	State      string     `json:"state"`
	JobID      string     `json:"job_id"`
	StageID    int        `json:"stage_id"`
	Partitions int        `json:"partitions"`
	Rows       int64      `json:"rows"`
	Bytes      int64      `json:"bytes"`
	Executors  []string   `json:"executors"`
	Hits       int64      `json:"hits"`
	Readers    int        `json:"readers"`
	Created    time.Time  `json:"created"`
	LastHit    *time.Time `json:"last_hit,omitempty"`
}

// CacheStatsInfo are the registry's counters in GET /api/caches.
type CacheStatsInfo struct {
	Hits             int64            `json:"hits"`
	Misses           int64            `json:"misses"`
	Materializations int64            `json:"materializations"`
	Aborts           int64            `json:"aborts"`
	StaleCompletions int64            `json:"stale_completions"`
	Invalidations    map[string]int64 `json:"invalidations"` // by cause
	BytesRead        int64            `json:"bytes_read"`
	Partials         int64            `json:"partials"` // entries made partial by an executor loss
	Repairs          int64            `json:"repairs"`  // repair builds that made one whole
	Entries          int              `json:"entries"`
	Bytes            int64            `json:"bytes"`
	MaxBytes         int64            `json:"max_bytes"` // the current cap (0 = none)
}

// CachesInfo is GET /api/caches.
type CachesInfo struct {
	Entries []CacheEntryInfo `json:"entries"`
	Stats   CacheStatsInfo   `json:"stats"`
}

func (c *core) cachesInfo() CachesInfo {
	out := CachesInfo{Entries: []CacheEntryInfo{}}
	for _, e := range c.caches.List("") {
		ei := CacheEntryInfo{
			SessionID: e.Key.SessionID, Scope: entryScope(e), Tenant: c.entryTenant(e.Key.SessionID),
			CacheID: e.Key.CacheID, Name: e.Name, State: entryState(e),
			JobID: e.JobID, StageID: e.StageID, Partitions: len(e.Locations), Rows: e.Rows, Bytes: e.Bytes,
			Executors: e.Executors(), Hits: e.Hits, Readers: e.Readers, Created: e.Created,
		}
		if _, ok := cache.GlobalTenant(e.Key.SessionID); ok {
			ei.SessionID = "" // a tenant's name space, not a session
		}
		if ei.Executors == nil {
			ei.Executors = []string{}
		}
		if !e.LastHit.IsZero() {
			lh := e.LastHit
			ei.LastHit = &lh
		}
		out.Entries = append(out.Entries, ei)
	}
	st := c.caches.Stats()
	out.Stats = CacheStatsInfo{
		Hits: st.Hits, Misses: st.Misses, Materializations: st.Materializations, Aborts: st.Aborts,
		StaleCompletions: st.StaleCompletions, Invalidations: map[string]int64{}, BytesRead: st.BytesRead,
		Partials: st.Partials, Repairs: st.Repairs,
		Entries: st.Entries, Bytes: st.Bytes, MaxBytes: c.cacheMaxBytes,
	}
	for i, n := range st.Invalidations {
		out.Stats.Invalidations[cache.Cause(i).String()] = n
	}
	return out
}

// StageInfo is one stage of GET /api/job/{id}.
type StageInfo struct {
	ID     int    `json:"id"`
	State  string `json:"state"`
	Inputs []int  `json:"inputs"`
	Final  bool   `json:"final"`
	// Whole: the stage runs as one task of all its partitions (exchanges
	// in memory); its one task's partition is 0.
	Whole     bool       `json:"whole,omitempty"`
	Rollbacks int        `json:"rollbacks"`
	Rows      int64      `json:"rows"`  // rows the stage's tasks wrote so far
	Bytes     int64      `json:"bytes"` // bytes the stage's tasks wrote so far
	Plan      string     `json:"plan"`
	Tasks     []TaskInfo `json:"tasks"`
	// Analyze is the plan with each operator's EXPLAIN ANALYZE figures,
	// and Operators the figures, once the stage has succeeded (analyze.go).
	Analyze   string         `json:"analyze,omitempty"`
	Operators []OperatorInfo `json:"operators,omitempty"`
}

// TaskInfo is one task of a stage.
type TaskInfo struct {
	Partition int    `json:"partition"`
	Attempt   int    `json:"attempt"`
	Failures  int    `json:"failures"`
	State     string `json:"state"`
	Executor  string `json:"executor,omitempty"`
	Error     string `json:"error,omitempty"`
}

func (c *core) executorInfos() []ExecutorInfo {
	out := []ExecutorInfo{}
	for _, e := range c.executorsBySeq() {
		out = append(out, ExecutorInfo{
			ID: e.meta.ID, Host: e.meta.Host, Port: e.grpcPort, FlightPort: e.meta.FlightPort,
			VCores: e.vcores, RunningTasks: e.running, LastHeartbeat: e.lastSeen,
			Registered: e.registered, Draining: e.draining, MemoryReserved: e.memReserved, MemoryLimit: e.memLimit,
		})
	}
	return out
}

func jobStateName(s rpc.JobState) string {
	switch s {
	case rpc.JobState_JOB_QUEUED:
		return "queued"
	case rpc.JobState_JOB_RUNNING:
		return "running"
	case rpc.JobState_JOB_SUCCESSFUL:
		return "successful"
	case rpc.JobState_JOB_FAILED:
		return "failed"
	case rpc.JobState_JOB_CANCELLED:
		return "cancelled"
	}
	return "unknown"
}

func (c *core) jobInfo(j *job, detail bool) JobInfo {
	st := c.status(j)
	info := JobInfo{
		ID: j.id, Name: j.name, Session: j.session, State: jobStateName(j.state),
		StagesDone: int(st.StagesDone), StagesTotal: int(st.StagesTotal),
		TasksDone: int(st.TasksDone), TasksTotal: int(st.TasksTotal),
		Error: j.errMsg, Submitted: j.submitted,
	}
	if !j.finished.IsZero() {
		f := j.finished
		info.Finished = &f
	}
	c.jobTimes(j, &info)
	for _, ev := range j.events {
		info.Caches = append(info.Caches, CacheEventInfo{CacheID: ev.key.CacheID, Name: ev.name, Outcome: ev.outcome, Partitions: ev.partitions, Bytes: ev.bytes})
	}
	if j.build != nil {
		info.BuildsCache = j.build.key.CacheID
	}
	if !detail {
		return info
	}
	for _, id := range j.order {
		s := j.stages[id]
		plan := physical.Plan(s.plan)
		if s.resolved != nil {
			plan = s.resolved
		}
		si := StageInfo{ID: s.id, State: s.state.String(), Inputs: s.inputs, Final: s.final, Whole: s.whole, Rollbacks: s.rollbacks, Plan: physical.Indent(plan), Tasks: []TaskInfo{}}
		for _, t := range s.tasks {
			if t.kept {
				continue // a repair's partition the entry still has: never run
			}
			si.Tasks = append(si.Tasks, TaskInfo{Partition: t.partition, Attempt: t.attempt, Failures: t.failures, State: t.state.String(), Executor: t.executor, Error: t.lastErr})
			for _, l := range t.locations {
				si.Rows += l.Rows
				si.Bytes += l.Bytes
			}
		}
		si.Analyze, si.Operators = stageAnalyze(s)
		info.Stages = append(info.Stages, si)
	}
	return info
}

func (s *Scheduler) restHandler() http.Handler {
	mux := &routeMux{ServeMux: http.NewServeMux()}
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if s.shuttingDown.Load() {
			// Out of rotation while Shutdown lets running jobs finish.
			http.Error(w, "shutting down", http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte("ok"))
	})
	mux.HandleFunc("GET /api/executors", func(w http.ResponseWriter, r *http.Request) {
		var out []ExecutorInfo
		s.serveJSON(w, r, func(c *core) (any, bool) {
			out = c.executorInfos()
			return out, true
		})
	})
	// Every view shows only what the caller's tenant may see (tenants.go).
	mux.HandleFunc("GET /api/jobs", func(w http.ResponseWriter, r *http.Request) {
		caller := auth.IdentityFrom(r.Context())
		s.serveJSON(w, r, func(c *core) (any, bool) {
			out := []JobInfo{}
			for _, id := range c.jobOrder {
				if canSeeJob(caller, c.jobs[id]) {
					out = append(out, c.jobInfo(c.jobs[id], false))
				}
			}
			return out, true
		})
	})
	mux.HandleFunc("GET /api/caches", func(w http.ResponseWriter, r *http.Request) {
		caller := auth.IdentityFrom(r.Context())
		s.serveJSON(w, r, func(c *core) (any, bool) {
			info := c.cachesInfo()
			kept := info.Entries[:0]
			for _, e := range info.Entries {
				if caller.CanSee(e.Tenant) {
					kept = append(kept, e)
				}
			}
			info.Entries = kept
			return info, true
		})
	})
	mux.HandleFunc("GET /api/job/{id}", func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		caller := auth.IdentityFrom(r.Context())
		s.serveJSON(w, r, func(c *core) (any, bool) {
			j := c.jobs[id]
			if !canSeeJob(caller, j) {
				return nil, false
			}
			return c.jobInfo(j, true), true
		})
	})
	s.opsRoutes(mux)
	return mux
}

// serveJSON builds a view on the loop and writes it; found=false is a 404.
func (s *Scheduler) serveJSON(w http.ResponseWriter, r *http.Request, view func(c *core) (any, bool)) {
	var (
		v     any
		found bool
	)
	if err := s.inspect(r.Context(), func(c *core) { v, found = view(c) }); err != nil {
		http.Error(w, "scheduler: "+err.Error(), http.StatusServiceUnavailable)
		return
	}
	if !found {
		http.Error(w, "scheduler: not found", http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}
