package kernel

import (
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver/exec/execop"
)

// Run-wise gathering for selections that keep long stretches of consecutive
// rows (a filter at high selectivity: Q1 keeps ~98 % of lineitem, so its
// selection is a few hundred runs of dozens of rows per batch). Copying a
// run is one memmove per buffer instead of a load and store per row.

// idxRun is rows [start, start+n) of the input.
type idxRun struct{ start, n int32 }

// minAvgRun is the average run length from which copying runs beats a
// per-row gather.
const minAvgRun = 8

// selRuns splits idx (any order) into maximal runs of consecutive ascending
// indices, appended to dst[:0]. It gives up, returning nil, as soon as the
// runs would average fewer than minAvgRun rows, so a random permutation costs
// only a short prefix scan.
func selRuns(idx []int32, dst []idxRun) []idxRun {
	dst = dst[:0]
	if len(idx) < 2*minAvgRun {
		return nil
	}
	limit := len(idx) / minAvgRun
	start := 0
	for i := 1; i < len(idx); i++ {
		if idx[i] != idx[i-1]+1 {
			dst = append(dst, idxRun{idx[start], int32(i - start)})
			if len(dst) > limit {
				return nil
			}
			start = i
		}
	}
	return append(dst, idxRun{idx[start], int32(len(idx) - start)})
}

// gatherRuns is gather for a selection given as runs totalling n rows; ok is
// false for the types gather does not handle either.
func gatherRuns(mem memory.Allocator, arr arrow.Array, runs []idxRun, n int) (out arrow.Array, ok bool) {
	dt := arr.DataType()
	d := arr.Data()
	off := d.Offset()
	var bufs []*memory.Buffer
	switch dt.ID() {
	case arrow.BOOL:
		bufs = []*memory.Buffer{nil, copyBitRuns(mem, d.Buffers()[1].Bytes(), off, runs, n)}
	case arrow.STRING, arrow.BINARY:
		bufs = gatherBytesRuns[int32](mem, arr, runs, n)
	case arrow.LARGE_STRING, arrow.LARGE_BINARY:
		bufs = gatherBytesRuns[int64](mem, arr, runs, n)
	case arrow.DICTIONARY, arrow.EXTENSION, arrow.NULL:
		return nil, false
	default:
		fw, isFixed := dt.(arrow.FixedWidthDataType)
		if !isFixed || fw.BitWidth()%8 != 0 || fw.BitWidth() == 0 {
			return nil, false
		}
		w := fw.BitWidth() / 8
		src := d.Buffers()[1].Bytes()
		b := execop.NewDirtyBuffer(mem, n*w)
		dst := b.Bytes()
		pos := 0
		for _, r := range runs {
			lo := (off + int(r.start)) * w
			pos += copy(dst[pos:], src[lo:lo+int(r.n)*w])
		}
		bufs = []*memory.Buffer{nil, b}
	}
	nulls := 0
	if arr.NullN() > 0 {
		bufs[0] = copyBitRuns(mem, arr.NullBitmapBytes(), off, runs, n)
		nulls = n - bitutil.CountSetBits(bufs[0].Bytes(), 0, n)
	}
	data := array.NewData(dt, n, bufs, nil, nulls, 0)
	defer data.Release()
	for _, b := range bufs {
		if b != nil {
			b.Release()
		}
	}
	return array.MakeFromData(data), true
}

// copyBitRuns copies the runs of bitmap src (whose bit 0 is row -off) into
// a new bitmap of n bits.
func copyBitRuns(mem memory.Allocator, src []byte, off int, runs []idxRun, n int) *memory.Buffer {
	b := newBuf(mem, int(bitutil.BytesForBits(int64(n))))
	dst := b.Bytes()
	pos := 0
	for _, r := range runs {
		bitutil.CopyBitmap(src, off+int(r.start), int(r.n), dst, pos)
		pos += int(r.n)
	}
	return b
}

// gatherBytesRuns is gatherBytes for runs: one data copy per run and the
// run's offsets shifted by a constant.
func gatherBytesRuns[O int32 | int64](mem memory.Allocator, arr arrow.Array, runs []idxRun, n int) []*memory.Buffer {
	d := arr.Data()
	offs := arrow.GetValues[O](d, 1)
	offs = offs[:d.Len()+1]
	var data []byte
	if bb := d.Buffers()[2]; bb != nil {
		data = bb.Bytes()
	}
	var total O
	for _, r := range runs {
		total += offs[r.start+r.n] - offs[r.start]
	}
	ob := execop.NewDirtyBuffer(mem, (n+1)*sizeOfOffset[O]())
	oDst := arrow.GetData[O](ob.Bytes())[:n+1]
	db := execop.NewDirtyBuffer(mem, int(total))
	dDst := db.Bytes()
	var pos O
	at := 0
	oDst[0] = 0
	for _, r := range runs {
		src := offs[r.start : r.start+r.n+1]
		lo, hi := src[0], src[len(src)-1]
		copy(dDst[pos:], data[lo:hi])
		delta := pos - lo
		dst := oDst[at+1 : at+1+int(r.n)]
		for k, o := range src[1:] {
			dst[k] = o + delta
		}
		pos += hi - lo
		at += int(r.n)
	}
	return []*memory.Buffer{nil, ob, db}
}

func sizeOfOffset[O int32 | int64]() int {
	var z O
	return int(unsafe.Sizeof(z))
}
