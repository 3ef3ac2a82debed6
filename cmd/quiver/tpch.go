package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/quiverdb/quiver/settings"
	"github.com/quiverdb/quiver/tpch"
)

func init() {
	subcommands["tpch"] = tpchCommand
	subcommands["bench"] = benchCommand
}

// tpchCommand is `quiver tpch gen ...`.
func tpchCommand(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "gen" {
		fmt.Fprintln(stderr, "usage: quiver tpch gen --sf N --out DIR [--format parquet|csv] [--files-per-table K] [--force]")
		return 2
	}
	fs := flag.NewFlagSet("quiver tpch gen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	sf := fs.String("sf", "1", "scale factor: an integer of at least 1, or a fraction below 1 in thousandths (0.01, 0.1)")
	out := fs.String("out", "", "output `DIR` (must be empty unless --force)")
	format := fs.String("format", "parquet", "file format: parquet or csv ('|'-delimited with a header)")
	files := fs.Int("files-per-table", 1, "files per table; more than 1 writes DIR/NAME/part-NNNNN.ext")
	force := fs.Bool("force", false, "write into a non-empty DIR, replacing the tables' files")
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "quiver tpch gen: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	n, err := parseScale(*sf)
	if err != nil {
		fmt.Fprintln(stderr, "quiver tpch gen:", err)
		return 2
	}
	if *out == "" {
		fmt.Fprintln(stderr, "quiver tpch gen: --out DIR is required")
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	opts := tpch.GenOptions{SF: n, Dir: *out, Format: *format, FilesPerTable: *files, Force: *force}
	bar := newProgressBar(stderr)
	if bar != nil {
		opts.Progress = bar.update
	}
	start := time.Now()
	counts, err := tpch.Generate(ctx, opts)
	if bar != nil {
		bar.done()
	}
	if err != nil {
		fmt.Fprintln(stderr, "quiver tpch gen:", err)
		return 1
	}
	fmt.Fprintf(stdout, "TPC-H SF %s written to %s in %.1f s\n", strconv.FormatFloat(n, 'f', -1, 64), *out, time.Since(start).Seconds())
	fmt.Fprintf(stdout, "%-10s %12s %12s\n", "table", "rows", "spec")
	for _, t := range tpch.Tables {
		fmt.Fprintf(stdout, "%-10s %12d %12d\n", t, counts[t], tpch.ExpectedRows(t, n))
	}
	return 0
}

// parseScale accepts the scale factors dbgen makes: an integer of at least
// 1, or a multiple of 0.001 below 1.
func parseScale(s string) (float64, error) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("--sf: %q is not a number", s)
	}
	if tpch.ExpectedRows("orders", f) == 0 {
		return 0, fmt.Errorf("--sf %s: want an integer from 1 to 100000, or a fraction below 1 in thousandths (0.01, 0.1)", s)
	}
	return f, nil
}

// progressBar draws a one-line bar on a terminal, at most ten times a second.
type progressBar struct {
	w     io.Writer
	start time.Time
	last  time.Time
}

func newProgressBar(w io.Writer) *progressBar {
	f, ok := w.(*os.File)
	if !ok {
		return nil
	}
	if st, err := f.Stat(); err != nil || st.Mode()&os.ModeCharDevice == 0 {
		return nil
	}
	return &progressBar{w: w, start: time.Now()}
}

func (p *progressBar) update(rows, total int64) {
	now := time.Now()
	if now.Sub(p.last) < 100*time.Millisecond {
		return
	}
	p.last = now
	frac := min(1, float64(rows)/float64(max(1, total)))
	const width = 40
	fill := int(frac * width)
	fmt.Fprintf(p.w, "\r[%s%s] %5.1f%% %d rows %.0f s", strings.Repeat("#", fill), strings.Repeat(" ", width-fill),
		frac*100, rows, now.Sub(p.start).Seconds())
}

func (p *progressBar) done() { fmt.Fprintln(p.w) }

// benchCommand is `quiver bench tpch ...`, `quiver bench tpcds ...` and
// `quiver bench compare A B`.
func benchCommand(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	usage := func() {
		fmt.Fprintln(stderr, "usage: quiver bench tpch --data DIR [--queries 1,6] [--iterations N] [--mode cold|cached] [--mem-table] [--json FILE] [--verify DIR] [--scheduler ADDR] [--cpuprofile FILE]")
		fmt.Fprintln(stderr, "       quiver bench tpcds --data DIR [--schema FILE] [--query-dir DIR] [--queries 1,6] [--iterations N] [--mem-table] [--json FILE] [--verify DIR] [--scheduler ADDR]")
		fmt.Fprintln(stderr, "       quiver bench compare A.json B.json")
	}
	if len(args) == 0 {
		usage()
		return 2
	}
	switch args[0] {
	case "tpch", "tpcds":
		return benchSuite(args[0], args[1:], stdout, stderr)
	case "compare":
		if len(args) != 3 {
			usage()
			return 2
		}
		a, err := tpch.ReadResult(args[1])
		if err != nil {
			fmt.Fprintln(stderr, "quiver bench compare:", err)
			return 1
		}
		b, err := tpch.ReadResult(args[2])
		if err != nil {
			fmt.Fprintln(stderr, "quiver bench compare:", err)
			return 1
		}
		tpch.Compare(stdout, a, b)
		return 0
	}
	usage()
	return 2
}

// benchSuite is `quiver bench tpch|tpcds ...`.
func benchSuite(suite string, args []string, stdout, stderr io.Writer) int {
	name := "quiver bench " + suite
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := tpch.BenchOptions{Suite: suite}
	queries := fs.String("queries", "", "comma-separated query numbers (default: all of them)")
	if suite == "tpcds" {
		fs.StringVar(&o.DataDir, "data", "", "`DIR` holding the 24 tables' Parquet files")
		fs.StringVar(&o.SchemaFile, "schema", "", "`FILE` of CREATE EXTERNAL TABLE statements, {DIR} for the data folder (default: schema.sql in or beside DIR)")
		fs.StringVar(&o.QueryDir, "query-dir", "", "`DIR` of the qNN.sql queries (default: queries/ in or beside the data folder)")
	} else {
		fs.StringVar(&o.DataDir, "data", "", "`DIR` holding the eight tables as NAME.parquet or NAME/")
	}
	fs.IntVar(&o.Iterations, "iterations", 3, "timed runs per query, after one warm-up")
	fs.StringVar(&o.Mode, "mode", "cold", "cold (the 22 queries) or cached (the dashboard workload over a cached view)")
	fs.BoolVar(&o.MemTable, "mem-table", false, "load the tables into memory before timing")
	jsonPath := fs.String("json", "", "write the results as JSON to `FILE`")
	fs.StringVar(&o.VerifyDir, "verify", "", "check each result against the answer files in `DIR` (qNN.csv)")
	fs.StringVar(&o.AnswersOut, "write-answers", "", "write each result to `DIR`/qNN.csv, answer files another run can --verify against")
	fs.StringVar(&o.Scheduler, "scheduler", "", "run on the cluster at `ADDR`")
	fs.StringVar(&o.Exec, "exec", "standalone", "local (direct runs in this process) or standalone (in-process scheduler and executor, the default session)")
	fs.IntVar(&o.TargetPartitions, "partitions", 0, "target partitions (default: GOMAXPROCS; with --scheduler, the cluster executors' cores in total)")
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile of the timed runs to `FILE`")
	fs.Func("memory-limit", "quiver.memory_limit for the run, such as `64MB` (sorts, aggregates and hash joins spill under it)", func(text string) error {
		n, err := settings.ParseBytes(text)
		o.MemoryLimit = n
		return err
	})
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "%s: unexpected argument %q\n", name, fs.Arg(0))
		return 2
	}
	if *queries != "" {
		for _, q := range strings.Split(*queries, ",") {
			n, err := strconv.Atoi(strings.TrimPrefix(strings.ToLower(strings.TrimSpace(q)), "q"))
			last := 22
			if suite == "tpcds" {
				last = tpch.TPCDSQueries
			}
			if err != nil || n < 1 || n > last {
				fmt.Fprintf(stderr, "%s: --queries: unknown query %q (want 1 to %d)\n", name, q, last)
				return 2
			}
			o.Queries = append(o.Queries, n)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			fmt.Fprintln(stderr, name+":", err)
			return 1
		}
		defer f.Close()
		// The profile covers only the timed runs: the runner starts and stops it.
		o.OnTimed = func(start bool) {
			if start {
				pprof.StartCPUProfile(f)
			} else {
				pprof.StopCPUProfile()
			}
		}
	}
	o.Log = stderr
	if o.Mode == "cached" {
		res, err := tpch.RunDashboard(ctx, o)
		if res != nil {
			res.Print(stdout)
		}
		if err != nil {
			fmt.Fprintln(stderr, name+":", err)
			return 1
		}
		return 0
	}
	res, err := tpch.RunBench(ctx, o)
	if res != nil {
		res.Print(stdout)
		if *jsonPath != "" {
			if werr := res.WriteJSON(*jsonPath); werr != nil {
				fmt.Fprintln(stderr, name+":", werr)
				return 1
			}
		}
	}
	if err != nil {
		fmt.Fprintln(stderr, name+":", err)
		return 1
	}
	return 0
}
