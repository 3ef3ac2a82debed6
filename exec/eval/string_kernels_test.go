package eval

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/quiverdb/quiver/physical"
)

// TestStringKernelsMatchView checks the in-place string equality and IN
// kernels against the general []string path, on sliced arrays with NULLs,
// for short lists (length filter, including items of 64+ bytes) and hashed
// lists.
func TestStringKernelsMatchView(t *testing.T) {
	mem := checkedMem(t)
	rng := rand.New(rand.NewPCG(21, 22))
	words := []string{"", "AIR", "AIR REG", "MAIL", "SHIP", "DELIVER IN PERSON", "SM CASE", "SM BOX",
		strings.Repeat("L", 64), strings.Repeat("L", 70), "é", "AIR ", "ABCDEFGH", "ABCDEFG", "AIR\x00", "\x00"}
	b := array.NewStringBuilder(mem)
	defer b.Release()
	for range 1000 {
		if rng.IntN(7) == 0 {
			b.AppendNull()
			continue
		}
		b.Append(words[rng.IntN(len(words))])
	}
	full := b.NewArray()
	defer full.Release()
	for _, off := range []int{0, 3, 11} {
		arr := array.NewSlice(full, int64(off), int64(full.Len()-off/2))
		view := stringView(arr)
		nb := (arr.Len() + 7) / 8
		for _, w := range words {
			got, want := make([]byte, nb), make([]byte, nb)
			if !strEqScalar(arr, w, got) {
				t.Fatal("strEqScalar refused a Utf8 array")
			}
			cmpDispatch(physical.OpEq, view, nil, w, want)
			if string(got) != string(want) {
				t.Fatalf("offset %d = %q: in-place and view kernels differ", off, w)
			}
		}
		for _, size := range []int{1, 2, 3, 8, 9, 12} {
			items := make([]string, size)
			for i := range items {
				items[i] = words[rng.IntN(len(words))]
			}
			set := newInSet(items)
			got, want := make([]byte, nb), make([]byte, nb)
			if !strProbeSet(arr, set, got) {
				t.Fatal("strProbeSet refused a Utf8 array")
			}
			probeSet(view, set, want)
			if string(got) != string(want) {
				t.Fatalf("offset %d IN %s: in-place and view kernels differ", off, fmt.Sprint(items))
			}
		}
		arr.Release()
	}
}
