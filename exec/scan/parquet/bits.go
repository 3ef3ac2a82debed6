package parquet

import (
	"encoding/binary"
	"math/bits"
)

// Bit helpers of the definition-level path: validity bits are copied a
// word at a time rather than through a generic bitmap copy,
// whose setup costs more than the short runs of a page's levels.

// load64 returns the 8 bytes of b from byte i, little endian, reading
// zeros past the end of b.
func load64(b []byte, i int) uint64 {
	if i+8 <= len(b) {
		return binary.LittleEndian.Uint64(b[i:])
	}
	var v uint64
	for k := 0; i+k < len(b); k++ {
		v |= uint64(b[i+k]) << (8 * k)
	}
	return v
}

// loadBits returns bits of b from bit pos on in its low 57 bits or more
// (bit pos lowest); bits past the end of b read as zeros.
func loadBits(b []byte, pos int) uint64 {
	return load64(b, pos>>3) >> (pos & 7)
}

// copyValidBits copies n bits of src from bit srcOff to dst from bit dstOff
// (least significant bit first, other bits of dst kept) and returns how
// many of them are set.
func copyValidBits(dst []byte, dstOff int, src []byte, srcOff, n int) int {
	set := 0
	for n > 0 {
		k := min(n, 56) // so that a shift of up to 7 keeps the chunk in one word
		v := loadBits(src, srcOff) & (1<<k - 1)
		set += bits.OnesCount64(v)
		i, sh := dstOff>>3, dstOff&7
		mask := uint64(1<<k-1) << sh
		if i+8 <= len(dst) {
			w := binary.LittleEndian.Uint64(dst[i:])
			binary.LittleEndian.PutUint64(dst[i:], w&^mask|v<<sh)
		} else {
			v <<= sh
			for nb := (sh + k + 7) >> 3; nb > 0; nb-- {
				m := byte(mask)
				dst[i] = dst[i]&^m | byte(v)&m
				i++
				v >>= 8
				mask >>= 8
			}
		}
		srcOff += k
		dstOff += k
		n -= k
	}
	return set
}
