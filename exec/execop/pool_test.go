package execop

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver/qerr"
)

// TestPoolBoundsTasksTogether: two tasks without limits of their own share
// the pool's; Arrow allocations and reservations both count, a failure
// leaves every count unchanged, and frees return the bytes to both.
func TestPoolBoundsTasksTogether(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	pool := NewPool(1000)
	a := NewTaskAllocator(mem, 0, pool)
	b := NewTaskAllocator(mem, 0, pool)

	buf := a.Allocate(600)
	if err := b.Reserve(300); err != nil {
		t.Fatalf("reserve within the pool: %v", err)
	}
	if pool.Current() != 900 || a.Current() != 600 || b.Current() != 300 {
		t.Fatalf("counts pool %d a %d b %d, want 900 600 300", pool.Current(), a.Current(), b.Current())
	}
	err := b.Reserve(200)
	var le *LimitError
	if !qerr.Is(err, qerr.Resources) || !errors.As(err, &le) || !strings.Contains(err.Error(), "executor's memory limit") {
		t.Fatalf("reserve past the pool: got %v, want a resources error naming the executor's limit", err)
	}
	if pool.Current() != 900 || b.Current() != 300 {
		t.Fatalf("a refused reservation changed the counts: pool %d b %d", pool.Current(), b.Current())
	}
	func() {
		defer func() {
			r := recover()
			if _, ok := r.(*LimitError); !ok {
				t.Fatalf("allocation past the pool: recovered %v, want a *LimitError", r)
			}
		}()
		b.Allocate(200)
	}()
	if pool.Current() != 900 || b.Current() != 300 {
		t.Fatalf("a refused allocation changed the counts: pool %d b %d", pool.Current(), b.Current())
	}
	a.Free(buf)
	b.Release(300)
	if pool.Current() != 0 || a.Current() != 0 || b.Current() != 0 {
		t.Fatalf("after freeing: pool %d a %d b %d, want 0", pool.Current(), a.Current(), b.Current())
	}
	if pool.Peak() != 900 {
		t.Errorf("pool peak %d, want 900", pool.Peak())
	}
}

// TestTaskLimitBelowPool: the task's own limit still applies under a
// larger pool, and its error names quiver.memory_limit.
func TestTaskLimitBelowPool(t *testing.T) {
	pool := NewPool(1 << 20)
	a := NewTaskAllocator(memory.DefaultAllocator, 100, pool)
	err := a.Reserve(200)
	if !qerr.Is(err, qerr.Resources) || !strings.Contains(err.Error(), "quiver.memory_limit") {
		t.Fatalf("got %v, want the query's limit named", err)
	}
	if pool.Current() != 0 {
		t.Fatalf("pool count %d after a refused reservation, want 0", pool.Current())
	}
}

// TestSoftLimitedCountsPool: code that must not see a panic counts past
// the pool's limit, reports the crossing, and gives the bytes back to both
// counts when it frees them.
func TestSoftLimitedCountsPool(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	pool := NewPool(100)
	soft, crossed := SoftLimited(NewTaskAllocator(mem, 0, pool))
	buf := soft.Allocate(300)
	if err := crossed(); !qerr.Is(err, qerr.Resources) {
		t.Fatalf("crossed: got %v, want a resources error", err)
	}
	if pool.Current() != 300 {
		t.Fatalf("pool count %d, want 300", pool.Current())
	}
	soft.Free(buf)
	if pool.Current() != 0 {
		t.Fatalf("pool count %d after free, want 0", pool.Current())
	}
}

// TestRefusedRequestLeavesRoom: a request over the limit, refused over and
// over in one goroutine, never makes a request that fits fail in another;
// the same for a pool shared by two tasks.
func TestRefusedRequestLeavesRoom(t *testing.T) {
	pool := NewPool(1000)
	for _, c := range []struct {
		name       string
		big, small *AccountingAllocator
	}{
		{"task", NewAccountingAllocator(memory.DefaultAllocator, 1000), nil},
		{"pool", NewTaskAllocator(memory.DefaultAllocator, 0, pool), NewTaskAllocator(memory.DefaultAllocator, 0, pool)},
	} {
		t.Run(c.name, func(t *testing.T) {
			big, small := c.big, c.small
			if small == nil {
				small = big
			}
			if err := big.Reserve(600); err != nil {
				t.Fatal(err)
			}
			defer big.Release(600)
			var overshot atomic.Bool
			done := make(chan struct{})
			go func() {
				defer close(done)
				for range 100000 {
					if big.Reserve(500) == nil {
						overshot.Store(true)
						big.Release(500)
					}
				}
			}()
			var failed int
		loop:
			for {
				select {
				case <-done:
					break loop
				default:
				}
				if small.Reserve(300) != nil {
					failed++
					continue
				}
				small.Release(300)
			}
			if overshot.Load() {
				t.Error("a reservation past the limit succeeded")
			}
			if failed > 0 {
				t.Fatalf("%d requests of 300 bytes failed with 600 of 1000 held", failed)
			}
		})
	}
}
