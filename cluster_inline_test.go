package quiver_test

import (
	"bufio"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/quiverdb/quiver"
)

// executorMetrics reads counters from an executor's /metrics.
func executorMetrics(t *testing.T, addr string, names ...string) map[string]float64 {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		name, val, ok := strings.Cut(sc.Text(), " ")
		if !ok || !want[name] {
			continue
		}
		v, err := strconv.ParseFloat(val, 64)
		if err != nil {
			t.Fatalf("metric %s: %v", name, err)
		}
		out[name] = v
	}
	for _, n := range names {
		if _, ok := out[n]; !ok {
			t.Fatalf("/metrics of %s has no %s", addr, n)
		}
	}
	return out
}

// TestInlineResultsThroughSQL drives quiver.shuffle_inline_bytes across a
// result's size on a real cluster: a result within the limit reaches the
// client with the job's status (the executor writes and serves no file), one
// past it is a file fetched over Flight, and both give the answer the other
// path gives for the same query.
func TestInlineResultsThroughSQL(t *testing.T) {
	c := startCluster(t, 0)
	metricsAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	dir := t.TempDir()
	c.workDirs = append(c.workDirs, dir)
	c.executors = append(c.executors, startProc(t, "executor-0", quiverBinary(t), "executor",
		"--scheduler", c.addr, "--bind", fmt.Sprintf("127.0.0.1:%d", freePort(t)), "--work-dir", dir,
		"--vcores", "2", "--heartbeat", "200ms", "--metrics-bind", metricsAddr))
	waitFor(t, "the executor to register", func() bool { return strings.Contains(c.executors[0].output(), "listening on") })
	s := c.connect(t, quiver.WithTargetPartitions(2))

	const (
		served = "quiver_executor_flight_served_files_total"
		inline = "quiver_executor_inline_result_bytes_total"
	)
	// run runs q under inline limit limit and reports its rows and whether
	// its result went inline (per the executor's counters).
	run := func(q string, limit int) ([][]string, bool) {
		t.Helper()
		sqlRows(t, s, fmt.Sprintf("SET quiver.shuffle_inline_bytes = %d", limit))
		before := executorMetrics(t, metricsAddr, served, inline)
		rows := sqlRows(t, s, q)
		after := executorMetrics(t, metricsAddr, served, inline)
		files, inlined := after[served]-before[served], after[inline]-before[inline]
		if (files == 0) == (inlined == 0) {
			t.Fatalf("%s at limit %d: %v files served and %v bytes inline, want exactly one of them", q, limit, files, inlined)
		}
		return rows, inlined > 0
	}
	small := "SELECT n_regionkey, count(*) AS n, min(n_name) AS first FROM nation GROUP BY n_regionkey ORDER BY n_regionkey"
	large := "SELECT l_orderkey, l_linenumber, l_comment FROM lineitem ORDER BY l_orderkey, l_linenumber LIMIT 20000"
	for _, q := range []string{small, large} {
		viaFile, inlined := run(q, 0)
		if inlined {
			t.Fatalf("%s went inline with the limit 0", q)
		}
		// The default limit (64 KiB) keeps the small result inline and
		// sends the large one (about 1 MB) as a file.
		viaDefault, inlined := run(q, 64<<10)
		if inlined != (q == small) {
			t.Errorf("%s: inline %t at the default limit", q, inlined)
		}
		// A limit above the large result keeps it inline too.
		viaBig, inlined := run(q, 4<<20)
		if !inlined {
			t.Errorf("%s: not inline at a 4 MiB limit", q)
		}
		if len(viaFile) == 0 || fmt.Sprint(viaDefault) != fmt.Sprint(viaFile) || fmt.Sprint(viaBig) != fmt.Sprint(viaFile) {
			t.Errorf("%s: the answers differ between the paths (%d, %d and %d rows)", q, len(viaFile), len(viaDefault), len(viaBig))
		}
	}
}
