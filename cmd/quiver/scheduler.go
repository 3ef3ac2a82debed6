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

	"github.com/quiverdb/quiver/cache"
	"github.com/quiverdb/quiver/scheduler"
	"github.com/quiverdb/quiver/settings"
)

func init() {
	subcommands["scheduler"] = schedulerCommand
}

// schedulerCommand is `quiver scheduler --bind ADDR [--rest ADDR] [--policy
// P] [--cache-ttl D] [--cache-max-bytes SIZE] [--session-idle-timeout D]
// [--state-dir DIR] [--shutdown-grace D] [--log-format text|json]
// [--log-level L]`: it runs the cluster scheduler until SIGINT or SIGTERM,
// then shuts down (Scheduler.Shutdown). Every flag may also come from the
// environment (QUIVER_BIND, QUIVER_REST, ...; the command line wins).
func schedulerCommand(args []string, _ io.Reader, _, stderr io.Writer) int {
	fs := flag.NewFlagSet("quiver scheduler", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg scheduler.Config
	fs.StringVar(&cfg.BindAddr, "bind", "127.0.0.1:50050", "`ADDR` (host:port) to serve the scheduler's gRPC on (port 0 picks one)")
	fs.StringVar(&cfg.RestAddr, "rest", "", "`ADDR` to serve the REST/JSON view on (default: none)")
	fs.StringVar(&cfg.Policy, "policy", scheduler.PolicyBias, "task placement `POLICY`: bias, round_robin or locality")
	fs.DurationVar(&cfg.HeartbeatTimeout, "heartbeat-timeout", 10*time.Second, "an executor silent this long is lost")
	fs.DurationVar(&cfg.FinalStageCleanupDelay, "result-ttl", 60*time.Second, "how long a finished job's result files are kept")
	fs.DurationVar(&cfg.ExecutorGracePeriod, "executor-grace", 30*time.Second, "jobs fail after waiting this long with no executor alive")
	// The defaults of the cache and session settings: named, parsed ("4GiB",
	// "10m") and documented by the settings registry, as SET reads them.
	settings.CacheTTL.FlagVar(fs, &cfg.CacheTTL)
	settings.CacheMaxBytes.FlagVar(fs, &cfg.CacheMaxBytes)
	settings.SessionIdleTimeout.FlagVar(fs, &cfg.SessionIdleTimeout)
	stateDir := fs.String("state-dir", "", "`DIR` that keeps the sessions and the cache registry across scheduler restarts, kill -9 included (default: in memory: a restart starts clean)")
	grace := fs.Duration("shutdown-grace", 30*time.Second, "on SIGTERM, how long running jobs may go on before they are failed")
	fs.DurationVar(&cfg.TicketTTL, "flight-ticket-ttl", 6*time.Hour, "how long a Flight ticket the scheduler signs stays valid (a stage's are signed again at task launches past half of it)")
	var df daemonFlags
	df.register(fs)
	ds, code, ok := df.start(fs, args, stderr)
	if !ok {
		return code
	}
	logger := ds.logger
	cfg.Logger, cfg.AuthToken, cfg.TLS = logger, ds.token, ds.tls
	if *stateDir != "" {
		d, err := cache.NewDurable(*stateDir)
		if err != nil {
			fmt.Fprintln(stderr, "quiver scheduler:", err)
			return 1
		}
		defer d.Close() // after the scheduler's: its last changes are written
		cfg.CacheState = d
		ss, err := scheduler.OpenSessionStore(*stateDir)
		if err != nil {
			fmt.Fprintln(stderr, "quiver scheduler:", err)
			return 1
		}
		defer ss.Close() // after the scheduler's, like the registry
		cfg.Sessions = ss
	}
	s, err := scheduler.New(cfg)
	if err != nil {
		fmt.Fprintln(stderr, "quiver scheduler:", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := s.Start(ctx); err != nil {
		fmt.Fprintln(stderr, "quiver scheduler:", err)
		return 1
	}
	logger.Info("quiver scheduler listening on "+s.Addr(), "addr", s.Addr(), "policy", cfg.Policy)
	if ra := s.RestAddr(); ra != "" {
		logger.Info("quiver scheduler REST, web UI and /metrics on http://"+ra, "rest_addr", ra)
	}
	<-ctx.Done()
	stop() // a second signal ends the process at once
	logger.Info("shutting down: no new jobs; running jobs have until the grace period ends", "grace", *grace)
	if err := s.Shutdown(context.Background(), *grace); err != nil {
		logger.Error("close", "err", err)
		return 1
	}
	logger.Info("stopped")
	return 0
}
