package scheduler

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/quiverdb/quiver/executor"
	logicalcodec "github.com/quiverdb/quiver/logical/codec"
	"github.com/quiverdb/quiver/rpc"
	"github.com/quiverdb/quiver/sql"
)

// scrape reads a Prometheus text exposition into "name{labels}" → value.
func scrape(t *testing.T, url string) map[string]float64 {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("metric line %q: %v", line, err)
		}
		out[line[:i]] = v
	}
	return out
}

func restCall(t *testing.T, method, url string, out any) int {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode == 200 && out != nil {
		if err := json.Unmarshal(body, out); err != nil {
			t.Fatalf("%s %s: %v in %s", method, url, err, body)
		}
	}
	return resp.StatusCode
}

// submitSQL plans text against cat and submits it with its text.
func (c *cluster) submitSQL(t *testing.T, ctx context.Context, sess, text string, settings map[string]string) string {
	t.Helper()
	lp, err := sql.NewPlanner(tpchCatalog(t)).PlanQuery(text)
	if err != nil {
		t.Fatal(err)
	}
	b, err := logicalcodec.Encode(lp)
	if err != nil {
		t.Fatal(err)
	}
	r, err := c.client.ExecuteQuery(ctx, &rpc.ExecuteQueryRequest{SessionId: sess, LogicalPlan: b, Sql: text, Settings: settings})
	if err != nil {
		t.Fatal(err)
	}
	return r.JobId
}

// A cross join of lineitem with itself that filters everything out: it
// runs for minutes, long enough to be cancelled while running.
const longSQL = "SELECT count(*) FROM lineitem a, lineitem b WHERE a.l_orderkey + b.l_orderkey < 0"

// TestOpsMetricsAndREST runs a workload on a scheduler with two executors —
// one query that succeeds, one cancelled through DELETE /api/job/{id} while
// running, one that fails — and checks that the counters in /metrics moved
// by exactly what the REST view of the same jobs says happened, that jobs
// carry SQL text, timings and rows, and that the dot graph, sessions and
// cancel routes answer.
func TestOpsMetricsAndREST(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	t.Cleanup(func() { mem.AssertSize(t, 0) }) // after the cluster's cleanup
	c := startCluster(t, ctx, Config{RestAddr: "127.0.0.1:0"}, 2, mem)
	base := "http://" + c.sched.RestAddr()
	sess := c.session(t, ctx, map[string]string{"quiver.target_partitions": "3"})

	okSQL := "SELECT l_returnflag, count(*) AS n FROM lineitem GROUP BY l_returnflag"
	okID := c.submitSQL(t, ctx, sess, okSQL, nil)
	st := c.watch(t, ctx, okID)
	if st.State != rpc.JobState_JOB_SUCCESSFUL {
		t.Fatalf("job %s: %s", st.State, st.Error)
	}
	_, batches := fetchResult(t, ctx, mem, st)
	var rows int64
	for _, b := range batches {
		rows += b.NumRows()
		b.Release()
	}

	badID := c.submitSQL(t, ctx, sess, "SELECT 1 FROM region", map[string]string{"quiver.batch_size": "-5"})
	if st := c.watch(t, ctx, badID); st.State != rpc.JobState_JOB_FAILED {
		t.Fatalf("bad settings: job %s, want failed", st.State)
	}

	longID := c.submitSQL(t, ctx, sess, longSQL, nil)
	waitFor(t, ctx, "the long job to run a task", func() bool {
		var j JobInfo
		restCall(t, "GET", base+"/api/job/"+longID, &j)
		for _, s := range j.Stages {
			for _, tk := range s.Tasks {
				if tk.State == "running" {
					return true
				}
			}
		}
		return false
	})
	var ci CancelInfo
	if code := restCall(t, "DELETE", base+"/api/job/"+longID, &ci); code != 200 || !ci.Cancelled || ci.State != "cancelled" {
		t.Fatalf("DELETE /api/job/%s: %d %+v", longID, code, ci)
	}
	if st := c.watch(t, ctx, longID); st.State != rpc.JobState_JOB_CANCELLED {
		t.Fatalf("cancelled job ended %s", st.State)
	}
	if code := restCall(t, "DELETE", base+"/api/job/"+longID, &ci); code != 200 || ci.Cancelled {
		t.Errorf("second DELETE: %d %+v, want 200 and cancelled=false", code, ci)
	}
	if code := restCall(t, "DELETE", base+"/api/job/no-such-job", nil); code != 404 {
		t.Errorf("DELETE of an unknown job: %d, want 404", code)
	}
	// The executors' slots come back at once; the tasks themselves stop
	// soon after, as each executor's own metrics tell.
	var ex []ExecutorInfo
	restCall(t, "GET", base+"/api/executors", &ex)
	for _, e := range ex {
		if e.RunningTasks != 0 {
			t.Errorf("executor %s: %d running tasks after the cancel", e.ID, e.RunningTasks)
		}
	}
	waitFor(t, ctx, "the cancelled tasks to stop", func() bool {
		running := 0.0
		for _, e := range c.execs {
			running += gauge(t, e.Registry(), "quiver_executor_tasks_running")
		}
		return running == 0
	})

	// The REST view of the jobs.
	var jobs []JobInfo
	restCall(t, "GET", base+"/api/jobs", &jobs)
	if len(jobs) != 3 {
		t.Fatalf("%d jobs, want 3", len(jobs))
	}
	var okJob JobInfo
	restCall(t, "GET", base+"/api/job/"+okID, &okJob)
	if okJob.SQL != okSQL || okJob.Rows == nil || *okJob.Rows != rows || rows != 3 {
		t.Errorf("job: sql %q rows %v; want %q and %d rows", okJob.SQL, okJob.Rows, okSQL, rows)
	}
	if okJob.Started == nil || okJob.Finished == nil || okJob.Started.Before(okJob.Submitted) || okJob.Finished.Before(*okJob.Started) ||
		okJob.ElapsedMS != okJob.Finished.Sub(okJob.Submitted).Milliseconds() {
		t.Errorf("job timings: submitted %v started %v finished %v elapsed %dms", okJob.Submitted, okJob.Started, okJob.Finished, okJob.ElapsedMS)
	}
	if len(okJob.Stages) < 2 {
		t.Fatalf("the grouped query ran as %d stages on two executors, want an exchange", len(okJob.Stages))
	}

	// Bytes written are every task's files; bytes read are the inputs of
	// every stage that completed.
	var written, read int64
	var details []JobInfo
	for _, id := range []string{okID, badID, longID} {
		var j JobInfo
		restCall(t, "GET", base+"/api/job/"+id, &j)
		details = append(details, j)
		byID := map[int]StageInfo{}
		for _, s := range j.Stages {
			byID[s.ID] = s
			written += s.Bytes
		}
		for _, s := range j.Stages {
			if s.State == "successful" {
				for _, in := range s.Inputs {
					read += byID[in].Bytes
				}
			}
		}
	}
	if written == 0 || read == 0 {
		t.Fatalf("the workload wrote %d and read %d shuffle bytes", written, read)
	}

	m := scrape(t, base+"/metrics")
	want := map[string]float64{
		`quiver_jobs_submitted_total`:                            3,
		`quiver_jobs_finished_total{outcome="succeeded"}`:        1,
		`quiver_jobs_finished_total{outcome="failed"}`:           1,
		`quiver_jobs_finished_total{outcome="cancelled"}`:        1,
		`quiver_job_duration_seconds_count{outcome="succeeded"}`: 1,
		`quiver_job_duration_seconds_count{outcome="cancelled"}`: 1,
		`quiver_jobs{state="running"}`:                           0,
		`quiver_executors_alive`:                                 2,
		`quiver_cluster_slots`:                                   4,
		`quiver_cluster_slots_busy`:                              0,
		`quiver_executors_registered_total`:                      2,
		`quiver_executors_lost_total`:                            0,
		`quiver_sessions_total{event="opened"}`:                  1,
		`quiver_sessions_open`:                                   1,
		`quiver_shuffle_written_bytes_total`:                     float64(written),
		`quiver_shuffle_read_bytes_total`:                        float64(read),
		`quiver_tasks_failed_total`:                              0,
		`quiver_cache_entries{state="materialized"}`:             0,
		`quiver_cache_hits_total`:                                0,
		`quiver_cache_invalidations_total{cause="evicted"}`:      0,
	}
	for k, v := range want {
		got, ok := m[k]
		if !ok {
			t.Errorf("/metrics has no %s", k)
			continue
		}
		if got != v {
			t.Errorf("%s = %v, want %v", k, got, v)
		}
	}
	// The histogram's sum is the jobs' durations as REST reports them.
	if d := m[`quiver_job_duration_seconds_sum{outcome="succeeded"}`]; d <= 0 || d*1000 < float64(details[0].ElapsedMS)-1 || d*1000 > float64(details[0].ElapsedMS)+1 {
		t.Errorf("succeeded duration sum %vs, REST elapsed %dms", d, details[0].ElapsedMS)
	}

	// The stage graph: one node per stage, one edge per input.
	resp, err := http.Get(base + "/api/job/" + okID + "/dot")
	if err != nil {
		t.Fatal(err)
	}
	dot, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.HasPrefix(string(dot), "digraph ") || resp.Header.Get("Content-Type") != "text/vnd.graphviz; charset=utf-8" {
		t.Errorf("dot: %s\n%s", resp.Header.Get("Content-Type"), dot)
	}
	var edges, wantEdges []string
	for _, line := range strings.Split(string(dot), "\n") {
		if strings.Contains(line, "->") {
			edges = append(edges, strings.TrimSpace(line))
		}
	}
	for _, s := range okJob.Stages {
		if !strings.Contains(string(dot), fmt.Sprintf("s%d [label=\"stage %d\\nsuccessful", s.ID, s.ID)) {
			t.Errorf("dot has no successful node for stage %d:\n%s", s.ID, dot)
		}
		for _, in := range s.Inputs {
			wantEdges = append(wantEdges, fmt.Sprintf("s%d -> s%d;", in, s.ID))
		}
	}
	sort.Strings(edges)
	sort.Strings(wantEdges)
	if !slices.Equal(edges, wantEdges) || len(edges) == 0 {
		t.Errorf("dot edges %v, want %v", edges, wantEdges)
	}
	if code := restCall(t, "GET", base+"/api/job/nope/dot", nil); code != 404 {
		t.Errorf("dot of an unknown job: %d", code)
	}

	// Heartbeats carry each executor's task memory: its limit, and nothing
	// held once its tasks have ended.
	waitFor(t, ctx, "heartbeats with the executors' memory", func() bool {
		var ex []ExecutorInfo
		restCall(t, "GET", base+"/api/executors", &ex)
		for _, e := range ex {
			if e.MemoryLimit != executor.DefaultMemoryLimit() || e.MemoryReserved != 0 {
				return false
			}
		}
		return len(ex) == 2
	})

	var sessions []SessionInfo
	restCall(t, "GET", base+"/api/sessions", &sessions)
	if len(sessions) != 1 || sessions[0].ID != sess || sessions[0].Jobs != 3 || sessions[0].RunningJobs != 0 ||
		!slices.Equal(sessions[0].Settings, []string{"quiver.target_partitions=3"}) {
		t.Errorf("sessions: %+v", sessions)
	}
	if _, err := c.client.CloseSession(ctx, &rpc.CloseSessionRequest{SessionId: sess}); err != nil {
		t.Fatal(err)
	}
	m = scrape(t, base+"/metrics")
	if m[`quiver_sessions_total{event="closed"}`] != 1 || m[`quiver_sessions_open`] != 0 {
		t.Errorf("after close: closed %v open %v", m[`quiver_sessions_total{event="closed"}`], m[`quiver_sessions_open`])
	}
}

// gauge reads one unlabelled gauge from a registry.
func gauge(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.GetMetric()) == 1 {
			return mf.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatalf("no gauge %s", name)
	return 0
}

func waitFor(t *testing.T, ctx context.Context, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %s", what)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// TestOpenAPIDescribesEveryRoute: every API route the scheduler serves is
// in /api/openapi.json with its method, and the description names no route
// that is not served.
func TestOpenAPIDescribesEveryRoute(t *testing.T) {
	s, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	mux := s.restHandler().(*routeMux)
	served := slices.Clone(mux.patterns)
	var doc struct {
		OpenAPI string                               `json:"openapi"`
		Paths   map[string]map[string]map[string]any `json:"paths"`
	}
	if err := json.Unmarshal(openAPIJSON, &doc); err != nil {
		t.Fatalf("openapi.json: %v", err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.") {
		t.Errorf("openapi version %q", doc.OpenAPI)
	}
	var described []string
	for path, ops := range doc.Paths {
		for method, op := range ops {
			described = append(described, strings.ToUpper(method)+" "+path)
			if _, ok := op["responses"]; !ok {
				t.Errorf("%s %s has no responses", method, path)
			}
		}
	}
	sort.Strings(served)
	sort.Strings(described)
	if !slices.Equal(served, described) {
		t.Errorf("served routes:\n  %s\ndescribed:\n  %s", strings.Join(served, "\n  "), strings.Join(described, "\n  "))
	}
}

// TestDrainDeregisterShutdown drives the loop: a draining executor gets no
// new task, a deregistered one is forgotten at once (its tasks placed
// again), and a shutting-down scheduler refuses jobs and then fails the
// ones still running.
func TestDrainDeregisterShutdown(t *testing.T) {
	h := newHarness(t, Config{})
	h.register("ex1", 2)
	h.register("ex2", 2)
	if !h.ask(evDrain{executorID: "ex1", reply: make(chan bool, 1)}) {
		t.Fatal("drain: ex1 unknown")
	}
	h.submit("j1", chain("j1"))
	for _, l := range launched(h.acts) {
		if strings.Contains(l, "@ex1") {
			t.Errorf("task %s placed on the draining executor", l)
		}
	}
	if got := launched(h.acts); len(got) != 2 {
		t.Fatalf("launched %v, want stage 1's two tasks on ex2", got)
	}
	if !h.ask(evDeregister{executorID: "ex2", reply: make(chan bool, 1)}) {
		t.Fatal("deregister: ex2 unknown")
	}
	if _, ok := h.c.executors["ex2"]; ok {
		t.Fatal("ex2 still registered")
	}
	if h.ask(evDeregister{executorID: "ex2", reply: make(chan bool, 1)}) {
		t.Error("a second deregister found ex2")
	}
	for p := range 2 {
		if tk := h.task("j1", 1, p); tk.state != taskPending || tk.attempt != 1 {
			t.Errorf("task 1/%d: %s attempt %d, want pending again", p, tk.state, tk.attempt)
		}
	}
	m := gatherAll(t, h.c.m.reg)
	if m["quiver_executors_lost_total"] != 1 || m["quiver_tasks_retried_total"] != 2 || m["quiver_executors_registered_total"] != 2 {
		t.Errorf("metrics: lost %v retried %v registered %v", m["quiver_executors_lost_total"], m["quiver_tasks_retried_total"], m["quiver_executors_registered_total"])
	}

	reply := make(chan int, 1)
	h.send(evShutdown{reply: reply})
	if n := <-reply; n != 1 {
		t.Errorf("shutdown: %d jobs running, want 1", n)
	}
	sub := make(chan error, 1)
	h.send(evSubmit{jobID: "j2", session: "s", reply: sub})
	if err := <-sub; err != errShuttingDown {
		t.Errorf("submit while shutting down: %v", err)
	}
	h.send(evShutdown{failAll: true, reply: reply})
	if n := <-reply; n != 0 {
		t.Errorf("after failing all: %d running", n)
	}
	if j := h.c.jobs["j1"]; j.state != rpc.JobState_JOB_FAILED || !strings.Contains(j.errMsg, "shut down") {
		t.Errorf("j1: %s %q", j.state, j.errMsg)
	}
	m = gatherAll(t, h.c.m.reg)
	if m[`quiver_jobs_finished_total{outcome="failed"}`] != 1 || m["quiver_jobs_submitted_total"] != 1 {
		t.Errorf("metrics: failed %v submitted %v", m[`quiver_jobs_finished_total{outcome="failed"}`], m["quiver_jobs_submitted_total"])
	}
}

func (h *harness) ask(ev any) bool {
	h.t.Helper()
	h.send(ev)
	switch e := ev.(type) {
	case evDrain:
		return <-e.reply
	case evDeregister:
		return <-e.reply
	}
	h.t.Fatalf("ask %T", ev)
	return false
}

// gatherAll reads a registry's counters and gauges as "name{labels}" → value
// (only the counters and gauges of the registry's own metrics; no scrape).
func gatherAll(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			key := mf.GetName()
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			if len(labels) > 0 {
				key += "{" + strings.Join(labels, ",") + "}"
			}
			switch {
			case m.GetCounter() != nil:
				out[key] = m.GetCounter().GetValue()
			case m.GetGauge() != nil:
				out[key] = m.GetGauge().GetValue()
			}
		}
	}
	return out
}

// TestLaunchRacingDrain: a launch the executor refuses because it drains
// puts the tasks back without a failure and marks the executor draining,
// so they go to the other executor.
func TestLaunchRacingDrain(t *testing.T) {
	h := newHarness(t, Config{})
	h.register("ex1", 2)
	h.register("ex2", 2)
	h.submit("j1", chain("j1"))
	launches := ofType[actLaunch](h.acts)
	if len(launches) != 1 || launches[0].executorID != "ex1" {
		t.Fatalf("launches %v, want one to ex1 (bias)", launched(h.acts))
	}
	var ids []*rpc.TaskId
	for _, td := range launches[0].tasks {
		ids = append(ids, td.Id)
	}
	acts := h.send(evLaunchFailed{executorID: "ex1", tasks: ids, err: fmt.Errorf("draining"), draining: true})
	if got := launched(acts); !slices.Equal(got, []string{"1/0@ex2#1", "1/1@ex2#1"}) {
		t.Errorf("relaunched %v, want both tasks on ex2", got)
	}
	for p := range 2 {
		if tk := h.task("j1", 1, p); tk.failures != 0 {
			t.Errorf("task 1/%d counted %d failures", p, tk.failures)
		}
	}
	if ex := h.c.executors["ex1"]; ex == nil || !ex.draining || ex.launchFailures != 0 {
		t.Errorf("ex1: %+v, want draining with no launch failure", ex)
	}
}

func TestClipSQL(t *testing.T) {
	if got := clipSQL("SELECT 1"); got != "SELECT 1" {
		t.Errorf("short text changed: %q", got)
	}
	long := strings.Repeat("é", maxSQLText) // two bytes each: the cut falls inside one at first
	got := clipSQL(long)
	body, ok := strings.CutSuffix(got, " …(cut)")
	if !ok || len(body) > maxSQLText || !utf8.ValidString(body) || len(body) < maxSQLText-1 {
		t.Errorf("clipped to %d bytes (valid %v, marked %v)", len(body), utf8.ValidString(body), ok)
	}
}

// TestOpenAPISchemasMatchJSON: each schema of the description names
// exactly the JSON fields of the Go type the API encodes, so neither can
// drift from the other.
func TestOpenAPISchemasMatchJSON(t *testing.T) {
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Properties map[string]any `json:"properties"`
				Required   []string       `json:"required"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(openAPIJSON, &doc); err != nil {
		t.Fatal(err)
	}
	types := map[string]reflect.Type{
		"Executor": reflect.TypeFor[ExecutorInfo](), "Job": reflect.TypeFor[JobInfo](), "Stage": reflect.TypeFor[StageInfo](),
		"Task": reflect.TypeFor[TaskInfo](), "CacheEvent": reflect.TypeFor[CacheEventInfo](), "Caches": reflect.TypeFor[CachesInfo](),
		"CacheEntry": reflect.TypeFor[CacheEntryInfo](), "CacheStats": reflect.TypeFor[CacheStatsInfo](),
		"Session": reflect.TypeFor[SessionInfo](), "Cancel": reflect.TypeFor[CancelInfo](),
		"Operator": reflect.TypeFor[OperatorInfo](),
	}
	if len(types) != len(doc.Components.Schemas) {
		t.Errorf("%d schemas described, %d types checked", len(doc.Components.Schemas), len(types))
	}
	for name, typ := range types {
		schema, ok := doc.Components.Schemas[name]
		if !ok {
			t.Errorf("no schema %s", name)
			continue
		}
		var fields, props, required []string
		for f := range typ.Fields() {
			tag, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
			fields = append(fields, tag)
			if !strings.Contains(opts, "omitempty") && f.Type.Kind() != reflect.Pointer {
				required = append(required, tag)
			}
		}
		for p := range schema.Properties {
			props = append(props, p)
		}
		sort.Strings(fields)
		sort.Strings(props)
		sort.Strings(required)
		sort.Strings(schema.Required)
		if !slices.Equal(fields, props) {
			t.Errorf("schema %s has properties %v; %s encodes %v", name, props, typ.Name(), fields)
		}
		if !slices.Equal(required, schema.Required) {
			t.Errorf("schema %s requires %v; %s always encodes %v", name, schema.Required, typ.Name(), required)
		}
	}
}
