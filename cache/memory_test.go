package cache

import (
	"context"
	"errors"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/quiverdb/quiver/qerr"
)

func TestLifecycleBeginCompleteInvalidate(t *testing.T) {
	clock := newClock()
	m := NewMemory(WithClock(clock.Now))
	k := key("s1", "c1")

	if _, ok := m.Lookup(k); ok {
		t.Fatal("lookup of a new key hit")
	}
	res, e := m.Begin(k, "job-1", "lineitem_cached", map[string]string{"ttl": "1h"})
	if res != Claimed || e.State != Pending || e.JobID != "job-1" || e.StageID != UnknownStage || e.Name != "lineitem_cached" {
		t.Fatalf("begin = %v %+v, want claimed pending job-1", res, e)
	}
	res, e = m.Begin(k, "job-2", "", nil)
	if res != AlreadyPending || e.JobID != "job-1" {
		t.Fatalf("second begin = %v owner %q, want already pending owned by job-1", res, e.JobID)
	}

	clock.Advance(time.Minute)
	if err := m.Complete(k, "job-1", 3, testSchema, locs("job-1", 3, "ex1", "ex2"), nil); err != nil {
		t.Fatalf("complete: %v", err)
	}
	e, ok := m.Lookup(k)
	if !ok || e.State != Materialized || e.StageID != 3 || e.Rows != 20 || e.Bytes != 200 ||
		!e.Schema.Equal(testSchema) || len(e.Locations) != 2 || !e.Created.Equal(clock.Now()) {
		t.Fatalf("after complete: %+v", e)
	}
	if got := e.Executors(); !reflect.DeepEqual(got, []string{"ex1", "ex2"}) {
		t.Fatalf("executors = %v", got)
	}
	if e.Options["ttl"] != "1h" {
		t.Fatalf("options lost: %v", e.Options)
	}
	if res, _ := m.Begin(k, "job-3", "", nil); res != AlreadyMaterialized {
		t.Fatalf("begin on materialized = %v", res)
	}
	// A duplicate completion by the producing job is idempotent.
	if err := m.Complete(k, "job-1", 3, testSchema, locs("job-1", 3, "ex1", "ex2"), nil); err != nil {
		t.Fatalf("duplicate complete: %v", err)
	}

	removed, ok := m.Invalidate(k)
	if !ok || removed.Key != k || removed.State != Materialized {
		t.Fatalf("invalidate = %+v %v", removed, ok)
	}
	if _, ok := m.Lookup(k); ok {
		t.Fatal("lookup after invalidate hit")
	}
	if _, ok := m.Invalidate(k); ok {
		t.Fatal("second invalidate removed something")
	}
	// A removed entry's next use is a miss that claims again.
	if res, _ := m.Begin(k, "job-4", "", nil); res != Claimed {
		t.Fatalf("begin after invalidate = %v, want claimed", res)
	}

	s := m.Stats()
	if s.Misses != 2 || s.Materializations != 1 || s.Invalidations[CauseUncache] != 1 || s.Entries != 1 || s.Bytes != 0 {
		t.Fatalf("stats = %+v", s)
	}
}

func TestAbort(t *testing.T) {
	m := NewMemory()
	k := key("s1", "c1")
	if _, ok := m.Abort(k, "job-1"); ok {
		t.Fatal("abort of an absent key succeeded")
	}
	m.Begin(k, "job-1", "", nil)
	if _, ok := m.Abort(k, "job-2"); ok {
		t.Fatal("abort by a job that does not own the claim succeeded")
	}
	e, ok := m.Abort(k, "job-1")
	if !ok || e.State != Pending || e.JobID != "job-1" {
		t.Fatalf("abort = %+v %v", e, ok)
	}
	if _, ok := m.Lookup(k); ok {
		t.Fatal("entry survived abort")
	}
	// Abort never removes a materialized entry, even by its producer.
	m.Begin(k, "job-2", "", nil)
	if err := m.Complete(k, "job-2", 0, testSchema, locs("job-2", 0, "ex1"), nil); err != nil {
		t.Fatal(err)
	}
	if _, ok := m.Abort(k, "job-2"); ok {
		t.Fatal("abort removed a materialized entry")
	}
	if s := m.Stats(); s.Aborts != 1 {
		t.Fatalf("aborts = %d, want 1", s.Aborts)
	}
}

func TestCompleteStale(t *testing.T) {
	k := key("s1", "c1")
	cases := []struct {
		name  string
		setup func(m *Memory)
		want  EntryState // 0 = absent after the stale completion
		owner string
	}{
		{"absent", func(m *Memory) {}, 0, ""},
		{"pending for another job", func(m *Memory) { m.Begin(k, "job-2", "", nil) }, Pending, "job-2"},
		{"materialized by another job", func(m *Memory) {
			m.Begin(k, "job-2", "", nil)
			mustComplete(t, m, k, "job-2", 1)
		}, Materialized, "job-2"},
		{"aborted", func(m *Memory) {
			m.Begin(k, "job-1", "", nil)
			m.Abort(k, "job-1")
		}, 0, ""},
		{"aborted and claimed again", func(m *Memory) {
			m.Begin(k, "job-1", "", nil)
			m.Abort(k, "job-1")
			m.Begin(k, "job-2", "", nil)
		}, Pending, "job-2"},
		{"invalidated while pending", func(m *Memory) {
			m.Begin(k, "job-1", "", nil)
			m.Invalidate(k)
		}, 0, ""},
		{"session closed", func(m *Memory) {
			m.Begin(k, "job-1", "", nil)
			m.RemoveSession("s1")
		}, 0, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := NewMemory()
			tc.setup(m)
			err := m.Complete(k, "job-1", 1, testSchema, locs("job-1", 1, "ex1"), nil)
			if !errors.Is(err, ErrStale) || qerr.KindOf(err) != qerr.Execution {
				t.Fatalf("complete = %v, want a stale execution error", err)
			}
			e, ok := m.Lookup(k)
			if tc.want == 0 {
				if ok {
					t.Fatalf("a stale completion resurrected %+v", e)
				}
				return
			}
			if !ok || e.State != tc.want || e.JobID != tc.owner {
				t.Fatalf("after stale completion: %+v %v, want %v owned by %s", e, ok, tc.want, tc.owner)
			}
			if m.Stats().StaleCompletions != 1 {
				t.Fatalf("stale completions = %d", m.Stats().StaleCompletions)
			}
		})
	}
}

func mustComplete(t *testing.T, m State, k Key, job string, stage int, executors ...string) {
	t.Helper()
	if len(executors) == 0 {
		executors = []string{"ex1"}
	}
	if err := m.Complete(k, job, stage, testSchema, locs(job, stage, executors...), nil); err != nil {
		t.Fatalf("complete %v by %s: %v", k, job, err)
	}
}

func TestCompleteValidatesOutput(t *testing.T) {
	m := NewMemory()
	k := key("s1", "c1")
	m.Begin(k, "job-1", "", nil)
	if err := m.Complete(k, "job-1", 1, nil, locs("job-1", 1, "ex1"), nil); qerr.KindOf(err) != qerr.Internal {
		t.Fatalf("nil schema: %v", err)
	}
	if err := m.Complete(k, "job-1", 1, testSchema, locs("job-1", 2, "ex1"), nil); qerr.KindOf(err) != qerr.Internal {
		t.Fatalf("location of another stage: %v", err)
	}
	bad := locs("job-1", 1, "ex1", "ex2")
	bad[0], bad[1] = bad[1], bad[0]
	if err := m.Complete(k, "job-1", 1, testSchema, bad, nil); qerr.KindOf(err) != qerr.Internal {
		t.Fatalf("locations out of partition order: %v", err)
	}
	if e, _ := m.Lookup(k); e.State != Pending {
		t.Fatalf("a rejected completion changed the entry: %+v", e)
	}
	// An empty output (zero partitions) is a valid, empty cache.
	if err := m.Complete(k, "job-1", 1, testSchema, nil, nil); err != nil {
		t.Fatalf("empty output: %v", err)
	}
}

// waitAsync starts Wait in a goroutine and returns the channel its result
// arrives on.
func waitAsync(ctx context.Context, m State, k Key) <-chan error {
	ch := make(chan error, 1)
	go func() { ch <- m.Wait(ctx, k) }()
	return ch
}

// assertBlocked checks that no waiter has returned yet.
func assertBlocked(t *testing.T, waiters []<-chan error) {
	t.Helper()
	time.Sleep(20 * time.Millisecond)
	for _, w := range waiters {
		select {
		case err := <-w:
			t.Fatalf("wait returned %v while the entry is pending", err)
		default:
		}
	}
}

func assertWoken(t *testing.T, waiters []<-chan error) {
	t.Helper()
	for _, w := range waiters {
		select {
		case err := <-w:
			if err != nil {
				t.Fatalf("wait = %v", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("waiter not woken")
		}
	}
}

func TestWaitWakesOnEveryTransition(t *testing.T) {
	k := key("s1", "c1")
	cases := []struct {
		name       string
		transition func(m *Memory)
		want       EntryState // 0 = absent
	}{
		{"complete", func(m *Memory) { mustComplete(t, m, k, "job-1", 1) }, Materialized},
		{"abort", func(m *Memory) { m.Abort(k, "job-1") }, 0},
		{"invalidate", func(m *Memory) { m.Invalidate(k) }, 0},
		{"remove session", func(m *Memory) { m.RemoveSession("s1") }, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := NewMemory()
			m.Begin(k, "job-1", "", nil)
			var waiters []<-chan error
			for range 8 {
				waiters = append(waiters, waitAsync(context.Background(), m, k))
			}
			assertBlocked(t, waiters)
			tc.transition(m)
			assertWoken(t, waiters)
			e, ok := m.Lookup(k)
			if tc.want == 0 && ok || tc.want != 0 && e.State != tc.want {
				t.Fatalf("after wake: %+v %v, want %v", e, ok, tc.want)
			}
		})
	}
}

func TestWaitNotPendingReturnsAtOnce(t *testing.T) {
	m := NewMemory()
	k := key("s1", "c1")
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // even a dead context: there is nothing to wait for
	if err := m.Wait(ctx, k); err != nil {
		t.Fatalf("wait on absent: %v", err)
	}
	m.Begin(k, "job-1", "", nil)
	mustComplete(t, m, k, "job-1", 1)
	if err := m.Wait(ctx, k); err != nil {
		t.Fatalf("wait on materialized: %v", err)
	}
}

func TestWaitHonoursContext(t *testing.T) {
	m := NewMemory()
	k := key("s1", "c1")
	m.Begin(k, "job-1", "", nil)

	ctx, cancel := context.WithCancel(context.Background())
	w := waitAsync(ctx, m, k)
	assertBlocked(t, []<-chan error{w})
	cancel()
	err := <-w
	if !errors.Is(err, context.Canceled) || qerr.KindOf(err) != qerr.Canceled {
		t.Fatalf("wait after cancel = %v", err)
	}

	dctx, dcancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer dcancel()
	if err := m.Wait(dctx, k); !errors.Is(err, context.DeadlineExceeded) || qerr.KindOf(err) != qerr.Canceled {
		t.Fatalf("wait past deadline = %v", err)
	}
	if e, _ := m.Lookup(k); e.State != Pending {
		t.Fatal("a canceled wait changed the entry")
	}
}

func TestPinnedStages(t *testing.T) {
	m := NewMemory()
	a, b, c := key("s1", "a"), key("s1", "b"), key("s2", "c")
	m.Begin(a, "job-a", "", nil)
	m.Begin(b, "job-b", "", nil)
	m.Begin(c, "job-c", "", nil)
	if err := m.SetStage(b, "job-b", 4); err != nil {
		t.Fatal(err)
	}
	if err := m.SetStage(c, "job-x", 4); !errors.Is(err, ErrStale) {
		t.Fatalf("set stage by a non-owner = %v", err)
	}
	mustComplete(t, m, c, "job-c", 7)

	want := map[[2]string]bool{
		{"job-a", AllStages}: true, // pending, stage unknown: the whole job
		{"job-b", "4"}:       true, // pending, stage known
		{"job-c", "7"}:       true, // materialized
	}
	if got := m.PinnedStages(); !reflect.DeepEqual(got, want) {
		t.Fatalf("pins = %v, want %v", got, want)
	}
	m.Abort(a, "job-a")
	m.Invalidate(c)
	if got := m.PinnedStages(); !reflect.DeepEqual(got, map[[2]string]bool{{"job-b", "4"}: true}) {
		t.Fatalf("pins after removals = %v", got)
	}
}

func TestInvalidateExecutor(t *testing.T) {
	m := NewMemory()
	a, b, c, d := key("s1", "a"), key("s2", "b"), key("s1", "c"), key("s1", "d")
	for _, k := range []Key{a, b, c, d} {
		m.Begin(k, "job-"+k.CacheID, "", nil)
	}
	mustComplete(t, m, a, "job-a", 1, "ex1", "ex2")
	mustComplete(t, m, b, "job-b", 1, "ex2")
	mustComplete(t, m, c, "job-c", 1, "ex3", "ex1")
	// d stays pending: it has no locations, so losing an executor cannot drop it.

	removed := m.InvalidateExecutor("ex2")
	if len(removed) != 2 || removed[0].Key != a || removed[1].Key != b {
		t.Fatalf("removed = %+v, want a and b", removed)
	}
	for _, k := range []Key{a, b} {
		if _, ok := m.Lookup(k); ok {
			t.Fatalf("%v survived the loss of its executor", k)
		}
	}
	for _, k := range []Key{c, d} {
		if _, ok := m.Lookup(k); !ok {
			t.Fatalf("%v was dropped but holds nothing on ex2", k)
		}
	}
	if got := m.InvalidateExecutor("ex9"); len(got) != 0 {
		t.Fatalf("unknown executor removed %v", got)
	}
	if s := m.Stats(); s.Invalidations[CauseExecutorLost] != 2 {
		t.Fatalf("executor_lost = %d", s.Invalidations[CauseExecutorLost])
	}
}

func TestRemoveSession(t *testing.T) {
	m := NewMemory()
	a, b, c := key("s1", "a"), key("s1", "b"), key("s2", "c")
	for _, k := range []Key{a, b, c} {
		m.Begin(k, "job-"+k.CacheID, "", nil)
	}
	mustComplete(t, m, a, "job-a", 1)
	mustComplete(t, m, c, "job-c", 1)
	w := waitAsync(context.Background(), m, b)

	removed := m.RemoveSession("s1")
	if len(removed) != 2 || removed[0].Key != a || removed[1].Key != b {
		t.Fatalf("removed = %+v", removed)
	}
	assertWoken(t, []<-chan error{w})
	if err := m.Complete(b, "job-b", 1, testSchema, locs("job-b", 1, "ex1"), nil); !errors.Is(err, ErrStale) {
		t.Fatalf("completion after session close = %v", err)
	}
	if got := m.List("s1"); len(got) != 0 {
		t.Fatalf("s1 still lists %v", got)
	}
	if got := m.List(""); len(got) != 1 || got[0].Key != c {
		t.Fatalf("remaining = %v", got)
	}
	if s := m.Stats(); s.Invalidations[CauseSessionClosed] != 2 {
		t.Fatalf("session_closed = %d", s.Invalidations[CauseSessionClosed])
	}
}

func TestListOrderAndFilter(t *testing.T) {
	clock := newClock()
	m := NewMemory(WithClock(clock.Now))
	for _, k := range []Key{key("s2", "z"), key("s1", "y"), key("s1", "x"), key("s1", "w")} {
		m.Begin(k, "job", "", nil)
		clock.Advance(time.Second)
	}
	var got []Key
	for _, e := range m.List("") {
		got = append(got, e.Key)
	}
	want := []Key{key("s1", "y"), key("s1", "x"), key("s1", "w"), key("s2", "z")} // by session, then creation
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("list = %v, want %v", got, want)
	}
	if got := m.List("s2"); len(got) != 1 || got[0].Key != key("s2", "z") {
		t.Fatalf("list s2 = %v", got)
	}
}

func TestEntriesAreCopies(t *testing.T) {
	m := NewMemory()
	k := key("s1", "c1")
	opts := map[string]string{"ttl": "1h"}
	m.Begin(k, "job-1", "", opts)
	opts["ttl"] = "changed"
	l := locs("job-1", 1, "ex1")
	if err := m.Complete(k, "job-1", 1, testSchema, l, nil); err != nil {
		t.Fatal(err)
	}
	l[0][0].Executor.ID = "changed"
	e, _ := m.Lookup(k)
	e.Locations[0][0].Rows = -1
	e.Options["ttl"] = "changed"
	again, _ := m.Lookup(k)
	if again.Options["ttl"] != "1h" || again.Locations[0][0].Executor.ID != "ex1" || again.Locations[0][0].Rows != 10 {
		t.Fatalf("registry state aliased a caller's value: %+v", again)
	}
}

func TestTouchAcquireReleaseStats(t *testing.T) {
	clock := newClock()
	m := NewMemory(WithClock(clock.Now))
	k := key("s1", "c1")
	m.Begin(k, "job-1", "", nil)
	m.Touch(k) // pending: not a hit
	if m.Acquire(k) {
		t.Fatal("acquired a pending entry")
	}
	mustComplete(t, m, k, "job-1", 1, "ex1", "ex2")
	clock.Advance(time.Minute)
	m.Touch(k)
	m.Touch(k)
	m.AddBytesRead(200)
	if !m.Acquire(k) || !m.Acquire(k) {
		t.Fatal("acquire of a materialized entry failed")
	}
	e, _ := m.Lookup(k)
	if e.Hits != 2 || !e.LastHit.Equal(clock.Now()) || e.Readers != 2 {
		t.Fatalf("entry = %+v", e)
	}
	m.Release(k, "job-0") // a reader of another build of k: not ours to drop
	if e, _ := m.Lookup(k); e.Readers != 2 {
		t.Fatalf("a release naming another build dropped a reader: %d", e.Readers)
	}
	m.Release(k, "job-1")
	m.Release(k, "job-1")
	m.Release(k, "job-1") // unpaired: must not go negative
	if e, _ := m.Lookup(k); e.Readers != 0 {
		t.Fatalf("readers = %d", e.Readers)
	}
	m.Release(key("s1", "absent"), "job-1") // no-op
	s := m.Stats()
	if s.Hits != 2 || s.BytesRead != 200 || s.Bytes != 200 || s.Entries != 1 {
		t.Fatalf("stats = %+v", s)
	}
}

func TestConcurrentBeginClaimsOnce(t *testing.T) {
	m := NewMemory()
	k := key("s1", "c1")
	const n = 64
	results := make([]BeginResult, n)
	owners := make([]string, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			var e Entry
			results[i], e = m.Begin(k, jobName(i), "", nil)
			owners[i] = e.JobID
		}()
	}
	close(start)
	wg.Wait()
	claimed := -1
	for i, r := range results {
		switch r {
		case Claimed:
			if claimed >= 0 {
				t.Fatalf("both %d and %d claimed", claimed, i)
			}
			claimed = i
		case AlreadyPending:
		default:
			t.Fatalf("goroutine %d got %v", i, r)
		}
	}
	if claimed < 0 {
		t.Fatal("nobody claimed")
	}
	for i, o := range owners {
		if o != jobName(claimed) {
			t.Fatalf("goroutine %d saw owner %s, want %s", i, o, jobName(claimed))
		}
	}
}

// TestConcurrentQueriesOnePendingCache runs the scheduler's wait-and-notify
// loop from many goroutines: the first builds fail twice (abort), the third
// succeeds; every query ends with the materialized entry, exactly one build
// succeeds and no two builds overlap.
func TestConcurrentQueriesOnePendingCache(t *testing.T) {
	m := NewMemory()
	k := key("s1", "c1")
	const queries = 32
	var (
		mu       sync.Mutex
		builds   int
		building bool
	)
	var wg sync.WaitGroup
	errs := make(chan error, queries)
	for q := range queries {
		wg.Add(1)
		go func() {
			defer wg.Done()
			job := jobName(q)
			for attempt := 0; ; attempt++ {
				if attempt > 100 {
					errs <- errors.New("too many attempts")
					return
				}
				res, _ := m.Begin(k, job, "", nil)
				switch res {
				case AlreadyMaterialized:
					errs <- nil
					return
				case AlreadyPending:
					if err := m.Wait(context.Background(), k); err != nil {
						errs <- err
						return
					}
					continue
				}
				mu.Lock()
				if building {
					mu.Unlock()
					errs <- errors.New("two builds at once")
					return
				}
				building = true
				builds++
				fail := builds <= 2
				mu.Unlock()
				time.Sleep(time.Millisecond) // the build runs
				mu.Lock()
				building = false
				mu.Unlock()
				if fail {
					if _, ok := m.Abort(k, job); !ok {
						errs <- errors.New("abort of own claim failed")
						return
					}
					continue
				}
				if err := m.Complete(k, job, 1, testSchema, locs(job, 1, "ex1"), nil); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	s := m.Stats()
	if builds != 3 || s.Materializations != 1 || s.Aborts != 2 || s.Misses != 3 {
		t.Fatalf("builds = %d, stats = %+v; want 3 builds, 1 materialization, 2 aborts", builds, s)
	}
}
