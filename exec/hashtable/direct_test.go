package hashtable

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestHashTableDirectLayout drives an integer table through the direct
// layout's cases — a window growing upward and downward, keys at the ends
// of the int64 range, NULLs and selections, a range that becomes too wide
// (the move to hashed slots), keys in two far clusters that take only
// their own pages, batches of keys all known (the find-only pass) and one
// new key among known ones — checking every id against a Go map and
// which layout the table is in after each batch.
func TestHashTableDirectLayout(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	type batch struct {
		name   string
		lo, hi int64 // keys drawn from [lo, hi]
		hashed bool  // the layout expected after the batch
		pages  int   // direct pages expected after the batch (0: not checked)
	}
	cases := map[string][]batch{
		"grow then hash": {
			{"first", 1000, 5000, false, 0},
			{"upward", 4000, 60000, false, 0},
			{"downward", -3000, 2000, false, 0},
			{"too wide", 0, 1 << 40, true, 0},
			{"after", -10, 10, true, 0},
		},
		"two clusters": {
			{"low", 1, 5000, false, 1},
			{"high", 3_000_000, 3_005_000, false, 2},
			{"low again", 2, 4000, false, 2},
			{"scattered", 0, 60_000_000, true, 0},
		},
		// Batches whose keys are all in the table (no NULLs, at even
		// positions) take findDirectAll; one new key sends a batch back
		// to the insert path.
		"known keys": {
			{"first", 1000, 1100, false, 1},
			{"with NULLs", 1000, 1100, false, 1},
			{"all known", 1000, 1100, false, 1},
			{"again", 1000, 1100, false, 1},
			{"one new", 1000, 1101, false, 1},
			{"below the window", -70000, 1100, false, 0},
			{"known after moving", -70000, 1101, false, 0},
		},
		"top of int64": {
			{"near max", math.MaxInt64 - 5000, math.MaxInt64, false, 0},
			{"below", math.MaxInt64 - 9000, math.MaxInt64 - 4000, false, 0},
		},
		"bottom of int64": {
			{"near min", math.MinInt64, math.MinInt64 + 3000, false, 0},
			{"above", math.MinInt64 + 2000, math.MinInt64 + 8000, false, 0},
			{"both ends", math.MinInt64, math.MaxInt64, true, 0},
		},
	}
	for name, batches := range cases {
		t.Run(name, func(t *testing.T) {
			tbl, err := New([]arrow.DataType{arrow.PrimitiveTypes.Int64})
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(1, 9))
			ids := map[int64]uint32{} // non-NULL keys
			nullID, next := NoID, uint32(0)
			var p Probe
			b := array.NewInt64Builder(mem)
			defer b.Release()
			randKey := func(lo, hi int64) int64 {
				span := uint64(hi) - uint64(lo)
				if span == math.MaxUint64 {
					return int64(rng.Uint64())
				}
				return int64(uint64(lo) + rng.Uint64N(span+1))
			}
			for i, bt := range batches {
				n := 2000
				keys := make([]int64, n)
				valid := make([]bool, n)
				for r := range keys {
					keys[r] = randKey(bt.lo, bt.hi)
					if r < 2 { // the range's ends are always present
						keys[r] = []int64{bt.lo, bt.hi}[r]
					}
					valid[r] = i%2 == 0 || rng.IntN(20) != 0
				}
				b.AppendValues(keys, valid)
				arr := b.NewArray()
				var sel []int32
				if i%3 == 2 {
					for r := range n {
						if r < 2 || rng.IntN(2) == 0 {
							sel = append(sel, int32(r))
						}
					}
				}
				out := make([]uint32, n)
				tbl.FindOrInsert(&p, []arrow.Array{arr}, n, sel, out)
				rows := sel
				if rows == nil {
					for r := range n {
						rows = append(rows, int32(r))
					}
				}
				for _, r := range rows {
					want := nullID
					if !valid[r] {
						if nullID == NoID {
							nullID, next = next, next+1
							want = nullID
						}
					} else if id, ok := ids[keys[r]]; ok {
						want = id
					} else {
						ids[keys[r]], next = next, next+1
						want = ids[keys[r]]
					}
					if out[r] != want {
						t.Fatalf("%s: row %d key %d (valid %v): id %d, want %d", bt.name, r, keys[r], valid[r], out[r], want)
					}
				}
				arr.Release()
				if tbl.Len() != int(next) {
					t.Fatalf("%s: len %d, want %d", bt.name, tbl.Len(), len(ids))
				}
				if tbl.isHashed() != bt.hashed {
					t.Fatalf("%s: hashed = %v, want %v", bt.name, tbl.isHashed(), bt.hashed)
				}
				if bt.pages != 0 && tbl.directPages() != bt.pages {
					t.Fatalf("%s: %d direct pages, want %d", bt.name, tbl.directPages(), bt.pages)
				}
				winLo, winPages := tbl.directWindow()
				// find agrees: every inserted key, and keys just outside the window.
				var probeKeys []int64
				for k := range ids {
					probeKeys = append(probeKeys, k)
				}
				probeKeys = append(probeKeys, bt.lo-1, bt.hi+1, winLo-1,
					winLo+int64(winPages)<<pageBits)
				b.AppendValues(probeKeys, nil)
				parr := b.NewArray()
				got := make([]uint32, len(probeKeys))
				tbl.Find(&p, []arrow.Array{parr}, len(probeKeys), nil, got)
				parr.Release()
				for r, k := range probeKeys {
					want, ok := ids[k]
					if !ok {
						want = NoID
					}
					if got[r] != want {
						t.Fatalf("%s: find %d: %d, want %d", bt.name, k, got[r], want)
					}
				}
			}
		})
	}
}
