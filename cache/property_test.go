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

	"github.com/quiverdb/quiver/physical"
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
	// execs[p] is "" for a missing partition (a partial entry);
	// repairJob/repairStage the repair running, repairs those completed.
	repairJob   string
	repairStage int
	repairs     []StageRef
}

// partial reports whether the model entry has a missing partition.
func (me modelEntry) partial() bool { return slices.Contains(me.execs, "") }

// model is the registry as a plain map plus the counters it must report.
type model struct {
	entries map[Key]modelEntry
	stats   Stats
}

// restart is what a durable registry keeps across a restart: its
// materialized entries, without readers or a repair in flight, and no
// counters.
func (md *model) restart() {
	for k, me := range md.entries {
		if me.state != Materialized {
			delete(md.entries, k)
			continue
		}
		me.readers, me.repairJob, me.repairStage = 0, "", 0
		md.entries[k] = me
	}
	md.stats = Stats{}
}

func (md *model) remove(k Key, cause Cause) {
	delete(md.entries, k)
	md.stats.Invalidations[cause]++
}

// TestPropertyRandomEventOrders drives random sequences of begin, set-stage,
// complete, abort, invalidate, executor loss (whole entries, or partial
// ones with their repairs begun, staged, completed — rightly or with a
// wrong partition — and aborted), session close, lineage records, stale
// marks and reader counts (naming a build) against the model, checking every result and, after every step, the whole state: the
// entries, the pins, the counters and which keys Wait would block on.
func TestPropertyRandomEventOrders(t *testing.T) {
	seeds, steps := 200, 300
	if testing.Short() {
		seeds = 50
	}
	var partials, repairs int64
	for seed := range seeds {
		st := runProperty(t, uint64(seed), steps, "")
		if t.Failed() {
			return
		}
		partials, repairs = partials+st.Partials, repairs+st.Repairs
	}
	// The runs must reach the paths they are there to check.
	if partials == 0 || repairs == 0 {
		t.Fatalf("no run made an entry partial (%d) or repaired one (%d)", partials, repairs)
	}
}

// TestPropertyRestarts runs the same random event orders on the durable
// registry, closing it and opening it again from its store at random
// steps: what comes back is the model's materialized entries (partial and
// repaired ones included) with their pins, and nothing else — no pending
// claim, repair in flight, reader or counter survives a restart.
func TestPropertyRestarts(t *testing.T) {
	seeds, steps := 12, 200
	if testing.Short() {
		seeds = 4
	}
	for seed := range seeds {
		runProperty(t, uint64(1000+seed), steps, t.TempDir())
		if t.Failed() {
			return
		}
	}
}

// runProperty runs steps random events on a registry — in memory, or
// durable in dir (with restarts) — against the model.
func runProperty(t *testing.T, seed uint64, steps int, dir string) Stats {
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	var m State = NewMemory()
	if dir != "" {
		d, err := NewDurable(dir)
		if err != nil {
			t.Fatal(err)
		}
		m = d
		defer func() { m.(*Durable).Close() }()
	}
	md := &model{entries: map[Key]modelEntry{}}
	sessions := []string{"s1", "s2"}
	pick := func(xs ...string) string { return xs[rng.IntN(len(xs))] }
	randKey := func() Key { return key(pick(sessions...), pick("a", "b", "c")) }
	randJob := func() string { return pick("job-0", "job-1", "job-2", "job-3") }
	// partialKey is, half the time, a partial entry's key (so repairs meet
	// the entries they are for), and its repair job when one runs.
	partialKey := func() (Key, string) {
		var ks []Key
		for k, me := range md.entries {
			if me.state == Materialized && me.partial() {
				ks = append(ks, k)
			}
		}
		job := pick("rep-0", "rep-1")
		if len(ks) == 0 || rng.IntN(2) == 0 {
			return randKey(), job
		}
		slices.SortFunc(ks, compareKeys)
		k := ks[rng.IntN(len(ks))]
		if r := md.entries[k].repairJob; r != "" && rng.IntN(4) > 0 {
			job = r
		}
		return k, job
	}
	var history []string
	fail := func(format string, args ...any) {
		t.Helper()
		tail := history[max(0, len(history)-20):] // the steps that led here
		t.Fatalf("seed %d step %d, after ...%v: %s", seed, len(history), tail, fmt.Sprintf(format, args...))
	}

	for range steps {
		if dir != "" && rng.IntN(15) == 0 {
			history = append(history, "restart")
			if err := m.(*Durable).Close(); err != nil {
				fail("close: %v", err)
			}
			d, err := NewDurable(dir)
			if err != nil {
				fail("reopen: %v", err)
			}
			m = d
			md.restart()
			checkState(t, m, md, fail)
			continue
		}
		switch op := rng.IntN(18); op {
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
			execs := make([]string, rng.IntN(5))
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
		case 13, 14: // executor loss: partial entries
			ex := pick("ex0", "ex1", "ex2")
			history = append(history, fmt.Sprintf("loseP(%s)", ex))
			var hit []Key
			for k, me := range md.entries {
				if me.state == Materialized && slices.Contains(me.execs, ex) {
					hit = append(hit, k)
				}
			}
			slices.SortFunc(hit, compareKeys)
			var wantRemoved, wantPartial []Key
			for _, k := range hit {
				me := md.entries[k]
				shared := false
				for o, oe := range md.entries {
					if o != k && oe.state == Materialized && oe.job == me.job && oe.stage == me.stage {
						shared = true
					}
				}
				execs := slices.Clone(me.execs)
				left := 0
				for p := range execs {
					if execs[p] == ex {
						execs[p] = ""
					}
					if execs[p] != "" {
						left++
					}
				}
				if me.repairJob != "" || shared || left == 0 {
					md.remove(k, CauseExecutorLost)
					wantRemoved = append(wantRemoved, k)
					continue
				}
				me.execs = execs
				md.entries[k] = me
				md.stats.Partials++
				wantPartial = append(wantPartial, k)
			}
			removed, partial := m.LoseExecutor(ex)
			if got := keysOf(removed); !reflect.DeepEqual(got, wantRemoved) {
				fail("lose executor %s removed %v, want %v", ex, got, wantRemoved)
			}
			if got := keysOf(partial); !reflect.DeepEqual(got, wantPartial) {
				fail("lose executor %s made partial %v, want %v", ex, got, wantPartial)
			}
		case 15: // begin or stage a repair
			k, job := partialKey()
			me, ok := md.entries[k]
			if rng.IntN(2) == 0 {
				history = append(history, fmt.Sprintf("beginRepair(%v,%s)", k, job))
				_, got := m.BeginRepair(k, job)
				want := ok && me.state == Materialized && me.partial() && me.repairJob == ""
				if got != want {
					fail("begin repair = %v, want %v", got, want)
				}
				if want {
					me.repairJob, me.repairStage = job, UnknownStage
					md.entries[k] = me
				}
			} else {
				stage := rng.IntN(3)
				history = append(history, fmt.Sprintf("setRepairStage(%v,%s,%d)", k, job, stage))
				err := m.SetRepairStage(k, job, stage)
				if ok && me.state == Materialized && me.repairJob == job {
					if err != nil {
						fail("set repair stage: %v", err)
					}
					me.repairStage = stage
					md.entries[k] = me
				} else if !errors.Is(err, ErrStale) {
					fail("set repair stage = %v, want stale", err)
				}
			}
		case 16: // complete a repair: the missing partitions, or a wrong one too
			k, job := partialKey()
			stage := rng.IntN(3)
			me, ok := md.entries[k]
			n := len(me.execs)
			if !ok {
				n = rng.IntN(3)
			}
			out := make([][]physical.PartitionLocation, n)
			wrote := make([]string, n)
			wrong := rng.IntN(4) == 0
			for p := range out {
				if (ok && me.execs[p] == "") != (wrong && p == 0) {
					ex := pick("ex0", "ex1", "ex2")
					wrote[p] = ex
					out[p] = locs(job, stage, slices.Repeat([]string{ex}, p+1)...)[p : p+1][0]
				}
			}
			history = append(history, fmt.Sprintf("completeRepair(%v,%s,%d,%v)", k, job, stage, wrote))
			err := m.CompleteRepair(k, job, stage, out)
			switch {
			case !ok || me.state != Materialized || me.repairJob != job:
				if !errors.Is(err, ErrStale) {
					fail("complete repair = %v, want stale", err)
				}
				md.stats.StaleCompletions++
			case wrong && n > 0:
				if qerr.KindOf(err) != qerr.Internal {
					fail("complete repair writing a partition not missing = %v, want an internal error", err)
				}
			default:
				if err != nil {
					fail("complete repair: %v", err)
				}
				for p := range me.execs {
					if me.execs[p] == "" {
						me.execs[p] = wrote[p]
					}
				}
				me.execs = slices.Clone(me.execs)
				me.repairs = append(slices.Clone(me.repairs), StageRef{JobID: job, StageID: stage})
				me.repairJob, me.repairStage = "", 0
				md.entries[k] = me
				md.stats.Repairs++
			}
		case 17: // abort a repair
			k, job := partialKey()
			history = append(history, fmt.Sprintf("abortRepair(%v,%s)", k, job))
			me, ok := md.entries[k]
			want := ok && me.state == Materialized && me.repairJob == job
			if got := m.AbortRepair(k, job); got != want {
				fail("abort repair = %v, want %v", got, want)
			}
			if want {
				me.repairJob, me.repairStage = "", 0
				md.entries[k] = me
			}
		}
		checkState(t, m, md, fail)
	}
	return md.stats
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

func checkState(t *testing.T, m State, md *model, fail func(string, ...any)) {
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
		var missing []int
		for p, part := range e.Locations {
			if len(part) == 0 {
				execs = append(execs, "")
				missing = append(missing, p)
			}
			for _, l := range part {
				execs = append(execs, l.Executor.ID)
			}
		}
		if len(execs) != len(me.execs) || len(execs) > 0 && !reflect.DeepEqual(execs, me.execs) {
			fail("%v executors = %v, model %v", e.Key, execs, me.execs)
		}
		if !slices.Equal(e.Missing, missing) || e.Partial() != me.partial() || e.RepairJob != me.repairJob || !slices.Equal(e.Repairs, me.repairs) {
			fail("%v missing %v repair %q repairs %v, model %v %q %v", e.Key, e.Missing, e.RepairJob, e.Repairs, me.execs, me.repairJob, me.repairs)
		}
		stage := AllStages
		if me.stage != UnknownStage {
			stage = strconv.Itoa(me.stage)
		}
		wantPins[[2]string{me.job, stage}] = true
		for _, r := range me.repairs {
			wantPins[[2]string{r.JobID, strconv.Itoa(r.StageID)}] = true
		}
		if me.repairJob != "" {
			stage := AllStages
			if me.repairStage != UnknownStage {
				stage = strconv.Itoa(me.repairStage)
			}
			wantPins[[2]string{me.repairJob, stage}] = true
		}

		err := m.Wait(canceled, e.Key)
		if blocked := err != nil; blocked != (me.state == Pending || me.repairJob != "") {
			fail("wait on %v (%v, repair %q) = %v", e.Key, me.state, me.repairJob, err)
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
			for _, ex := range me.execs {
				if ex != "" {
					want.Bytes += 100 // locs gives each partition 100 bytes
				}
			}
		}
	}
	if got != want {
		fail("stats = %+v, want %+v", got, want)
	}
}
