package tpch

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/quiverdb/quiver"
	"github.com/quiverdb/quiver/qerr"
)

// DashboardTiming is one dashboard query's medians over its plain and
// cached runs.
type DashboardTiming struct {
	Name     string  `json:"name"`
	PlainMS  float64 `json:"plain_median_ms"`
	CachedMS float64 `json:"cached_median_ms"`
	Rows     int64   `json:"rows"`
}

// DashboardResult is the cached workload's outcome: the dashboard queries
// over the view `sales` recomputed each time, then over CACHE TABLE sales.
type DashboardResult struct {
	Queries       []DashboardTiming `json:"queries"`
	PlainTotalMS  float64           `json:"plain_total_ms"`
	BuildMS       float64           `json:"cache_build_ms"`
	CachedTotalMS float64           `json:"cached_total_ms"`
	Speedup       float64           `json:"speedup"` // plain total / cached total
	CacheBytes    int64             `json:"cache_bytes"`
	CacheRows     int64             `json:"cache_rows"`
}

// Print writes the result as a table.
func (r *DashboardResult) Print(w io.Writer) {
	fmt.Fprintf(w, "%-32s %12s %12s %10s\n", "query", "view ms", "cached ms", "rows")
	for _, q := range r.Queries {
		fmt.Fprintf(w, "%-32s %12.1f %12.1f %10d\n", q.Name, q.PlainMS, q.CachedMS, q.Rows)
	}
	fmt.Fprintf(w, "plain view total %.1f ms; cache build %.1f ms (%d rows, %.1f MB); cached total %.1f ms; speed-up %.1fx\n",
		r.PlainTotalMS, r.BuildMS, r.CacheRows, float64(r.CacheBytes)/(1<<20), r.CachedTotalMS, r.Speedup)
}

// RunDashboard runs the cached workload (bench --mode cached): each
// dashboard query over the plain view (after one warm-up, median of
// opts.Iterations), then CACHE TABLE sales (timed: the build), then each
// query again over the cache. The two runs' results must agree.
// opts.Queries, if set, selects dashboard queries by number (1 is d01);
// opts.OnTimed brackets the runs over the cache only (a CPU profile of the
// read-back, not of the view or the build).
func RunDashboard(ctx context.Context, opts BenchOptions) (*DashboardResult, error) {
	if opts.Iterations <= 0 {
		opts.Iterations = 3
	}
	if opts.Exec == "local" {
		return nil, qerr.Planf("bench: --mode cached needs the scheduler (the cache lives there); drop --exec local")
	}
	paths, err := TablePaths(opts.DataDir)
	if err != nil {
		return nil, err
	}
	queries, err := DashboardQueries()
	if err != nil {
		return nil, err
	}
	if len(opts.Queries) > 0 {
		var sel []DashboardQuery
		for _, n := range opts.Queries {
			if n < 1 || n > len(queries) {
				return nil, qerr.Planf("bench: --mode cached has dashboard queries 1 to %d, not %d", len(queries), n)
			}
			sel = append(sel, queries[n-1])
		}
		queries = sel
	}
	var sopts []quiver.Option
	if opts.TargetPartitions > 0 {
		sopts = append(sopts, quiver.WithTargetPartitions(opts.TargetPartitions))
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
	if err := registerChecked(ctx, s, paths); err != nil {
		return nil, err
	}
	if _, err := s.SQL(ctx, DashboardView()); err != nil {
		return nil, qerr.Planf("bench: dashboard view: %w", err)
	}
	res := &DashboardResult{}
	plain := make([]string, len(queries))
	for i, q := range queries {
		med, rows, text, err := timeQuery(ctx, s, q.SQL, opts.Iterations)
		if err != nil {
			return nil, qerr.Planf("bench: dashboard %s over the view: %w", q.Name, err)
		}
		plain[i] = text
		res.Queries = append(res.Queries, DashboardTiming{Name: q.Name, PlainMS: med, Rows: rows})
		res.PlainTotalMS += med
	}
	start := time.Now()
	if _, err := s.SQL(ctx, "CACHE TABLE sales"); err != nil {
		return nil, qerr.Planf("bench: CACHE TABLE sales: %w", err)
	}
	res.BuildMS = float64(time.Since(start).Microseconds()) / 1000
	if infos, err := s.Caches(ctx); err == nil {
		for _, c := range infos {
			if c.Name == "sales" {
				res.CacheBytes, res.CacheRows = c.Bytes, c.Rows
			}
		}
	}
	if opts.OnTimed != nil {
		opts.OnTimed(true)
		defer opts.OnTimed(false)
	}
	for i, q := range queries {
		med, _, text, err := timeQuery(ctx, s, q.SQL, opts.Iterations)
		if err != nil {
			return nil, qerr.Planf("bench: dashboard %s over the cache: %w", q.Name, err)
		}
		if text != plain[i] {
			return res, qerr.Execf("bench: dashboard %s: the cached result differs from the view's", q.Name)
		}
		res.Queries[i].CachedMS = med
		res.CachedTotalMS += med
	}
	if res.CachedTotalMS > 0 {
		res.Speedup = res.PlainTotalMS / res.CachedTotalMS
	}
	return res, nil
}

// timeQuery runs q once to warm up, then n timed times; it returns the
// median milliseconds, the rows and the result as sorted text.
func timeQuery(ctx context.Context, s *quiver.Session, q string, n int) (float64, int64, string, error) {
	var times []float64
	var rows int64
	var text string
	for i := 0; i <= n; i++ {
		start := time.Now()
		df, err := s.SQL(ctx, q)
		if err != nil {
			return 0, 0, "", err
		}
		batches, err := df.Collect(ctx)
		if err != nil {
			return 0, 0, "", err
		}
		elapsed := float64(time.Since(start).Microseconds()) / 1000
		if i == 0 {
			lines := []string{}
			for _, r := range Render(batches) {
				lines = append(lines, strings.Join(r, "|"))
			}
			sort.Strings(lines)
			text = strings.Join(lines, "\n")
			rows = int64(len(lines))
		} else {
			times = append(times, elapsed)
		}
		for _, b := range batches {
			b.Release()
		}
	}
	slices.Sort(times)
	return times[len(times)/2], rows, text, nil
}
