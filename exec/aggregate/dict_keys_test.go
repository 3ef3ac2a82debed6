package aggregate

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver/exec/filemap"
	"github.com/quiverdb/quiver/physical"
)

// TestDictKeysMixedBatches: one aggregate's ids stay consistent across
// batches coded by the first file's dictionary (the ids are its codes),
// by another dictionary (remapped, values in another order and new ones),
// a slice of a coded array and batches without codes (interned row by
// row): equal strings get equal ids, NULL rows stay NULL, and decoding
// the ids gives the strings back.
func TestDictKeysMixedBatches(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	strs := func(vs ...*string) *array.String {
		b := array.NewStringBuilder(mem)
		defer b.Release()
		for _, v := range vs {
			if v == nil {
				b.AppendNull()
			} else {
				b.Append(*v)
			}
		}
		return b.NewStringArray()
	}
	p := func(s string) *string { return &s }
	type coded struct {
		dict  *filemap.Dict
		codes []int32
	}
	fake := map[arrow.ArrayData]coded{}
	old := dictCodes
	dictCodes = func(a arrow.Array) (*filemap.Dict, []int32, bool) {
		c, ok := fake[a.Data()]
		return c.dict, c.codes, ok
	}
	defer func() { dictCodes = old }()

	dictA := &filemap.Dict{Values: []string{"asia", "europe", "africa"}}
	dictB := &filemap.Dict{Values: []string{"america", "africa", "asia"}}
	a1 := strs(p("europe"), nil, p("asia"), p("africa"), p("europe"))
	fake[a1.Data()] = coded{dictA, []int32{1, 0, 0, 2, 1}}
	b1 := strs(p("africa"), p("america"), nil, p("asia"))
	fake[b1.Data()] = coded{dictB, []int32{1, 0, 0, 2}}
	a2 := strs(p("asia"), p("asia"), p("europe"), nil)
	fake[a2.Data()] = coded{dictA, []int32{0, 0, 1, 0}}
	plain := strs(p("middle east"), nil, p("africa"), p("america"), p("middle east"))
	sliced := array.NewSlice(a1, 2, 5) // a slice has no codes of its own
	defer sliced.Release()

	n := &physical.HashAggregate{Mode: physical.AggPartial, GroupBy: []physical.Expr{&physical.Column{Name: "r", Index: 0, Type: arrow.BinaryTypes.String}}}
	d := newDictKeys(n, false)
	if d == nil {
		t.Fatal("a Partial aggregate by a string column gets no dictionary keys")
	}
	types := []arrow.DataType{arrow.BinaryTypes.String}
	first := []arrow.Array{a1}
	a1.Retain()
	if !d.decide(first, types) || types[0].ID() != arrow.INT32 {
		t.Fatalf("a first batch with codes: decided %v, key type %s", d.on, types[0])
	}
	first[0].Release()
	idOf := map[string]int32{}
	for bi, arr := range []*array.String{a1, b1, a2, plain, sliced.(*array.String)} {
		keys := []arrow.Array{arr}
		arr.Retain()
		d.encode(keys)
		ids := keys[0].(*array.Int32)
		if ids.Len() != arr.Len() {
			t.Fatalf("batch %d: %d ids for %d rows", bi, ids.Len(), arr.Len())
		}
		for r := range arr.Len() {
			if arr.IsNull(r) != ids.IsNull(r) {
				t.Fatalf("batch %d row %d: NULL %v, id NULL %v", bi, r, arr.IsNull(r), ids.IsNull(r))
			}
			if arr.IsNull(r) {
				continue
			}
			v, id := arr.Value(r), ids.Value(r)
			if want, ok := idOf[v]; ok && want != id {
				t.Fatalf("batch %d row %d: %q has id %d, earlier %d", bi, r, v, id, want)
			}
			idOf[v] = id
		}
		ids.Retain()
		cols := []arrow.Array{ids}
		d.decode(mem, cols)
		back := cols[0].(*array.String)
		for r := range arr.Len() {
			if back.IsNull(r) != arr.IsNull(r) || !arr.IsNull(r) && back.Value(r) != arr.Value(r) {
				t.Fatalf("batch %d row %d: decoded %q (NULL %v), want %q", bi, r, back.Value(r), back.IsNull(r), arr.Value(r))
			}
		}
		back.Release()
		keys[0].Release()
	}
	if len(idOf) != 5 {
		t.Fatalf("ids %v, want 5 distinct strings", idOf)
	}
	seen := map[int32]bool{}
	for _, id := range idOf {
		if seen[id] {
			t.Fatalf("two strings share an id: %v", idOf)
		}
		seen[id] = true
	}
	for _, a := range []*array.String{a1, b1, a2, plain} {
		a.Release()
	}
}
