package window

import (
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver/exec/kernel"
)

// IGNORE NULLS and DISTINCT: both work on the argument's validity. The
// value functions with IGNORE NULLS pick among the non-NULL rows only; a
// DISTINCT aggregate sees its argument with every repeat of a value within
// the partition made NULL, so the ordinary whole-partition aggregate
// counts each distinct value once.

// validRows lists the rows of arg that are not NULL, in row order.
func validRows(arg arrow.Array, n int) []int32 {
	if arg.DataType().ID() == arrow.NULL {
		return nil
	}
	bits, boff := kernel.ValidBits(arg)
	out := make([]int32, 0, n)
	for i := range n {
		if isValid(bits, boff, i) {
			out = append(out, int32(i))
		}
	}
	return out
}

// shiftedIgnoreNulls is shifted for LAG/LEAD IGNORE NULLS: per row, the
// off-th non-NULL row before it (off < 0) or after it (off > 0) in its
// partition, else n+row (its default). An offset of 0 is the row itself.
func (l *layout) shiftedIgnoreNulls(off int64, arg arrow.Array) []int32 {
	idx := make([]int32, l.n)
	nn := validRows(arg, l.n)
	// k is the number of non-NULL rows before the current one overall;
	// [lo, hi) the non-NULL rows of the current partition within nn.
	k := 0
	for p := 0; p+1 < len(l.parts); p++ {
		ps, pe := l.parts[p], l.parts[p+1]
		lo := k
		hi := lo
		for hi < len(nn) && nn[hi] < pe {
			hi++
		}
		for r := ps; r < pe; r++ {
			self := k < len(nn) && nn[k] == r
			var t int64
			switch {
			case off == 0:
				idx[r] = r
				goto next
			case off < 0:
				t = int64(k) + off
			default:
				t = int64(k) + off - 1
				if self {
					t++
				}
			}
			if t >= int64(lo) && t < int64(hi) {
				idx[r] = nn[t]
			} else {
				idx[r] = int32(int64(l.n) + int64(r))
			}
		next:
			if self {
				k++
			}
		}
	}
	return idx
}

// positionalIgnoreNulls is positional over the non-NULL rows of each
// frame: the first, last or nth of them, or -1 when there are too few.
func (l *layout) positionalIgnoreNulls(fn windowFuncKind, nth int64, start, end []int32, arg arrow.Array) []int32 {
	nn := validRows(arg, l.n)
	// before[i] is the number of non-NULL rows before row i.
	before := make([]int32, l.n+1)
	for i, j := 0, 0; i < l.n; i++ {
		before[i] = int32(j)
		if j < len(nn) && nn[j] == int32(i) {
			j++
		}
	}
	before[l.n] = int32(len(nn))
	idx := make([]int32, l.n)
	for r := range idx {
		a, b := int64(before[start[r]]), int64(before[end[r]])
		t := int64(-1)
		switch fn {
		case kindFirst:
			t = a
		case kindLast:
			t = b - 1
		case kindNth:
			t = a + nth - 1
		}
		if t >= a && t < b {
			idx[r] = nn[t]
		} else {
			idx[r] = -1
		}
	}
	return idx
}

type windowFuncKind int

const (
	kindFirst windowFuncKind = iota
	kindLast
	kindNth
)

// distinctArg returns arg with every row that repeats an earlier value of
// its partition made NULL (the caller owns the result). Each partition's
// non-NULL rows are sorted by value to find the repeats.
func distinctArg(mem memory.Allocator, arg arrow.Array, l *layout) (arrow.Array, error) {
	if arg.DataType().ID() == arrow.NULL {
		arg.Retain()
		return arg, nil
	}
	cmpRows, err := rowComparator(arg)
	if err != nil {
		return nil, err
	}
	bits, boff := kernel.ValidBits(arg)
	d := arg.Data()
	off := d.Offset()
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(int(bitutil.BytesForBits(int64(off + l.n))))
	out := buf.Bytes()
	clear(out)
	var rows []int32
	for p := 0; p+1 < len(l.parts); p++ {
		rows = rows[:0]
		for r := l.parts[p]; r < l.parts[p+1]; r++ {
			if isValid(bits, boff, int(r)) {
				rows = append(rows, r)
			}
		}
		slices.SortStableFunc(rows, func(a, b int32) int { return cmpRows(int(a), int(b)) })
		for i, r := range rows {
			if i == 0 || cmpRows(int(rows[i-1]), int(r)) != 0 {
				bitutil.SetBit(out, off+int(r))
			}
		}
	}
	bufs := append([]*memory.Buffer{buf}, d.Buffers()[1:]...)
	nd := array.NewData(d.DataType(), d.Len(), bufs, d.Children(), array.UnknownNullCount, off)
	buf.Release()
	defer nd.Release()
	return array.MakeFromData(nd), nil
}
