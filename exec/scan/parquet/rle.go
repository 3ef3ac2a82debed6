package parquet

import (
	"encoding/binary"
	"errors"
	"fmt"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow/bitutil"
)

// rleReader decodes Parquet's RLE / bit-packing hybrid encoding (used for
// definition levels and dictionary indices) of values at most 32 bits wide:
// a sequence of runs, each a ULEB128 header whose low bit says a
// bit-packed run of header>>1 groups of 8 values (bit width bits each,
// least significant bit first) or a repeated run of header>>1 copies of
// one value stored in ceil(width/8) little-endian bytes.
//
// The reader does not know how many values the runs hold (a bit-packed
// run pads its last group); its user asks for exactly as many as the page
// holds.
type rleReader struct {
	data  []byte
	pos   int // next unread byte of data (a run header, or past the current run)
	width uint
	mask  uint64

	rleLeft int    // values left in the current repeated run
	rleVal  uint32 // its value
	bpLeft  int    // values left in the current bit-packed run
	bpBit   int    // bit offset in data of the next bit-packed value
}

var errRLETruncated = errors.New("RLE/bit-packed data ends early")

func (r *rleReader) reset(data []byte, width uint) error {
	if width > 32 {
		return fmt.Errorf("RLE/bit-packed bit width %d is over 32", width)
	}
	*r = rleReader{data: data, width: width, mask: 1<<width - 1}
	return nil
}

// nextRun reads the next run header.
func (r *rleReader) nextRun() error {
	h, n := binary.Uvarint(r.data[r.pos:])
	if n <= 0 {
		return errRLETruncated
	}
	r.pos += n
	count := h >> 1
	if count == 0 || count > 1<<31 {
		return fmt.Errorf("RLE/bit-packed run of %d values", count)
	}
	if h&1 == 1 {
		nbytes := int(count) * int(r.width) // count groups of 8 values of width bits
		if nbytes > len(r.data)-r.pos {
			// A writer may stop the last group short of its padding; keep
			// what is there and let reads past it fail.
			nbytes = len(r.data) - r.pos
		}
		r.bpLeft = int(count) * 8
		if r.width > 0 {
			r.bpLeft = min(r.bpLeft, nbytes*8/int(r.width))
		}
		r.bpBit = r.pos * 8
		r.pos += nbytes
		return nil
	}
	nb := int(r.width+7) / 8
	if nb > len(r.data)-r.pos {
		return errRLETruncated
	}
	var v uint32
	for i := range nb {
		v |= uint32(r.data[r.pos+i]) << (8 * i)
	}
	r.pos += nb
	r.rleLeft, r.rleVal = int(count), v
	return nil
}

// read decodes exactly len(dst) values into dst.
func (r *rleReader) read(dst []uint32) error {
	for len(dst) > 0 {
		switch {
		case r.rleLeft > 0:
			n := min(r.rleLeft, len(dst))
			v := r.rleVal
			for i := range dst[:n] {
				dst[i] = v
			}
			r.rleLeft -= n
			dst = dst[n:]
		case r.bpLeft > 0:
			n := min(r.bpLeft, len(dst))
			r.unpack(dst[:n])
			r.bpLeft -= n
			dst = dst[n:]
		default:
			if r.pos >= len(r.data) {
				return errRLETruncated
			}
			if err := r.nextRun(); err != nil {
				return err
			}
		}
	}
	return nil
}

// unpack reads len(dst) bit-packed values starting at bpBit; the caller
// checked they lie inside data.
func (r *rleReader) unpack(dst []uint32) {
	w, mask, data := uint(r.width), r.mask, r.data
	bit := r.bpBit
	i := 0
	if w > 0 && bit&7 == 0 {
		// Whole groups of 8 values (w bytes, byte-aligned) while 8-byte
		// loads stay inside data.
		off := bit >> 3
		if w <= 8 {
			for ; i+8 <= len(dst) && off+8 <= len(data); i += 8 {
				x := binary.LittleEndian.Uint64(data[off:])
				d := dst[i : i+8 : i+8]
				d[0] = uint32(x & mask)
				d[1] = uint32(x >> w & mask)
				d[2] = uint32(x >> (2 * w) & mask)
				d[3] = uint32(x >> (3 * w) & mask)
				d[4] = uint32(x >> (4 * w) & mask)
				d[5] = uint32(x >> (5 * w) & mask)
				d[6] = uint32(x >> (6 * w) & mask)
				d[7] = uint32(x >> (7 * w) & mask)
				off += int(w)
			}
		} else {
			for ; i+8 <= len(dst) && off+int(w)+8 <= len(data); i += 8 {
				g := unsafe.Pointer(&data[off]) // w+8 bytes from here are inside data
				d := dst[i : i+8 : i+8]
				for k := range uint(8) {
					b := k * w
					d[k] = uint32(*(*uint64)(unsafe.Add(g, b>>3)) >> (b & 7) & mask)
				}
				off += int(w)
			}
		}
		bit = off * 8
	}
	// The rest: whole 8-byte loads while they stay inside data (a value of
	// up to 32 bits at a bit offset of up to 7 fits in one), then bit by bit.
	if w > 0 {
		safe := (len(data)-8)*8 - bit // bits that can be read with 8-byte loads
		if safe > 0 {
			fast := min(len(dst), i+safe/int(w))
			for ; i < fast; i++ {
				dst[i] = uint32(binary.LittleEndian.Uint64(data[bit>>3:]) >> (bit & 7) & mask)
				bit += int(w)
			}
		}
	}
	for ; i < len(dst); i++ {
		var v uint64
		for b := 0; b < int(w); b++ {
			if data[(bit+b)>>3]>>((bit+b)&7)&1 != 0 {
				v |= 1 << b
			}
		}
		dst[i] = uint32(v)
		bit += int(w)
	}
	r.bpBit = bit
}

// readBits decodes len(dst) definition levels of bit width 1 (a column
// with one optional level) as validity bits: bit off+i of valid is set
// when value i is present. It returns how many are present.
func (r *rleReader) readBits(valid []byte, off, n int) (int, error) {
	present := 0
	for n > 0 {
		switch {
		case r.rleLeft > 0:
			k := min(r.rleLeft, n)
			if r.rleVal != 0 {
				bitutil.SetBitsTo(valid, int64(off), int64(k), true)
				present += k
			} else {
				bitutil.SetBitsTo(valid, int64(off), int64(k), false)
			}
			r.rleLeft -= k
			off += k
			n -= k
		case r.bpLeft > 0:
			k := min(r.bpLeft, n)
			present += copyValidBits(valid, off, r.data, r.bpBit, k)
			r.bpBit += k
			r.bpLeft -= k
			off += k
			n -= k
		default:
			if r.pos >= len(r.data) {
				return 0, errRLETruncated
			}
			if err := r.nextRun(); err != nil {
				return 0, err
			}
		}
	}
	return present, nil
}
