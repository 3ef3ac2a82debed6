package scheduler

import (
	_ "embed"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/quiverdb/quiver/auth"
	"github.com/quiverdb/quiver/rpc"
)

// The operator's REST routes: cancel, the stage graph as Graphviz, sessions,
// the OpenAPI description and Prometheus metrics. The web UI's files are
// served by ui.go.

// routeMux is a ServeMux that remembers the patterns of the API routes, so
// a test can check them against the OpenAPI description.
type routeMux struct {
	*http.ServeMux
	patterns []string
}

func (m *routeMux) HandleFunc(pattern string, h func(http.ResponseWriter, *http.Request)) {
	m.patterns = append(m.patterns, pattern)
	m.ServeMux.HandleFunc(pattern, h)
}

func (m *routeMux) Handle(pattern string, h http.Handler) {
	m.patterns = append(m.patterns, pattern)
	m.ServeMux.Handle(pattern, h)
}

//go:embed openapi.json
var openAPIJSON []byte

// jobTimes fills a job's SQL text, start, elapsed time and row count.
func (c *core) jobTimes(j *job, info *JobInfo) {
	info.SQL = j.sql
	if !j.started.IsZero() {
		st := j.started
		info.Started = &st
	}
	end := j.finished
	if end.IsZero() {
		end = c.now()
	}
	info.ElapsedMS = end.Sub(j.submitted).Milliseconds()
	if j.state == rpc.JobState_JOB_SUCCESSFUL {
		n := jobRows(j)
		info.Rows = &n
	}
}

// SessionInfo is one session in GET /api/sessions.
type SessionInfo struct {
	ID          string    `json:"id"`
	Created     time.Time `json:"created"`
	LastUsed    time.Time `json:"last_used"`
	Jobs        int       `json:"jobs"`         // jobs the scheduler still remembers
	RunningJobs int       `json:"running_jobs"` // jobs not ended
	Caches      int       `json:"caches"`       // cache entries it owns
	Settings    []string  `json:"settings"`     // the settings it was created with, "name=value"
}

func (c *core) sessionInfos() []SessionInfo {
	out := []SessionInfo{}
	byID := map[string]*SessionInfo{}
	for _, id := range sortedKeys(c.sessions) {
		s := c.sessions[id]
		out = append(out, SessionInfo{ID: id, Created: s.created, LastUsed: s.lastUsed, Settings: []string{}})
	}
	for i := range out {
		byID[out[i].ID] = &out[i]
		for k, v := range c.sessions[out[i].ID].settings.Wire() {
			out[i].Settings = append(out[i].Settings, k+"="+v)
		}
		sort.Strings(out[i].Settings)
	}
	for _, id := range c.jobOrder {
		j := c.jobs[id]
		if si := byID[j.session]; si != nil {
			si.Jobs++
			if !j.terminal() {
				si.RunningJobs++
			}
		}
	}
	for _, e := range c.caches.List("") {
		if si := byID[e.Key.SessionID]; si != nil {
			si.Caches++
		}
	}
	return out
}

// jobDot renders j's stage graph in Graphviz: one node per stage (its
// state and task progress), an edge from each input stage to its consumer.
func (c *core) jobDot(j *job) string {
	var b strings.Builder
	fmt.Fprintf(&b, "digraph %q {\n  rankdir=BT;\n  node [shape=box, style=rounded];\n", "job "+j.id)
	for _, id := range j.order {
		s := j.stages[id]
		done := 0
		for _, t := range s.tasks {
			if t.state == taskSuccessful {
				done++
			}
		}
		label := fmt.Sprintf("stage %d\\n%s\\n%d/%d tasks", s.id, s.state, done, len(s.tasks))
		if s.final {
			label += "\\nfinal"
		}
		fmt.Fprintf(&b, "  s%d [label=\"%s\", color=%q];\n", s.id, label, stageColor(s.state))
	}
	for _, id := range j.order {
		for _, in := range j.stages[id].inputs {
			fmt.Fprintf(&b, "  s%d -> s%d;\n", in, id)
		}
	}
	b.WriteString("}\n")
	return b.String()
}

func stageColor(st stageState) string {
	switch st {
	case stageRunning:
		return "blue"
	case stageSuccessful:
		return "darkgreen"
	case stageFailed:
		return "red"
	}
	return "gray"
}

// CancelInfo is the answer of DELETE /api/job/{id}: cancelled is false
// when the job had already ended.
type CancelInfo struct {
	ID        string `json:"id"`
	Cancelled bool   `json:"cancelled"`
	State     string `json:"state"`
}

func (s *Scheduler) opsRoutes(mux *routeMux) {
	mux.HandleFunc("DELETE /api/job/{id}", func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		if err := s.visibleJob(r.Context(), "cancel job", id); err != nil {
			http.Error(w, fmt.Sprintf("scheduler: cancel job: unknown job %q", id), http.StatusNotFound)
			return
		}
		reply := make(chan cancelReply, 1)
		cr, err := ask(r.Context(), s, evCancel{jobID: id, reply: reply}, reply)
		if err != nil {
			http.Error(w, "scheduler: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		if !cr.found {
			http.Error(w, fmt.Sprintf("scheduler: cancel job: unknown job %q", id), http.StatusNotFound)
			return
		}
		s.serveJSON(w, r, func(c *core) (any, bool) {
			j := c.jobs[id]
			if j == nil {
				return nil, false
			}
			return CancelInfo{ID: id, Cancelled: cr.cancelled, State: jobStateName(j.state)}, true
		})
	})
	mux.HandleFunc("GET /api/job/{id}/dot", func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		var dot string
		found := false
		caller := auth.IdentityFrom(r.Context())
		if err := s.inspect(r.Context(), func(c *core) {
			if j := c.jobs[id]; canSeeJob(caller, j) {
				dot, found = c.jobDot(j), true
			}
		}); err != nil {
			http.Error(w, "scheduler: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		if !found {
			http.Error(w, "scheduler: not found", http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "text/vnd.graphviz; charset=utf-8")
		w.Write([]byte(dot))
	})
	mux.HandleFunc("GET /api/sessions", func(w http.ResponseWriter, r *http.Request) {
		caller := auth.IdentityFrom(r.Context())
		s.serveJSON(w, r, func(c *core) (any, bool) {
			var out []SessionInfo
			for _, si := range c.sessionInfos() {
				if t, _ := c.sessionTenant(si.ID); caller.CanSee(t) {
					out = append(out, si)
				}
			}
			if out == nil {
				out = []SessionInfo{}
			}
			return out, true
		})
	})
	mux.HandleFunc("GET /api/openapi.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(openAPIJSON)
	})
	mux.Handle("GET /metrics", s.metricsHandler())
	s.uiRoutes(mux.ServeMux)
}
