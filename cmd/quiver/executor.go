package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/quiverdb/quiver/executor"
	"github.com/quiverdb/quiver/settings"
)

func init() {
	subcommands["executor"] = executorCommand
}

// executorCommand is `quiver executor --scheduler ADDR --bind ADDR
// --work-dir DIR --vcores N [--metrics-bind ADDR] [--drain-grace D]
// [--log-format text|json] [--log-level L]`: it runs an executor until
// SIGINT or SIGTERM, then drains (Executor.Drain). Every flag may also come
// from the environment (QUIVER_SCHEDULER, QUIVER_WORK_DIR, ...; the
// command line wins).
func executorCommand(args []string, _ io.Reader, _, stderr io.Writer) int {
	fs := flag.NewFlagSet("quiver executor", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg executor.Config
	fs.StringVar(&cfg.SchedulerAddr, "scheduler", "127.0.0.1:50050", "the scheduler's gRPC `ADDR` (host:port; the default is quiver scheduler's)")
	fs.StringVar(&cfg.BindAddr, "bind", "127.0.0.1:0", "`ADDR` to serve the executor service and Arrow Flight on (port 0 picks one)")
	fs.StringVar(&cfg.AdvertiseHost, "advertise-host", "", "`HOST` the scheduler and other executors use to reach this one (default: the bind host)")
	fs.StringVar(&cfg.WorkDir, "work-dir", "", "`DIR` for shuffle files (default: a new temporary directory, removed on exit)")
	fs.IntVar(&cfg.VCores, "vcores", 0, "tasks run at once (default GOMAXPROCS)")
	fs.StringVar(&cfg.ID, "id", "", "executor id (default: a new UUID)")
	fs.Func("memory-limit", "`SIZE` all running tasks may hold at once, such as 8GiB; 0 or none for no limit (default: three quarters of the machine's memory)", func(text string) error {
		n, err := settings.ParseBytes(text)
		if err != nil {
			return err
		}
		cfg.MemoryLimit = n
		if n == 0 {
			cfg.MemoryLimit = -1
		}
		return nil
	})
	fs.DurationVar(&cfg.HeartbeatInterval, "heartbeat", 2*time.Second, "heartbeat interval")
	fs.StringVar(&cfg.MetricsAddr, "metrics-bind", "", "`ADDR` to serve Prometheus /metrics and /healthz on over HTTP (default: none)")
	grace := fs.Duration("drain-grace", 30*time.Second, "on SIGTERM, how long running tasks may go on before they are cancelled")
	var df daemonFlags
	df.register(fs)
	ds, code, ok := df.start(fs, args, stderr)
	if !ok {
		return code
	}
	logger := ds.logger
	cfg.Logger, cfg.AuthToken, cfg.TLS = logger, ds.token, ds.tls
	if cfg.WorkDir == "" {
		dir, err := os.MkdirTemp("", "quiver-executor-")
		if err != nil {
			fmt.Fprintln(stderr, "quiver executor:", err)
			return 1
		}
		defer os.RemoveAll(dir)
		cfg.WorkDir = dir
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	e, err := executor.New(cfg)
	if err != nil {
		fmt.Fprintln(stderr, "quiver executor:", err)
		return 2
	}
	if err := e.Start(ctx); err != nil {
		fmt.Fprintln(stderr, "quiver executor:", err)
		return 1
	}
	attrs := []any{"executor", e.ID(), "addr", e.Addr(), "work_dir", e.WorkDir()}
	if ma := e.MetricsAddr(); ma != "" {
		attrs = append(attrs, "metrics_addr", ma)
	}
	logger.Info(fmt.Sprintf("quiver executor %s listening on %s", e.ID(), e.Addr()), attrs...)
	<-ctx.Done()
	stop() // a second signal ends the process at once
	logger.Info("shutting down: draining", "grace", *grace)
	if err := e.Drain(context.Background(), *grace); err != nil {
		logger.Error("close", "err", err)
		return 1
	}
	logger.Info("stopped")
	return 0
}
