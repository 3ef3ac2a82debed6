package scheduler

import (
	"encoding/json"
	"net/http"
	"time"

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
}

// JobInfo is one job in GET /api/jobs and GET /api/job/{id} (with Stages).
type JobInfo struct {
	ID          string      `json:"id"`
	Name        string      `json:"name,omitempty"`
	Session     string      `json:"session"`
	State       string      `json:"state"`
	StagesDone  int         `json:"stages_done"`
	StagesTotal int         `json:"stages_total"`
	TasksDone   int         `json:"tasks_done"`
	TasksTotal  int         `json:"tasks_total"`
	Error       string      `json:"error,omitempty"`
	Submitted   time.Time   `json:"submitted"`
	Finished    *time.Time  `json:"finished,omitempty"`
	Stages      []StageInfo `json:"stages,omitempty"`
}

// StageInfo is one stage of GET /api/job/{id}.
type StageInfo struct {
	ID        int        `json:"id"`
	State     string     `json:"state"`
	Inputs    []int      `json:"inputs"`
	Final     bool       `json:"final"`
	Rollbacks int        `json:"rollbacks"`
	Plan      string     `json:"plan"`
	Tasks     []TaskInfo `json:"tasks"`
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
	if !detail {
		return info
	}
	for _, id := range j.order {
		s := j.stages[id]
		plan := physical.Plan(s.plan)
		if s.resolved != nil {
			plan = s.resolved
		}
		si := StageInfo{ID: s.id, State: s.state.String(), Inputs: s.inputs, Final: s.final, Rollbacks: s.rollbacks, Plan: physical.Indent(plan), Tasks: []TaskInfo{}}
		for _, t := range s.tasks {
			si.Tasks = append(si.Tasks, TaskInfo{Partition: t.partition, Attempt: t.attempt, Failures: t.failures, State: t.state.String(), Executor: t.executor, Error: t.lastErr})
		}
		info.Stages = append(info.Stages, si)
	}
	return info
}

func (s *Scheduler) restHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Write([]byte("ok"))
	})
	mux.HandleFunc("GET /api/executors", func(w http.ResponseWriter, r *http.Request) {
		var out []ExecutorInfo
		s.serveJSON(w, r, func(c *core) (any, bool) {
			out = c.executorInfos()
			return out, true
		})
	})
	mux.HandleFunc("GET /api/jobs", func(w http.ResponseWriter, r *http.Request) {
		s.serveJSON(w, r, func(c *core) (any, bool) {
			out := []JobInfo{}
			for _, id := range c.jobOrder {
				out = append(out, c.jobInfo(c.jobs[id], false))
			}
			return out, true
		})
	})
	mux.HandleFunc("GET /api/job/{id}", func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		s.serveJSON(w, r, func(c *core) (any, bool) {
			j := c.jobs[id]
			if j == nil {
				return nil, false
			}
			return c.jobInfo(j, true), true
		})
	})
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
