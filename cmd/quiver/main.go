// Command quiver is Quiver's command line: the SQL shell, one-shot
// statements (-c, -f), and (as they land) the cluster daemons and TPC-H tools.
// It holds flags and wiring only.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"

	"github.com/quiverdb/quiver"
	"github.com/quiverdb/quiver/auth"
	"github.com/quiverdb/quiver/format"
	"github.com/quiverdb/quiver/repl"
	"github.com/quiverdb/quiver/tpch"
)

func main() {
	tuneGC()
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// The collector's defaults in this binary; GOGC and GOMEMLIMIT override
// them. A query engine allocates batch buffers at a high rate over a small
// live heap: at Go's default GOGC of 100 the collector runs every few
// megabytes; at 200 it runs half as often, which saves CPU for some heap
// headroom. The soft limit bounds what that headroom costs in memory: past
// it the collector runs more often instead of growing the heap (a heap that
// must hold more live data than this, from much larger inputs, spends more
// time collecting; raise GOMEMLIMIT then). Tables loaded into memory live
// outside the Go heap (execop.OffHeapAllocator) and count toward neither. See
// docs/performance.md.
const (
	gcPercent     = 200
	gcMemoryLimit = 1536 << 20
)

func tuneGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(gcMemoryLimit)
	}
}

type options struct {
	demo      bool
	command   string
	file      string
	format    string
	scheduler string
	maxRows   int
	init      string
	tokenFile string
	tls       tlsFlags
}

// subcommands maps the first argument to a subcommand's entry point.
var subcommands = map[string]func(args []string, stdin io.Reader, stdout, stderr io.Writer) int{}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		if sub, ok := subcommands[args[0]]; ok {
			return sub(args[1:], stdin, stdout, stderr)
		}
	}
	fs := flag.NewFlagSet("quiver", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	fs.BoolVar(&o.demo, "demo", false, "register the embedded TPC-H SF 0.01 tables (lineitem, orders, ...)")
	fs.Func("c", "run the `SQL` statements (separated by ';') and exit; -c may be given several times, run in order", func(v string) error {
		if o.command != "" {
			// A line break first ends a trailing -- comment of the one before.
			o.command += "\n;\n"
		}
		o.command += v
		return nil
	})
	fs.StringVar(&o.file, "f", "", "run the statements in `FILE` ('-' for standard input) and exit")
	fs.StringVar(&o.format, "format", "table", "output format: table, csv, tsv, json or ndjson")
	fs.StringVar(&o.scheduler, "scheduler", "", "run on the cluster whose scheduler listens at `ADDR` (default: a scheduler and executor in this process)")
	fs.IntVar(&o.maxRows, "maxrows", repl.DefaultMaxRows, "most rows a table shows in the interactive shell (0: all)")
	fs.StringVar(&o.init, "init", "", "run `FILE` before the shell's first prompt (default ~/.quiverrc)")
	fs.StringVar(&o.tokenFile, "auth-token-file", "", "with --scheduler: `PATH` of the file holding the cluster's shared secret")
	o.tls.register(fs)
	showVersion := fs.Bool("version", false, "print the version and exit")
	fs.Usage = func() { printUsage(stderr, fs.PrintDefaults) }
	for _, a := range args {
		if a == "-h" || a == "-help" || a == "--help" {
			// Asked for, the usage is the output: on stdout.
			fs.SetOutput(stdout)
			printUsage(stdout, fs.PrintDefaults)
			return 0
		}
		if a == "--" || !strings.HasPrefix(a, "-") {
			break
		}
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if *showVersion {
		fmt.Fprintln(stdout, "quiver", version())
		return 0
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "quiver: unexpected argument %q\n", fs.Arg(0))
		fs.Usage()
		return 2
	}
	kind, err := format.Parse(o.format)
	if err != nil {
		// A usage error, not a query's.
		fmt.Fprintf(stderr, "quiver: --format: unknown format %q (want table, csv, tsv, json or ndjson)\n", o.format)
		return 2
	}
	if o.command != "" && o.file != "" {
		fmt.Fprintln(stderr, "quiver: give -c or -f, not both")
		return 2
	}

	// Ctrl-C stops a script; the interactive shell instead cancels only the running statement.
	ctx := context.Background()
	if o.command != "" || o.file != "" || !isTerminal(stdin) {
		var stop context.CancelFunc
		ctx, stop = signal.NotifyContext(ctx, os.Interrupt)
		defer stop()
	}
	var s *quiver.Session
	if o.scheduler != "" {
		var token auth.Token
		if token, err = auth.Load(o.tokenFile); err != nil {
			fmt.Fprintln(stderr, "quiver:", err)
			return 2
		}
		var tlsConf auth.TLS
		if tlsConf, err = o.tls.load(); err != nil {
			fmt.Fprintln(stderr, "quiver:", err)
			return 2
		}
		s, err = quiver.Connect(ctx, o.scheduler, quiver.WithAuthToken(token), quiver.WithTLS(tlsConf))
	} else {
		s, err = quiver.NewSession(ctx)
	}
	if err != nil {
		fmt.Fprintln(stderr, "quiver:", err)
		return 1
	}
	defer s.Close()
	if o.demo {
		if err := tpch.RegisterDemo(ctx, s); err != nil {
			fmt.Fprintln(stderr, "quiver: --demo:", err)
			return 1
		}
	}

	switch {
	case o.command != "":
		return script(ctx, s, o.command, kind, stdout, stderr)
	case o.file != "":
		text, err := readFile(o.file, stdin)
		if err != nil {
			fmt.Fprintln(stderr, "quiver:", err)
			return 1
		}
		return script(ctx, s, text, kind, stdout, stderr)
	case !isTerminal(stdin):
		text, err := io.ReadAll(stdin)
		if err != nil {
			fmt.Fprintln(stderr, "quiver:", err)
			return 1
		}
		return script(ctx, s, string(text), kind, stdout, stderr)
	}
	return interactive(ctx, s, o, kind, stdin, stdout, stderr)
}

func readFile(name string, stdin io.Reader) (string, error) {
	if name == "-" {
		b, err := io.ReadAll(stdin)
		return string(b), err
	}
	b, err := os.ReadFile(name)
	return string(b), err
}

// script runs statements in order, printing each result; the first error
// goes to stderr and makes the exit status 1. A statement the scheduler
// lost before it delivered a row (qerr.Retryable) runs once more.
func script(ctx context.Context, s *quiver.Session, text string, kind format.Kind, stdout, stderr io.Writer) int {
	err := s.ScriptRetry(ctx, text, func(df *quiver.DataFrame) error {
		if !df.ReturnsRows() {
			return nil
		}
		return df.Print(ctx, stdout, kind, format.Options{})
	}, func(err error) {
		fmt.Fprintf(stderr, "%v; retrying once.\n", err)
	})
	if err != nil {
		fmt.Fprintln(stderr, "Error:", err)
		return 1
	}
	return 0
}

func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// interactive runs the SQL shell (package repl) on the terminal.
func interactive(ctx context.Context, s *quiver.Session, o options, kind format.Kind, stdin io.Reader, stdout, stderr io.Writer) int {
	return repl.Run(ctx, repl.Config{
		Session:  s,
		In:       stdin.(*os.File), // run calls interactive only when stdin is a terminal
		Out:      stdout,
		Err:      stderr,
		Format:   kind,
		MaxRows:  o.maxRows,
		InitFile: o.init,
		Demo:     o.demo,
	})
}
