package cache

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"go.etcd.io/bbolt"

	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
)

// openDurable opens the registry in dir, closed when the test ends.
func openDurable(t *testing.T, dir string, opts ...Option) *Durable {
	t.Helper()
	d, err := NewDurable(dir, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// reopen closes d (its last changes written) and opens dir again.
func reopen(t *testing.T, d *Durable, dir string) *Durable {
	t.Helper()
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	return openDurable(t, dir)
}

func TestDurableReload(t *testing.T) {
	path := t.TempDir()
	clock := newClock()
	d := openDurable(t, path, WithClock(clock.Now))
	a, b, p := key("s1", "a"), key("s2", "b"), key("s1", "pending")
	d.Begin(a, "job-a", "orders_cached", map[string]string{TTLOption: "2h"})
	clock.Advance(5 * time.Second) // its build time, which eviction weighs
	mustComplete(t, d, a, "job-a", 3, "ex1", "ex2")
	d.Begin(b, "job-b", "", nil)
	mustComplete(t, d, b, "job-b", 1, "ex2")
	d.Begin(p, "job-p", "", nil)
	clock.Advance(time.Minute)
	d.Touch(a)
	if err := d.Sync(); err != nil {
		t.Fatalf("persist: %v", err)
	}
	wantA, _ := d.Lookup(a)
	wantB, _ := d.Lookup(b)
	if wantA.BuildTime != 5*time.Second || wantA.Heat <= 1 {
		t.Fatalf("entry a: build time %v, heat %v; want 5s and its hit counted", wantA.BuildTime, wantA.Heat)
	}

	// Reopen: materialized entries are back, the pending claim is not.
	r := reopen(t, d, path)
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
	r2 := reopen(t, r, path)
	if got := r2.List(""); len(got) != 1 || got[0].Key != b {
		t.Fatalf("after removal and reopen: %v", got)
	}
	// A reloaded entry wakes no one and waits for nothing.
	if err := r2.Wait(context.Background(), b); err != nil {
		t.Fatal(err)
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
	d := openDurable(t, filepath.Join(dir, "new"))
	if len(d.List("")) != 0 {
		t.Fatalf("a new state dir: %v", d.List(""))
	}
	bad := filepath.Join(dir, "bad")
	if err := os.MkdirAll(bad, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bad, StateFile), []byte("not a database, but long enough to be read as one? no"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := NewDurable(bad); qerr.KindOf(err) != qerr.IO {
		t.Fatalf("corrupt file: %v, want an io error", err)
	}
	// A record that does not decode, and a format from the future.
	for name, edit := range map[string]func(*bbolt.Tx) error{
		"record": func(tx *bbolt.Tx) error { return tx.Bucket(entriesBucket).Put([]byte("s\x00c"), []byte("{not json")) },
		"format": func(tx *bbolt.Tx) error { return tx.Bucket(metaBucket).Put(versionKey, []byte("99")) },
	} {
		sub := filepath.Join(dir, name)
		d, err := NewDurable(sub)
		if err != nil {
			t.Fatal(err)
		}
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
		db, err := bbolt.Open(filepath.Join(sub, StateFile), 0o644, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := db.Update(edit); err != nil {
			t.Fatal(err)
		}
		db.Close()
		if _, err := NewDurable(sub); qerr.KindOf(err) != qerr.IO {
			t.Fatalf("%s: %v, want an io error", name, err)
		}
	}
}

// TestDurableWritesChangesOnly: a hit rewrites its entry's record and no
// other; a removal deletes one record; the writes happen off the caller.
func TestDurableWritesChangesOnly(t *testing.T) {
	dir := t.TempDir()
	d := openDurable(t, dir)
	for _, id := range []string{"a", "b", "c"} {
		d.Begin(key("s", id), "job-"+id, "", nil)
		mustComplete(t, d, key("s", id), "job-"+id, 1, "ex1")
	}
	if err := d.Sync(); err != nil {
		t.Fatal(err)
	}
	records := func() map[string]string {
		t.Helper()
		out := map[string]string{}
		if err := d.db.View(func(tx *bbolt.Tx) error {
			return tx.Bucket(entriesBucket).ForEach(func(k, v []byte) error {
				out[string(k)] = string(v)
				return nil
			})
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	before := records()
	d.Touch(key("s", "b"))
	d.Invalidate(key("s", "c"))
	if err := d.Sync(); err != nil {
		t.Fatal(err)
	}
	after := records()
	if len(before) != 3 || len(after) != 2 || after["s\x00a"] != before["s\x00a"] || after["s\x00b"] == before["s\x00b"] {
		t.Fatalf("records before %d, after %d; a unchanged %v, b changed %v", len(before), len(after),
			after["s\x00a"] == before["s\x00a"], after["s\x00b"] != before["s\x00b"])
	}
	if _, ok := after["s\x00c"]; ok {
		t.Fatal("the removed entry's record is still there")
	}
}

// TestDurableConcurrentWrites checks that concurrent changes leave the
// database holding the final state.
func TestDurableConcurrentWrites(t *testing.T) {
	path := t.TempDir()
	d := openDurable(t, path)
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
	if err := d.Sync(); err != nil {
		t.Fatal(err)
	}
	want := d.List("")
	r := reopen(t, d, path)
	got := r.List("")
	if len(got) != 8 || len(got) != len(want) {
		t.Fatalf("reloaded %d entries, registry has %d, want 8", len(got), len(want))
	}
	for i := range got {
		if got[i].Key != want[i].Key || got[i].Hits != 5 {
			t.Fatalf("reloaded %v with %d hits, want %v with 5", got[i].Key, got[i].Hits, want[i].Key)
		}
	}
}

// TestDurablePartialReload: a partial entry, and one repaired, come back
// from the store as they were: the missing partitions, the repairs' outputs
// and their pins.
func TestDurablePartialReload(t *testing.T) {
	path := t.TempDir()
	d := openDurable(t, path)
	a, b := key("s", "a"), key("s", "b")
	for _, k := range []Key{a, b} {
		job := "job-" + k.CacheID
		d.Begin(k, job, "", nil)
		mustComplete(t, d, k, job, 2, "ex1", "ex2", "ex1")
	}
	if _, partial := d.LoseExecutor("ex2"); len(partial) != 2 {
		t.Fatalf("partial = %v", partial)
	}
	if _, ok := d.BeginRepair(b, "rep-b"); !ok {
		t.Fatal("begin repair")
	}
	fixed := make([][]physical.PartitionLocation, 3)
	fixed[1] = locs("rep-b", 4, "ex3", "ex3")[1:2][0]
	if err := d.CompleteRepair(b, "rep-b", 4, fixed); err != nil {
		t.Fatal(err)
	}
	if err := d.Sync(); err != nil {
		t.Fatal(err)
	}
	r := reopen(t, d, path)
	ea, _ := r.Lookup(a)
	eb, _ := r.Lookup(b)
	if !slices.Equal(ea.Missing, []int{1}) || len(ea.Locations[1]) != 0 || ea.Bytes != 200 {
		t.Fatalf("partial entry reloaded as %+v", ea)
	}
	if eb.Partial() || !slices.Equal(eb.Repairs, []StageRef{{JobID: "rep-b", StageID: 4}}) || eb.Locations[1][0].Executor.ID != "ex3" {
		t.Fatalf("repaired entry reloaded as %+v", eb)
	}
	if pins := r.PinnedStages(); !pins[[2]string{"rep-b", "4"}] || !pins[[2]string{"job-a", "2"}] {
		t.Fatalf("pins after reload: %v", pins)
	}
	// The reloaded partial entry can be repaired.
	if _, ok := r.BeginRepair(a, "rep-a"); !ok {
		t.Fatal("a reloaded partial entry cannot be repaired")
	}
}
