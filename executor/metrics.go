package executor

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/quiverdb/quiver/qerr"
	"github.com/quiverdb/quiver/rpc"
)

// metrics are one executor's Prometheus metrics, on a registry of its own
// (several executors share a process in tests and in standalone mode).
// Counters move where the work happens; the gauges of the task table and
// of task memory are read at scrape time under Executor.mu.
type metrics struct {
	reg          *prometheus.Registry
	tasks        *prometheus.CounterVec // by outcome
	taskDuration prometheus.Histogram
	written      prometheus.Counter
	inline       prometheus.Counter
	served       prometheus.Counter
	servedFiles  prometheus.Counter
	fetched      prometheus.Counter
	fetchSeconds prometheus.Histogram
	fetchErrors  prometheus.Counter
}

// Task outcomes, the values of quiver_executor_tasks_total's label.
const (
	taskSucceeded = "succeeded"
	taskFailed    = "failed"
	taskCancelled = "cancelled"
)

func newMetrics(e *Executor) *metrics {
	m := &metrics{reg: prometheus.NewRegistry()}
	m.tasks = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "quiver_executor_tasks_total", Help: "Tasks this executor ran to an end, by outcome (succeeded, failed, cancelled).",
	}, []string{"outcome"})
	m.taskDuration = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "quiver_executor_task_duration_seconds", Help: "Time from a task's start on a worker to its end.",
		Buckets: prometheus.ExponentialBuckets(0.001, 4, 10), // 1ms .. ~4min
	})
	m.written = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "quiver_executor_shuffle_written_bytes_total", Help: "Bytes of shuffle, result and cache files written by tasks that succeeded here.",
	})
	m.inline = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "quiver_executor_inline_result_bytes_total", Help: "Bytes of small results that tasks here sent with their status instead of writing a file (quiver.shuffle_inline_bytes).",
	})
	m.served = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "quiver_executor_flight_served_bytes_total", Help: "Bytes of shuffle files sent to readers over Flight DoGet.",
	})
	m.servedFiles = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "quiver_executor_flight_served_files_total", Help: "Shuffle files sent whole over Flight DoGet.",
	})
	m.fetched = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "quiver_executor_shuffle_read_bytes_total", Help: "Bytes of shuffle files this executor's tasks fetched from other executors over Flight (as their writers reported them).",
	})
	m.fetchSeconds = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "quiver_executor_flight_fetch_seconds", Help: "Time to fetch one shuffle file over Flight, from DoGet to its last batch.",
		Buckets: prometheus.ExponentialBuckets(0.0005, 4, 10), // 0.5ms .. ~2min
	})
	m.fetchErrors = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "quiver_executor_flight_fetch_errors_total", Help: "Flight fetches that failed.",
	})
	m.reg.MustRegister(m.tasks, m.taskDuration, m.written, m.inline, m.served, m.servedFiles, m.fetched, m.fetchSeconds, m.fetchErrors,
		&tableCollector{e: e}, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	for _, o := range []string{taskSucceeded, taskFailed, taskCancelled} {
		m.tasks.WithLabelValues(o)
	}
	return m
}

// observeFetch records one Flight fetch; bytes is what the file's writer
// reported, counted only when the fetch reached the end.
func (m *metrics) observeFetch(d time.Duration, bytes int64, err error) {
	if err != nil {
		m.fetchErrors.Inc()
		return
	}
	m.fetchSeconds.Observe(d.Seconds())
	m.fetched.Add(float64(bytes))
}

// tableCollector reads the task table and task memory at scrape time.
type tableCollector struct{ e *Executor }

var (
	descRunning  = prometheus.NewDesc("quiver_executor_tasks_running", "Tasks running now.", nil, nil)
	descQueued   = prometheus.NewDesc("quiver_executor_tasks_queued", "Tasks launched here and waiting for a slot.", nil, nil)
	descSlots    = prometheus.NewDesc("quiver_executor_slots", "Task slots (vcores).", nil, nil)
	descDraining = prometheus.NewDesc("quiver_executor_draining", "1 while the executor drains before leaving.", nil, nil)
	descReserved = prometheus.NewDesc("quiver_executor_memory_reserved_bytes", "Memory the running tasks' operators hold together (the executor's memory pool).", nil, nil)
	descLimit    = prometheus.NewDesc("quiver_executor_memory_limit_bytes", "The executor's memory limit for all its tasks together (--memory-limit; 0 = none).", nil, nil)
)

func (c *tableCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descRunning, descQueued, descSlots, descDraining, descReserved, descLimit} {
		ch <- d
	}
}

func (c *tableCollector) Collect(ch chan<- prometheus.Metric) {
	e := c.e
	e.mu.Lock()
	running, queued, draining := len(e.running), len(e.queue), e.draining
	e.mu.Unlock()
	reserved, limit := e.pool.Current(), e.pool.Limit()
	g := func(d *prometheus.Desc, v float64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v)
	}
	g(descRunning, float64(running))
	g(descQueued, float64(queued))
	g(descSlots, float64(e.cfg.VCores))
	d := 0.0
	if draining {
		d = 1
	}
	g(descDraining, d)
	g(descReserved, float64(reserved))
	g(descLimit, float64(limit))
}

// Registry is the executor's Prometheus registry (what --metrics-bind serves).
func (e *Executor) Registry() *prometheus.Registry { return e.m.reg }

// startMetrics serves /metrics and /healthz on cfg.MetricsAddr, when set.
// The server's goroutine is owned by the Executor (e.wg); Close shuts it.
// e.mu is held.
func (e *Executor) startMetrics() error {
	if e.cfg.MetricsAddr == "" {
		return nil
	}
	lis, err := net.Listen("tcp", e.cfg.MetricsAddr)
	if err != nil {
		return qerr.IOf("executor: listening for metrics on %s: %w", e.cfg.MetricsAddr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(e.m.reg, promhttp.HandlerOpts{Registry: e.m.reg}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		// Healthy while serving and registered; a draining executor says
		// so, so that a readiness probe takes it out of rotation.
		e.mu.Lock()
		st, draining := e.state, e.draining
		e.mu.Unlock()
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		switch {
		case st != started:
			http.Error(w, "stopped", http.StatusServiceUnavailable)
		case draining:
			http.Error(w, "draining", http.StatusServiceUnavailable)
		default:
			w.Write([]byte("ok"))
		}
	})
	open := func(r *http.Request) bool { return r.URL.Path == "/healthz" }
	srv := &http.Server{Handler: e.cfg.AuthToken.HTTP(mux, open), ReadHeaderTimeout: 10 * time.Second}
	e.metricsSrv, e.metricsLis = srv, lis
	e.wg.Add(1)
	go func() { // owner: Executor; ends when Close shuts the server
		defer e.wg.Done()
		defer func() {
			if r := recover(); r != nil {
				e.log.l.Error("metrics server panicked", "panic", r)
			}
		}()
		if err := srv.Serve(e.cfg.TLS.Listener(lis)); err != nil && !errors.Is(err, http.ErrServerClosed) {
			e.log.error("metrics server stopped", err)
		}
	}()
	return nil
}

// MetricsAddr is the address /metrics is served on ("" when off).
func (e *Executor) MetricsAddr() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.metricsLis == nil {
		return ""
	}
	return e.metricsLis.Addr().String()
}

func (e *Executor) stopMetrics(srv *http.Server) {
	if srv == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		srv.Close()
	}
}

// observeTask counts a finished task by outcome, its time, and the bytes
// it wrote when it succeeded.
func (e *Executor) observeTask(st *rpc.TaskStatus, d time.Duration) {
	switch st.GetState() {
	case rpc.TaskState_TASK_SUCCESSFUL:
		e.m.tasks.WithLabelValues(taskSucceeded).Inc()
		var n, inline int64
		for _, l := range st.GetLocations() {
			if len(l.GetInline()) > 0 {
				inline += l.GetBytes()
			} else {
				n += l.GetBytes()
			}
		}
		e.m.written.Add(float64(n))
		e.m.inline.Add(float64(inline))
	case rpc.TaskState_TASK_CANCELLED:
		e.m.tasks.WithLabelValues(taskCancelled).Inc()
	default:
		e.m.tasks.WithLabelValues(taskFailed).Inc()
	}
	e.m.taskDuration.Observe(d.Seconds())
}
