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

// DashboardResult is the cached workload's outcome: each dashboard query
// over the view recomputed each time and over CACHE TABLE sales, run
// alternately.
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

// RunDashboard runs the cached workload (bench --mode cached): CACHE TABLE
// sales (timed: the build), then each dashboard query over the plain view
// (a second view of the same definition, sales_plain, which is not cached)
// and over the cache, alternately: one warm-up of each, whose results must
// agree, then opts.Iterations timed pairs, the median of each side kept.
// Alternating puts both sides of a query in the same moments of a machine
// whose speed drifts, so their ratio does not carry the drift.
// opts.Queries, if set, selects dashboard queries by number (1 is d01);
// opts.OnTimed brackets the runs over the cache only, which then run after
// the plain ones (a CPU profile of the read-back, not of the view or the
// build).
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
	plainView, err := plainViewSQL()
	if err != nil {
		return nil, err
	}
	if _, err := s.SQL(ctx, plainView); err != nil {
		return nil, qerr.Planf("bench: dashboard view %s: %w", plainViewName, err)
	}
	res := &DashboardResult{}
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
	plainSQL := make([]string, len(queries))
	cachedTimes := make([][]float64, len(queries))
	for i, q := range queries {
		if plainSQL[i], err = overPlainView(q); err != nil {
			return nil, err
		}
		_, rows, plainText, err := runQueryText(ctx, s, plainSQL[i], true)
		if err != nil {
			return nil, qerr.Planf("bench: dashboard %s over the view: %w", q.Name, err)
		}
		_, _, cachedText, err := runQueryText(ctx, s, q.SQL, true)
		if err != nil {
			return nil, qerr.Planf("bench: dashboard %s over the cache: %w", q.Name, err)
		}
		if cachedText != plainText {
			return res, qerr.Execf("bench: dashboard %s: the cached result differs from the view's", q.Name)
		}
		var plain []float64
		for range opts.Iterations {
			ms, _, _, err := runQueryText(ctx, s, plainSQL[i], false)
			if err != nil {
				return nil, qerr.Planf("bench: dashboard %s over the view: %w", q.Name, err)
			}
			plain = append(plain, ms)
			if opts.OnTimed != nil {
				continue // the cached runs go after, inside the profile
			}
			if ms, _, _, err = runQueryText(ctx, s, q.SQL, false); err != nil {
				return nil, qerr.Planf("bench: dashboard %s over the cache: %w", q.Name, err)
			}
			cachedTimes[i] = append(cachedTimes[i], ms)
		}
		res.Queries = append(res.Queries, DashboardTiming{Name: q.Name, PlainMS: medianOf(plain), Rows: rows})
	}
	if opts.OnTimed != nil {
		opts.OnTimed(true)
		for i, q := range queries {
			for range opts.Iterations {
				ms, _, _, err := runQueryText(ctx, s, q.SQL, false)
				if err != nil {
					opts.OnTimed(false)
					return nil, qerr.Planf("bench: dashboard %s over the cache: %w", q.Name, err)
				}
				cachedTimes[i] = append(cachedTimes[i], ms)
			}
		}
		opts.OnTimed(false)
	}
	for i := range res.Queries {
		res.Queries[i].CachedMS = medianOf(cachedTimes[i])
		res.PlainTotalMS += res.Queries[i].PlainMS
		res.CachedTotalMS += res.Queries[i].CachedMS
	}
	if res.CachedTotalMS > 0 {
		res.Speedup = res.PlainTotalMS / res.CachedTotalMS
	}
	return res, nil
}

// plainViewName is the uncached view of the dashboard's definition that the
// plain runs read.
const plainViewName = "sales_plain"

// plainViewSQL is the dashboard view's definition under plainViewName.
func plainViewSQL() (string, error) {
	v := DashboardView()
	out := strings.Replace(v, "CREATE VIEW sales AS", "CREATE VIEW "+plainViewName+" AS", 1)
	if out == v {
		return "", qerr.Internalf("tpch: dashboard/view.sql does not start its statement with CREATE VIEW sales AS")
	}
	return out, nil
}

// overPlainView is q reading plainViewName instead of the cached view.
func overPlainView(q DashboardQuery) (string, error) {
	out := strings.ReplaceAll(q.SQL, "FROM sales\n", "FROM "+plainViewName+"\n")
	if out == q.SQL {
		return "", qerr.Internalf("tpch: dashboard query %s does not read FROM sales on a line of its own", q.Name)
	}
	return out, nil
}

// medianOf is the median of times, which it sorts.
func medianOf(times []float64) float64 {
	if len(times) == 0 {
		return 0
	}
	slices.Sort(times)
	return median(times)
}

// runQueryText runs q once and returns its milliseconds, rows and, with
// render, its result as sorted text.
func runQueryText(ctx context.Context, s *quiver.Session, q string, render bool) (float64, int64, string, error) {
	start := time.Now()
	df, err := s.SQL(ctx, q)
	if err != nil {
		return 0, 0, "", err
	}
	batches, err := df.Collect(ctx)
	if err != nil {
		return 0, 0, "", err
	}
	ms := float64(time.Since(start).Microseconds()) / 1000
	defer func() {
		for _, b := range batches {
			b.Release()
		}
	}()
	if !render {
		return ms, 0, "", nil
	}
	var lines []string
	for _, r := range Render(batches) {
		lines = append(lines, strings.Join(r, "|"))
	}
	sort.Strings(lines)
	return ms, int64(len(lines)), strings.Join(lines, "\n"), nil
}
