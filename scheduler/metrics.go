package scheduler

import (
	"context"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/quiverdb/quiver/cache"
)

// metrics are the scheduler's Prometheus metrics. Each Scheduler (and each
// core a test drives) has its own registry, so several schedulers in one
// process never share or collide on a metric.
//
// Two kinds: counters and the duration histogram move when the event loop
// handles an event (the hooks below, called from core on the loop
// goroutine; prometheus types are safe for concurrent use, so the scrape
// reads them from an HTTP goroutine), and the gauges of loop-owned state
// (running jobs, executors, cache entries) are read at scrape time by
// stateCollector, which asks the loop for one snapshot.
type metrics struct {
	reg *prometheus.Registry

	jobsSubmitted prometheus.Counter
	jobsEnded     *prometheus.CounterVec // by outcome: succeeded, failed, cancelled
	jobDuration   *prometheus.HistogramVec
	tasksFailed   prometheus.Counter
	tasksRetried  prometheus.Counter
	stagesRetried prometheus.Counter
	executorsLost prometheus.Counter
	executorsJoin prometheus.Counter
	shuffleWrite  prometheus.Counter
	shuffleRead   prometheus.Counter
	sessions      *prometheus.CounterVec // opened, closed
}

// Job outcomes, the values of the outcome label.
const (
	outcomeSucceeded = "succeeded"
	outcomeFailed    = "failed"
	outcomeCancelled = "cancelled"
)

func newMetrics() *metrics {
	m := &metrics{reg: prometheus.NewRegistry()}
	m.jobsSubmitted = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "quiver_jobs_submitted_total", Help: "Jobs submitted (queries and cache builds).",
	})
	m.jobsEnded = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "quiver_jobs_finished_total", Help: "Jobs that ended, by outcome (succeeded, failed, cancelled).",
	}, []string{"outcome"})
	m.jobDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "quiver_job_duration_seconds", Help: "Time from submit to end of a job, by outcome.",
		Buckets: prometheus.ExponentialBuckets(0.005, 4, 10), // 5ms .. ~22min
	}, []string{"outcome"})
	m.tasksFailed = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "quiver_tasks_failed_total", Help: "Task attempts that failed (fetch failures excluded).",
	})
	m.tasksRetried = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "quiver_tasks_retried_total", Help: "Task attempts queued again after a failure, a lost executor or a fetch failure.",
	})
	m.stagesRetried = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "quiver_stages_retried_total", Help: "Stage rollbacks: completed output lost and recomputed.",
	})
	m.executorsLost = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "quiver_executors_lost_total", Help: "Executors lost (missed heartbeats, failed launches) or deregistered.",
	})
	m.executorsJoin = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "quiver_executors_registered_total", Help: "Executors that registered (re-registrations of a known executor excluded).",
	})
	m.shuffleWrite = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "quiver_shuffle_written_bytes_total", Help: "Bytes of shuffle, result and cache files written by successful tasks.",
	})
	m.shuffleRead = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "quiver_shuffle_read_bytes_total", Help: "Bytes of shuffle files read by the stages that consumed them (counted when the consuming stage completes).",
	})
	m.sessions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "quiver_sessions_total", Help: "Client sessions opened and closed (by the client or idle expiry), by event.",
	}, []string{"event"})
	m.reg.MustRegister(m.jobsSubmitted, m.jobsEnded, m.jobDuration, m.tasksFailed, m.tasksRetried,
		m.stagesRetried, m.executorsLost, m.executorsJoin, m.shuffleWrite, m.shuffleRead, m.sessions)
	// Every outcome exists from the start, so a dashboard's rate() sees 0,
	// not a missing series, before the first failure.
	for _, o := range []string{outcomeSucceeded, outcomeFailed, outcomeCancelled} {
		m.jobsEnded.WithLabelValues(o)
		m.jobDuration.WithLabelValues(o)
	}
	for _, e := range []string{"opened", "closed"} {
		m.sessions.WithLabelValues(e)
	}
	return m
}

// jobEnded counts a job's end; called once per job, when it turns terminal.
func (m *metrics) jobEnded(outcome string, d time.Duration) {
	m.jobsEnded.WithLabelValues(outcome).Inc()
	m.jobDuration.WithLabelValues(outcome).Observe(d.Seconds())
}

// stateCollector reports the gauges of loop-owned state and the cache
// registry's counters at scrape time.
type stateCollector struct {
	s *Scheduler

	jobs, stages, tasks, executors, slots, busySlots       *prometheus.Desc
	cacheEntries, cacheBytes, cacheMaxBytes                *prometheus.Desc
	cacheHits, cacheMisses, cacheBuilds, cacheAborts       *prometheus.Desc
	cacheInval, cacheEvictions, cacheReadBytes, cacheStale *prometheus.Desc
	sessions                                               *prometheus.Desc
}

func newStateCollector(s *Scheduler) *stateCollector {
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(name, help, labels, nil)
	}
	return &stateCollector{
		s:              s,
		jobs:           d("quiver_jobs", "Jobs not ended, by state (queued, running).", "state"),
		stages:         d("quiver_stages", "Stages of jobs not ended, by state.", "state"),
		tasks:          d("quiver_tasks", "Tasks of jobs not ended, by state.", "state"),
		executors:      d("quiver_executors_alive", "Executors registered and alive."),
		slots:          d("quiver_cluster_slots", "Task slots (vcores) of the live executors, summed."),
		busySlots:      d("quiver_cluster_slots_busy", "Task slots of the live executors running a task, summed."),
		sessions:       d("quiver_sessions_open", "Client sessions open."),
		cacheEntries:   d("quiver_cache_entries", "Dataset cache entries, by state (pending, materialized, partial).", "state"),
		cacheBytes:     d("quiver_cache_bytes", "Bytes of the materialized dataset cache entries."),
		cacheMaxBytes:  d("quiver_cache_max_bytes", "The cache's byte cap (0 = none)."),
		cacheHits:      d("quiver_cache_hits_total", "Queries that read a materialized cache entry."),
		cacheMisses:    d("quiver_cache_misses_total", "Cache lookups that found no entry and started a build."),
		cacheBuilds:    d("quiver_cache_builds_total", "Cache entries materialized."),
		cacheAborts:    d("quiver_cache_aborts_total", "Cache builds that failed or were abandoned."),
		cacheStale:     d("quiver_cache_stale_completions_total", "Late build completions refused because the entry had gone."),
		cacheInval:     d("quiver_cache_invalidations_total", "Cache entries removed, by cause.", "cause"),
		cacheEvictions: d("quiver_cache_evictions_total", "Cache entries removed by the eviction sweeper (TTL or byte cap)."),
		cacheReadBytes: d("quiver_cache_read_bytes_total", "Bytes of cache files read back by queries that hit."),
	}
}

func (sc *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{sc.jobs, sc.stages, sc.tasks, sc.executors, sc.slots, sc.busySlots, sc.sessions,
		sc.cacheEntries, sc.cacheBytes, sc.cacheMaxBytes, sc.cacheHits, sc.cacheMisses, sc.cacheBuilds, sc.cacheAborts,
		sc.cacheStale, sc.cacheInval, sc.cacheEvictions, sc.cacheReadBytes} {
		ch <- d
	}
}

// stateSnapshot is what one scrape reads off the loop.
type stateSnapshot struct {
	jobs, stages, tasks    map[string]int
	executors, slots, busy int
	sessions               int
	entries                map[string]int
	maxBytes               int64
	stats                  cache.Stats
}

func (c *core) stateSnapshot() stateSnapshot {
	snap := stateSnapshot{
		jobs:     map[string]int{"queued": 0, "running": 0},
		stages:   map[string]int{},
		tasks:    map[string]int{},
		entries:  map[string]int{"pending": 0, "materialized": 0},
		sessions: len(c.sessions),
		maxBytes: c.cacheMaxBytes,
	}
	for _, st := range []stageState{stageUnresolved, stageRunning, stageSuccessful, stageFailed} {
		snap.stages[st.String()] = 0
	}
	for _, st := range []taskState{taskPending, taskRunning, taskSuccessful, taskFailed} {
		snap.tasks[st.String()] = 0
	}
	for _, id := range c.active {
		j := c.jobs[id]
		if j == nil || j.terminal() {
			continue
		}
		snap.jobs[jobStateName(j.state)]++
		for _, s := range j.stages {
			snap.stages[s.state.String()]++
			for _, t := range s.tasks {
				snap.tasks[t.state.String()]++
			}
		}
	}
	for _, e := range c.executors {
		snap.executors++
		snap.slots += e.vcores
		snap.busy += e.running
	}
	for _, e := range c.caches.List("") {
		snap.entries[entryState(e)]++
	}
	snap.stats = c.caches.Stats()
	return snap
}

// scrapeTimeout bounds how long a scrape waits for the loop.
const scrapeTimeout = 5 * time.Second

func (sc *stateCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	var snap stateSnapshot
	if err := sc.s.inspect(ctx, func(c *core) { snap = c.stateSnapshot() }); err != nil {
		// The loop is gone or stuck: report nothing rather than zeros.
		ch <- prometheus.NewInvalidMetric(sc.executors, err)
		return
	}
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	counter := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
	}
	for k, v := range snap.jobs {
		gauge(sc.jobs, float64(v), k)
	}
	for k, v := range snap.stages {
		gauge(sc.stages, float64(v), k)
	}
	for k, v := range snap.tasks {
		gauge(sc.tasks, float64(v), k)
	}
	gauge(sc.executors, float64(snap.executors))
	gauge(sc.slots, float64(snap.slots))
	gauge(sc.busySlots, float64(snap.busy))
	gauge(sc.sessions, float64(snap.sessions))
	for k, v := range snap.entries {
		gauge(sc.cacheEntries, float64(v), k)
	}
	st := snap.stats
	gauge(sc.cacheBytes, float64(st.Bytes))
	gauge(sc.cacheMaxBytes, float64(snap.maxBytes))
	counter(sc.cacheHits, float64(st.Hits))
	counter(sc.cacheMisses, float64(st.Misses))
	counter(sc.cacheBuilds, float64(st.Materializations))
	counter(sc.cacheAborts, float64(st.Aborts))
	counter(sc.cacheStale, float64(st.StaleCompletions))
	counter(sc.cacheReadBytes, float64(st.BytesRead))
	for i, n := range st.Invalidations {
		counter(sc.cacheInval, float64(n), cache.Cause(i).String())
	}
	counter(sc.cacheEvictions, float64(st.Invalidations[cache.CauseEvicted]))
}

// metricsHandler serves the scheduler's registry in the Prometheus text
// (or negotiated) format.
func (s *Scheduler) metricsHandler() http.Handler {
	return promhttp.HandlerFor(s.core.m.reg, promhttp.HandlerOpts{Registry: s.core.m.reg})
}

// Registry is the scheduler's Prometheus registry (its /metrics), for
// embedding processes that serve metrics themselves.
func (s *Scheduler) Registry() *prometheus.Registry { return s.core.m.reg }
