package cache

import (
	"reflect"
	"testing"
	"time"
)

// TestTableEntriesNeverEvicted: a memory table's entries are the only copy
// of its rows, so neither a time to live nor the byte cap nor a session's
// quota removes them; they still count against the cap.
func TestTableEntriesNeverEvicted(t *testing.T) {
	clock := newClock()
	m := NewMemory(WithClock(clock.Now))
	materialize(t, m, key("s", "table"), map[string]string{TableOption: "t"}, "ex1", "ex2") // 200 bytes
	materialize(t, m, key("s", "cache"), nil, "ex1")                                        // 100 bytes
	clock.Advance(2 * time.Hour)
	if got := m.Expired(clock.Now(), time.Hour, 0); !reflect.DeepEqual(got, []Key{key("s", "cache")}) {
		t.Errorf("expired past the default ttl = %v, want only the cache", got)
	}
	if got := m.Expired(clock.Now(), 0, 150); !reflect.DeepEqual(got, []Key{key("s", "cache")}) {
		t.Errorf("expired over a 150-byte cap = %v, want only the cache", got)
	}
	if got := m.EvictSession("s", 50); len(got) != 1 || got[0].Key != key("s", "cache") {
		t.Errorf("session quota evicted %v, want only the cache", got)
	}
	if _, ok := m.Lookup(key("s", "table")); !ok {
		t.Error("the table's entry was removed")
	}
	if err := checkTableOption(map[string]string{TableOption: ""}); err == nil {
		t.Error("an empty table name was accepted")
	}
}
