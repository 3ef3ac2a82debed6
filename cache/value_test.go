package cache

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestEvictByValue: over the cap, a large entry that was cheap to build and
// is rarely read goes before a small costly one read often, even when the
// large one was used more recently (LRU would evict the small one).
func TestEvictByValue(t *testing.T) {
	clock := newClock()
	m := NewMemory(WithClock(clock.Now))
	// costly: 100 bytes, 30s to build, hit three times.
	m.Begin(key("s", "costly"), "job-costly", "", nil)
	clock.Advance(30 * time.Second)
	mustComplete(t, m, key("s", "costly"), "job-costly", 1, "ex1")
	for range 3 {
		m.Touch(key("s", "costly"))
	}
	clock.Advance(time.Minute)
	// cheap: 400 bytes, 1s to build, never hit, newer.
	m.Begin(key("s", "cheap"), "job-cheap", "", nil)
	clock.Advance(time.Second)
	mustComplete(t, m, key("s", "cheap"), "job-cheap", 1, "ex1", "ex2", "ex3", "ex4")
	if got := m.Expired(clock.Now(), 0, 450); !reflect.DeepEqual(got, []Key{key("s", "cheap")}) {
		t.Fatalf("evicted %v, want the cheap, large, unread entry", got)
	}
	// Uses age: an hour later with no hit on costly and eight on cheap,
	// cheap is worth more per byte.
	clock.Advance(time.Hour)
	for range 8 {
		m.Touch(key("s", "cheap"))
	}
	if got := m.Expired(clock.Now(), 0, 450); !reflect.DeepEqual(got, []Key{key("s", "costly")}) {
		t.Fatalf("after an hour: evicted %v, want the entry whose hits aged", got)
	}
	// A session's own quota evicts by the same order.
	if got := m.EvictSession("s", 450); len(got) != 1 || got[0].Key != key("s", "costly") {
		t.Fatalf("EvictSession = %+v", got)
	}
}

// TestPropertyEvictByValue checks the sweeper's choice over a byte cap
// against a model that keeps every use's time and computes each entry's
// value from scratch: build time × Σ 2^(-age/HeatHalfLife) over its uses
// (its materialization and its hits) ÷ bytes, least first, skipping
// entries being read, until the rest fit.
func TestPropertyEvictByValue(t *testing.T) {
	type modelUse struct {
		build   time.Duration
		bytes   int64
		uses    []time.Time
		readers int
	}
	for seed := range uint64(300) {
		rng := rand.New(rand.NewPCG(seed, 19))
		clock := newClock()
		m := NewMemory(WithClock(clock.Now))
		model := map[Key]*modelUse{}
		var keys []Key
		n := 2 + rng.IntN(7)
		for i := range n {
			k := key("s", fmt.Sprintf("c%d", i))
			job := jobName(i)
			m.Begin(k, job, "", nil)
			build := time.Duration(rng.IntN(120)) * time.Second
			clock.Advance(build)
			execs := make([]string, 1+rng.IntN(4))
			for p := range execs {
				execs[p] = "ex1"
			}
			mustComplete(t, m, k, job, 1, execs...)
			model[k] = &modelUse{build: build, bytes: 100 * int64(len(execs)), uses: []time.Time{clock.Now()}}
			keys = append(keys, k)
			clock.Advance(time.Duration(rng.IntN(600)) * time.Second)
		}
		for range rng.IntN(30) {
			k := keys[rng.IntN(len(keys))]
			switch rng.IntN(6) {
			case 0:
				if m.Acquire(k) {
					model[k].readers++
				}
			default:
				m.Touch(k)
				model[k].uses = append(model[k].uses, clock.Now())
			}
			clock.Advance(time.Duration(rng.IntN(900)) * time.Second)
		}
		var total int64
		for _, u := range model {
			total += u.bytes
		}
		limit := int64(rng.IntN(int(total) + 1))
		now := clock.Now()

		value := func(k Key) float64 {
			u := model[k]
			h := 0.0
			for _, at := range u.uses {
				h += math.Exp2(-float64(now.Sub(at)) / float64(HeatHalfLife))
			}
			return max(u.build, time.Millisecond).Seconds() * h / float64(u.bytes)
		}
		lastUse := func(k Key) time.Time { u := model[k]; return u.uses[len(u.uses)-1] }
		var live []Key
		for _, k := range keys {
			if model[k].readers == 0 {
				live = append(live, k)
			}
		}
		slices.SortFunc(live, func(a, b Key) int {
			va, vb := value(a), value(b)
			// Values a rounding apart are a tie in the model; order those by
			// last use like the registry.
			if math.Abs(va-vb) > 1e-9*math.Max(va, vb) {
				if va < vb {
					return -1
				}
				return 1
			}
			if c := lastUse(a).Compare(lastUse(b)); c != 0 {
				return c
			}
			return strings.Compare(a.CacheID, b.CacheID)
		})
		var want []Key
		remaining := total
		for _, k := range live {
			if remaining <= limit {
				break
			}
			want = append(want, k)
			remaining -= model[k].bytes
		}
		if limit == 0 {
			want = nil // 0 is no cap
		}
		got := m.Expired(now, 0, limit)
		if len(got) == 0 && len(want) == 0 {
			continue
		}
		if !reflect.DeepEqual(got, want) {
			for _, k := range keys {
				e, _ := m.Lookup(k)
				t.Logf("%s: value %g (model %g), bytes %d, readers %d", k.CacheID, e.Value(now), value(k), e.Bytes, e.Readers)
			}
			t.Fatalf("seed %d, cap %d of %d: evicted %v, model %v", seed, limit, total, got, want)
		}
	}
}
