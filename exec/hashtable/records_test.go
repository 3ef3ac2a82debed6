package hashtable

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver/exec/kernel"
)

// TestHashTableRecordsAgainstMap drives the record layout with keys of
// integers, decimals, booleans and strings of 0 to 24 bytes that differ
// only in their last byte, with NULLs, runs, selections and sliced arrays,
// then brings longer strings, which must end the records (finds first,
// which must miss on them) without changing any id. Every id is checked
// against a Go map.
func TestHashTableRecordsAgainstMap(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	for _, types := range [][]arrow.DataType{
		{arrow.PrimitiveTypes.Int32, arrow.BinaryTypes.String},
		{arrow.BinaryTypes.String, &arrow.Decimal128Type{Precision: 15, Scale: 2}, arrow.FixedWidthTypes.Boolean},
		{arrow.BinaryTypes.LargeString, arrow.BinaryTypes.Binary, arrow.PrimitiveTypes.Int64},
	} {
		t.Run(fmt.Sprint(types), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(3, 17))
			tbl, err := New(types)
			if err != nil {
				t.Fatal(err)
			}
			ids := map[string]uint32{}
			var p Probe
			check := func(phase string, long bool, find bool) {
				n := 1 + rng.IntN(2500)
				// Without records, batches without runs pause the repeat
				// checks of the batches after them.
				runs := !long || rng.IntN(2) == 0
				cols, keys := recordKeys(mem, rng, types, n, long, runs)
				defer kernel.ReleaseArrays(cols)
				var sel []int32
				if rng.IntN(3) == 0 {
					for r := range n {
						if rng.IntN(2) == 0 {
							sel = append(sel, int32(r))
						}
					}
				}
				out := make([]uint32, n)
				if find {
					tbl.Find(&p, cols, n, sel, out)
				} else {
					tbl.FindOrInsert(&p, cols, n, sel, out)
				}
				for r := range n {
					if sel != nil && !contains(sel, int32(r)) {
						continue
					}
					want, ok := ids[keys[r]]
					if !ok && find {
						want = NoID
					} else if !ok {
						want = uint32(len(ids))
						ids[keys[r]] = want
					}
					if out[r] != want {
						t.Fatalf("%s: row %d key %q: id %d, want %d", phase, r, keys[r], out[r], want)
					}
				}
			}
			for range 8 {
				check("short keys", false, false)
				check("short finds", false, true)
			}
			if tbl.records() == nil {
				t.Fatal("keys of at most 24 bytes did not use records")
			}
			check("finds with long strings", true, true)
			if tbl.records() == nil {
				t.Fatal("a find ended the records")
			}
			check("inserts with long strings", true, false)
			if tbl.records() != nil {
				t.Fatal("a key longer than a record kept the records")
			}
			for range 12 {
				check("after records", true, false)
				check("finds after records", true, true)
			}
		})
	}
}

// recordKeys makes n rows (in runs of 1-4, or of 1 without runs) as a slice of larger arrays, so
// that string offsets do not start at zero, and each row's key as text.
func recordKeys(mem memory.Allocator, rng *rand.Rand, types []arrow.DataType, n int, long, runs bool) ([]arrow.Array, []string) {
	const skip = 3
	total := n + 2*skip
	cols := make([]arrow.Array, len(types))
	vals := make([][]int, len(types)) // per column, per row: a value code, -1 NULL
	for c := range types {
		vals[c] = make([]int, total)
	}
	for r := 0; r < total; {
		run := 1
		if runs {
			run += rng.IntN(4)
		}
		code := make([]int, len(types))
		for c := range types {
			code[c] = rng.IntN(40)
			if rng.IntN(30) == 0 {
				code[c] = -1
			}
		}
		for ; run > 0 && r < total; run, r = run-1, r+1 {
			for c := range types {
				vals[c][r] = code[c]
			}
		}
	}
	for c, dt := range types {
		b := array.NewBuilder(mem, dt)
		for _, v := range vals[c] {
			if v < 0 {
				b.AppendNull()
				continue
			}
			switch bb := b.(type) {
			case *array.Int32Builder:
				bb.Append(int32(v - 20))
			case *array.Int64Builder:
				bb.Append(int64(v-20) << 40)
			case *array.BooleanBuilder:
				bb.Append(v%2 == 0)
			case *array.Decimal128Builder:
				bb.Append(decimal128.FromI64(int64(v-20) * 1_000_000_007))
			case *array.StringBuilder:
				bb.Append(recordString(v, long))
			case *array.LargeStringBuilder:
				bb.Append(recordString(v, long))
			case *array.BinaryBuilder:
				bb.Append([]byte(recordString(v, long)))
			}
		}
		whole := b.NewArray()
		b.Release()
		cols[c] = array.NewSlice(whole, skip, int64(skip+n))
		whole.Release()
	}
	keys := make([]string, n)
	for r := range keys {
		keys[r] = keyText(cols, r)
	}
	return cols, keys
}

// recordString maps a code to strings of 0-24 bytes (26-30 with long, for
// some codes) that share prefixes and differ in their last byte.
func recordString(v int, long bool) string {
	lengths := []int{0, 1, 7, 8, 9, 15, 16, 17, 23, 24}
	l := lengths[v%len(lengths)]
	if long && v%5 == 0 {
		l = 26 + v%5
	}
	if l == 0 {
		return ""
	}
	return strings.Repeat("k", l-1) + string(rune('a'+v/len(lengths)))
}

// A string longer than a record right after a 24-byte string that is its
// prefix must not be taken for a repeat of it (its record words alone
// would match): inserted it gets a new id, found it misses.
func TestHashTableRecordsLongAfterPrefix(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	prefix := strings.Repeat("p", recordStringBytes)
	build := func(vals ...string) arrow.Array {
		b := array.NewStringBuilder(mem)
		defer b.Release()
		b.AppendValues(vals, nil)
		return b.NewArray()
	}
	tbl, err := New([]arrow.DataType{arrow.BinaryTypes.String})
	if err != nil {
		t.Fatal(err)
	}
	var p Probe
	short := build(prefix, prefix)
	defer short.Release()
	out := make([]uint32, 2)
	tbl.FindOrInsert(&p, []arrow.Array{short}, 2, nil, out)
	if tbl.records() == nil || out[0] != 0 || out[1] != 0 {
		t.Fatalf("two equal 24-byte keys: ids %v, records %v", out, tbl.records() != nil)
	}
	mixed := build(prefix, prefix+"x")
	defer mixed.Release()
	tbl.Find(&p, []arrow.Array{mixed}, 2, nil, out)
	if out[0] != 0 || out[1] != NoID {
		t.Errorf("find: ids %v, want [0 %d]", out, NoID)
	}
	tbl.FindOrInsert(&p, []arrow.Array{mixed}, 2, nil, out)
	if out[0] != 0 || out[1] != 1 {
		t.Errorf("insert: ids %v, want [0 1]", out)
	}
}

// An empty batch changes nothing and does not fail, with records.
func TestHashTableRecordsEmptyBatch(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	dec := &arrow.Decimal128Type{Precision: 15, Scale: 2} // not packable: the generic layout, with records
	tbl, err := New([]arrow.DataType{arrow.BinaryTypes.String, dec})
	if err != nil {
		t.Fatal(err)
	}
	sb, ib := array.NewStringBuilder(mem), array.NewDecimal128Builder(mem, dec)
	defer sb.Release()
	defer ib.Release()
	cols := []arrow.Array{sb.NewArray(), ib.NewArray()}
	defer kernel.ReleaseArrays(cols)
	var p Probe
	tbl.FindOrInsert(&p, cols, 0, nil, nil)
	tbl.Find(&p, cols, 0, nil, nil)
	if tbl.Len() != 0 || tbl.records() == nil {
		t.Errorf("after empty batches: %d keys, records %v", tbl.Len(), tbl.records() != nil)
	}
}
