package tpch

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	osexec "os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
)

// BenchOptions configure RunBench.
type BenchOptions struct {
	// Suite is "tpch" (the default) or "tpcds" (tpcds.go).
	Suite string
	// DataDir holds the tables: for TPC-H the eight as NAME.parquet or
	// NAME/ (a folder of Parquet files); for TPC-DS the Parquet files the
	// schema file's {DIR} stands for.
	DataDir string
	// SchemaFile and QueryDir (TPC-DS only) are the CREATE statements and
	// the qNN.sql files; by default DataDir/schema.sql or ../schema.sql
	// beside it, and DataDir/queries or ../queries beside it.
	SchemaFile, QueryDir string
	Queries              []int  // query numbers; empty: all of the suite's
	Iterations           int    // timed runs per query after one warm-up (0: 3)
	Mode                 string // "cold" (the default) or "cached"
	MemTable             bool   // load the tables into memory before timing
	VerifyDir            string // answer files qNN.csv to check each result against ("": no check)
	// AnswersOut, if set, is a directory to write each query's warm-up
	// result to as an answer file (qNN.csv), so that another run can
	// --verify against it where no official answers exist.
	AnswersOut       string
	Scheduler        string // cluster address ("": embedded)
	TargetPartitions int    // 0: the default (GOMAXPROCS; on a cluster, its executors' cores in total)
	// MemoryLimit is quiver.memory_limit in bytes (0: none): operators
	// that can spill do so under it.
	MemoryLimit int64
	// Exec is "local" (quiver.WithLocalExecution: direct runs, in-memory
	// exchanges) or "standalone" / "" (the default session: an in-process
	// scheduler and executor). Ignored with Scheduler.
	Exec string
	// Log, if set, gets a line per query as the run goes.
	Log io.Writer
	// OnTimed, if set, is called with true before the first query runs and
	// with false after the last (the CLI starts and stops a CPU profile).
	OnTimed func(start bool)

	mem memory.Allocator // tests: a checked allocator under the tracking one
}

// QueryResult is one query's measurements.
type QueryResult struct {
	Query           int       `json:"query"`
	IterationsMs    []float64 `json:"iterations_ms"`
	MinMs           float64   `json:"min_ms"`
	MedianMs        float64   `json:"median_ms"`
	MaxMs           float64   `json:"max_ms"`
	Rows            int64     `json:"rows"`
	Verified        bool      `json:"verified"`               // the result matched the answer file
	VerifyError     string    `json:"verify_error,omitempty"` // why it did not
	Error           string    `json:"error,omitempty"`        // the query failed to run
	PeakEngineBytes int64     `json:"peak_engine_bytes"`      // Arrow memory high-water mark during this query
	// CPUCores is the process's CPU time over the wall time of the timed
	// runs: how many cores the query kept busy. 0 when the engine runs in
	// other processes (--scheduler).
	CPUCores float64 `json:"cpu_cores,omitempty"`
}

// Machine describes where a benchmark ran.
type Machine struct {
	CPUModel    string `json:"cpu_model"`
	Cores       int    `json:"cores"`
	MemoryBytes int64  `json:"memory_bytes"`
	OS          string `json:"os"`
	Arch        string `json:"arch"`
}

// BenchSettings are the options a run used.
type BenchSettings struct {
	Suite            string `json:"suite,omitempty"`
	DataDir          string `json:"data_dir"`
	Queries          []int  `json:"queries"`
	Iterations       int    `json:"iterations"`
	Mode             string `json:"mode"`
	MemTable         bool   `json:"mem_table"`
	VerifyDir        string `json:"verify_dir,omitempty"`
	TargetPartitions int    `json:"target_partitions"`
	MemoryLimit      int64  `json:"memory_limit,omitempty"`
	Exec             string `json:"exec"` // local or standalone (cluster runs: the scheduler's address is in Scheduler)
	Scheduler        string `json:"scheduler,omitempty"`
}

// BenchResult is a whole run, as written by --json.
type BenchResult struct {
	Queries         []QueryResult `json:"queries"`
	TotalMs         float64       `json:"total_ms"`   // sum of the medians
	GeomeanMs       float64       `json:"geomean_ms"` // geometric mean of the medians
	PeakRSSBytes    int64         `json:"peak_rss_bytes"`
	PeakEngineBytes int64         `json:"peak_engine_bytes"` // Arrow memory high-water mark, in-memory tables included
	LoadMs          float64       `json:"load_ms,omitempty"` // time to load the tables into memory
	Machine         Machine       `json:"machine"`
	GoVersion       string        `json:"go_version"`
	GitCommit       string        `json:"git_commit,omitempty"`
	Settings        BenchSettings `json:"settings"`
	Started         time.Time     `json:"started"`
}

// RunBench runs the TPC-H queries as opts say and returns the measurements.
// Every argument, table, schema and answer file is checked before anything
// runs. A query that fails or does not match its answer is recorded and the
// run goes on; RunBench then returns the result and an error naming them.
func RunBench(ctx context.Context, opts BenchOptions) (*BenchResult, error) {
	if err := checkBenchOptions(&opts); err != nil {
		return nil, err
	}
	var paths map[string]string
	var dsStmts, tables []string
	var err error
	if opts.Suite == "tpcds" {
		if dsStmts, tables, err = tpcdsSchema(opts.SchemaFile, opts.DataDir); err != nil {
			return nil, err
		}
	} else {
		if paths, err = TablePaths(opts.DataDir); err != nil {
			return nil, err
		}
		tables = Tables
	}
	texts := map[int]string{}
	for _, q := range opts.Queries {
		if opts.Suite == "tpcds" {
			texts[q], err = tpcdsQuery(opts.QueryDir, q)
		} else {
			texts[q], err = Query(q)
		}
		if err != nil {
			return nil, err
		}
	}
	answers := map[int][][]string{}
	if opts.VerifyDir != "" {
		for _, q := range opts.Queries {
			a, err := ReadAnswer(AnswerPath(opts.VerifyDir, q))
			if err != nil {
				return nil, qerr.Planf("bench: --verify: query %d: %w", q, err)
			}
			answers[q] = a
		}
	}

	mem := &trackingAllocator{mem: memory.DefaultAllocator}
	if opts.mem != nil {
		mem.mem = opts.mem
	}
	sopts := []quiver.Option{quiver.WithAllocator(mem)}
	if opts.TargetPartitions > 0 {
		sopts = append(sopts, quiver.WithTargetPartitions(opts.TargetPartitions))
	}
	if opts.Exec == "local" {
		sopts = append(sopts, quiver.WithLocalExecution())
	}
	if opts.MemoryLimit > 0 {
		sopts = append(sopts, quiver.WithMemoryLimit(opts.MemoryLimit))
	}
	var s *quiver.Session
	if opts.Scheduler != "" {
		s, err = quiver.Connect(ctx, opts.Scheduler, sopts...)
	} else {
		s, err = quiver.NewSession(ctx, sopts...)
	}
	if err != nil {
		return nil, err
	}
	defer s.Close()
	if opts.Suite == "tpcds" {
		err = registerTPCDS(ctx, s, dsStmts)
	} else {
		err = registerChecked(ctx, s, paths)
	}
	if err != nil {
		return nil, err
	}

	res := &BenchResult{
		Machine: machine(), GoVersion: runtime.Version(), GitCommit: gitCommit(), Started: time.Now().UTC(),
		Settings: BenchSettings{
			Suite: opts.Suite, DataDir: opts.DataDir, Queries: opts.Queries, Iterations: opts.Iterations, Mode: opts.Mode,
			MemTable: opts.MemTable, VerifyDir: opts.VerifyDir, TargetPartitions: opts.TargetPartitions, MemoryLimit: opts.MemoryLimit,
			Exec: opts.Exec, Scheduler: opts.Scheduler,
		},
	}
	// Unset, the partitions are the default of whoever plans: this process
	// (local) or the standalone scheduler, whose one executor has
	// GOMAXPROCS cores. A cluster's scheduler uses its executors' cores in
	// total, which the client does not know: 0 is recorded.
	if res.Settings.TargetPartitions == 0 && opts.Scheduler == "" {
		res.Settings.TargetPartitions = runtime.GOMAXPROCS(0)
	}
	if opts.MemTable {
		start := time.Now()
		for _, t := range tables {
			if err := s.LoadIntoMemory(ctx, t); err != nil {
				return nil, err
			}
		}
		res.LoadMs = ms(time.Since(start))
		logf(opts.Log, "loaded the tables into memory in %.0f ms (%s)\n", res.LoadMs, physical.FormatBytes(mem.cur.Load()))
	}

	if opts.OnTimed != nil {
		opts.OnTimed(true)
	}
	var failed []string
	for _, q := range opts.Queries {
		if err := ctx.Err(); err != nil {
			if opts.OnTimed != nil {
				opts.OnTimed(false)
			}
			return nil, err
		}
		mem.peak.Store(mem.cur.Load())
		out := ""
		if opts.AnswersOut != "" {
			if err := os.MkdirAll(opts.AnswersOut, 0o755); err != nil {
				return nil, qerr.IOf("bench: answers directory: %w", err)
			}
			out = AnswerPath(opts.AnswersOut, q)
		}
		qr := runQuery(ctx, s, q, texts[q], opts.Iterations, answers[q], opts.Suite == "tpcds", out)
		if opts.Scheduler != "" {
			qr.CPUCores = 0
		}
		qr.PeakEngineBytes = mem.peak.Load()
		res.Queries = append(res.Queries, qr)
		switch {
		case qr.Error != "":
			failed = append(failed, fmt.Sprintf("q%02d failed: %s", q, qr.Error))
			logf(opts.Log, "q%02d  error: %s\n", q, qr.Error)
		case qr.VerifyError != "":
			failed = append(failed, fmt.Sprintf("q%02d wrong answer: %s", q, qr.VerifyError))
			logf(opts.Log, "q%02d  %8.1f ms  %d rows  WRONG: %s\n", q, qr.MedianMs, qr.Rows, qr.VerifyError)
		default:
			logf(opts.Log, "q%02d  %8.1f ms  %d rows\n", q, qr.MedianMs, qr.Rows)
		}
	}
	if opts.OnTimed != nil {
		opts.OnTimed(false)
	}
	res.summarize()
	res.PeakRSSBytes = peakRSS()
	res.PeakEngineBytes = mem.maxPeak.Load()
	if len(failed) > 0 {
		return res, qerr.Execf("bench: %d of %d queries failed: %s", len(failed), len(opts.Queries), strings.Join(failed, "; "))
	}
	return res, nil
}

func checkBenchOptions(o *BenchOptions) error {
	switch o.Mode {
	case "", "cold":
		o.Mode = "cold"
	case "cached":
		return qerr.Planf("bench: --mode cached is the dashboard workload: run it with RunDashboard")
	default:
		return qerr.Planf("bench: unknown mode %q (want cold or cached)", o.Mode)
	}
	switch o.Exec {
	case "":
		o.Exec = "standalone"
	case "standalone", "local":
	default:
		return qerr.Planf("bench: unknown --exec %q (want local or standalone)", o.Exec)
	}
	if o.Iterations == 0 {
		o.Iterations = 3
	}
	if o.Iterations < 1 {
		return qerr.Planf("bench: --iterations must be at least 1, got %d", o.Iterations)
	}
	if o.DataDir == "" {
		return qerr.Planf("bench: no data folder given (--data DIR)")
	}
	n := 22
	switch o.Suite {
	case "", "tpch":
		o.Suite = "tpch"
	case "tpcds":
		n = TPCDSQueries
		if o.SchemaFile == "" {
			o.SchemaFile = firstExisting(filepath.Join(o.DataDir, "schema.sql"), filepath.Join(o.DataDir, "..", "schema.sql"))
		}
		if o.QueryDir == "" {
			o.QueryDir = firstExisting(filepath.Join(o.DataDir, "queries"), filepath.Join(o.DataDir, "..", "queries"))
		}
	default:
		return qerr.Planf("bench: unknown suite %q (want tpch or tpcds)", o.Suite)
	}
	if len(o.Queries) == 0 {
		for q := 1; q <= n; q++ {
			o.Queries = append(o.Queries, q)
		}
	}
	for _, q := range o.Queries {
		if q < 1 || q > n {
			return qerr.Planf("bench: unknown query %d (want 1 to %d for %s)", q, n, o.Suite)
		}
	}
	return nil
}

// TablePaths finds the eight tables in dir: NAME.parquet, or a folder NAME/
// of Parquet files. A missing table, or one an interrupted gen left as .tmp
// files only, is an error naming them all.
func TablePaths(dir string) (map[string]string, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, qerr.IOf("bench: data folder: %w", err)
	}
	if !st.IsDir() {
		return nil, qerr.Planf("bench: data folder %s is not a folder", dir)
	}
	paths := map[string]string{}
	var missing []string
	for _, t := range Tables {
		file := filepath.Join(dir, t+".parquet")
		if fi, err := os.Stat(file); err == nil && !fi.IsDir() {
			paths[t] = file
			continue
		}
		sub := filepath.Join(dir, t)
		entries, err := os.ReadDir(sub)
		if err != nil {
			if _, terr := os.Stat(file + ".tmp"); terr == nil {
				missing = append(missing, t+" (only "+t+".parquet.tmp: an interrupted gen?)")
			} else {
				missing = append(missing, t)
			}
			continue
		}
		n, tmp := 0, 0
		for _, e := range entries {
			switch {
			case strings.HasSuffix(e.Name(), ".parquet"):
				n++
			case strings.HasSuffix(e.Name(), ".tmp"):
				tmp++
			}
		}
		switch {
		case tmp > 0:
			missing = append(missing, fmt.Sprintf("%s (%d .tmp files in %s: an interrupted gen?)", t, tmp, sub))
		case n == 0:
			missing = append(missing, t+" (no .parquet files in "+sub+")")
		default:
			paths[t] = sub
		}
	}
	if len(missing) > 0 {
		return nil, qerr.Planf("bench: data folder %s is incomplete: missing %s (make it with: quiver tpch gen --sf N --out %s)",
			dir, strings.Join(missing, ", "), dir)
	}
	return paths, nil
}

// registerChecked registers the tables and checks their schemas.
func registerChecked(ctx context.Context, s *quiver.Session, paths map[string]string) error {
	for _, t := range Tables {
		if err := s.RegisterParquet(ctx, t, paths[t]); err != nil {
			return err
		}
		df, err := s.Table(ctx, t)
		if err != nil {
			return err
		}
		if err := CheckSchema(t, df.Schema()); err != nil {
			return qerr.Planf("bench: %s: %w", paths[t], err)
		}
	}
	return nil
}

// runQuery runs query q (text) once to warm up (and to verify, if want is
// set; with relabel, comparing values only, the header taken from the
// result), then iterations times timed. Each timed run plans the SQL and
// collects the whole result. With out set, the warm-up's result is written
// there as an answer file.
func runQuery(ctx context.Context, s *quiver.Session, q int, text string, iterations int, want [][]string, relabel bool, out string) QueryResult {
	qr := QueryResult{Query: q}
	rows, verr, err := runOnce(ctx, s, text, want, relabel, out)
	if err != nil {
		qr.Error = err.Error()
		return qr
	}
	qr.Rows = rows
	if want != nil {
		qr.Verified = verr == nil
		if verr != nil {
			qr.VerifyError = verr.Error()
		}
	}
	var wall, cpu time.Duration
	for range iterations {
		start, cpuStart := time.Now(), processCPU()
		n, _, err := runOnce(ctx, s, text, nil, false, "")
		d := time.Since(start)
		wall, cpu = wall+d, cpu+processCPU()-cpuStart
		if err != nil {
			qr.Error = err.Error()
			return qr
		}
		if n != rows {
			qr.Error = fmt.Sprintf("a timed run returned %d rows, the warm-up %d", n, rows)
			return qr
		}
		qr.IterationsMs = append(qr.IterationsMs, ms(d))
	}
	if wall > 0 {
		qr.CPUCores = cpu.Seconds() / wall.Seconds()
	}
	sorted := slices.Clone(qr.IterationsMs)
	slices.Sort(sorted)
	qr.MinMs, qr.MaxMs = sorted[0], sorted[len(sorted)-1]
	qr.MedianMs = median(sorted)
	return qr
}

// runOnce plans and runs text, returning the row count and, when want is
// set, the comparison's outcome; with out set, it writes the result there
// as an answer file.
func runOnce(ctx context.Context, s *quiver.Session, text string, want [][]string, relabel bool, out string) (int64, error, error) {
	df, err := s.SQL(ctx, text)
	if err != nil {
		return 0, nil, err
	}
	batches, err := df.Collect(ctx)
	if err != nil {
		return 0, nil, err
	}
	defer func() {
		for _, b := range batches {
			b.Release()
		}
	}()
	var rows int64
	for _, b := range batches {
		rows += b.NumRows()
	}
	if out != "" {
		if err := WriteAnswer(out, df.Schema(), Render(batches)); err != nil {
			return 0, nil, err
		}
	}
	if want == nil {
		return rows, nil, nil
	}
	if schema := df.Schema(); relabel && len(want) > 0 && len(want[0]) == schema.NumFields() {
		header := make([]string, schema.NumFields())
		for i, f := range schema.Fields() {
			header[i] = f.Name
		}
		want = append([][]string{header}, want[1:]...)
	}
	return rows, CompareAnswer(df.Schema(), Render(batches), want), nil
}

func median(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// summarize sets the total and the geometric mean over the medians of the
// queries that ran.
func (r *BenchResult) summarize() {
	var sum, logs float64
	n := 0
	for _, q := range r.Queries {
		if q.Error != "" || len(q.IterationsMs) == 0 {
			continue
		}
		sum += q.MedianMs
		logs += math.Log(math.Max(q.MedianMs, 0.001))
		n++
	}
	r.TotalMs = sum
	if n > 0 {
		r.GeomeanMs = math.Exp(logs / float64(n))
	}
}

// Print writes the results table.
func (r *BenchResult) Print(w io.Writer) {
	fmt.Fprintf(w, "%-5s %10s %10s %10s %10s %6s  %s\n", "query", "min ms", "median ms", "max ms", "rows", "cores", "verified")
	for _, q := range r.Queries {
		if q.Error != "" {
			fmt.Fprintf(w, "q%02d   error: %s\n", q.Query, q.Error)
			continue
		}
		v := "-"
		if r.Settings.VerifyDir != "" {
			v = "yes"
			if !q.Verified {
				v = "NO"
			}
		}
		cores := "-"
		if q.CPUCores > 0 {
			cores = strconv.FormatFloat(q.CPUCores, 'f', 2, 64)
		}
		fmt.Fprintf(w, "q%02d   %10.1f %10.1f %10.1f %10d %6s  %s\n", q.Query, q.MinMs, q.MedianMs, q.MaxMs, q.Rows, cores, v)
	}
	fmt.Fprintf(w, "total %.1f ms (sum of medians), geomean %.1f ms\n", r.TotalMs, r.GeomeanMs)
	fmt.Fprintf(w, "peak RSS %s, engine peak %s", physical.FormatBytes(r.PeakRSSBytes), physical.FormatBytes(r.PeakEngineBytes))
	if r.Settings.MemTable {
		fmt.Fprintf(w, ", tables loaded into memory in %.0f ms", r.LoadMs)
	}
	fmt.Fprintln(w)
}

// WriteJSON writes r to path.
func (r *BenchResult) WriteJSON(path string) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return qerr.Internalf("bench: %w", err)
	}
	if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		return qerr.IOf("bench: --json: %w", err)
	}
	return nil
}

// ReadResult reads a result written by WriteJSON.
func ReadResult(path string) (*BenchResult, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, qerr.IOf("bench: %w", err)
	}
	var r BenchResult
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, qerr.Planf("bench: %s is not a bench result: %w", path, err)
	}
	return &r, nil
}

// Compare prints, per query in both runs, the medians and their ratio B/A
// (above 1: B is slower), then the ratios of the totals and geomeans.
func Compare(w io.Writer, a, b *BenchResult) {
	bm := map[int]QueryResult{}
	for _, q := range b.Queries {
		bm[q.Query] = q
	}
	fmt.Fprintf(w, "%-5s %12s %12s %8s\n", "query", "A median ms", "B median ms", "B/A")
	for _, qa := range a.Queries {
		qb, ok := bm[qa.Query]
		switch {
		case !ok:
			fmt.Fprintf(w, "q%02d   %12.1f %12s %8s\n", qa.Query, qa.MedianMs, "-", "-")
		case qa.Error != "" || qb.Error != "" || qa.MedianMs == 0:
			fmt.Fprintf(w, "q%02d   %12s %12s %8s\n", qa.Query, msOrErr(qa), msOrErr(qb), "-")
		default:
			fmt.Fprintf(w, "q%02d   %12.1f %12.1f %8.2f\n", qa.Query, qa.MedianMs, qb.MedianMs, qb.MedianMs/qa.MedianMs)
		}
	}
	fmt.Fprintf(w, "total %12.1f %12.1f %8s\n", a.TotalMs, b.TotalMs, ratio(b.TotalMs, a.TotalMs))
	fmt.Fprintf(w, "geomean %10.1f %12.1f %8s\n", a.GeomeanMs, b.GeomeanMs, ratio(b.GeomeanMs, a.GeomeanMs))
}

func msOrErr(q QueryResult) string {
	if q.Error != "" {
		return "error"
	}
	return strconv.FormatFloat(q.MedianMs, 'f', 1, 64)
}

func ratio(x, y float64) string {
	if y == 0 {
		return "-"
	}
	return strconv.FormatFloat(x/y, 'f', 2, 64)
}

func logf(w io.Writer, format string, args ...any) {
	if w != nil {
		fmt.Fprintf(w, format, args...)
	}
}

// trackingAllocator counts the bytes the engine holds and their
// high-water mark; it is safe for concurrent use.
type trackingAllocator struct {
	mem     memory.Allocator
	cur     atomic.Int64
	peak    atomic.Int64 // reset before each query
	maxPeak atomic.Int64 // over the whole run
}

func (a *trackingAllocator) add(n int64) {
	c := a.cur.Add(n)
	for p := a.peak.Load(); c > p && !a.peak.CompareAndSwap(p, c); p = a.peak.Load() {
	}
	for p := a.maxPeak.Load(); c > p && !a.maxPeak.CompareAndSwap(p, c); p = a.maxPeak.Load() {
	}
}

func (a *trackingAllocator) Allocate(size int) []byte {
	b := a.mem.Allocate(size)
	a.add(int64(len(b)))
	return b
}

func (a *trackingAllocator) Reallocate(size int, b []byte) []byte {
	old := len(b)
	nb := a.mem.Reallocate(size, b)
	a.add(int64(len(nb) - old))
	return nb
}

func (a *trackingAllocator) Free(b []byte) {
	a.add(-int64(len(b)))
	a.mem.Free(b)
}

// processCPU is the user and system CPU time this process has used so far,
// 0 where unknown.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// peakRSS is the process's peak resident set size (VmHWM), 0 where unknown.
func peakRSS() int64 {
	return procKB("/proc/self/status", "VmHWM:")
}

// procKB reads a "Key:   123 kB" line of a /proc file, in bytes.
func procKB(path, key string) int64 {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, key); ok {
			fields := strings.Fields(rest)
			if len(fields) == 0 {
				return 0
			}
			n, _ := strconv.ParseInt(fields[0], 10, 64)
			return n * 1024
		}
	}
	return 0
}

func machine() Machine {
	m := Machine{Cores: runtime.NumCPU(), OS: runtime.GOOS, Arch: runtime.GOARCH}
	m.MemoryBytes = procKB("/proc/meminfo", "MemTotal:")
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPUModel = strings.TrimSpace(v)
				break
			}
		}
	}
	return m
}

// gitCommit is the commit the binary was built from, else the current
// directory's HEAD, else "".
func gitCommit() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		rev, dirty := "", false
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
		if rev != "" {
			if dirty {
				rev += "+dirty"
			}
			return rev
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	out, err := osexec.CommandContext(ctx, "git", "rev-parse", "HEAD").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}
