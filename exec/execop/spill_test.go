package execop

import (
	"math"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// consumer is a spillable consumer in these tests: it reserves what it
// reports holding.
type consumer struct {
	a    *AccountingAllocator
	s    *Spiller
	held int64
}

func newConsumer(a *AccountingAllocator) *consumer { return &consumer{a: a, s: a.NewSpiller()} }

func (c *consumer) grow(t *testing.T, n int64) {
	t.Helper()
	if err := c.a.Reserve(n); err != nil {
		t.Fatalf("consumer reserving %d: %v", n, err)
	}
	c.held += n
	c.s.SetHeld(c.held)
}

// spill gives back everything the consumer holds; it stays registered.
func (c *consumer) spill() {
	c.a.Release(c.held)
	c.held = 0
	c.s.SetHeld(0)
}

func (c *consumer) close() {
	c.spill()
	c.s.Close()
}

func wantRoom(t *testing.T, what string, s *Spiller, want int64) {
	t.Helper()
	if got := s.Room(); got != want {
		t.Errorf("%s: room %d, want %d", what, got, want)
	}
}

// TestSpillShares: spillable consumers share what the unspillable memory
// and the reserve (an eighth of the limit) leave, evenly, whatever each
// one holds; unspillable memory that grows shrinks every share, down to no
// room at all; a consumer released hands its share to the others; one not
// yet registered counts itself.
func TestSpillShares(t *testing.T) {
	a := NewAccountingAllocator(memory.DefaultAllocator, 8000) // reserve 1000
	cs := []*consumer{newConsumer(a), newConsumer(a), newConsumer(a)}
	cs[0].grow(t, 1000)
	cs[1].grow(t, 500)
	cs[2].grow(t, 1500)
	if err := a.Reserve(1000); err != nil { // unspillable
		t.Fatal(err)
	}
	// (8000 − 1000 − 1000) / 3 = 2000 each; the headroom is 4000.
	wantRoom(t, "first", cs[0].s, 1000)
	wantRoom(t, "second", cs[1].s, 1500)
	wantRoom(t, "third (at its share)", cs[2].s, 500)

	// The unspillable memory grows: (8000 − 2500 − 1000) / 3 = 1500.
	if err := a.Reserve(1500); err != nil {
		t.Fatal(err)
	}
	wantRoom(t, "first, unspillable grown", cs[0].s, 500)
	wantRoom(t, "third, unspillable grown (over its share)", cs[2].s, 0)
	// And more: (8000 − 4000 − 1000) / 3 = 1000, the first is at it.
	if err := a.Reserve(1500); err != nil {
		t.Fatal(err)
	}
	wantRoom(t, "first, unspillable grown again", cs[0].s, 0)
	wantRoom(t, "second, unspillable grown again", cs[1].s, 500)
	a.Release(3000) // back to 1000 unspillable

	// The third spills and stays registered: its share is still a third.
	cs[2].spill()
	wantRoom(t, "third after spilling", cs[2].s, 2000)
	// A new consumer, not yet registered, counts itself: a quarter each.
	late := newConsumer(a)
	wantRoom(t, "unregistered", late.s, 1500)
	wantRoom(t, "first before the new one registers", cs[0].s, 1000)
	late.grow(t, 100)
	wantRoom(t, "first after the new one registered", cs[0].s, 500)
	late.close()

	// The third is released: (8000 − 1000 − 1000) / 2 = 3000 each.
	cs[2].close()
	wantRoom(t, "first, one released", cs[0].s, 2000)
	wantRoom(t, "second, one released", cs[1].s, 2500)
	// Closing twice changes nothing; neither does reporting after Close.
	cs[2].s.Close()
	cs[2].s.SetHeld(5000)
	wantRoom(t, "first, released twice", cs[0].s, 2000)

	// A consumer released while still holding memory: what it holds is
	// unspillable now, (8000 − 1000 − 500 − 1000) / 1 = 5500.
	cs[1].s.Close()
	wantRoom(t, "first, the other closed holding 500", cs[0].s, 4500)
	cs[1].spill()
	cs[0].close()
	a.Release(1000)
	if a.Current() != 0 || a.spillers.Load() != 0 || a.spillHeld.Load() != 0 {
		t.Fatalf("after closing all: current %d, spillers %d, spill held %d", a.Current(), a.spillers.Load(), a.spillHeld.Load())
	}
}

// TestSpillSharesLeaveRoomForUnspillable: two consumers that take memory
// as long as their rule grants it, then an unspillable request of almost
// an eighth of the limit. Under the shares it fits; measured against the
// headroom alone (the rule before shares) the consumers take everything
// and it fails, so the scenario needs the shares.
func TestSpillSharesLeaveRoomForUnspillable(t *testing.T) {
	const limit, step = 16000, 100
	for _, c := range []struct {
		name string
		room func(*consumer) int64
		fits bool
	}{
		{"shares", func(c *consumer) int64 { return c.s.Room() }, true},
		{"headroom", func(c *consumer) int64 { return c.a.Headroom() }, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := NewAccountingAllocator(memory.DefaultAllocator, limit)
			if err := a.Reserve(3000); err != nil { // scans and exchanges
				t.Fatal(err)
			}
			defer a.Release(3000)
			cs := []*consumer{newConsumer(a), newConsumer(a)}
			for more := true; more; {
				more = false
				for _, x := range cs {
					if c.room(x) >= step {
						x.grow(t, step)
						more = true
					}
				}
			}
			defer func() {
				for _, x := range cs {
					x.close()
				}
			}()
			if c.name == "shares" && cs[0].held != cs[1].held {
				t.Errorf("consumers hold %d and %d, want equal shares", cs[0].held, cs[1].held)
			}
			err := a.Reserve(limit/8 - step)
			if err == nil {
				a.Release(limit/8 - step)
			}
			if (err == nil) != c.fits {
				t.Fatalf("unspillable request beside consumers holding %d and %d: error %v, want fits=%v", cs[0].held, cs[1].held, err, c.fits)
			}
		})
	}
}

// TestSpillSharesPool: consumers of two tasks share the executor's pool;
// a task's own lower limit gives its consumers the smaller share.
func TestSpillSharesPool(t *testing.T) {
	pool := NewPool(8000) // reserve 1000
	a := NewTaskAllocator(memory.DefaultAllocator, 0, pool)
	b := NewTaskAllocator(memory.DefaultAllocator, 0, pool)
	ca, cb := newConsumer(a), newConsumer(b)
	ca.grow(t, 1000)
	cb.grow(t, 2000)
	if err := b.Reserve(1000); err != nil { // unspillable, in the other task
		t.Fatal(err)
	}
	defer b.Release(1000)
	// (8000 − 1000 − 1000) / 2 = 3000 each.
	wantRoom(t, "task a", ca.s, 2000)
	wantRoom(t, "task b", cb.s, 1000)
	if pool.spillers.Load() != 2 || pool.spillHeld.Load() != 3000 {
		t.Errorf("pool: %d spillers holding %d, want 2 holding 3000", pool.spillers.Load(), pool.spillHeld.Load())
	}
	ca.close()
	cb.close()

	// A task limited to 2000 under the pool: (2000 − 0 − 250) / 1 = 1750.
	small := NewTaskAllocator(memory.DefaultAllocator, 2000, pool)
	cs := newConsumer(small)
	cs.grow(t, 750)
	wantRoom(t, "task under its own limit", cs.s, 1000)
	cs.close()
	if pool.spillers.Load() != 0 || pool.spillHeld.Load() != 0 || small.spillers.Load() != 0 {
		t.Fatalf("after closing: pool %d spillers holding %d, task %d spillers", pool.spillers.Load(), pool.spillHeld.Load(), small.spillers.Load())
	}
}

// TestSpillerWithoutLimit: without an accounting allocator or a limit a
// consumer may take anything; with a limit its room never exceeds the
// headroom.
func TestSpillerWithoutLimit(t *testing.T) {
	tc := NewTaskContext(memory.DefaultAllocator, 0, nil)
	s := tc.NewSpiller()
	s.SetHeld(1 << 40)
	if got := s.Room(); got != math.MaxInt64 {
		t.Errorf("unaccounted: room %d, want MaxInt64", got)
	}
	s.Close()
	a := NewAccountingAllocator(memory.DefaultAllocator, 0)
	c := newConsumer(a)
	c.grow(t, 1000)
	if got := c.s.Room(); got != math.MaxInt64 {
		t.Errorf("no limit: room %d, want MaxInt64", got)
	}
	c.close()
	// One consumer holding nothing, unspillable at 7500 of 8000: the share
	// is 0 (below the reserve), and no room is negative.
	l := NewAccountingAllocator(memory.DefaultAllocator, 8000)
	if err := l.Reserve(7500); err != nil {
		t.Fatal(err)
	}
	wantRoom(t, "over the reserve", l.NewSpiller(), 0)
	l.Release(7500)
}

// TestSpillersConcurrent: consumers registering, reporting and closing in
// many goroutines leave every count at zero.
func TestSpillersConcurrent(t *testing.T) {
	pool := NewPool(1 << 30)
	a := NewTaskAllocator(memory.DefaultAllocator, 1<<29, pool)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				s := a.NewSpiller()
				for k := range 5 {
					s.SetHeld(int64((g+1)*(i+k)) % 1000)
					_ = s.Room()
				}
				s.Close()
			}
		}()
	}
	wg.Wait()
	for _, l := range []*AccountingAllocator{a, pool} {
		if l.spillers.Load() != 0 || l.spillHeld.Load() != 0 {
			t.Fatalf("%d spillers holding %d after all closed", l.spillers.Load(), l.spillHeld.Load())
		}
	}
}
