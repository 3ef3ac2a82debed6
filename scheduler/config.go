package scheduler

import (
	"log"
	"time"

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
	// Pinned lists the (job_id, stage_id as decimal) pairs that cleanup must
	// never remove (cache materializations). It is called from the event
	// loop, so it must be quick and must not call back into the scheduler.
	Pinned func() map[[2]string]bool
	// Logf logs the scheduler's notable events (executor lost, failed calls
	// to executors); default log.Printf. A standalone cluster passes a no-op.
	Logf func(format string, args ...any)
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
		cfg.Logf = log.Printf
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
	return cfg, nil
}

// tickInterval is how often the loop checks heartbeats, the grace period
// and delayed cleanups: fine enough for the shortest configured duration.
func (cfg Config) tickInterval() time.Duration {
	d := min(cfg.HeartbeatTimeout/4, cfg.FinalStageCleanupDelay/4, cfg.ExecutorGracePeriod/4, time.Second)
	return max(d, 10*time.Millisecond)
}
