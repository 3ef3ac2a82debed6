package parquet

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver/temporal"
)

// Timestamps and times in files may count seconds, milliseconds or
// nanoseconds; SQL's TIMESTAMP, TIMESTAMPTZ (a column with a time zone:
// UTC instants) and TIME are microseconds (catalog.NormalTemporal gives the
// table the same types), so the scan converts them as it reads.

// temporalTarget is the type a file's timestamp or time column is read as,
// and temporal.UnitScale of its unit.
func temporalTarget(t arrow.DataType) (arrow.DataType, int64) {
	switch t := t.(type) {
	case *arrow.TimestampType:
		return temporal.FileTimestamp(t), temporal.UnitScale(t.Unit)
	case *arrow.Time32Type:
		return arrow.FixedWidthTypes.Time64us, temporal.UnitScale(t.Unit)
	case *arrow.Time64Type:
		return arrow.FixedWidthTypes.Time64us, temporal.UnitScale(t.Unit)
	}
	return t, 1
}

// scaleInts converts values to microseconds by temporal.UnitScale's factor.
func scaleInts(v []int64, scale int64) {
	switch {
	case scale > 1:
		for i := range v {
			v[i] *= scale
		}
	case scale < 0:
		for i := range v {
			v[i] = temporal.FloorDiv(v[i], -scale)
		}
	}
}

// toMicros converts a timestamp, time32 or time64 array to temporalTarget's
// type; the caller releases the result.
func toMicros(mem memory.Allocator, col arrow.Array) arrow.Array {
	out, scale := temporalTarget(col.DataType())
	n := col.Len()
	buf := memory.NewResizableBuffer(mem)
	defer buf.Release()
	buf.Resize(n * 8)
	dst := arrow.Int64Traits.CastFromBytes(buf.Bytes())[:n]
	switch c := col.(type) {
	case *array.Time32:
		for i, x := range c.Time32Values() {
			dst[i] = int64(x)
		}
	default:
		d := col.Data()
		copy(dst, arrow.Int64Traits.CastFromBytes(d.Buffers()[1].Bytes())[d.Offset():d.Offset()+n])
	}
	scaleInts(dst, scale)
	var valid *memory.Buffer
	if col.NullN() > 0 {
		// The values start at 0; a validity bitmap at an offset is moved there.
		if valid = col.Data().Buffers()[0]; col.Data().Offset() == 0 {
			valid.Retain()
		} else {
			valid = copyBits(mem, valid.Bytes(), col.Data().Offset(), n)
		}
		defer valid.Release()
	}
	data := array.NewData(out, n, []*memory.Buffer{valid, buf}, nil, col.NullN(), 0)
	defer data.Release()
	return array.MakeFromData(data)
}

func copyBits(mem memory.Allocator, src []byte, off, n int) *memory.Buffer {
	b := memory.NewResizableBuffer(mem)
	b.Resize((n + 7) / 8)
	dst := b.Bytes()
	for i := range dst {
		dst[i] = 0
	}
	for i := 0; i < n; i++ {
		if src[(off+i)>>3]&(1<<((off+i)&7)) != 0 {
			dst[i>>3] |= 1 << (i & 7)
		}
	}
	return b
}
