package hashtable

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/quiverdb/quiver/exec/kernel"
	"github.com/quiverdb/quiver/exec/memcheck"
)

// Every length 0..40: a copy in other memory is equal and hashes equally;
// changing any one byte makes it unequal and changes its hash; a string
// and its one-byte-longer extension (same bytes) differ.
func TestShortStringHashAndEqual(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for n := 0; n <= 40; n++ {
		// Embedded in a larger buffer so loads near the ends would show
		// up as reading neighbours.
		buf := make([]byte, n+2)
		for i := range buf {
			buf[i] = byte(rng.IntN(256))
		}
		s := buf[1 : n+1]
		c := append([]byte(nil), s...)
		if !equalBytes(s, c) || kernel.HashBytes(s) != kernel.HashBytes(c) {
			t.Fatalf("n=%d: equal copies compare unequal or hash differently", n)
		}
		for i := range n {
			for _, flip := range []byte{1, 0x80, 0xff} {
				d := append([]byte(nil), s...)
				d[i] ^= flip
				if equalBytes(s, d) || equalBytes(d, s) {
					t.Fatalf("n=%d: strings differing in byte %d compare equal", n, i)
				}
				if kernel.HashBytes(s) == kernel.HashBytes(d) {
					t.Fatalf("n=%d: strings differing in byte %d (^%#x) hash equally", n, i, flip)
				}
			}
		}
		longer := buf[1 : n+2]
		if equalBytes(s, longer) || equalBytes(longer, s) || kernel.HashBytes(s) == kernel.HashBytes(longer) {
			t.Fatalf("n=%d: string and its extension compare equal or hash equally", n)
		}
	}
	// Strings of zero bytes: only the length tells them apart.
	seen := map[uint64]int{}
	for n := 0; n <= 40; n++ {
		h := kernel.HashBytes(make([]byte, n))
		if m, ok := seen[h]; ok {
			t.Fatalf("zero strings of lengths %d and %d hash equally", m, n)
		}
		seen[h] = n
	}
}

// hashStringsCase builds the same values (nil: NULL) as a String array
// sliced out of a larger one, a fresh String, a LargeString and a Binary
// array: all must hash alike, row by row, and agree with equalBytes-based
// repeat marking.
func TestStringColumnsSlicedAndNull(t *testing.T) {
	mem := memcheck.New(t)
	rng := rand.New(rand.NewPCG(9, 10))
	var vals []*string
	for i := 0; i < 300; i++ {
		switch {
		case i%11 == 3:
			vals = append(vals, nil)
		case i > 0 && i%3 == 1:
			vals = append(vals, vals[i-1]) // runs, NULL runs included
		default:
			b := make([]byte, rng.IntN(41))
			for j := range b {
				b[j] = 'a' + byte(rng.IntN(3))
			}
			s := string(b)
			vals = append(vals, &s)
		}
	}
	build := func(bld array.Builder, pad int) arrow.Array {
		defer bld.Release()
		appendS := func(s *string) {
			switch b := bld.(type) {
			case *array.StringBuilder:
				if s == nil {
					b.AppendNull()
				} else {
					b.Append(*s)
				}
			case *array.LargeStringBuilder:
				if s == nil {
					b.AppendNull()
				} else {
					b.Append(*s)
				}
			case *array.BinaryBuilder:
				if s == nil {
					b.AppendNull()
				} else {
					b.Append([]byte(*s))
				}
			}
		}
		junk := "junk-prefix-value-longer-than-16"
		for range pad {
			appendS(&junk)
		}
		for _, v := range vals {
			appendS(v)
		}
		for range pad {
			appendS(nil)
		}
		a := bld.NewArray()
		if pad == 0 {
			return a
		}
		defer a.Release()
		return array.NewSlice(a, int64(pad), int64(pad+len(vals)))
	}
	arrs := []arrow.Array{
		build(array.NewStringBuilder(mem), 0),
		build(array.NewStringBuilder(mem), 5),
		build(array.NewLargeStringBuilder(mem), 7),
		build(array.NewBinaryBuilder(mem, arrow.BinaryTypes.Binary), 2),
	}
	defer kernel.ReleaseArrays(arrs)
	n := len(vals)
	want := make([]uint64, n)
	kernel.HashColumns(arrs[:1], want)
	for k, a := range arrs {
		got := make([]uint64, n)
		kernel.HashColumns([]arrow.Array{a}, got)
		for r := range n {
			if got[r] != want[r] {
				t.Fatalf("array %d (%s, offset %d) row %d: hash %x, want %x", k, a.DataType(), a.Data().Offset(), r, got[r], want[r])
			}
		}
		rep, scratch := make([]bool, n), make([]bool, n)
		if !markRepeats([]arrow.Array{a}, n, rep, scratch) {
			t.Fatalf("array %d: markRepeats refused a string column", k)
		}
		for r := 1; r < n; r++ {
			same := (vals[r] == nil && vals[r-1] == nil) ||
				(vals[r] != nil && vals[r-1] != nil && *vals[r] == *vals[r-1])
			if rep[r] != same {
				t.Fatalf("array %d row %d: repeat %v, want %v", k, r, rep[r], same)
			}
		}
	}
	// Equal values hash equally, NULLs all alike.
	for r := range n {
		for q := range r {
			eq := (vals[r] == nil) == (vals[q] == nil) && (vals[r] == nil || *vals[r] == *vals[q])
			if eq != (want[r] == want[q]) {
				t.Fatalf("rows %d, %d: equal=%v but hashes %x %x", q, r, eq, want[q], want[r])
			}
		}
	}
	// bytesKeys.equal against keys stored from the sliced String array,
	// probed with every array in every row order.
	k := &bytesKeys{dt: arrow.BinaryTypes.String, offs: []int{0}}
	rows := make([]int32, n)
	for i := range rows {
		rows[i] = int32(i)
	}
	k.appendRows(arrs[1], rows)
	ids := make([]uint32, n)
	eq := make([]bool, n)
	for _, a := range arrs {
		for shift := range 3 {
			for i := range rows {
				ids[i] = uint32((i + shift) % n)
				eq[i] = true
			}
			k.equal(a, rows, ids, eq)
			for i := range rows {
				r, id := i, int(ids[i])
				w := (vals[r] == nil) == (vals[id] == nil) && (vals[r] == nil || *vals[r] == *vals[id])
				if eq[i] != w {
					t.Fatalf("%s: row %d vs key %d: equal %v, want %v", a.DataType(), r, id, eq[i], w)
				}
			}
		}
	}
}

// chiSquare returns the chi-square statistic of counts against a uniform
// expectation, and the bound it must stay under: the mean (k-1) plus six
// standard deviations (sqrt(2(k-1))), which a uniform hash exceeds with
// negligible probability.
func chiSquare(counts []int, total int) (chi, bound float64) {
	e := float64(total) / float64(len(counts))
	for _, c := range counts {
		d := float64(c) - e
		chi += d * d / e
	}
	k := float64(len(counts) - 1)
	return chi, k + 6*math.Sqrt(2*k)
}

// Distribution over TPC-H-like keys: the high bits (hash table slots,
// also within one partition) and the low bits (hash mod partitions, and
// the slot tag) of distinct keys must spread evenly.
func TestHashDistribution(t *testing.T) {
	mem := memcheck.New(t)
	type keySet struct {
		name string
		cols []arrow.Array
	}
	var sets []keySet
	strs := func(vs []string) arrow.Array {
		b := array.NewStringBuilder(mem)
		defer b.Release()
		b.AppendValues(vs, nil)
		return b.NewArray()
	}
	ints := func(vs []int64) arrow.Array {
		b := array.NewInt64Builder(mem)
		defer b.Release()
		b.AppendValues(vs, nil)
		return b.NewArray()
	}
	var cname []string
	for i := 1; i <= 150_000; i++ {
		cname = append(cname, fmt.Sprintf("Customer#%09d", i))
	}
	sets = append(sets, keySet{"c_name", []arrow.Array{strs(cname)}})
	var okey []int64
	for i := int64(1); i <= 150_000; i++ {
		okey = append(okey, i*4-3+i%4) // spaced like TPC-H order keys
	}
	sets = append(sets, keySet{"orderkey", []arrow.Array{ints(okey)}})
	var pk, sk []int64
	for p := int64(1); p <= 50_000; p++ {
		for j := int64(0); j < 4; j++ {
			pk, sk = append(pk, p), append(sk, (p+j*2501)%10_000+1)
		}
	}
	sets = append(sets, keySet{"partkey,suppkey", []arrow.Array{ints(pk), ints(sk)}})
	var nat, phone []string
	var yr []int64
	for i := range 100_000 {
		nat = append(nat, fmt.Sprintf("NATION-%d", i%25))
		phone = append(phone, fmt.Sprintf("%02d-%03d-%03d", i%25+10, i/1000, i%1000))
		yr = append(yr, int64(1992+i/25))
	}
	sets = append(sets, keySet{"nation,year", []arrow.Array{strs(nat), ints(yr)}})
	sets = append(sets, keySet{"phone (15 bytes)", []arrow.Array{strs(phone)}})
	for _, s := range sets {
		defer kernel.ReleaseArrays(s.cols)
		n := s.cols[0].Len()
		h := make([]uint64, n)
		kernel.HashColumns(s.cols, h)
		distinct := map[uint64]struct{}{}
		for _, v := range h {
			distinct[v] = struct{}{}
		}
		if len(distinct) != n {
			t.Errorf("%s: %d of %d distinct keys collide on the full 64 bits", s.name, n-len(distinct), n)
		}
		check := func(what string, counts []int, total int) {
			if chi, bound := chiSquare(counts, total); chi > bound {
				t.Errorf("%s: %s: chi-square %.0f over %d buckets exceeds %.0f", s.name, what, chi, len(counts), bound)
			}
		}
		high := make([]int, 1024)
		low := make([]int, 1024)
		for _, v := range h {
			high[v>>54]++
			low[v&1023]++
		}
		check("high 10 bits", high, n)
		check("low 10 bits", low, n)
		for _, parts := range []uint64{2, 3, 7, 16} {
			byPart := make([]int, parts)
			inPart0 := make([]int, 256)
			for _, v := range h {
				byPart[v%parts]++
				if v%parts == 0 {
					inPart0[v>>56]++
				}
			}
			check(fmt.Sprintf("mod %d", parts), byPart, n)
			check(fmt.Sprintf("high bits within partition 0 of %d", parts), inPart0, byPart[0])
		}
	}
}
