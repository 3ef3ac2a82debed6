package cache

import (
	"reflect"
	"testing"
	"time"

	"github.com/quiverdb/quiver/qerr"
)

// materialize adds a materialized entry of 100 bytes per executor.
func materialize(t *testing.T, m *Memory, k Key, opts map[string]string, executors ...string) {
	t.Helper()
	job := "job-" + k.CacheID
	if res, _ := m.Begin(k, job, "", opts); res != Claimed {
		t.Fatalf("begin %v = %v", k, res)
	}
	mustComplete(t, m, k, job, 1, executors...)
}

func TestExpiredTTL(t *testing.T) {
	clock := newClock()
	m := NewMemory(WithClock(clock.Now))
	materialize(t, m, key("s", "default"), nil, "ex1")
	materialize(t, m, key("s", "long"), map[string]string{TTLOption: "3h"}, "ex1")
	materialize(t, m, key("s", "never"), map[string]string{TTLOption: "0s"}, "ex1")
	materialize(t, m, key("s", "bad"), map[string]string{TTLOption: "soon"}, "ex1") // falls back to the default
	materialize(t, m, key("s", "hot"), nil, "ex1")
	materialize(t, m, key("s", "read"), nil, "ex1")
	m.Begin(key("s", "pending"), "job-p", "", nil)

	clock.Advance(90 * time.Minute)
	m.Touch(key("s", "hot")) // used recently: its idle time restarts
	if !m.Acquire(key("s", "read")) {
		t.Fatal("acquire failed")
	}
	if got := m.Expired(clock.Now(), time.Hour, 0); !reflect.DeepEqual(got, []Key{key("s", "bad"), key("s", "default")}) {
		t.Fatalf("expired after 90m = %v", got)
	}
	if got := m.Expired(clock.Now(), 0, 0); len(got) != 0 {
		t.Fatalf("expired with no default ttl = %v", got)
	}

	clock.Advance(2 * time.Hour) // 3h30m since creation, 2h since the hit
	m.Release(key("s", "read"), "job-read")
	want := []Key{key("s", "bad"), key("s", "default"), key("s", "hot"), key("s", "long"), key("s", "read")}
	if got := m.Expired(clock.Now(), time.Hour, 0); !reflect.DeepEqual(got, want) {
		t.Fatalf("expired after 3h30m = %v, want %v", got, want)
	}
	if n := len(m.List("")); n != 7 {
		t.Fatalf("Expired removed entries: %d left", n)
	}
}

func TestExpiredLRUOverCap(t *testing.T) {
	clock := newClock()
	m := NewMemory(WithClock(clock.Now))
	for _, c := range []string{"a", "b", "c", "d"} {
		materialize(t, m, key("s", c), nil, "ex1", "ex2") // 200 bytes each
		clock.Advance(time.Minute)
	}
	m.Touch(key("s", "a")) // a is now the most recently used
	m.Acquire(key("s", "b"))

	// 800 bytes over a cap of 500: drop LRU first, skipping b (being read): c, then d.
	if got := m.Expired(clock.Now(), 0, 500); !reflect.DeepEqual(got, []Key{key("s", "c"), key("s", "d")}) {
		t.Fatalf("lru = %v", got)
	}
	if got := m.Expired(clock.Now(), 0, 800); len(got) != 0 {
		t.Fatalf("at the cap = %v", got)
	}
	// Readers protect even when the cap cannot be met.
	m.Acquire(key("s", "a"))
	m.Acquire(key("s", "c"))
	m.Acquire(key("s", "d"))
	if got := m.Expired(clock.Now(), 0, 1); len(got) != 0 {
		t.Fatalf("evicted an entry with readers: %v", got)
	}
}

func TestExpiredTTLCountsTowardCap(t *testing.T) {
	clock := newClock()
	m := NewMemory(WithClock(clock.Now))
	materialize(t, m, key("s", "old"), map[string]string{TTLOption: "1m"}, "ex1")
	clock.Advance(time.Minute)
	materialize(t, m, key("s", "mid"), nil, "ex1")
	clock.Advance(time.Minute)
	materialize(t, m, key("s", "new"), nil, "ex1")
	// old expires by TTL, which brings 300 bytes to 200, within the cap: mid stays.
	if got := m.Expired(clock.Now(), 0, 200); !reflect.DeepEqual(got, []Key{key("s", "old")}) {
		t.Fatalf("expired = %v", got)
	}
}

func TestEvictRemovesAndCounts(t *testing.T) {
	clock := newClock()
	m := NewMemory(WithClock(clock.Now))
	materialize(t, m, key("s", "a"), nil, "ex1")
	materialize(t, m, key("s", "b"), nil, "ex1")
	clock.Advance(2 * time.Hour)
	m.Acquire(key("s", "b"))
	got := m.Evict(clock.Now(), time.Hour, 0)
	if len(got) != 1 || got[0].Key != key("s", "a") || len(got[0].Locations) != 1 {
		t.Fatalf("evicted = %+v", got)
	}
	if _, ok := m.Lookup(key("s", "a")); ok {
		t.Fatal("evicted entry still registered")
	}
	if s := m.Stats(); s.Invalidations[CauseEvicted] != 1 || s.Entries != 1 {
		t.Fatalf("stats = %+v", s)
	}
}

func TestParseTTL(t *testing.T) {
	if d, ok, err := ParseTTL(map[string]string{TTLOption: "90m"}); d != 90*time.Minute || !ok || err != nil {
		t.Fatalf("90m = %v %v %v", d, ok, err)
	}
	if _, ok, err := ParseTTL(nil); ok || err != nil {
		t.Fatalf("unset = %v %v", ok, err)
	}
	for _, bad := range []string{"soon", "-1h", ""} {
		if _, _, err := ParseTTL(map[string]string{TTLOption: bad}); qerr.KindOf(err) != qerr.Plan {
			t.Fatalf("%q: %v, want a planning error", bad, err)
		}
	}
}
