package scheduler

import (
	"testing"
	"time"

	"github.com/quiverdb/quiver/physical"
)

// TestSignPlan: every location of a plan's shuffle and cache readers gets a
// ticket naming exactly that file (and the cache entry, for a cache
// reader) that verifies under the key until the TTL passes; the plan given
// is left as it was (its locations may be the cache registry's).
func TestSignPlan(t *testing.T) {
	h := newHarness(t, Config{TicketTTL: time.Hour})
	loc := func(job string, stage, out, mp int) physical.PartitionLocation {
		return physical.PartitionLocation{JobID: job, StageID: stage, OutputPartition: out, MapPartition: mp, Executor: physical.ExecutorMeta{ID: "e"}}
	}
	cacheLocs := [][]physical.PartitionLocation{{loc("build", 1, 0, 0)}, {loc("build", 1, 1, 0), loc("build", 1, 1, 1)}}
	cr := &physical.CacheReader{Key: physical.CacheKey{SessionID: "s", CacheID: "c1"}, OutSchema: testSchema, Locations: cacheLocs}
	sr := &physical.ShuffleReader{StageID: 2, OutSchema: testSchema, Locations: [][]physical.PartitionLocation{{loc("j", 2, 0, 3)}}}
	plan := &physical.ShuffleWriter{JobID: "j", StageID: 3, Input: &physical.Union{Inputs: []physical.Plan{cr, sr}}}

	signed := h.c.signPlan(plan)
	if cacheLocs[0][0].Ticket != "" || sr.Locations[0][0].Ticket != "" {
		t.Fatal("signPlan changed the plan it was given")
	}
	now := h.clock.now()
	seen := 0
	physical.PreOrder(signed, func(_ int, n physical.Plan) {
		var locs [][]physical.PartitionLocation
		cache := ""
		switch r := n.(type) {
		case *physical.CacheReader:
			locs, cache = r.Locations, r.Key.CacheID
		case *physical.ShuffleReader:
			locs = r.Locations
		}
		for _, part := range locs {
			for _, l := range part {
				seen++
				tk, err := h.c.cfg.TicketKey.Verify([]byte(l.Ticket), now)
				if err != nil {
					t.Fatalf("%s: %v", l, err)
				}
				if tk.JobID != l.JobID || tk.StageID != l.StageID || tk.OutputPartition != l.OutputPartition || tk.MapPartition != l.MapPartition || tk.Cache != cache {
					t.Errorf("%s (cache %q): ticket names %s", l, cache, tk)
				}
				if _, err := h.c.cfg.TicketKey.Verify([]byte(l.Ticket), now.Add(time.Hour)); err == nil {
					t.Errorf("%s: the ticket is still valid after the TTL", l)
				}
			}
		}
	})
	if seen != 4 {
		t.Errorf("signed %d locations, want 4", seen)
	}
}

// TestStageTicketsRefreshed: a task launched past half the ticket lifetime
// gets its stage's plan signed again, so its tickets never run out early.
func TestStageTicketsRefreshed(t *testing.T) {
	h := newHarness(t, Config{TicketTTL: time.Hour})
	s := &stage{resolved: &physical.ShuffleWriter{JobID: "j", StageID: 1,
		Input: &physical.ShuffleReader{StageID: 0, OutSchema: testSchema, Locations: [][]physical.PartitionLocation{{{JobID: "j", MapPartition: 2}}}}}}
	if err := h.c.encodeStage(s); err != nil {
		t.Fatal(err)
	}
	first := h.c.stagePlanBytes(s)
	h.clock.advance(20 * time.Minute)
	if got := h.c.stagePlanBytes(s); string(got) != string(first) {
		t.Error("signed again before half the lifetime")
	}
	h.clock.advance(20 * time.Minute)
	if got := h.c.stagePlanBytes(s); string(got) == string(first) || !s.signed.Equal(h.clock.now()) {
		t.Error("not signed again past half the lifetime")
	}
}
