package parquet

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"
)

// encodeHybrid encodes vals in Parquet's RLE / bit-packing hybrid at
// width: runs of at least 8 equal values as repeated runs, the rest as
// bit-packed groups (the last group padded with zeros).
func encodeHybrid(vals []uint32, width uint) []byte {
	var out []byte
	i := 0
	for i < len(vals) {
		j := i
		for j < len(vals) && vals[j] == vals[i] {
			j++
		}
		if j-i >= 8 {
			out = binary.AppendUvarint(out, uint64(j-i)<<1)
			for b := 0; b < int(width+7)/8; b++ {
				out = append(out, byte(vals[i]>>(8*b)))
			}
			i = j
			continue
		}
		// Bit-pack up to the next long run, in whole groups.
		end := i
		for end < len(vals) {
			k := end
			for k < len(vals) && vals[k] == vals[end] {
				k++
			}
			if k-end >= 8 && (end-i)%8 == 0 && end > i {
				break
			}
			end++
		}
		groups := (end - i + 7) / 8
		out = binary.AppendUvarint(out, uint64(groups)<<1|1)
		packed := make([]byte, groups*int(width))
		for k := 0; k < groups*8; k++ {
			var v uint32
			if i+k < len(vals) {
				v = vals[i+k]
			}
			for b := uint(0); b < width; b++ {
				if v>>b&1 != 0 {
					bit := k*int(width) + int(b)
					packed[bit/8] |= 1 << (bit % 8)
				}
			}
		}
		out = append(out, packed...)
		i = min(i+groups*8, len(vals))
	}
	return out
}

// TestRLEReader decodes every width from 0 to 32 over data with long runs,
// random values and both mixed, read in chunks of random sizes, and checks
// the validity-bit path on width 1.
func TestRLEReader(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for width := uint(0); width <= 32; width++ {
		for _, shape := range []string{"random", "runs", "mixed"} {
			t.Run(fmt.Sprintf("w%d/%s", width, shape), func(t *testing.T) {
				n := 1 + r.IntN(3000)
				vals := make([]uint32, n)
				mask := uint64(1)<<width - 1
				for i := range vals {
					switch {
					case shape == "runs" || (shape == "mixed" && (i/50)%2 == 0):
						vals[i] = uint32(uint64(i/37) * 2654435761 & mask)
					default:
						vals[i] = uint32(r.Uint64() & mask)
					}
				}
				data := encodeHybrid(vals, width)
				var rd rleReader
				if err := rd.reset(data, width); err != nil {
					t.Fatal(err)
				}
				got := make([]uint32, n)
				for at := 0; at < n; {
					k := min(n-at, 1+r.IntN(100))
					if err := rd.read(got[at : at+k]); err != nil {
						t.Fatalf("read at %d: %v", at, err)
					}
					at += k
				}
				for i := range vals {
					if got[i] != vals[i] {
						t.Fatalf("value %d: got %d, want %d", i, got[i], vals[i])
					}
				}
				// Past the end: an error, not a value.
				var extra [64]uint32
				if err := rd.read(extra[:]); err == nil {
					t.Error("reading past the data succeeded")
				}

				if width != 1 {
					return
				}
				if err := rd.reset(data, 1); err != nil {
					t.Fatal(err)
				}
				valid := make([]byte, (n+3+7)/8)
				present := 0
				for at := 0; at < n; {
					k := min(n-at, 1+r.IntN(100))
					p, err := rd.readBits(valid, at+3, k) // an unaligned destination
					if err != nil {
						t.Fatal(err)
					}
					present += p
					at += k
				}
				want := 0
				for i, v := range vals {
					want += int(v)
					if got := valid[(i+3)/8]>>((i+3)%8)&1 == 1; got != (v == 1) {
						t.Fatalf("bit %d: got %v, want %v", i, got, v == 1)
					}
				}
				if present != want {
					t.Errorf("present %d, want %d", present, want)
				}
			})
		}
	}
}

// TestRLEReaderCorrupt checks that truncated or malformed runs are errors.
func TestRLEReaderCorrupt(t *testing.T) {
	vals := []uint32{1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7, 0}
	data := encodeHybrid(vals, 3)
	for _, tc := range []struct {
		name  string
		data  []byte
		width uint
	}{
		{"truncated", data[:len(data)-2], 3},
		{"empty", nil, 3},
		{"zero-length run", []byte{0}, 3},
		{"repeated run without its value", []byte{16}, 16},
	} {
		var rd rleReader
		if err := rd.reset(tc.data, tc.width); err != nil {
			t.Fatal(err)
		}
		got := make([]uint32, len(vals))
		if err := rd.read(got); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
	var rd rleReader
	if err := rd.reset(data, 33); err == nil {
		t.Error("width 33 accepted")
	}
}
