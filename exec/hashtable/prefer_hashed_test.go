package hashtable

import (
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestPreferHashed: a table told its integer keys are spread thin starts
// in hashed slots (no direct pages however the keys fall), gives every key
// the id a Go map gives it, and reserves no more than hashed slots need;
// a table of another layout, or already holding keys, is left alone.
func TestPreferHashed(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	tbl, err := New([]arrow.DataType{arrow.PrimitiveTypes.Int64})
	if err != nil {
		t.Fatal(err)
	}
	tbl.PreferHashed()
	if !tbl.isHashed() {
		t.Fatal("PreferHashed left an empty int64 table direct")
	}
	r := rand.New(rand.NewPCG(1, 2))
	const n = 50000
	b := array.NewInt64Builder(mem)
	for range n {
		b.Append(r.Int64N(6_000_000)) // order keys of one hash partition
	}
	col := b.NewArray()
	b.Release()
	defer col.Release()
	direct, _ := New([]arrow.DataType{arrow.PrimitiveTypes.Int64})
	if hw, dw := tbl.WorstCase([]arrow.Array{col}, n), direct.WorstCase([]arrow.Array{col}, n); hw >= dw {
		t.Errorf("hashed worst case %d, direct %d: want less", hw, dw)
	}
	ids := make([]uint32, n)
	var p Probe
	tbl.FindOrInsert(&p, []arrow.Array{col}, n, nil, ids)
	want := map[int64]uint32{}
	vals := col.(*array.Int64).Int64Values()
	for i, v := range vals {
		if id, ok := want[v]; ok {
			if ids[i] != id {
				t.Fatalf("row %d: key %d got id %d, earlier %d", i, v, ids[i], id)
			}
			continue
		}
		want[v] = ids[i]
	}
	if tbl.Len() != len(want) || !tbl.isHashed() || tbl.directPages() != 0 {
		t.Fatalf("len %d (want %d), hashed %v, direct pages %d", tbl.Len(), len(want), tbl.isHashed(), tbl.directPages())
	}
	// Held keys, or a string key: nothing changes.
	sb := array.NewInt64Builder(mem)
	for i := range 10 {
		sb.Append(int64(i))
	}
	small := sb.NewArray()
	sb.Release()
	defer small.Release()
	direct.FindOrInsert(&p, []arrow.Array{small}, 10, nil, ids[:10])
	direct.PreferHashed()
	if direct.isHashed() {
		t.Error("PreferHashed moved a table holding keys")
	}
	s, _ := New([]arrow.DataType{arrow.BinaryTypes.String})
	before := s.layout
	s.PreferHashed()
	if s.layout != before {
		t.Error("PreferHashed changed a string table")
	}
}
