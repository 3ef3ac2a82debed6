package hashtable

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver/exec/kernel"
)

// TestHashTablePackedAgainstMap drives tables of 2 and 3 integer-like key
// columns through batches whose ranges grow (forcing re-packs mid-stream),
// with negative values, selections, runs of repeated keys, finds of values
// outside the fields, and (in some cases) NULLs or ranges too wide to pack,
// which must fall back to the generic layout. Every id is checked against a
// Go map of the same keys, and the stored keys against their ids.
func TestHashTablePackedAgainstMap(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	i8, i32, i64 := arrow.PrimitiveTypes.Int8, arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int64
	u16, d32 := arrow.PrimitiveTypes.Uint16, arrow.FixedWidthTypes.Date32
	str := arrow.BinaryTypes.String
	for _, c := range []struct {
		name  string
		types []arrow.DataType
		nulls bool // NULL keys arrive from batch 5 on
		wide  bool // values of ±2^40 arrive from batch 6 on
		// wantPacked: the table ends in the packed layout
		wantPacked bool
	}{
		{"int64+int32", []arrow.DataType{i64, i32}, false, false, true},
		{"int32+date32+int8", []arrow.DataType{i32, d32, i8}, false, false, true},
		{"uint16+int64", []arrow.DataType{u16, i64}, false, false, true},
		{"int64+int32/nulls", []arrow.DataType{i64, i32}, true, false, true},
		{"int64+int64+int64/wide", []arrow.DataType{i64, i64, i64}, false, true, false},
		{"string+int32", []arrow.DataType{str, i32}, false, false, true},
		{"string alone", []arrow.DataType{str}, false, false, true},
		{"string+int64/long strings", []arrow.DataType{str, i64}, false, true, false},
		{"int8+string/nulls", []arrow.DataType{i8, str}, true, false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(5, uint64(len(c.name))))
			tbl, err := New(c.types)
			if err != nil {
				t.Fatal(err)
			}
			if tbl.packedLayout() == nil {
				t.Fatalf("%v: not packed", c.types)
			}
			ids := map[string]uint32{}
			var p Probe
			// A find before any insert finds nothing.
			{
				cols, _ := packedKeys(mem, rng, c.types, 10, 0, 10, false, false)
				got := make([]uint32, 10)
				tbl.Find(&p, cols, 10, nil, got)
				for r, id := range got {
					if id != NoID {
						t.Fatalf("find in empty table row %d: %d", r, id)
					}
				}
				kernel.ReleaseArrays(cols)
			}
			for batch := range 14 {
				n := 1 + rng.IntN(2500)
				// The range grows and shifts down and up: re-packs.
				lo, spread := int64(-3*batch*batch), int64(20*(batch+1)*(batch+1))
				cols, keys := packedKeys(mem, rng, c.types, n, lo, spread, c.nulls && batch >= 5, c.wide && batch >= 6)
				var sel []int32
				if batch%3 == 1 {
					for r := range n {
						if rng.IntN(2) == 0 {
							sel = append(sel, int32(r))
						}
					}
				}
				out := make([]uint32, n)
				for i := range out {
					out[i] = 12345678
				}
				tbl.FindOrInsert(&p, cols, n, sel, out)
				for r := range n {
					if sel != nil && !contains(sel, int32(r)) {
						if out[r] != 12345678 {
							t.Fatalf("batch %d: row %d outside sel was written", batch, r)
						}
						continue
					}
					want, ok := ids[keys[r]]
					if !ok {
						want = uint32(len(ids))
						ids[keys[r]] = want
					}
					if out[r] != want {
						t.Fatalf("batch %d row %d key %s: id %d, want %d", batch, r, keys[r], out[r], want)
					}
				}
				if tbl.Len() != len(ids) {
					t.Fatalf("batch %d: len %d, want %d", batch, tbl.Len(), len(ids))
				}
				// Finds over a wider range than inserted (values outside
				// the fields), with NULLs, all and selected rows.
				fcols, fkeys := packedKeys(mem, rng, c.types, 700, 2*lo-50, 3*spread, true, c.wide && batch >= 6)
				for _, fsel := range [][]int32{nil, {0, 3, 4, 9, 200, 699}} {
					found := make([]uint32, 700)
					for i := range found {
						found[i] = 12345678
					}
					tbl.Find(&p, fcols, 700, fsel, found)
					for r, k := range fkeys {
						want, ok := ids[k]
						if !ok {
							want = NoID
						}
						if fsel != nil && !contains(fsel, int32(r)) {
							want = 12345678
						}
						if found[r] != want {
							t.Fatalf("batch %d find %s: %d, want %d", batch, k, found[r], want)
						}
					}
				}
				kernel.ReleaseArrays(cols)
				kernel.ReleaseArrays(fcols)
			}
			if got := tbl.packedLayout() != nil; got != c.wantPacked {
				t.Fatalf("packed at the end = %v, want %v", got, c.wantPacked)
			}
			if !c.wantPacked && (tbl.isIntKey() || tbl.genericSlots() == 0) {
				t.Fatalf("fallen back but intKey=%v slots=%d", tbl.isIntKey(), tbl.genericSlots())
			}
			if c.wantPacked && tbl.packedLayout().repacks == 0 {
				t.Fatal("the growing ranges never re-packed")
			}
			if tbl.MemSize() <= 0 {
				t.Fatalf("memSize %d", tbl.MemSize())
			}
			m := kernel.ArrayMaker{Mem: mem}
			back := make([]arrow.Array, len(tbl.Keys))
			for i, k := range tbl.Keys {
				back[i] = k.Build(&m, 0, tbl.Len())
			}
			defer kernel.ReleaseArrays(back)
			for id := 0; id < tbl.Len(); id++ {
				if got := keyText(back, id); ids[got] != uint32(id) {
					t.Fatalf("stored key of id %d is %s (id %d)", id, got, ids[got])
				}
			}
		})
	}
}

// packedKeys makes n rows of integer (or integer-as-base-36-string) keys in [lo, lo+spread) (runs of
// repeated keys among them), some NULL when nulls, some ±2^40 when wide,
// and each row's key as text (keyText).
func packedKeys(mem memory.Allocator, rng *rand.Rand, types []arrow.DataType, n int, lo, spread int64, nulls, wide bool) ([]arrow.Array, []string) {
	bs := make([]array.Builder, len(types))
	for c, dt := range types {
		bs[c] = array.NewBuilder(mem, dt)
	}
	for r := 0; r < n; {
		run := 1
		if rng.IntN(4) == 0 {
			run = 1 + rng.IntN(5)
		}
		row := make([]int64, len(types))
		null := make([]bool, len(types))
		for c := range types {
			row[c] = lo + rng.Int64N(spread+1)
			null[c] = nulls && rng.IntN(30) == 0
			if wide && rng.IntN(40) == 0 {
				row[c] = int64(1) << 40
				if rng.IntN(2) == 0 {
					row[c] = -row[c]
				}
			}
		}
		for ; run > 0 && r < n; run, r = run-1, r+1 {
			for c, b := range bs {
				if null[c] {
					b.AppendNull()
					continue
				}
				v := row[c]
				switch bb := b.(type) {
				case *array.Int8Builder:
					bb.Append(int8(v % 100))
				case *array.Int32Builder:
					bb.Append(int32(v))
				case *array.Int64Builder:
					bb.Append(v)
				case *array.Uint16Builder:
					bb.Append(uint16(v & 0xffff))
				case *array.Date32Builder:
					bb.Append(arrow.Date32(v))
				case *array.StringBuilder:
					// Base 36: at most 5 bytes for the ranges used, so
					// packable; ±2^40 (wide) takes 8 or 9, too long to pack.
					bb.Append(strconv.FormatInt(v, 36))
				default:
					panic(fmt.Sprint("packedKeys: ", b.Type()))
				}
			}
		}
	}
	cols := make([]arrow.Array, len(types))
	for c, b := range bs {
		cols[c] = b.NewArray()
		b.Release()
	}
	keys := make([]string, n)
	for r := range keys {
		keys[r] = keyText(cols, r)
	}
	return cols, keys
}

// TestPackFields: fields cover their ranges with headroom, the first column
// highest; values outside a field or NULL pack negative.
func TestPackFields(t *testing.T) {
	fields, ok := chooseFields([]colRange{{lo: 1, hi: 200000, ok: true}, {lo: 1, hi: 10000, ok: true}}, nil)
	if !ok {
		t.Fatal("partsupp keys do not pack")
	}
	if fields[0].width != 19 || fields[1].width != 15 || fields[0].shift != 15 || fields[1].shift != 0 {
		t.Fatalf("fields %+v", fields)
	}
	if _, ok := chooseFields([]colRange{{lo: -1 << 40, hi: 1 << 40, ok: true}, {lo: 0, hi: 1 << 30, ok: true}}, nil); ok {
		t.Fatal("73 bits packed")
	}
	for _, c := range []struct {
		d    uint64
		w    uint
		want uint64
	}{{0, 1, 0}, {1, 1, 0}, {2, 1, 1 << 63}, {3, 2, 0}, {4, 2, 1 << 63}, {^uint64(0), 62, 1 << 63}} {
		if got := outside(c.d, c.w); got != c.want {
			t.Fatalf("outside(%d, %d) = %x", c.d, c.w, got)
		}
	}
}

// TestStringCodes: distinct strings of up to maxCodeLen bytes get distinct
// codes (trailing zero bytes and lengths included); longer ones get none.
func TestStringCodes(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	vals := []string{"", "a", "a\x00", "\x00", "\x00a", "ab", "ba", "R", "N", "abcdefg", "abcdef\x00", "\xff\xff\xff\xff\xff\xff\xff"}
	b := array.NewStringBuilder(mem)
	defer b.Release()
	b.AppendValues(vals, nil)
	a := b.NewStringArray()
	defer a.Release()
	codes := make([]int64, len(vals))
	if !stringCodes(a, len(vals), nil, codes) {
		t.Fatal("a string of at most 7 bytes was refused")
	}
	seen := map[int64]string{}
	for i, c := range codes {
		if c < 0 {
			t.Fatalf("%q: negative code %x", vals[i], c)
		}
		if o, ok := seen[c]; ok {
			t.Fatalf("%q and %q share code %x", o, vals[i], c)
		}
		seen[c] = vals[i]
	}
	b.AppendValues([]string{"x", "abcdefgh"}, nil)
	long := b.NewStringArray()
	defer long.Release()
	if stringCodes(long, 2, nil, make([]int64, 2)) {
		t.Fatal("an 8-byte string got a code")
	}
	if !stringCodes(long, 2, []int32{0}, make([]int64, 2)) {
		t.Fatal("a selection without the long string was refused")
	}
}
