package quiver_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver"
)

// files counts the shuffle files under the live executors' work dirs (a
// killed executor's disk keeps what it had: nobody can delete it).
func (c *testCluster) files(t *testing.T) int {
	t.Helper()
	n := 0
	for i, dir := range c.workDirs {
		select {
		case <-c.executors[i].done:
			continue
		default:
		}
		filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(path, ".arrow") {
				n++
			}
			return nil
		})
	}
	return n
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func outcome(t *testing.T, s *quiver.Session, q string) (string, [][]string) {
	t.Helper()
	ctx := context.Background()
	df, err := s.SQL(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	var info quiver.QueryInfo
	var rows [][]string
	for b, err := range df.StreamInfo(ctx, &info) {
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		rows = append(rows, render(df.Schema(), []arrow.RecordBatch{b})...)
	}
	if len(info.Caches) == 0 {
		return "", rows
	}
	return info.Caches[0].Outcome, rows
}

func TestClusterCache(t *testing.T) {
	// A short result TTL keeps result files from hiding the cache's own files in the counts below.
	c := startCluster(t, 2, "--heartbeat-timeout", "1s", "--result-ttl", "200ms", "--policy", "round_robin")
	s := c.connect(t, quiver.WithTargetPartitions(4))
	t.Run("filter-cache-collect", func(t *testing.T) { cacheFilterParquet(t, s, t.TempDir()) })

	sqlRows(t, s, "CACHE TABLE recent AS "+recentSQL)
	want := localAnswer(t, "SELECT count(*), sum(l_quantity) FROM ("+recentSQL+") r")
	q := "SELECT count(*), sum(l_quantity) FROM recent"
	if o, rows := outcome(t, s, q); o != "hit" || fmt.Sprint(rows) != fmt.Sprint(want) {
		t.Fatalf("after CACHE TABLE: outcome %q rows %v, want hit %v", o, rows, want)
	}
	info := cacheRow(t, s, "recent")

	// Filters over the cache, whose reads may skip batches by their zone
	// maps (locally) or read them all (over Flight): the answers are the
	// uncached ones either way.
	for _, f := range []string{"l_orderkey < 1000", "l_orderkey BETWEEN 20000 AND 20100", "l_orderkey IN (7, 60000) OR l_quantity < 2"} {
		fq := "SELECT count(*), sum(l_quantity), min(l_orderkey) FROM recent WHERE " + f
		if got, want := sqlRows(t, s, fq), localAnswer(t, "SELECT count(*), sum(l_quantity), min(l_orderkey) FROM ("+recentSQL+") r WHERE "+f); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: %v, want %v", fq, got, want)
		}
	}

	// kill -9 an executor holding cached partitions: the next query is
	// right and rebuilds the entry (the lost partitions only when the other
	// executor kept some: TestClusterCachePartialRebuild).
	victim := -1
	for i, e := range c.executors {
		for _, id := range info.Executors {
			if strings.Contains(e.output(), id) {
				victim = i
			}
		}
	}
	if victim < 0 {
		t.Fatalf("no executor holds cache partitions: %+v", info)
	}
	c.executors[victim].kill()
	c.addExecutor(t) // keep two executors
	var o string
	var rows [][]string
	waitFor(t, "the rebuilt cache", func() bool {
		o, rows = outcome(t, s, q)
		return o == "miss" || o == "partial"
	})
	if fmt.Sprint(rows) != fmt.Sprint(want) {
		t.Fatalf("after the kill: %v, want %v", rows, want)
	}
	if o, _ := outcome(t, s, q); o != "hit" {
		t.Errorf("after the rebuild: outcome %q, want hit", o)
	}

	// Closing the session deletes its cache files from disk.
	waitFor(t, "result files to be cleaned", func() bool { return c.files(t) > 0 })
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "cache files to be deleted after CloseSession", func() bool { return c.files(t) == 0 })
}

// TestClusterCacheEviction: an entry past its TTL, and the caches of an
// idle session, are removed with their files.
func TestClusterCacheEviction(t *testing.T) {
	c := startCluster(t, 1, "--result-ttl", "100ms", "--session-idle-timeout", "3s")
	s := c.connect(t)
	sqlRows(t, s, "CACHE TABLE short OPTIONS ('ttl' '1s') AS SELECT * FROM nation")
	sqlRows(t, s, "CACHE TABLE long AS SELECT * FROM region")
	waitFor(t, "the ttl entry to expire", func() bool {
		infos, err := s.Caches(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		names := ""
		for _, i := range infos {
			if i.State != "lazy" {
				names += i.Name + " "
			}
		}
		return names == "long "
	})
	// An idle session's caches go, with their files.
	waitFor(t, "the idle session's files to be deleted", func() bool { return c.files(t) == 0 })
}

// TestClusterKillDuringCacheBuild kills -9 an executor while an eager
// CACHE TABLE builds, with a second query waiting on that build: the build
// recovers (and both answers are right) or aborts with a clear error, and
// the waiter is released either way — nothing hangs.
func TestClusterKillDuringCacheBuild(t *testing.T) {
	want := expectedSlow(t)
	rest := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	c := startCluster(t, 2, "--rest", rest, "--heartbeat-timeout", "1s", "--policy", "round_robin")
	s := c.connect(t, quiver.WithTargetPartitions(4))
	sqlRows(t, s, "CACHE LAZY TABLE slow AS "+slowQuery)
	first := runAsync(t, s, "SELECT * FROM slow")
	waitJob(t, rest, func(j jobInfo) bool { return j.State == "running" && j.TasksDone > 0 })
	second := runAsync(t, s, "SELECT * FROM slow") // waits on the pending build
	c.executors[0].kill()
	for i, ch := range []<-chan result{first, second} {
		select {
		case r := <-ch:
			switch {
			case r.err == nil && fmt.Sprint(r.rows) != fmt.Sprint(want):
				t.Errorf("query %d: %v, want %v", i, r.rows, want)
			case r.err != nil && !strings.Contains(strings.ToLower(r.err.Error()), "executor"):
				t.Errorf("query %d failed unclearly: %v", i, r.err)
			}
		case <-time.After(90 * time.Second):
			t.Fatalf("query %d hung after the kill", i)
		}
	}
	// Afterwards the cache works: built (again if needed) and right.
	if _, rows := outcome(t, s, "SELECT * FROM slow"); fmt.Sprint(rows) != fmt.Sprint(want) {
		t.Errorf("after the kill: %v, want %v", rows, want)
	}
}

// TestClusterCacheFresh: with real processes, a cached source rewritten in
// place and a table replaced give fresh answers; an idle-expired session's
// next statement works; an executor restarted on its old work dir deletes
// the job directories nothing owns any more.
func TestClusterCacheFresh(t *testing.T) {
	c := startCluster(t, 2, "--heartbeat-timeout", "1s", "--result-ttl", "200ms")
	s := c.connect(t)
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.csv"), filepath.Join(dir, "b.csv")
	writeInts(t, a, 1, 2, 3)
	writeInts(t, b, 10, 20)
	sqlRows(t, s, csvTable("src", a))
	sqlRows(t, s, "CACHE TABLE agg AS SELECT sum(v) FROM src")
	if o, rows := outcome(t, s, "SELECT * FROM agg"); o != "hit" || fmt.Sprint(rows) != "[[6]]" {
		t.Fatalf("agg: %s %v", o, rows)
	}
	writeInts(t, a, 100, 200, 300, 400)
	if o, rows := outcome(t, s, "SELECT * FROM agg"); o != "stale" || fmt.Sprint(rows) != "[[1000]]" {
		t.Fatalf("agg after a.csv was rewritten: %s %v, want stale and 1000", o, rows)
	}
	sqlRows(t, s, csvTable("src", b))
	if o, rows := outcome(t, s, "SELECT * FROM agg"); o != "miss" || fmt.Sprint(rows) != "[[30]]" {
		t.Fatalf("agg after src was replaced: %s %v, want a miss and 30", o, rows)
	}

	// The session expires while idle; the next statement re-opens it.
	sqlRows(t, s, "SET quiver.session.idle_timeout = '100ms'")
	if _, rows := outcome(t, s, "SELECT * FROM agg"); fmt.Sprint(rows) != "[[30]]" {
		t.Fatalf("agg: %v", rows)
	}
	time.Sleep(2500 * time.Millisecond)
	if o, rows := outcome(t, s, "SELECT * FROM agg"); o != "dropped" || fmt.Sprint(rows) != "[[30]]" {
		t.Fatalf("after the idle expiry: %s %v", o, rows)
	}
	sqlRows(t, s, "SET quiver.session.idle_timeout = '1h'")

	// Kill every executor; restart them on their work dirs once the
	// scheduler has lost them: what they held is owned by nothing now.
	held := c.files(t)
	if held == 0 {
		t.Fatal("no files on the executors")
	}
	for _, e := range c.executors {
		e.kill()
	}
	time.Sleep(2 * time.Second) // past the heartbeat timeout
	dirs := slices.Clone(c.workDirs)
	for _, d := range dirs {
		c.startExecutorOn(t, d)
	}
	waitFor(t, "the restarted executors to sweep their work dirs", func() bool {
		m := 0
		for _, d := range dirs {
			entries, _ := os.ReadDir(d)
			m += len(entries)
		}
		return m == 0
	})
	if o, rows := outcome(t, s, "SELECT * FROM agg"); o != "miss" || fmt.Sprint(rows) != "[[30]]" {
		t.Fatalf("after the restart: %s %v", o, rows)
	}
}

// startExecutorOn starts one more executor on work dir dir.
func (c *testCluster) startExecutorOn(t *testing.T, dir string) *proc {
	t.Helper()
	c.workDirs = append(c.workDirs, dir)
	e := startProc(t, fmt.Sprintf("executor-%d", len(c.executors)), quiverBinary(t), "executor",
		"--scheduler", c.addr, "--bind", fmt.Sprintf("127.0.0.1:%d", freePort(t)), "--work-dir", dir, "--vcores", "2", "--heartbeat", "200ms")
	c.executors = append(c.executors, e)
	return e
}

// TestClusterSchedulerRestartKeepsCaches: kill -9 the scheduler and start
// it again on the same --state-dir: the executors register again, the
// client's next statement re-opens its session under the same id, and the
// materialized cache is a hit with no rebuild.
func TestClusterSchedulerRestartKeepsCaches(t *testing.T) {
	state := t.TempDir()
	c := startCluster(t, 2, "--heartbeat-timeout", "2s", "--state-dir", state)
	s := c.connect(t)
	sqlRows(t, s, "CACHE TABLE recent AS "+recentSQL)
	q := "SELECT count(*), sum(l_quantity) FROM recent"
	o, want := outcome(t, s, q)
	if o != "hit" {
		t.Fatalf("before the restart: %s", o)
	}
	before := cacheRow(t, s, "recent")
	// The registry is written off the loop, moments after each change.
	time.Sleep(300 * time.Millisecond)
	c.scheduler.kill()
	c.scheduler = startProc(t, "scheduler-2", quiverBinary(t), "scheduler", "--bind", c.addr, "--heartbeat-timeout", "2s", "--state-dir", state)
	var rows [][]string
	waitFor(t, "a query after the restart", func() bool {
		ctx := context.Background()
		df, err := s.SQL(ctx, q)
		if err != nil {
			return false
		}
		var info quiver.QueryInfo
		rows = nil
		for b, err := range df.StreamInfo(ctx, &info) {
			if err != nil {
				return false
			}
			rows = append(rows, render(df.Schema(), []arrow.RecordBatch{b})...)
		}
		o = ""
		if len(info.Caches) > 0 {
			o = info.Caches[0].Outcome
		}
		return true
	})
	if o != "hit" || fmt.Sprint(rows) != fmt.Sprint(want) {
		t.Fatalf("after the restart: outcome %q rows %v, want a hit of %v", o, rows, want)
	}
	after := cacheRow(t, s, "recent")
	if !after.Created.Equal(before.Created) || after.Hits != before.Hits+1 {
		t.Errorf("the entry was rebuilt: before %+v, after %+v", before, after)
	}
}

// TestClusterCacheSharedAcrossSessions: two sessions caching the same query
// over the same files build once and keep one copy on disk; the copy goes
// when the last of them closes.
func TestClusterCacheSharedAcrossSessions(t *testing.T) {
	c := startCluster(t, 2, "--result-ttl", "200ms")
	s1 := c.connect(t)
	s2 := c.connect(t)
	sqlRows(t, s1, "CACHE TABLE recent AS "+recentSQL)
	sqlRows(t, s2, "CACHE TABLE recent AS "+recentSQL)
	i1, i2 := cacheRow(t, s1, "recent"), cacheRow(t, s2, "recent")
	if i1.Shared != 1 || i2.Shared != 1 || i1.Bytes != i2.Bytes || i1.Bytes == 0 {
		t.Fatalf("SHOW CACHES: %+v and %+v, want one shared copy", i1, i2)
	}
	st, err := s2.CacheStats(context.Background())
	if err != nil || st.Misses != 1 || st.Materializations != 1 {
		t.Fatalf("stats %+v %v, want one build", st, err)
	}
	bytesOnDisk := func() int64 {
		var n int64
		for _, dir := range c.workDirs {
			filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
				if err == nil && !d.IsDir() && strings.HasSuffix(path, ".arrow") {
					if info, err := d.Info(); err == nil {
						n += info.Size()
					}
				}
				return nil
			})
		}
		return n
	}
	waitFor(t, "one copy on disk", func() bool { return bytesOnDisk() == i1.Bytes })
	if o, rows := outcome(t, s2, "SELECT count(*) FROM recent"); o != "hit" || len(rows) != 1 {
		t.Fatalf("s2 reads: %s %v", o, rows)
	}
	if err := s1.Close(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	if n := bytesOnDisk(); n != i1.Bytes {
		t.Fatalf("after s1 closed: %d bytes on disk, want the shared %d", n, i1.Bytes)
	}
	if err := s2.Close(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the last holder's files to go", func() bool { return bytesOnDisk() == 0 })
}
