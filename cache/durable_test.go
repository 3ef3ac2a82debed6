package cache

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/quiverdb/quiver/qerr"
)

func TestDurableReload(t *testing.T) {
	path := filepath.Join(t.TempDir(), "caches.json")
	clock := newClock()
	d, err := NewDurable(path, WithClock(clock.Now))
	if err != nil {
		t.Fatal(err)
	}
	a, b, p := key("s1", "a"), key("s2", "b"), key("s1", "pending")
	d.Begin(a, "job-a", "orders_cached", map[string]string{TTLOption: "2h"})
	mustComplete(t, d, a, "job-a", 3, "ex1", "ex2")
	d.Begin(b, "job-b", "", nil)
	mustComplete(t, d, b, "job-b", 1, "ex2")
	d.Begin(p, "job-p", "", nil)
	clock.Advance(time.Minute)
	d.Touch(a)
	if err := d.Err(); err != nil {
		t.Fatalf("persist: %v", err)
	}
	wantA, _ := d.Lookup(a)
	wantB, _ := d.Lookup(b)

	// Reopen: materialized entries are back, the pending claim is not.
	r, err := NewDurable(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []Entry{wantA, wantB} {
		got, ok := r.Lookup(want.Key)
		if !ok {
			t.Fatalf("%v not reloaded", want.Key)
		}
		if !got.Schema.Equal(want.Schema) {
			t.Fatalf("schema = %v, want %v", got.Schema, want.Schema)
		}
		got.Schema, want.Schema = nil, nil
		// JSON round-trips times at their instant; compare them with Equal.
		if !got.Created.Equal(want.Created) || !got.LastHit.Equal(want.LastHit) {
			t.Fatalf("times = %v %v, want %v %v", got.Created, got.LastHit, want.Created, want.LastHit)
		}
		got.Created, got.LastHit, want.Created, want.LastHit = time.Time{}, time.Time{}, time.Time{}, time.Time{}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("reloaded %+v\nwant     %+v", got, want)
		}
	}
	if _, ok := r.Lookup(p); ok {
		t.Fatal("a pending claim was persisted")
	}
	if got := r.PinnedStages(); !reflect.DeepEqual(got, map[[2]string]bool{{"job-a", "3"}: true, {"job-b", "1"}: true}) {
		t.Fatalf("pins after reload = %v", got)
	}
	// The reloaded registry is fully live: a removal is persisted too.
	if got := r.InvalidateExecutor("ex1"); len(got) != 1 || got[0].Key != a {
		t.Fatalf("invalidate ex1 = %v", got)
	}
	r2, err := NewDurable(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := r2.List(""); len(got) != 1 || got[0].Key != b {
		t.Fatalf("after removal and reopen: %v", got)
	}
	// A reloaded entry wakes no one and waits for nothing.
	if err := r2.Wait(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	matches, _ := filepath.Glob(path + ".tmp-*")
	if len(matches) != 0 {
		t.Fatalf("temporary files left: %v", matches)
	}
}

func TestDurableSchemaRoundTrip(t *testing.T) {
	md := arrow.NewMetadata([]string{"origin"}, []string{"tpch"})
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "l", Type: arrow.ListOf(arrow.PrimitiveTypes.Float64)},
		{Name: "st", Type: arrow.StructOf(arrow.Field{Name: "x", Type: arrow.FixedWidthTypes.Boolean})},
	}, &md)
	b, err := encodeSchema(schema)
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeSchema(b)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Equal(schema) || !got.Metadata().Equal(schema.Metadata()) {
		t.Fatalf("round trip = %v, want %v", got, schema)
	}
}

func TestDurableMissingAndCorruptFile(t *testing.T) {
	dir := t.TempDir()
	d, err := NewDurable(filepath.Join(dir, "none.json"))
	if err != nil || len(d.List("")) != 0 {
		t.Fatalf("missing file: %v %v", d, err)
	}
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := NewDurable(bad); qerr.KindOf(err) != qerr.IO {
		t.Fatalf("corrupt file: %v, want an io error", err)
	}
	future := filepath.Join(dir, "future.json")
	if err := os.WriteFile(future, []byte(`{"version": 99, "entries": []}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := NewDurable(future); qerr.KindOf(err) != qerr.IO {
		t.Fatalf("unknown version: %v, want an io error", err)
	}
}

func TestDurableWriteFailureKeepsMemoryState(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "caches.json") // sub does not exist yet
	d, err := NewDurable(path)
	if err != nil {
		t.Fatal(err)
	}
	k := key("s1", "c1")
	d.Begin(k, "job-1", "", nil)
	mustComplete(t, d, k, "job-1", 1) // the write fails; the completion does not
	if qerr.KindOf(d.Err()) != qerr.IO {
		t.Fatalf("err = %v, want an io error", d.Err())
	}
	if e, ok := d.Lookup(k); !ok || e.State != Materialized {
		t.Fatalf("in-memory state lost: %+v", e)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := d.Sync(); err != nil {
		t.Fatalf("retry: %v", err)
	}
	r, err := NewDurable(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := r.Lookup(k); !ok {
		t.Fatal("entry not persisted by the retry")
	}
}

// TestDurableConcurrentWrites checks that concurrent changes leave the file
// holding the final state: writes happen in version order, so an older
// snapshot never lands over a newer one.
func TestDurableConcurrentWrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), "caches.json")
	d, err := NewDurable(path)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			k := key("s", jobName(i))
			d.Begin(k, jobName(i), "", nil)
			if err := d.Complete(k, jobName(i), 1, testSchema, locs(jobName(i), 1, "ex1"), nil); err != nil {
				t.Error(err)
				return
			}
			for range 5 {
				d.Touch(k)
			}
			if i%2 == 1 {
				d.Invalidate(k)
			}
		}()
	}
	wg.Wait()
	if err := d.Err(); err != nil {
		t.Fatal(err)
	}
	r, err := NewDurable(path)
	if err != nil {
		t.Fatal(err)
	}
	got, want := r.List(""), d.List("")
	if len(got) != 8 || len(got) != len(want) {
		t.Fatalf("reloaded %d entries, registry has %d, want 8", len(got), len(want))
	}
	for i := range got {
		if got[i].Key != want[i].Key || got[i].Hits != 5 {
			t.Fatalf("reloaded %v with %d hits, want %v with 5", got[i].Key, got[i].Hits, want[i].Key)
		}
	}
}
