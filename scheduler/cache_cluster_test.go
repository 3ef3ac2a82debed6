package scheduler

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/google/uuid"
	"golang.org/x/sync/errgroup"

	"github.com/quiverdb/quiver/cache"
	"github.com/quiverdb/quiver/logical"
	logicalcodec "github.com/quiverdb/quiver/logical/codec"
	"github.com/quiverdb/quiver/rpc"
)

// End to end over gRPC with two in-process executors: the first query on a
// cached plan materializes it in a child job whose pinned files stay on the
// executors; later queries read them back without running the input;
// closing the session deletes the files.

// resultRows fetches a successful job's rows as sorted "a|b|c" strings.
func resultRows(t *testing.T, ctx context.Context, mem memory.Allocator, st *rpc.JobStatus) []string {
	t.Helper()
	_, batches := fetchResult(t, ctx, mem, st)
	var rows []string
	for _, b := range batches {
		for i := range int(b.NumRows()) {
			cells := make([]string, b.NumCols())
			for c := range cells {
				cells[c] = valueString(b.Column(c), i)
			}
			rows = append(rows, strings.Join(cells, "|"))
		}
		b.Release()
	}
	slices.Sort(rows)
	return rows
}

// entryFiles lists the entry's shuffle files, by the agreed layout, under
// the work dir of the executor holding each.
func (c *cluster) entryFiles(e cache.Entry) []string {
	dirs := map[string]string{}
	for i, ex := range c.execs {
		dirs[ex.ID()] = c.dirs[i]
	}
	var out []string
	for _, part := range e.Locations {
		for _, l := range part {
			out = append(out, filepath.Join(dirs[l.Executor.ID], l.JobID, fmt.Sprint(l.StageID), fmt.Sprint(l.OutputPartition), fmt.Sprintf("data-%d.arrow", l.MapPartition)))
		}
	}
	return out
}

func (c *cluster) cacheEntry(t *testing.T, ctx context.Context, k cache.Key) (cache.Entry, bool) {
	t.Helper()
	var (
		e  cache.Entry
		ok bool
	)
	if err := c.sched.inspect(ctx, func(c *core) { e, ok = c.caches.Lookup(k) }); err != nil {
		t.Fatal(err)
	}
	return e, ok
}

func TestClusterCacheMaterializeHitClose(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := startCluster(t, ctx, Config{RestAddr: "127.0.0.1:0", FinalStageCleanupDelay: 200 * time.Millisecond}, 2, mem)
	sess := c.session(t, ctx, map[string]string{"quiver.target_partitions": "3"})
	cat := tpchCatalog(t)
	node := &logical.Cache{CacheID: uuid.NewString(), SessionID: sess, Input: tpchLogical(t, cat, 3), Name: "q3"}
	k := cache.Key{SessionID: sess, CacheID: node.CacheID}

	// Cold: a miss, materialized by a child job, then read back.
	st1 := c.watch(t, ctx, c.submit(t, ctx, sess, node))
	if st1.State != rpc.JobState_JOB_SUCCESSFUL {
		t.Fatalf("first query %s: %s", st1.State, st1.Error)
	}
	if len(st1.Caches) != 1 || st1.Caches[0].Outcome != "miss" || st1.Caches[0].CacheId != node.CacheID ||
		st1.Caches[0].Name != "q3" || st1.Caches[0].Partitions == 0 || st1.Caches[0].Bytes == 0 {
		t.Fatalf("first query cache events %v", st1.Caches)
	}
	rows1 := resultRows(t, ctx, mem, st1)
	if _, want := answer(t, 3); len(rows1) != len(want) {
		t.Fatalf("%d rows, answer has %d", len(rows1), len(want))
	}
	e, ok := c.cacheEntry(t, ctx, k)
	if !ok || e.State != cache.Materialized {
		t.Fatalf("entry %+v %v", e, ok)
	}
	var builds []string
	if err := c.sched.inspect(ctx, func(c *core) {
		for _, j := range c.jobs {
			if j.build != nil && j.state == rpc.JobState_JOB_SUCCESSFUL {
				builds = append(builds, j.id)
			}
		}
	}); err != nil {
		t.Fatal(err)
	}
	if len(builds) != 1 || builds[0] != e.JobID {
		t.Fatalf("build jobs %v, entry made by %s", builds, e.JobID)
	}
	files := c.entryFiles(e)
	if len(files) == 0 {
		t.Fatal("entry has no files")
	}

	// Warm: a hit, twice (the plan itself and a plan built on it).
	for i, plan := range []logical.Plan{node, &logical.SubqueryAlias{Input: node, Alias: "x"}} {
		id := c.submit(t, ctx, sess, plan)
		st := c.watch(t, ctx, id)
		if st.State != rpc.JobState_JOB_SUCCESSFUL {
			t.Fatalf("warm query %d %s: %s", i, st.State, st.Error)
		}
		if len(st.Caches) != 1 || st.Caches[0].Outcome != "hit" || st.Caches[0].Bytes != e.Bytes {
			t.Fatalf("warm query %d cache events %v", i, st.Caches)
		}
		var info JobInfo
		if err := c.sched.inspect(ctx, func(c *core) { info = c.jobInfo(c.jobs[id], true) }); err != nil {
			t.Fatal(err)
		}
		var plans []string
		for _, s := range info.Stages {
			plans = append(plans, s.Plan)
		}
		all := strings.Join(plans, "\n")
		if !strings.Contains(all, "CacheReaderExec") || strings.Contains(all, "Scan:") {
			t.Fatalf("warm query %d stage plans:\n%s", i, all)
		}
		if rows := resultRows(t, ctx, mem, st); !slices.Equal(rows, rows1) {
			t.Fatalf("warm query %d rows differ:\n%v\n%v", i, rows, rows1)
		}
	}

	// Past the final-stage cleanup delay the pinned files are still there.
	time.Sleep(600 * time.Millisecond)
	for _, f := range files {
		if _, err := os.Stat(f); err != nil {
			t.Fatalf("pinned file gone after cleanup: %v", err)
		}
	}
	var ci CachesInfo
	getJSON(t, "http://"+c.sched.RestAddr()+"/api/caches", &ci)
	// Three reads back, but the first is the building query's own: two hits.
	if len(ci.Entries) != 1 || ci.Entries[0].State != "materialized" || ci.Entries[0].Hits != 2 ||
		ci.Stats.Misses != 1 || ci.Stats.Materializations != 1 || ci.Stats.Hits != 2 || ci.Stats.BytesRead != 3*e.Bytes {
		t.Fatalf("REST caches %+v", ci)
	}
	lr, err := c.client.ListCaches(ctx, &rpc.ListCachesRequest{SessionId: sess})
	if err != nil || len(lr.Caches) != 1 || lr.Caches[0].State != "materialized" || lr.Caches[0].Partitions != int32(len(e.Locations)) {
		t.Fatalf("ListCaches %v %v", lr, err)
	}

	// Closing the session deletes the files.
	if _, err := c.client.CloseSession(ctx, &rpc.CloseSessionRequest{SessionId: sess}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		left := 0
		for _, f := range files {
			if _, err := os.Stat(f); err == nil {
				left++
			}
		}
		if left == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d cache files left after the session closed", left, len(files))
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, ok := c.cacheEntry(t, ctx, k); ok {
		t.Fatal("entry survived its session")
	}
}

// watchErr follows a job to its terminal status (safe off the test goroutine).
func watchErr(ctx context.Context, client rpc.SchedulerServiceClient, jobID string) (*rpc.JobStatus, error) {
	stream, err := client.WatchJob(ctx, &rpc.WatchJobRequest{JobId: jobID})
	if err != nil {
		return nil, err
	}
	var last *rpc.JobStatus
	for {
		st, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			if last == nil {
				return nil, fmt.Errorf("watch %s ended without a status", jobID)
			}
			return last, nil
		}
		if err != nil {
			return nil, err
		}
		last = st
	}
}

func TestClusterCacheConcurrentColdQueries(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := startCluster(t, ctx, Config{}, 2, mem)
	sess := c.session(t, ctx, map[string]string{"quiver.target_partitions": "2"})
	node := &logical.Cache{CacheID: uuid.NewString(), SessionID: sess, Input: tpchLogical(t, tpchCatalog(t), 1)}
	plan, err := logicalcodec.Encode(node)
	if err != nil {
		t.Fatal(err)
	}
	const n = 8
	statuses := make([]*rpc.JobStatus, n)
	var g errgroup.Group
	for i := range n {
		g.Go(func() error {
			r, err := c.client.ExecuteQuery(ctx, &rpc.ExecuteQueryRequest{SessionId: sess, LogicalPlan: plan})
			if err != nil {
				return err
			}
			statuses[i], err = watchErr(ctx, c.client, r.JobId)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	_, want := answer(t, 1)
	var first []string
	outcomes := map[string]int{}
	for i, st := range statuses {
		if st.State != rpc.JobState_JOB_SUCCESSFUL {
			t.Fatalf("query %d %s: %s", i, st.State, st.Error)
		}
		for _, ev := range st.Caches {
			outcomes[ev.Outcome]++
		}
		rows := resultRows(t, ctx, mem, st)
		if len(rows) != len(want) {
			t.Fatalf("query %d: %d rows, answer has %d", i, len(rows), len(want))
		}
		if first == nil {
			first = rows
		} else if !slices.Equal(rows, first) {
			t.Fatalf("query %d rows differ", i)
		}
	}
	var stats cache.Stats
	builds := 0
	if err := c.sched.inspect(ctx, func(c *core) {
		stats = c.caches.Stats()
		for _, j := range c.jobs {
			if j.build != nil {
				builds++
			}
		}
	}); err != nil {
		t.Fatal(err)
	}
	if builds != 1 || stats.Materializations != 1 || stats.Misses != 1 || outcomes["miss"] != 1 || outcomes["miss"]+outcomes["pending"]+outcomes["hit"] != n {
		t.Fatalf("%d builds, stats %+v, outcomes %v", builds, stats, outcomes)
	}
}

// TestClusterCacheLostFilesRebuild deletes a materialized entry's files
// behind the scheduler's back: the next query's read-back fails to fetch,
// the entry is invalidated and the query re-runs as a miss, with the right
// answer.
func TestClusterCacheLostFilesRebuild(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := startCluster(t, ctx, Config{}, 2, mem)
	sess := c.session(t, ctx, map[string]string{"quiver.target_partitions": "2"})
	node := &logical.Cache{CacheID: uuid.NewString(), SessionID: sess, Input: tpchLogical(t, tpchCatalog(t), 10)}
	k := cache.Key{SessionID: sess, CacheID: node.CacheID}
	st := c.watch(t, ctx, c.submit(t, ctx, sess, node))
	if st.State != rpc.JobState_JOB_SUCCESSFUL {
		t.Fatalf("first query %s: %s", st.State, st.Error)
	}
	want := resultRows(t, ctx, mem, st)
	e, ok := c.cacheEntry(t, ctx, k)
	if !ok {
		t.Fatal("no entry")
	}
	for _, d := range c.dirs {
		if err := os.RemoveAll(filepath.Join(d, e.JobID)); err != nil {
			t.Fatal(err)
		}
	}
	st = c.watch(t, ctx, c.submit(t, ctx, sess, node))
	if st.State != rpc.JobState_JOB_SUCCESSFUL {
		t.Fatalf("query after the files were lost %s: %s", st.State, st.Error)
	}
	if len(st.Caches) != 1 || st.Caches[0].Outcome != "miss" {
		t.Fatalf("cache events %v", st.Caches)
	}
	if rows := resultRows(t, ctx, mem, st); !slices.Equal(rows, want) {
		t.Fatalf("rows differ after the rebuild:\n%v\n%v", rows, want)
	}
	var stats cache.Stats
	if err := c.sched.inspect(ctx, func(c *core) { stats = c.caches.Stats() }); err != nil {
		t.Fatal(err)
	}
	if stats.Invalidations[cache.CauseFetchFailed] != 1 || stats.Materializations != 2 {
		t.Fatalf("stats %+v", stats)
	}
	if e2, ok := c.cacheEntry(t, ctx, k); !ok || e2.JobID == e.JobID || e2.State != cache.Materialized {
		t.Fatalf("entry after the rebuild %+v", e2)
	}
}
