package executor

import (
	"log/slog"
	"net"
	"runtime"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/google/uuid"
	"github.com/quiverdb/quiver/auth"
	"github.com/quiverdb/quiver/exec/execop"
	"github.com/quiverdb/quiver/qerr"
	"github.com/quiverdb/quiver/settings"
)

// Config configures an Executor. Zero fields take the defaults noted.
type Config struct {
	SchedulerAddr     string        // host:port of the scheduler's gRPC (required)
	BindAddr          string        // host:port to listen on (port 0 picks one); serves ExecutorService and Flight. Default 127.0.0.1:0
	AdvertiseHost     string        // host the scheduler and peers use to reach us (default: the bind host, or 127.0.0.1 when that is unspecified)
	WorkDir           string        // shuffle files live here; created if missing (required)
	VCores            int           // tasks run at once (default GOMAXPROCS)
	ID                string        // default: a new UUID
	HeartbeatInterval time.Duration // default 2s
	// MetricsAddr is the host:port to serve Prometheus /metrics and
	// /healthz on over HTTP ("" serves nothing; port 0 picks one).
	MetricsAddr string
	// AuthToken, when set, is required on every call to the executor
	// (ExecutorService, Flight) and on /metrics, and sent on its calls to
	// the scheduler and to other executors (package auth).
	AuthToken auth.Token
	// TLS, when it has a certificate, makes the executor's gRPC (and Flight)
	// and metrics ports speak TLS (mutual on gRPC with a CA); its calls to
	// the scheduler and other executors use it as a client (package auth).
	TLS auth.TLS

	// MemoryTables resolves in-process (standalone) memory tables; nil on a
	// real cluster. The batches are borrowed.
	MemoryTables func(name string) ([][]arrow.RecordBatch, bool)
	// Allocator is the parent of every task's accounting allocator and of
	// fetched batches (default memory.DefaultAllocator).
	Allocator memory.Allocator
	// Logger receives one line per task started and finished (with the
	// job's request id) and registration, heartbeat and task-report
	// problems (default slog.Default()).
	Logger *slog.Logger
	// MemoryLimit bounds the memory all of this executor's tasks hold at
	// once, whatever limits their queries set (quiver.memory_limit can only
	// lower a task's share): > 0 is the limit in bytes, 0 takes the
	// default (DefaultMemoryLimit), < 0 means none.
	MemoryLimit int64
	// StatusRetryWindow is how long a task status is retried while the
	// scheduler cannot be reached before it is dropped (default 1m; the
	// scheduler's executor-loss handling covers a dropped status).
	StatusRetryWindow time.Duration
}

// withDefaults validates c and fills in its defaults.
func (c Config) withDefaults() (Config, error) {
	if c.SchedulerAddr == "" {
		return c, qerr.Planf("executor: scheduler address is required")
	}
	if c.WorkDir == "" {
		return c, qerr.Planf("executor: work dir is required")
	}
	if c.BindAddr == "" {
		c.BindAddr = "127.0.0.1:0"
	}
	if _, _, err := net.SplitHostPort(c.BindAddr); err != nil {
		return c, qerr.Planf("executor: bind address %q: want host:port: %w", c.BindAddr, err)
	}
	if c.VCores <= 0 {
		c.VCores = runtime.GOMAXPROCS(0)
	}
	if c.ID == "" {
		c.ID = uuid.NewString()
	}
	if c.HeartbeatInterval <= 0 {
		c.HeartbeatInterval = 2 * time.Second
	}
	if c.Allocator == nil {
		c.Allocator = memory.DefaultAllocator
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.MemoryLimit == 0 {
		c.MemoryLimit = DefaultMemoryLimit()
	}
	if c.StatusRetryWindow <= 0 {
		c.StatusRetryWindow = time.Minute
	}
	return c, nil
}

// taskSettings are the settings a task honours.
type taskSettings struct {
	batchSize   int
	memoryLimit int64 // bytes; 0 = none
	skipPartial execop.SkipPartial
}

// parseTaskSettings reads quiver.batch_size and quiver.memory_limit from
// a task's settings; the others are the scheduler's business, but every
// one is checked, so a bad task is refused with the setting and value named.
func parseTaskSettings(m map[string]string) (taskSettings, error) {
	v, err := settings.Decode("executor", m)
	if err != nil {
		return taskSettings{}, err
	}
	batch, _ := v.Int(settings.BatchSize)
	limit, _ := v.Int(settings.MemoryLimit)
	pct, _ := v.Int(settings.AggSkipPartialPercent)
	probe, _ := v.Int(settings.AggSkipPartialProbeRows)
	return taskSettings{batchSize: int(batch), memoryLimit: limit,
		skipPartial: execop.SkipPartial{Percent: int(pct), ProbeRows: probe}}, nil
}

// DefaultMemoryLimit is three quarters of the machine's physical memory,
// leaving the rest to the Go runtime's own overhead, the page cache the
// shuffle and cache files are read through, and other processes; -1 (no
// limit) where the machine's memory cannot be read.
func DefaultMemoryLimit() int64 {
	total := physicalMemory()
	if total <= 0 {
		return -1
	}
	return total / 4 * 3
}
