package scheduler

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/quiverdb/quiver/auth"
	"github.com/quiverdb/quiver/cache"
	"github.com/quiverdb/quiver/qerr"
)

// Config configures a Scheduler. Zero fields take the defaults below.
type Config struct {
	// BindAddr is the gRPC host:port (port 0 picks a free port).
	BindAddr string
	// RestAddr is the REST host:port; "" serves no REST.
	RestAddr string
	// Policy places tasks on executors: "bias" (default: fill one
	// executor's slots before the next), "round_robin", or "locality"
	// (prefer the executor holding most of a task's input bytes).
	Policy string
	// HeartbeatTimeout: an executor not heard from for this long is lost
	// (default 10s).
	HeartbeatTimeout time.Duration
	// FinalStageCleanupDelay: how long a successful job's result files stay
	// on the executors for the client to fetch (default 60s).
	FinalStageCleanupDelay time.Duration
	// ExecutorGracePeriod: jobs waiting while no executor at all is alive
	// fail after this (default 30s).
	ExecutorGracePeriod time.Duration
	// TaskRetries is how often one task is retried after a retryable
	// failure; StageRetries how often one stage may be rolled back
	// (recomputing lost output). Defaults 4 and 4; a negative value means 0.
	TaskRetries, StageRetries int
	// Pinned lists extra (job_id, stage_id as decimal or cache.AllStages)
	// pairs that cleanup must never remove, on top of the cache registry's
	// own PinnedStages. It is called from the event loop, so it must be
	// quick and must not call back into the scheduler.
	Pinned func() map[[2]string]bool
	// CacheState is the dataset-cache registry (default: a fresh
	// cache.NewMemory on the scheduler's clock). Pass a cache.Durable to
	// keep materialized entries across restarts. The scheduler is its only
	// writer.
	CacheState cache.State
	// Sessions, when set, keeps the sessions across restarts (the state
	// directory's SessionsFile): the scheduler starts with the sessions it
	// holds and records every change to it. The caller closes it after the
	// scheduler.
	Sessions *SessionStore
	// CacheTTL is the default time to live of a cache entry since its last
	// use (0 = entries never expire); an entry's "ttl" option, or the
	// session setting quiver.cache.ttl, overrides it.
	CacheTTL time.Duration
	// CacheMaxBytes caps the bytes of all materialized entries: past it the
	// sweeper evicts the least recently used entries nobody is reading
	// (0 = no cap), and an entry larger than it fails its build. A session's
	// quiver.cache.max_bytes is a lower quota of its own, never a change of
	// this cap.
	CacheMaxBytes int64
	// SessionIdleTimeout closes a session (dropping its caches) that has
	// had no request and no running job for this long (0 = never); the
	// setting quiver.session.idle_timeout overrides it per session.
	SessionIdleTimeout time.Duration
	// Logger receives the scheduler's structured log: one line per session
	// open and close, job submit and end, task and stage retry, executor
	// join and loss, cache outcome, and failed calls to executors (default
	// slog.Default()). A standalone cluster passes one that discards.
	Logger *slog.Logger
	// Logf, when set, receives the scheduler's free-form warnings instead
	// of Logger (kept for callers that predate Logger); by default they go
	// to Logger at warning level.
	Logf func(format string, args ...any)
	// AuthToken, when set, is required on every gRPC call and REST request
	// (but /healthz and the web UI's files) and sent on every call to the
	// executors, which must share it (package auth).
	AuthToken auth.Token
	// TLS, when it has a certificate, makes gRPC and REST speak TLS (mutual
	// on gRPC when it has a CA); the scheduler's calls to executors use it
	// as a client (package auth).
	TLS auth.TLS
	// TicketKey signs the Flight tickets of the locations the scheduler
	// sends (task plans, job results); it is handed to every executor at
	// registration. Default: a fresh random key per start.
	TicketKey auth.TicketKey
	// TicketTTL is how long a signed ticket is valid (default 6h). A
	// stage's tickets are signed again when a task of it is launched past
	// half of it, and a job's result tickets whenever its status is sent.
	TicketTTL time.Duration
}

// logger is cfg.Logger or slog.Default().
func (cfg Config) logger() *slog.Logger {
	if cfg.Logger != nil {
		return cfg.Logger
	}
	return slog.Default()
}

// Placement policies.
const (
	PolicyBias       = "bias"
	PolicyRoundRobin = "round_robin"
	PolicyLocality   = "locality"
)

const (
	defaultHeartbeatTimeout = 10 * time.Second
	defaultCleanupDelay     = 60 * time.Second
	defaultGracePeriod      = 30 * time.Second
	defaultRetries          = 4
	defaultTicketTTL        = 6 * time.Hour
)

// withDefaults validates cfg and fills its zero fields.
func (cfg Config) withDefaults() (Config, error) {
	switch cfg.Policy {
	case "":
		cfg.Policy = PolicyBias
	case PolicyBias, PolicyRoundRobin, PolicyLocality:
	default:
		return cfg, qerr.Planf("scheduler: unknown placement policy %q (want bias, round_robin or locality)", cfg.Policy)
	}
	if cfg.Logf == nil {
		l := cfg.logger()
		cfg.Logf = func(format string, args ...any) { l.Warn(fmt.Sprintf(format, args...)) }
	}
	if cfg.HeartbeatTimeout <= 0 {
		cfg.HeartbeatTimeout = defaultHeartbeatTimeout
	}
	if cfg.FinalStageCleanupDelay <= 0 {
		cfg.FinalStageCleanupDelay = defaultCleanupDelay
	}
	if cfg.ExecutorGracePeriod <= 0 {
		cfg.ExecutorGracePeriod = defaultGracePeriod
	}
	if cfg.TaskRetries == 0 {
		cfg.TaskRetries = defaultRetries
	}
	if cfg.TaskRetries < 0 {
		cfg.TaskRetries = 0
	}
	if cfg.StageRetries == 0 {
		cfg.StageRetries = defaultRetries
	}
	if cfg.StageRetries < 0 {
		cfg.StageRetries = 0
	}
	if cfg.TicketTTL < 0 {
		return cfg, qerr.Planf("scheduler: the Flight ticket TTL (%s) must not be negative", cfg.TicketTTL)
	}
	if cfg.TicketTTL == 0 {
		cfg.TicketTTL = defaultTicketTTL
	}
	if !cfg.TicketKey.Enabled() {
		k, err := auth.NewTicketKey()
		if err != nil {
			return cfg, err
		}
		cfg.TicketKey = k
	}
	if cfg.CacheTTL < 0 || cfg.CacheMaxBytes < 0 || cfg.SessionIdleTimeout < 0 {
		return cfg, qerr.Planf("scheduler: cache TTL (%s), cache max bytes (%d) and session idle timeout (%s) must not be negative",
			cfg.CacheTTL, cfg.CacheMaxBytes, cfg.SessionIdleTimeout)
	}
	return cfg, nil
}

// tickInterval is how often the loop checks heartbeats, the grace period
// and delayed cleanups: fine enough for the shortest configured duration.
func (cfg Config) tickInterval() time.Duration {
	d := min(cfg.HeartbeatTimeout/4, cfg.FinalStageCleanupDelay/4, cfg.ExecutorGracePeriod/4, time.Second)
	return max(d, 10*time.Millisecond)
}
