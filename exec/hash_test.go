package exec_test

import (
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/quiverdb/quiver/exec/exectest"
	"github.com/quiverdb/quiver/exec/kernel"
)

// Rows 0 and 2 are equal in every column (including NULLs), row 1 differs,
// and row 3 is row 0 again in a sliced array: equal rows must hash equally.
func TestHashColumns(t *testing.T) {
	mem := exectest.Allocator(t)
	sc := schemaOf(fld("i", i64), fld("s", str), fld("d", dec), fld("f", f64), fld("b", boolT), fld("dt", date), fld("n", i32))
	rec, _, err := array.RecordFromJSON(mem, sc, strings.NewReader(`[
	 {"i":1,"s":"hello world, long","d":"1.25","f":-0.0,"b":true,"dt":"2020-01-01","n":null},
	 {"i":1,"s":"hello world, lonG","d":"1.25","f":0.0,"b":true,"dt":"2020-01-01","n":null},
	 {"i":1,"s":"hello world, long","d":"1.25","f":0.0,"b":true,"dt":"2020-01-01","n":null},
	 {"i":9,"s":"x","d":"0.00","f":1.0,"b":false,"dt":"2020-01-02","n":7},
	 {"i":1,"s":"hello world, long","d":"1.25","f":0.0,"b":true,"dt":"2020-01-01","n":null}]`))
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	h := make([]uint64, 5)
	kernel.HashColumns(rec.Columns(), h)
	if h[0] != h[2] || h[0] == h[1] || h[0] == h[3] || h[4] != h[0] {
		t.Fatalf("hashes %x", h)
	}
	sl := rec.NewSlice(3, 5)
	defer sl.Release()
	hs := make([]uint64, 2)
	kernel.HashColumns(sl.Columns(), hs)
	if hs[0] != h[3] || hs[1] != h[4] {
		t.Fatalf("sliced hashes %x, want %x %x", hs, h[3], h[4])
	}
	// A NULL hashes to a fixed value regardless of the bytes under it.
	// Built with a builder, not array.MakeArrayOfNull: that one leaves
	// its validity bitmap as the allocator hands it out, and
	// exectest.Allocator poisons fresh memory.
	nb := array.NewInt32Builder(mem)
	nb.AppendNulls(2)
	nulls := nb.NewArray()
	nb.Release()
	defer nulls.Release()
	hn := make([]uint64, 2)
	kernel.HashColumns([]arrow.Array{nulls}, hn)
	hc := make([]uint64, 5)
	kernel.HashColumns([]arrow.Array{rec.Column(6)}, hc)
	if hn[0] != hn[1] || hn[0] != hc[0] {
		t.Fatalf("null hashes differ: %x %x", hn, hc)
	}
}
