package parquet

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

func bitAt(b []byte, i int) bool { return b[i>>3]>>(i&7)&1 != 0 }

// TestCopyValidBits copies random bit ranges between random offsets into a
// destination full of other bits, up to its last byte, and checks the
// copied bits, the count of set ones and that no other bit changed.
func TestCopyValidBits(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for it := 0; it < 3000; it++ {
		src := make([]byte, 1+r.IntN(40))
		dst := make([]byte, 1+r.IntN(40))
		for i := range src {
			src[i] = byte(r.Uint32())
		}
		for i := range dst {
			dst[i] = byte(r.Uint32())
		}
		srcOff := r.IntN(8 * len(src))
		dstOff := r.IntN(8 * len(dst))
		n := r.IntN(min(8*len(src)-srcOff, 8*len(dst)-dstOff) + 1)
		before := append([]byte(nil), dst...)
		got := copyValidBits(dst, dstOff, src, srcOff, n)
		want := 0
		for i := 0; i < 8*len(dst); i++ {
			w := bitAt(before, i)
			if i >= dstOff && i < dstOff+n {
				w = bitAt(src, srcOff+i-dstOff)
				if w {
					want++
				}
			}
			if bitAt(dst, i) != w {
				t.Fatalf("copy of %d bits from %d to %d (src %d, dst %d bytes): bit %d is %v", n, srcOff, dstOff, len(src), len(dst), i, !w)
			}
		}
		if got != want {
			t.Fatalf("copy of %d bits from %d to %d: %d set, want %d", n, srcOff, dstOff, got, want)
		}
	}
}

// randomValidity returns k validity bits from bit at of a fresh bitmap
// (the bits around them random too) with NULLs at probability p, and how
// many are set.
func randomValidity(r *rand.Rand, at, k int, p float64) ([]byte, int) {
	valid := make([]byte, (at+k+7)/8+1)
	for i := range valid {
		valid[i] = byte(r.Uint32())
	}
	m := 0
	for i := at; i < at+k; i++ {
		if r.Float64() < p {
			valid[i>>3] &^= 1 << (i & 7)
		} else {
			valid[i>>3] |= 1 << (i & 7)
			m++
		}
	}
	return valid, m
}

// TestSpread checks both decoders' spread (dense values moved to the
// present rows, NULL rows emptied) for NULL rates from none to all.
func TestSpread(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, p := range []float64{0, 0.02, 0.3, 0.9, 1} {
		for it := 0; it < 200; it++ {
			at, k := r.IntN(20), r.IntN(300)
			valid, m := randomValidity(r, at, k, p)
			t.Run(fmt.Sprintf("p%v/%d", p, it), func(t *testing.T) {
				f := &fixedWidth[int64]{out: make([]int64, at+k)}
				for i := range f.out {
					f.out[i] = -1
				}
				for i := range m {
					f.out[at+i] = int64(100 + i)
				}
				f.spread(valid, at, k, m)
				next := 0
				for i := range k {
					want := int64(0)
					if bitAt(valid, at+i) {
						want = int64(100 + next)
						next++
					}
					if f.out[at+i] != want {
						t.Fatalf("fixed: row %d is %d, want %d", i, f.out[at+i], want)
					}
				}
				for i := range at {
					if f.out[i] != -1 {
						t.Fatalf("fixed: row %d before the segment changed", i)
					}
				}

				// Strings: m dense values of length 1 + i%3 after at rows
				// that end at offset 50.
				b := &byteArray{offs: make([]int32, at+k+1)}
				b.offs[at] = 50
				end := int32(50)
				for i := range m {
					end += int32(1 + i%3)
					b.offs[at+1+i] = end
				}
				b.spread(valid, at, k, m)
				end, next = 50, 0
				for i := range k {
					if bitAt(valid, at+i) {
						end += int32(1 + next%3)
						next++
					}
					if b.offs[at+1+i] != end {
						t.Fatalf("strings: row %d ends at %d, want %d", i, b.offs[at+1+i], end)
					}
				}
			})
		}
	}
}

// TestDictRuns decodes dictionary indices of long repeated runs mixed with
// bit-packed ones, in chunks, straight into values (fill and dict), and
// checks an index past the dictionary in a repeated run is an error.
func TestDictRuns(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	dict := []int64{10, 11, 12, 13, 14, 15, 16}
	n := 5000
	vals := make([]uint32, n)
	for i := range vals {
		if (i/100)%2 == 0 {
			vals[i] = uint32(i/13) % uint32(len(dict)) // runs of 13
		} else {
			vals[i] = uint32(r.IntN(len(dict)))
		}
	}
	f := &fixedWidth[int64]{dicts: dict, out: make([]int64, n)}
	c := &columnReader{vals: f}
	if err := c.idx.reset(encodeHybrid(vals, 3), 3); err != nil {
		t.Fatal(err)
	}
	for at := 0; at < n; {
		k := min(n-at, 1+r.IntN(300))
		if err := c.dictRuns(f, at, k); err != nil {
			t.Fatalf("at %d: %v", at, err)
		}
		at += k
	}
	for i, v := range vals {
		if f.out[i] != dict[v] {
			t.Fatalf("row %d: %d, want %d", i, f.out[i], dict[v])
		}
	}
	bad := make([]uint32, 20)
	for i := range bad {
		bad[i] = 7 // one past the dictionary
	}
	if err := c.idx.reset(encodeHybrid(bad, 3), 3); err != nil {
		t.Fatal(err)
	}
	if err := c.dictRuns(f, 0, len(bad)); err == nil {
		t.Error("an index past the dictionary in a repeated run decoded")
	}
	for i := range bad {
		bad[i] = 6
	}
	if err := c.idx.reset(encodeHybrid(bad, 3), 3); err != nil {
		t.Fatal(err)
	}
	if err := c.dictRuns(f, 0, 100); err == nil {
		t.Error("reading past the indices succeeded")
	}
}
