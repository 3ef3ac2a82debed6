package executor

import (
	"fmt"
	"log/slog"
	"net"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/google/uuid"
	"github.com/quiverdb/quiver/exec/execop"
	"github.com/quiverdb/quiver/qerr"
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

	// MemoryTables resolves in-process (standalone) memory tables; nil on a
	// real cluster. The batches are borrowed.
	MemoryTables func(name string) ([][]arrow.RecordBatch, bool)
	// Allocator is the parent of every task's accounting allocator and of
	// fetched batches (default memory.DefaultAllocator).
	Allocator memory.Allocator
	// Logger receives registration, heartbeat and task-report problems
	// (default slog.Default()).
	Logger *slog.Logger
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
	if c.StatusRetryWindow <= 0 {
		c.StatusRetryWindow = time.Minute
	}
	return c, nil
}

// taskSettings are the settings a task honours.
type taskSettings struct {
	batchSize   int
	memoryLimit int64 // bytes; 0 = none
}

// parseTaskSettings reads quiver.batch_size and quiver.memory_limit; other
// settings are the scheduler's business and are ignored.
func parseTaskSettings(m map[string]string) (taskSettings, error) {
	s := taskSettings{batchSize: execop.DefaultBatchSize}
	if v, ok := m["quiver.batch_size"]; ok {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 1 || n > 1<<20 {
			return s, qerr.Planf("executor: setting quiver.batch_size: want an integer from 1 to 1048576, got %q", v)
		}
		s.batchSize = n
	}
	if v, ok := m["quiver.memory_limit"]; ok {
		n, err := parseBytes(v)
		if err != nil {
			return s, qerr.Planf("executor: setting quiver.memory_limit: %w", err)
		}
		s.memoryLimit = n
	}
	return s, nil
}

// parseBytes parses a size such as "1048576", "512MB" or "1.5G" (binary
// units); "", "0", "none" and "unlimited" mean no limit.
func parseBytes(s string) (int64, error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	if t == "" || t == "NONE" || t == "UNLIMITED" {
		return 0, nil
	}
	mult := 1.0
	for _, u := range []struct {
		suffix string
		mult   float64
	}{{"TB", 1 << 40}, {"GB", 1 << 30}, {"MB", 1 << 20}, {"KB", 1 << 10}, {"T", 1 << 40}, {"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}, {"B", 1}} {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || f < 0 {
		return 0, fmt.Errorf("want a size like '2GB' or '536870912', got %q", s)
	}
	return int64(f * mult), nil
}
