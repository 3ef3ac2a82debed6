package hashtable

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver/exec/kernel"
)

// TestHashTableAgainstMap drives both table layouts (one integer key; an
// integer and a string key) with batches of random keys, NULLs, selections
// and many growths, and checks every id against a Go map of the same keys.
func TestHashTableAgainstMap(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	for _, layout := range []string{"int32", "int64", "int64+string"} {
		t.Run(layout, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(7, 11))
			types := []arrow.DataType{arrow.PrimitiveTypes.Int64}
			switch layout {
			case "int32":
				types = []arrow.DataType{arrow.PrimitiveTypes.Int32}
			case "int64+string":
				types = append(types, arrow.BinaryTypes.String)
			}
			tbl, err := New(types)
			if err != nil {
				t.Fatal(err)
			}
			if tbl.isIntKey() != (len(types) == 1 || packable(types)) {
				t.Fatalf("intKey = %v for %v", tbl.isIntKey(), types)
			}
			ids := map[string]uint32{} // key text -> id
			var p Probe
			for batch := range 12 {
				n := 1 + rng.IntN(3000)
				cols, keys := randomKeys(mem, rng, types, n, int64(200*(batch+1)))
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
				in := func(r int) bool { return sel == nil || contains(sel, int32(r)) }
				for r := range n {
					if !in(r) {
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
					t.Fatalf("len %d, want %d", tbl.Len(), len(ids))
				}
				// find agrees and reports absent keys as noID.
				fcols, fkeys := randomKeys(mem, rng, types, 500, int64(400*(batch+1)))
				found := make([]uint32, 500)
				tbl.Find(&p, fcols, 500, nil, found)
				for r, k := range fkeys {
					want, ok := ids[k]
					if !ok {
						want = NoID
					}
					if found[r] != want {
						t.Fatalf("find %s: %d, want %d", k, found[r], want)
					}
				}
				kernel.ReleaseArrays(cols)
				kernel.ReleaseArrays(fcols)
			}
			// The stored keys come back in id order.
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

func contains(s []int32, v int32) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// randomKeys makes n rows of keys in [0, spread) with some NULLs, and each
// row's key as text.
func randomKeys(mem memory.Allocator, rng *rand.Rand, types []arrow.DataType, n int, spread int64) ([]arrow.Array, []string) {
	cols := make([]arrow.Array, len(types))
	for c, dt := range types {
		b := array.NewBuilder(mem, dt)
		for range n {
			v := rng.Int64N(spread) - spread/2
			if rng.IntN(50) == 0 {
				b.AppendNull()
				continue
			}
			switch bb := b.(type) {
			case *array.Int64Builder:
				bb.Append(v << 33) // high bits matter too
			case *array.Int32Builder:
				bb.Append(int32(v))
			case *array.StringBuilder:
				bb.Append(fmt.Sprint("s", v%7))
			}
		}
		cols[c] = b.NewArray()
		b.Release()
	}
	keys := make([]string, n)
	for r := range keys {
		keys[r] = keyText(cols, r)
	}
	return cols, keys
}

func keyText(cols []arrow.Array, r int) string {
	s := ""
	for _, c := range cols {
		if c.IsNull(r) {
			s += "|NULL"
		} else {
			s += "|" + c.ValueStr(r)
		}
	}
	return s
}

// TestHashTableRuns: keys in runs (as line items of one order arrive) get
// the same id as the run's first row, for inserts and for finds, across the
// probe's 64-row chunks.
func TestHashTableRuns(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	tbl, err := New([]arrow.DataType{arrow.PrimitiveTypes.Int64})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 5))
	b := array.NewInt64Builder(mem)
	defer b.Release()
	var keys []int64
	for len(keys) < 1000 {
		k := rng.Int64N(300)
		for range 1 + rng.IntN(7) {
			keys = append(keys, k)
		}
	}
	b.AppendValues(keys, nil)
	arr := b.NewArray()
	defer arr.Release()
	var p Probe
	ins := make([]uint32, len(keys))
	tbl.FindOrInsert(&p, []arrow.Array{arr}, len(keys), nil, ins)
	ids := map[int64]uint32{}
	for r, k := range keys {
		if id, ok := ids[k]; ok && id != ins[r] {
			t.Fatalf("row %d: key %d got id %d, earlier %d", r, k, ins[r], id)
		}
		ids[k] = ins[r]
	}
	if tbl.n != len(ids) {
		t.Fatalf("%d ids for %d distinct keys", tbl.n, len(ids))
	}
	// Finds of the same keys shifted by one row, plus absent keys in runs.
	probeKeys := append([]int64{-1, -1}, keys...)
	b.AppendValues(probeKeys, nil)
	parr := b.NewArray()
	defer parr.Release()
	got := make([]uint32, len(probeKeys))
	tbl.Find(&p, []arrow.Array{parr}, len(probeKeys), nil, got)
	for r, k := range probeKeys {
		want, ok := ids[k]
		if !ok {
			want = NoID
		}
		if got[r] != want {
			t.Fatalf("find row %d key %d: id %d, want %d", r, k, got[r], want)
		}
	}
}

// TestHashTableRunsComposite: the generic layout with runs of repeated
// (int, string) keys, NULLs among them, gives every row the id of its key.
func TestHashTableRunsComposite(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	tbl, err := New([]arrow.DataType{arrow.PrimitiveTypes.Int64, arrow.BinaryTypes.String})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(9, 4))
	ib, sb := array.NewInt64Builder(mem), array.NewStringBuilder(mem)
	defer ib.Release()
	defer sb.Release()
	var texts []string // the key of each row as text, NULLs included
	for len(texts) < 2000 {
		k, s := rng.Int64N(40), fmt.Sprint("s", rng.IntN(3))
		kNull, sNull := rng.IntN(9) == 0, rng.IntN(9) == 0
		for range 1 + rng.IntN(6) {
			txt := ""
			if kNull {
				ib.AppendNull()
				txt += "null|"
			} else {
				ib.Append(k)
				txt += fmt.Sprint(k, "|")
			}
			if sNull {
				sb.AppendNull()
				txt += "null"
			} else {
				sb.Append(s)
				txt += s
			}
			texts = append(texts, txt)
		}
	}
	ia, sa := ib.NewArray(), sb.NewArray()
	defer ia.Release()
	defer sa.Release()
	var p Probe
	out := make([]uint32, len(texts))
	tbl.FindOrInsert(&p, []arrow.Array{ia, sa}, len(texts), nil, out)
	ids := map[string]uint32{}
	seen := map[uint32]string{}
	for r, txt := range texts {
		if id, ok := ids[txt]; ok && id != out[r] {
			t.Fatalf("row %d key %s: id %d, earlier %d", r, txt, out[r], id)
		}
		if other, ok := seen[out[r]]; ok && other != txt {
			t.Fatalf("row %d: id %d shared by %s and %s", r, out[r], txt, other)
		}
		ids[txt], seen[out[r]] = out[r], txt
	}
	got := make([]uint32, len(texts))
	tbl.Find(&p, []arrow.Array{ia, sa}, len(texts), nil, got)
	for r := range texts {
		if got[r] != out[r] {
			t.Fatalf("find row %d: %d, want %d", r, got[r], out[r])
		}
	}
	// Sliced arrays (a non-zero offset) compare the same rows.
	is, ss := array.NewSlice(ia, 5, int64(len(texts))), array.NewSlice(sa, 5, int64(len(texts)))
	defer is.Release()
	defer ss.Release()
	got = got[:len(texts)-5]
	tbl.Find(&p, []arrow.Array{is, ss}, len(got), nil, got)
	for r := range got {
		if got[r] != out[r+5] {
			t.Fatalf("sliced find row %d: %d, want %d", r, got[r], out[r+5])
		}
	}
}
