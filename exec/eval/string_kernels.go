package eval

import (
	"encoding/binary"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// String kernels that read a Utf8 array's offsets and bytes in place. The
// general path (stringView) first builds a []string per batch, which costs
// an allocation of 16 bytes per row that the GC must scan; equality with a
// constant and IN-list probes (Q12, Q19 and others filter on them over all
// of lineitem) need no such view.

// strEqScalar sets bit i of bm (zeroed) where row i of a equals s; ok is
// false when a is not a plain Utf8 array (the caller takes the general path).
func strEqScalar(a arrow.Array, s string, bm []byte) (ok bool) {
	sa, isStr := a.(*array.String)
	if !isStr {
		return false
	}
	offs, data := strParts(sa)
	n := sa.Len()
	offs = offs[:n+1]
	ls := int32(len(s))
	for base := 0; base < n; base += 8 {
		var acc byte // eight rows' bits, stored once (see strProbeWords)
		for bit := range min(8, n-base) {
			lo, hi := offs[base+bit], offs[base+bit+1]
			eq := hi-lo == ls && string(data[lo:hi]) == s
			acc |= b2u(eq) << uint(bit)
		}
		bm[base>>3] |= acc
	}
	return true
}

// strProbeSet sets bit i of bm (zeroed) where row i of a is in set; ok is
// false when a is not a plain Utf8 array.
func strProbeSet(a arrow.Array, set *inSet[string], bm []byte) (ok bool) {
	sa, isStr := a.(*array.String)
	if !isStr {
		return false
	}
	offs, data := strParts(sa)
	n := sa.Len()
	offs = offs[:n+1]
	if set.m != nil {
		for i := 0; i < n; i++ {
			_, hit := set.m[string(data[offs[i]:offs[i+1]])] // no allocation: map index by converted bytes
			bm[i>>3] |= b2u(hit) << (uint(i) & 7)
		}
		return true
	}
	if strProbeWords(offs, data, n, set.small, bm) {
		return true
	}
	// Short lists: reject on length first, which settles most rows
	// without touching their bytes.
	var lens uint64 // bit l set when some item has length l (l < 64)
	long := false
	for _, x := range set.small {
		if len(x) < 64 {
			lens |= 1 << uint(len(x))
		} else {
			long = true
		}
	}
	for i := 0; i < n; i++ {
		lo, hi := offs[i], offs[i+1]
		l := hi - lo
		if !long && (l >= 64 || lens&(1<<uint(l)) == 0) {
			continue
		}
		v := data[lo:hi]
		for _, x := range set.small {
			if string(v) == x {
				bm[i>>3] |= 1 << (uint(i) & 7)
				break
			}
		}
	}
	return true
}

// strProbeWords is strProbeSet's path for short lists whose items are all
// at most 8 bytes (ship modes, country codes, flags): each item and each
// row is packed into a word, so a probe is a few word comparisons with no
// call to the runtime's memequal. It returns false (and sets nothing) when
// the list does not qualify.
func strProbeWords(offs []int32, data []byte, n int, items []string, bm []byte) bool {
	if len(items) == 0 || len(items) > smallSet {
		return false
	}
	var words [smallSet]uint64
	var lens [smallSet]int32
	for j, x := range items {
		if len(x) > 8 {
			return false
		}
		words[j], lens[j] = packShort([]byte(x)), int32(len(x))
	}
	k := len(items)
	// Eight rows' bits gather in a register and are stored once: a
	// read-modify-write of the output byte per row would make every row
	// wait for the previous row's store.
	for base := 0; base < n; base += 8 {
		var acc byte
		for bit := range min(8, n-base) {
			i := base + bit
			lo, hi := offs[i], offs[i+1]
			l := hi - lo
			if l > 8 {
				continue
			}
			var w uint64
			if int(lo)+8 <= len(data) {
				// One load; the bytes past the value are masked off.
				w = binary.LittleEndian.Uint64(data[lo:]) & (^uint64(0) >> (64 - 8*uint(l))) // l = 0: shifts all out
			} else {
				w = packShort(data[lo:hi])
			}
			var hit byte // branch-free: which item matches is unpredictable
			for j := range k {
				hit |= b2u(words[j] == w) & b2u(lens[j] == l)
			}
			acc |= hit << uint(bit)
		}
		bm[base>>3] |= acc
	}
	return true
}

// packShort packs up to 8 bytes little-endian into a word, zero-padded.
func packShort(b []byte) uint64 {
	var w uint64
	for i, c := range b {
		w |= uint64(c) << (8 * uint(i))
	}
	return w
}
