package spill

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// Bytes estimates the memory of b's rows: by their rows for
// fixed-width and string columns (a batch sliced from a larger one holds
// only its rows' share), by the buffers' lengths for other types (an
// overestimate for slices, which only makes an operator spill sooner).
func Bytes(b arrow.RecordBatch) int64 {
	var n int64
	for _, c := range b.Columns() {
		n += arrayBytes(c)
	}
	return n
}

func arrayBytes(a arrow.Array) int64 {
	rows := int64(a.Len())
	valid := (rows + 7) / 8
	switch a := a.(type) {
	case *array.String:
		if rows == 0 {
			return 0
		}
		return valid + 4*(rows+1) + int64(a.ValueOffset(int(rows)-1)+len(a.Value(int(rows)-1))-a.ValueOffset(0))
	case *array.Binary:
		if rows == 0 {
			return 0
		}
		return valid + 4*(rows+1) + int64(a.ValueOffset(int(rows)-1)+len(a.Value(int(rows)-1))-a.ValueOffset(0))
	}
	if fw, ok := a.DataType().(arrow.FixedWidthDataType); ok {
		return valid + (rows*int64(fw.BitWidth())+7)/8
	}
	return dataBytes(a.Data())
}

func dataBytes(d arrow.ArrayData) int64 {
	var n int64
	for _, buf := range d.Buffers() {
		if buf != nil {
			n += int64(buf.Len())
		}
	}
	for _, c := range d.Children() {
		n += dataBytes(c)
	}
	if d.DataType().ID() == arrow.DICTIONARY {
		n += dataBytes(d.Dictionary())
	}
	return n
}
