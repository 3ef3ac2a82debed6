package window

import (
	"cmp"
	"context"
	"math"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver/exec/kernel"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
)

// array_agg and string_agg over frames: each row's frame, as row indexes
// in window order or sorted by the call's own ORDER BY keys, is appended
// to one index list; array_agg gathers the value column through it once
// and cuts the result into lists, string_agg joins each row's slice of
// it. Both are as long as the frames are, which for running frames is
// quadratic in the partition: the index list is reserved before it is
// built.

// collect computes array_agg or string_agg (f) over each row's frame.
// args are the evaluated arguments, the ORDER BY keys last.
func (w *windowOp) collect(ctx context.Context, l *layout, f physical.WindowFuncExpr, args []arrow.Array, start, end []int32) (arrow.Array, error) {
	nk := len(f.Order)
	own := args[:len(args)-nk]
	rank, err := orderRanks(l, args[len(args)-nk:], f.Order)
	if err != nil {
		return nil, err
	}
	total := int64(0)
	for r := range l.n {
		total += int64(end[r] - start[r])
	}
	if total > math.MaxInt32 {
		return nil, qerr.Execf("exec: window %s would collect %d values, more than a list column holds (2^31 - 1); narrow the frame", f.Agg, total)
	}
	if err := w.grow(total * 4); err != nil {
		return nil, err
	}
	idx := make([]int32, 0, total)
	offs := make([]int32, l.n+1)
	byRank := func(a, b int32) int { return cmp.Compare(rank[a], rank[b]) }
	for r := range l.n {
		seg := len(idx)
		for i := start[r]; i < end[r]; i++ {
			idx = append(idx, i)
		}
		if rank != nil {
			slices.SortFunc(idx[seg:], byRank)
		}
		offs[r+1] = int32(len(idx))
		if err := checkEvery(ctx, r); err != nil {
			return nil, err
		}
	}
	if f.Agg == physical.AggArrayAgg {
		return w.arrayAgg(ctx, f.Type, own[0], idx, offs)
	}
	return w.stringAgg(own[0], own[1], idx, offs)
}

// checkEvery checks for cancellation once every 1024 rows.
func checkEvery(ctx context.Context, r int) error {
	if r&1023 == 0 {
		return ctx.Err()
	}
	return nil
}

// orderRanks is, per row, its position within its partition when sorted
// by keys (ties in row order); nil without keys.
func orderRanks(l *layout, keys []arrow.Array, order []physical.AggOrder) ([]int32, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	type keyCol struct {
		cmp   func(i, j int) int
		bits  []byte
		off   int
		null  bool // the NULL type: every row NULL
		order physical.AggOrder
	}
	cols := make([]keyCol, len(keys))
	for k, a := range keys {
		c := keyCol{order: order[k], null: a.DataType().ID() == arrow.NULL}
		if !c.null {
			var ok bool
			if c.cmp, ok = kernel.RowComparator(a); !ok {
				return nil, qerr.NotImplementedf("exec: ordering a window aggregate by %s is not supported", a.DataType())
			}
			c.bits, c.off = kernel.ValidBits(a)
		}
		cols[k] = c
	}
	compare := func(i, j int32) int {
		for _, c := range cols {
			if c.null {
				continue
			}
			vi, vj := isValid(c.bits, c.off, int(i)), isValid(c.bits, c.off, int(j))
			var x int
			switch {
			case !vi && !vj:
				continue
			case !vi || !vj:
				x = 1
				if !vi == c.order.NullsFirst {
					x = -1
				}
				return x
			default:
				x = c.cmp(int(i), int(j))
				if c.order.Desc {
					x = -x
				}
			}
			if x != 0 {
				return x
			}
		}
		return cmp.Compare(i, j)
	}
	rank := make([]int32, l.n)
	rows := make([]int32, 0, l.n)
	for p := 0; p+1 < len(l.parts); p++ {
		ps, pe := l.parts[p], l.parts[p+1]
		rows = rows[:0]
		for r := ps; r < pe; r++ {
			rows = append(rows, r)
		}
		slices.SortFunc(rows, compare)
		for k, r := range rows {
			rank[r] = int32(k)
		}
	}
	return rank, nil
}

// arrayAgg cuts v's rows idx into one list per row at offs; an empty
// frame is NULL.
func (w *windowOp) arrayAgg(ctx context.Context, dt arrow.DataType, v arrow.Array, idx, offs []int32) (arrow.Array, error) {
	child, err := kernel.TakeArray(ctx, w.tc.Mem, v, idx)
	if err != nil {
		return nil, err
	}
	defer child.Release()
	n := len(offs) - 1
	m := &kernel.ArrayMaker{Mem: w.tc.Mem}
	ob := m.NewBuffer(arrow.GetBytes(offs))
	defer ob.Release()
	vb, nulls := emptyAsNull(w.tc.Mem, offs)
	if vb != nil {
		defer vb.Release()
	}
	data := array.NewData(dt, n, []*memory.Buffer{vb, ob}, []arrow.ArrayData{child.Data()}, nulls, 0)
	defer data.Release()
	return array.MakeFromData(data), nil
}

// emptyAsNull is a validity bitmap with the rows whose range in offs is
// empty unset (nil when none is), and their count.
func emptyAsNull(mem memory.Allocator, offs []int32) (*memory.Buffer, int) {
	n := len(offs) - 1
	nulls := 0
	for r := range n {
		if offs[r+1] == offs[r] {
			nulls++
		}
	}
	if nulls == 0 {
		return nil, 0
	}
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(int(bitutil.BytesForBits(int64(n))))
	bits := buf.Bytes()
	clear(bits)
	for r := range n {
		if offs[r+1] > offs[r] {
			bitutil.SetBit(bits, r)
		}
	}
	return buf, nulls
}

// stringAgg joins, per row, the non-NULL values of v among rows
// idx[offs[r]:offs[r+1]], each but the first after its own row's
// separator (none where the separator is NULL), as PostgreSQL does; NULL
// when the frame has no non-NULL value.
func (w *windowOp) stringAgg(v, sep arrow.Array, idx, offs []int32) (arrow.Array, error) {
	vs, ok1 := v.(*array.String)
	ss, ok2 := sep.(*array.String)
	if !ok1 || !ok2 {
		return nil, qerr.Internalf("exec: window string_agg over %s with separator %s", v.DataType(), sep.DataType())
	}
	n := len(offs) - 1
	// First pass: the output's size, reserved before it is built.
	size := int64(0)
	for r := range n {
		first := true
		for _, i := range idx[offs[r]:offs[r+1]] {
			if vs.IsNull(int(i)) {
				continue
			}
			if !first && ss.IsValid(int(i)) {
				size += int64(len(ss.Value(int(i))))
			}
			first = false
			size += int64(len(vs.Value(int(i))))
		}
	}
	if size > math.MaxInt32 {
		return nil, qerr.Execf("exec: window string_agg would build %d bytes, more than a string column holds (2^31 - 1); narrow the frame", size)
	}
	if err := w.grow(size + int64(n)*9); err != nil {
		return nil, err
	}
	data := make([]byte, 0, size)
	out := make([]int, n+1)
	valid := make([]bool, n)
	for r := range n {
		first := true
		for _, i := range idx[offs[r]:offs[r+1]] {
			if vs.IsNull(int(i)) {
				continue
			}
			if !first && ss.IsValid(int(i)) {
				data = append(data, ss.Value(int(i))...)
			}
			first = false
			data = append(data, vs.Value(int(i))...)
		}
		out[r+1], valid[r] = len(data), !first
	}
	return kernel.MakeBytes(&kernel.ArrayMaker{Mem: w.tc.Mem}, arrow.BinaryTypes.String, data, out, valid), nil
}
