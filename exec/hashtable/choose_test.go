package hashtable

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver/physical"
)

func bounded(lo, hi int64) physical.ColumnStats {
	return physical.ColumnStats{Bounded: true, Lo: lo, Hi: hi, NoNulls: true}
}

// TestChooseFromStats: what the statistics choose, and what the types
// choose without them.
func TestChooseFromStats(t *testing.T) {
	i32, i64, str, f64 := arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int64, arrow.BinaryTypes.String, arrow.PrimitiveTypes.Float64
	cases := []struct {
		name    string
		types   []arrow.DataType
		stats   []physical.ColumnStats
		rows    int64
		want    physical.HashLayout
		byStats bool
	}{
		{"no stats: one int", []arrow.DataType{i64}, nil, -1, physical.LayoutDirect, false},
		{"unbounded int", []arrow.DataType{i64}, []physical.ColumnStats{{NoNulls: true}}, 10, physical.LayoutDirect, false},
		{"one page", []arrow.DataType{i64}, []physical.ColumnStats{bounded(5, 60000)}, -1, physical.LayoutDirect, true},
		{"two pages, rows unknown", []arrow.DataType{i64}, []physical.ColumnStats{bounded(65000, 70000)}, -1, physical.LayoutDirect, true},
		{"ten pages, rows unknown", []arrow.DataType{i64}, []physical.ColumnStats{bounded(0, 600_000)}, -1, physical.LayoutHashed, true},
		{"ten pages, enough rows", []arrow.DataType{i64}, []physical.ColumnStats{bounded(0, 600_000)}, 3000, physical.LayoutDirect, true},
		{"ten pages, few distinct", []arrow.DataType{i64}, []physical.ColumnStats{{Bounded: true, Hi: 600_000, Distinct: 10}}, 3000, physical.LayoutHashed, true},
		{"wide range", []arrow.DataType{i64}, []physical.ColumnStats{bounded(0, 1<<40)}, 1 << 30, physical.LayoutHashed, true},
		{"whole int64", []arrow.DataType{i64}, []physical.ColumnStats{bounded(math.MinInt64, math.MaxInt64)}, 1 << 30, physical.LayoutHashed, true},
		{"NULLs allowed, one int", []arrow.DataType{i64}, []physical.ColumnStats{{Bounded: true, Lo: 1, Hi: 9}}, -1, physical.LayoutDirect, true},
		{"no stats: two ints", []arrow.DataType{i32, i64}, nil, -1, physical.LayoutPacked, false},
		{"two ints fit", []arrow.DataType{i32, i64}, []physical.ColumnStats{bounded(0, 49), bounded(-1e6, 1e6)}, -1, physical.LayoutPacked, true},
		{"two ints too wide", []arrow.DataType{i64, i64}, []physical.ColumnStats{bounded(0, 1<<40), bounded(0, 1<<30)}, -1, physical.LayoutGeneric, true},
		{"two ints, one may be NULL", []arrow.DataType{i32, i64}, []physical.ColumnStats{bounded(0, 49), {Bounded: true, Hi: 9}}, -1, physical.LayoutPacked, true},
		{"NULL below the smallest int64", []arrow.DataType{i32, i64}, []physical.ColumnStats{bounded(0, 49), {Bounded: true, Lo: math.MinInt64, Hi: 9}}, -1, physical.LayoutPacked, false},
		{"NULL makes the fields too wide", []arrow.DataType{i64, i64}, []physical.ColumnStats{bounded(0, 1<<31-1), {Bounded: true, Hi: 1<<32 - 1}}, -1, physical.LayoutGeneric, true},
		{"NULL fits the fields", []arrow.DataType{i64, i64}, []physical.ColumnStats{bounded(0, 1<<31-1), {Bounded: true, Hi: 1<<32 - 2}}, -1, physical.LayoutPacked, true},
		{"long string", []arrow.DataType{str, i32}, []physical.ColumnStats{{LongestAtLeast: 8}, bounded(0, 3)}, -1, physical.LayoutGeneric, true},
		{"short strings", []arrow.DataType{str, i32}, []physical.ColumnStats{{LongestAtLeast: 7}, bounded(0, 3)}, -1, physical.LayoutPacked, false},
		{"float", []arrow.DataType{f64}, []physical.ColumnStats{{NoNulls: true}}, -1, physical.LayoutGeneric, false},
		{"string past a record", []arrow.DataType{arrow.FixedWidthTypes.Boolean, str}, []physical.ColumnStats{{}, {LongestAtLeast: 25}}, -1, physical.LayoutGeneric, true},
		{"string within a record", []arrow.DataType{arrow.FixedWidthTypes.Boolean, str}, []physical.ColumnStats{{}, {LongestAtLeast: 24}}, -1, physical.LayoutGeneric, false},
	}
	for _, c := range cases {
		tbl, err := NewWithStats(c.types, c.stats, c.rows)
		if err != nil {
			t.Fatal(err)
		}
		if c.name == "string past a record" && tbl.records() != nil || c.name == "string within a record" && tbl.records() == nil {
			t.Errorf("%s: records %v", c.name, tbl.records() != nil)
		}
		f := tbl.Figures()
		if f.Started[c.want] != 1 || (f.ByStats == 1) != c.byStats || f.Changes != 0 {
			t.Errorf("%s: figures %+v, want %s by stats %v", c.name, f, c.want, c.byStats)
		}
	}
}

// TestStatsLayoutNeverChanges: keys within exact statistics never move
// the table, however sparse they fall within the bounds (where the type
// chosen direct table turns hashed), and every id matches a Go map; keys
// outside wrong statistics take the safety net, ids still right.
func TestStatsLayoutNeverChanges(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	i64 := arrow.PrimitiveTypes.Int64
	cases := []struct {
		name    string
		types   []arrow.DataType
		stats   []physical.ColumnStats
		rows    int64
		key     func(r *rand.Rand, i int) []any
		changes bool
	}{
		{"direct, sparse in ten pages", []arrow.DataType{i64}, []physical.ColumnStats{bounded(1000, 601_000)}, 4000,
			func(r *rand.Rand, i int) []any { return []any{1000 + r.Int64N(300)*2000} }, false},
		{"hashed, wide", []arrow.DataType{i64}, []physical.ColumnStats{bounded(0, 1<<50)}, 4000,
			func(r *rand.Rand, i int) []any { return []any{r.Int64N(1 << 50)} }, false},
		{"packed, exact fields", []arrow.DataType{i64, i64}, []physical.ColumnStats{bounded(-5, 44), bounded(1e9, 1e9+4095)}, 4000,
			func(r *rand.Rand, i int) []any { return []any{-5 + r.Int64N(50), int64(1e9) + r.Int64N(4096)} }, false},
		{"packed, field ends", []arrow.DataType{i64, i64}, []physical.ColumnStats{bounded(math.MinInt64, math.MinInt64+9), bounded(math.MaxInt64-9, math.MaxInt64)}, 4000,
			func(r *rand.Rand, i int) []any {
				return []any{math.MinInt64 + r.Int64N(10), math.MaxInt64 - r.Int64N(10)}
			}, false},
		{"direct, statistics wrong", []arrow.DataType{i64}, []physical.ColumnStats{bounded(0, 100)}, 4000,
			func(r *rand.Rand, i int) []any { return []any{r.Int64N(1 << 40)} }, true},
		{"packed, statistics wrong", []arrow.DataType{i64, i64}, []physical.ColumnStats{bounded(0, 3), bounded(0, 3)}, 4000,
			func(r *rand.Rand, i int) []any { return []any{r.Int64N(100), r.Int64N(4)} }, true},
		{"packed, NULLs allowed", []arrow.DataType{i64, i64}, []physical.ColumnStats{{Bounded: true, Lo: 1, Hi: 100_000}, {Bounded: true, Lo: -7, Hi: 18_000}}, 4000,
			func(r *rand.Rand, i int) []any {
				return []any{nullOr(r, 1+r.Int64N(100_000)), nullOr(r, -7+r.Int64N(18_007))}
			}, false},
		{"packed, a NULL the statistics deny", []arrow.DataType{i64, i64}, []physical.ColumnStats{bounded(0, 3), bounded(0, 3)}, 4000,
			func(r *rand.Rand, i int) []any { return []any{nullOr(r, r.Int64N(4)), r.Int64N(4)} }, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tbl, err := NewWithStats(c.types, c.stats, c.rows)
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(3, 4))
			ids := map[string]uint32{}
			var p Probe
			for b := 0; b < 8; b++ {
				const n = 500
				builders := make([]*array.Int64Builder, len(c.types))
				for i := range builders {
					builders[i] = array.NewInt64Builder(mem)
				}
				keys := make([]string, n)
				for i := range n {
					k := c.key(rng, b*n+i)
					for j, v := range k {
						if v == nil {
							builders[j].AppendNull()
						} else {
							builders[j].Append(v.(int64))
						}
					}
					keys[i] = fmt.Sprint(k...)
				}
				cols := make([]arrow.Array, len(builders))
				for i, bl := range builders {
					cols[i] = bl.NewArray()
					bl.Release()
				}
				out := make([]uint32, n)
				tbl.FindOrInsert(&p, cols, n, nil, out)
				for i, k := range keys {
					want, ok := ids[k]
					if !ok {
						want = uint32(len(ids))
						ids[k] = want
					}
					if out[i] != want {
						t.Fatalf("batch %d row %d key %s: id %d, want %d", b, i, k, out[i], want)
					}
				}
				for _, a := range cols {
					a.Release()
				}
			}
			if f := tbl.Figures(); (f.Changes > 0) != c.changes || f.ByStats != 1 {
				t.Errorf("figures %+v, want changes: %v", f, c.changes)
			}
			if tbl.Len() != len(ids) {
				t.Errorf("%d ids, want %d", tbl.Len(), len(ids))
			}
		})
	}
}

// nullOr is v, or one time in eight NULL.
func nullOr(r *rand.Rand, v int64) any {
	if r.IntN(8) == 0 {
		return nil
	}
	return v
}

// TestStatsDirectWorstCase: a direct table whose statistics allow a wide
// window reserves for a few rows no more than the pages they can touch,
// so a one-row batch fits a small memory limit.
func TestStatsDirectWorstCase(t *testing.T) {
	i64 := arrow.PrimitiveTypes.Int64
	tbl, err := NewWithStats([]arrow.DataType{i64}, []physical.ColumnStats{bounded(0, 6_000_000)}, 6_000_000)
	if err != nil {
		t.Fatal(err)
	}
	if f := tbl.Figures(); f.Started[physical.LayoutDirect] != 1 || f.ByStats != 1 {
		t.Fatalf("figures %+v, want direct by statistics", f)
	}
	plain, _ := New([]arrow.DataType{i64})
	if got, want := tbl.WorstCase([]arrow.Array{nil}, 1), plain.WorstCase([]arrow.Array{nil}, 1); got != want {
		t.Errorf("one row: worst case %d, want the type-chosen table's %d", got, want)
	}
	if got := tbl.WorstCase([]arrow.Array{nil}, 8192); got < 4*6_000_000 {
		t.Errorf("8192 rows: worst case %d, below the window's %d bytes", got, 4*6_000_000)
	}
}
