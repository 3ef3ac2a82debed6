package cache

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"testing"

	"github.com/quiverdb/quiver/qerr"
)

// modelEntry is the obviously-correct model of one registry entry.
type modelEntry struct {
	state EntryState
	job   string
	stage int
	execs []string // executor of each output partition (materialized only)
	// sources is the lineage set while pending; stale the snapshot mark;
	// readers the Acquire count (materialized only).
	sources []Source
	stale   string
	readers int
}

// model is the registry as a plain map plus the counters it must report.
type model struct {
	entries map[Key]modelEntry
	stats   Stats
}

func (md *model) remove(k Key, cause Cause) {
	delete(md.entries, k)
	md.stats.Invalidations[cause]++
}

// TestPropertyRandomEventOrders drives random sequences of begin, set-stage,
// complete, abort, invalidate, executor loss, session close, lineage
// records, stale marks and reader counts (naming a build) against the
// model, checking every result and, after every step, the whole state: the
// entries, the pins, the counters and which keys Wait would block on.
func TestPropertyRandomEventOrders(t *testing.T) {
	seeds, steps := 200, 300
	if testing.Short() {
		seeds = 50
	}
	for seed := range seeds {
		runProperty(t, uint64(seed), steps)
		if t.Failed() {
			return
		}
	}
}

func runProperty(t *testing.T, seed uint64, steps int) {
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	m := NewMemory()
	md := &model{entries: map[Key]modelEntry{}}
	sessions := []string{"s1", "s2"}
	pick := func(xs ...string) string { return xs[rng.IntN(len(xs))] }
	randKey := func() Key { return key(pick(sessions...), pick("a", "b", "c")) }
	randJob := func() string { return pick("job-0", "job-1", "job-2", "job-3") }
	var history []string
	fail := func(format string, args ...any) {
		t.Helper()
		tail := history[max(0, len(history)-20):] // the steps that led here
		t.Fatalf("seed %d step %d, after ...%v: %s", seed, len(history), tail, fmt.Sprintf(format, args...))
	}

	for range steps {
		switch op := rng.IntN(13); op {
		case 0, 1: // begin
			k, job := randKey(), randJob()
			history = append(history, fmt.Sprintf("begin(%v,%s)", k, job))
			res, e := m.Begin(k, job, "", nil)
			me, ok := md.entries[k]
			want := Claimed
			switch {
			case !ok:
				me = modelEntry{state: Pending, job: job, stage: UnknownStage}
				md.entries[k] = me
				md.stats.Misses++
			case me.state == Pending:
				want = AlreadyPending
			default:
				want = AlreadyMaterialized
			}
			if res != want || e.JobID != me.job || e.State != me.state {
				fail("begin = %v owner %s state %v, want %v owner %s state %v", res, e.JobID, e.State, want, me.job, me.state)
			}
		case 2: // set stage
			k, job, stage := randKey(), randJob(), rng.IntN(3)
			history = append(history, fmt.Sprintf("setStage(%v,%s,%d)", k, job, stage))
			err := m.SetStage(k, job, stage)
			me, ok := md.entries[k]
			if ok && me.state == Pending && me.job == job {
				if err != nil {
					fail("set stage: %v", err)
				}
				me.stage = stage
				md.entries[k] = me
			} else if !errors.Is(err, ErrStale) {
				fail("set stage = %v, want stale", err)
			}
		case 3, 4: // complete
			k, job, stage := randKey(), randJob(), rng.IntN(3)
			execs := make([]string, rng.IntN(3))
			for i := range execs {
				execs[i] = pick("ex0", "ex1", "ex2")
			}
			history = append(history, fmt.Sprintf("complete(%v,%s,%d,%v)", k, job, stage, execs))
			err := m.Complete(k, job, stage, testSchema, locs(job, stage, execs...), nil)
			me, ok := md.entries[k]
			switch {
			case ok && me.state == Materialized && me.job == job:
				if err != nil {
					fail("duplicate complete: %v", err)
				}
			case ok && me.state == Pending && me.job == job:
				if err != nil {
					fail("complete: %v", err)
				}
				md.entries[k] = modelEntry{state: Materialized, job: job, stage: stage, execs: execs, sources: me.sources}
				md.stats.Materializations++
			default:
				if !errors.Is(err, ErrStale) || qerr.KindOf(err) != qerr.Execution {
					fail("complete = %v, want stale", err)
				}
				md.stats.StaleCompletions++
			}
		case 5: // abort
			k, job := randKey(), randJob()
			history = append(history, fmt.Sprintf("abort(%v,%s)", k, job))
			e, got := m.Abort(k, job)
			me, ok := md.entries[k]
			want := ok && me.state == Pending && me.job == job
			if got != want || got && (e.Key != k || e.JobID != job) {
				fail("abort = %+v %v, want %v", e, got, want)
			}
			if want {
				delete(md.entries, k)
				md.stats.Aborts++
			}
		case 6: // invalidate
			k := randKey()
			history = append(history, fmt.Sprintf("invalidate(%v)", k))
			e, got := m.Invalidate(k)
			me, ok := md.entries[k]
			if got != ok || got && (e.Key != k || e.State != me.state || e.JobID != me.job) {
				fail("invalidate = %+v %v, want %+v %v", e, got, me, ok)
			}
			if ok {
				md.remove(k, CauseUncache)
			}
		case 7, 8: // executor loss
			ex := pick("ex0", "ex1", "ex2")
			history = append(history, fmt.Sprintf("lose(%s)", ex))
			var want []Key
			for k, me := range md.entries {
				if me.state == Materialized && slices.Contains(me.execs, ex) {
					want = append(want, k)
				}
			}
			slices.SortFunc(want, compareKeys)
			for _, k := range want {
				md.remove(k, CauseExecutorLost)
			}
			if got := keysOf(m.InvalidateExecutor(ex)); !reflect.DeepEqual(got, want) {
				fail("invalidate executor %s = %v, want %v", ex, got, want)
			}
		case 9: // session close
			s := pick(sessions...)
			history = append(history, fmt.Sprintf("close(%s)", s))
			var want []Key
			for k := range md.entries {
				if k.SessionID == s {
					want = append(want, k)
				}
			}
			slices.SortFunc(want, compareKeys)
			for _, k := range want {
				md.remove(k, CauseSessionClosed)
			}
			if got := keysOf(m.RemoveSession(s)); !reflect.DeepEqual(got, want) {
				fail("remove session %s = %v, want %v", s, got, want)
			}
		case 10: // record lineage
			k, job := randKey(), randJob()
			src := []Source{{Table: pick("t", "u"), Path: pick("a", "b"), Size: int64(rng.IntN(3))}}
			history = append(history, fmt.Sprintf("setSources(%v,%s,%v)", k, job, src))
			err := m.SetSources(k, job, src)
			me, ok := md.entries[k]
			if ok && me.state == Pending && me.job == job {
				if err != nil {
					fail("set sources: %v", err)
				}
				me.sources = src
				md.entries[k] = me
			} else if !errors.Is(err, ErrStale) {
				fail("set sources = %v, want stale", err)
			}
		case 11: // stale mark
			k, reason := randKey(), pick("t changed", "u changed")
			history = append(history, fmt.Sprintf("markStale(%v,%s)", k, reason))
			got := m.MarkStale(k, reason)
			me, ok := md.entries[k]
			want := ok && me.state == Materialized
			if got != want {
				fail("mark stale = %v, want %v", got, want)
			}
			if want {
				me.stale = reason
				md.entries[k] = me
			}
		case 12: // a reader comes or goes, naming the build it read
			k, job := randKey(), randJob()
			me, ok := md.entries[k]
			if rng.IntN(2) == 0 {
				history = append(history, fmt.Sprintf("acquire(%v)", k))
				want := ok && me.state == Materialized
				if got := m.Acquire(k); got != want {
					fail("acquire = %v, want %v", got, want)
				}
				if want {
					me.readers++
					md.entries[k] = me
				}
			} else {
				history = append(history, fmt.Sprintf("release(%v,%s)", k, job))
				m.Release(k, job)
				if ok && me.state == Materialized && me.job == job && me.readers > 0 {
					me.readers--
					md.entries[k] = me
				}
			}
		}
		checkState(t, m, md, fail)
	}
}

func keysOf(es []Entry) []Key {
	var ks []Key
	for _, e := range es {
		ks = append(ks, e.Key)
	}
	return ks
}

// canceled is a context that is already done: Wait on it returns nil at once
// for a key that is not Pending and a canceled error for one that is.
var canceled = func() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}()

func checkState(t *testing.T, m *Memory, md *model, fail func(string, ...any)) {
	t.Helper()
	list := m.List("")
	if len(list) != len(md.entries) {
		fail("registry has %d entries, model %d", len(list), len(md.entries))
	}
	wantPins := map[[2]string]bool{}
	for _, e := range list {
		me, ok := md.entries[e.Key]
		if !ok {
			fail("registry has %v, model does not", e.Key)
		}
		if e.State != me.state || e.JobID != me.job || e.StageID != me.stage {
			fail("%v = %v/%s/%d, model %v/%s/%d", e.Key, e.State, e.JobID, e.StageID, me.state, me.job, me.stage)
		}
		if !slices.Equal(e.Sources, me.sources) || e.Stale != me.stale || e.Readers != me.readers {
			fail("%v sources %v stale %q readers %d, model %v %q %d", e.Key, e.Sources, e.Stale, e.Readers, me.sources, me.stale, me.readers)
		}
		var execs []string
		for _, part := range e.Locations {
			for _, l := range part {
				execs = append(execs, l.Executor.ID)
			}
		}
		if len(execs) != len(me.execs) || len(execs) > 0 && !reflect.DeepEqual(execs, me.execs) {
			fail("%v executors = %v, model %v", e.Key, execs, me.execs)
		}
		stage := AllStages
		if me.stage != UnknownStage {
			stage = strconv.Itoa(me.stage)
		}
		wantPins[[2]string{me.job, stage}] = true

		err := m.Wait(canceled, e.Key)
		if blocked := err != nil; blocked != (me.state == Pending) {
			fail("wait on %v (%v) = %v", e.Key, me.state, err)
		}
	}
	if got := m.PinnedStages(); !reflect.DeepEqual(got, wantPins) {
		fail("pins = %v, want %v", got, wantPins)
	}
	got := m.Stats()
	want := md.stats
	want.Entries = len(md.entries)
	for _, me := range md.entries {
		if me.state == Materialized {
			want.Bytes += 100 * int64(len(me.execs)) // locs gives each partition 100 bytes
		}
	}
	if got != want {
		fail("stats = %+v, want %+v", got, want)
	}
}
