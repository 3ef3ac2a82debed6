package aggregate

import (
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

// collectAcc is a collecting aggregate (physical.AggregateExpr.Collects):
// array_agg, and string_agg when ordered, DISTINCT or filtered. It keeps
// each group's rows (value, string_agg's separator, the ORDER BY keys) as
// references into copies of the input held on the Go heap, so that nothing
// needs releasing when the operator drops it; the copies are accounted
// through memSize. The final phase sorts each group's rows by the keys
// (stably, so equal keys keep their arrival order), drops adjacent rows of
// equal value under DISTINCT (sorting by the value when there are no keys,
// as PostgreSQL does) and builds the list or the joined text.
type collectAcc struct {
	fn       physical.AggFunc
	order    []physical.AggOrder
	distinct bool
	filter   bool
	out      arrow.DataType    // the final type
	rowType  *arrow.StructType // a kept row: own arguments then keys
	own      int               // own arguments: 1, or 2 for string_agg
	chunks   []*array.Struct
	refs     [][]uint64 // per group: chunk<<32 | row
	nrows    int        // references in refs
	bytes    int64
}

func newCollectAcc(a physical.AggregateExpr) (*collectAcc, error) {
	c := &collectAcc{fn: a.Func, order: a.Order, distinct: a.Distinct, filter: a.Filter, out: a.Type, rowType: a.CollectRowType(), own: 1}
	if a.Func == physical.AggStringAgg {
		c.own = 2
	}
	if c.rowType.NumFields() != c.own+len(c.order) {
		return nil, qerr.Internalf("exec/hashagg: %s over rows of %s with %d sort keys", a.Func, c.rowType, len(c.order))
	}
	if a.Func == physical.AggStringAgg && (c.rowType.Field(0).Type.ID() != arrow.STRING || c.rowType.Field(1).Type.ID() != arrow.STRING) {
		return nil, qerr.Internalf("exec/hashagg: string_agg over %s", c.rowType)
	}
	for i := range c.order {
		if _, err := compareFunc(array.MakeArrayOfNull(memory.DefaultAllocator, c.rowType.Field(c.own+i).Type, 0)); err != nil {
			return nil, err
		}
	}
	return c, nil
}

func (c *collectAcc) resize(n int)         { c.refs = kernel.GrowSlice(c.refs, n) }
func (c *collectAcc) bytesPerGroup() int64 { return 24 }
func (c *collectAcc) memSize() int64       { return c.bytes }

// worstCase bounds the bytes n more rows can add: a reference each and
// twice the average row kept so far.
func (c *collectAcc) worstCase(n int) int64 {
	per := int64(64)
	if c.nrows > 0 {
		per += 2 * c.bytes / int64(c.nrows)
	}
	return int64(n) * per
}

// keep copies rows idx of st's first rowType fields and adds them to
// groups gs (one per index).
func (c *collectAcc) keep(ctx context.Context, st *array.Struct, idx []int32, gs []uint32) error {
	if len(idx) == 0 {
		return nil
	}
	kids := make([]arrow.ArrayData, c.rowType.NumFields())
	size := int64(0)
	for i := range kids {
		a, err := kernel.TakeArray(ctx, memory.DefaultAllocator, st.Field(i), idx)
		if err != nil {
			return err
		}
		kids[i] = a.Data()
		size += dataSize(a.Data())
	}
	d := array.NewData(c.rowType, len(idx), []*memory.Buffer{nil}, kids, 0, 0)
	chunk := array.NewStructData(d)
	k := uint64(len(c.chunks)) << 32
	c.chunks = append(c.chunks, chunk)
	for j, g := range gs {
		before := cap(c.refs[g])
		c.refs[g] = append(c.refs[g], k|uint64(j))
		size += int64(cap(c.refs[g])-before) * 8
	}
	c.bytes += size
	c.nrows += len(gs)
	return nil
}

func (c *collectAcc) update(ctx context.Context, groups []uint32, arg arrow.Array) error {
	st, ok := arg.(*array.Struct)
	want := c.rowType.NumFields()
	if c.filter {
		want++
	}
	if !ok || st.NumField() != want {
		return qerr.Internalf("exec/hashagg: %s of %s", c.fn, arg.DataType())
	}
	var keepBits []byte // the rows FILTER admits
	keepOff := 0
	var cond *array.Boolean
	if c.filter {
		if cond, ok = st.Field(want - 1).(*array.Boolean); !ok {
			return qerr.Internalf("exec/hashagg: %s filtered by %s", c.fn, st.Field(want-1).DataType())
		}
		keepBits, keepOff = kernel.ValidBits(cond)
	}
	var valBits []byte // string_agg skips NULL values; array_agg keeps them
	valOff := 0
	if c.fn == physical.AggStringAgg {
		valBits, valOff = kernel.ValidBits(st.Field(0))
	}
	idx := make([]int32, 0, len(groups))
	gs := make([]uint32, 0, len(groups))
	for i, g := range groups {
		if cond != nil && ((keepBits != nil && !bitutil.BitIsSet(keepBits, keepOff+i)) || !cond.Value(i)) {
			continue
		}
		if valBits != nil && !bitutil.BitIsSet(valBits, valOff+i) {
			continue
		}
		idx = append(idx, int32(i))
		gs = append(gs, g)
	}
	return c.keep(ctx, st, idx, gs)
}

func (c *collectAcc) merge(ctx context.Context, groups []uint32, state []arrow.Array) error {
	l, ok := state[0].(*array.List)
	if len(state) != 1 || !ok {
		return qerr.Internalf("exec/hashagg: %s: partial state of %d columns", c.fn, len(state))
	}
	st, ok := l.ListValues().(*array.Struct)
	if !ok || !arrow.TypeEqual(st.DataType(), c.rowType) {
		return qerr.Internalf("exec/hashagg: %s: partial rows of %s", c.fn, l.ListValues().DataType())
	}
	var idx []int32
	var gs []uint32
	for i, g := range groups {
		if l.IsNull(i) {
			continue
		}
		// ValueOffsets, not Offsets: l may be a slice (a batch folded in
		// parts), whose Offsets start at the buffer's first entry.
		lo, hi := l.ValueOffsets(i)
		for r := lo; r < hi; r++ {
			idx = append(idx, int32(r))
			gs = append(gs, g)
		}
	}
	return c.keep(ctx, st, idx, gs)
}

// consolidate concatenates the kept chunks into one, so that the sort keys
// compare within one array; references are rewritten to it.
func (c *collectAcc) consolidate() error {
	if len(c.chunks) <= 1 {
		return nil
	}
	base := make([]uint64, len(c.chunks))
	parts := make([]arrow.Array, len(c.chunks))
	n := uint64(0)
	for i, ch := range c.chunks {
		base[i], parts[i] = n, ch
		n += uint64(ch.Len())
	}
	if n > math.MaxInt32 {
		return qerr.Execf("exec/hashagg: %s keeps %d rows, more than one array holds", c.fn, n)
	}
	one, err := array.Concatenate(parts, memory.DefaultAllocator)
	if err != nil {
		return qerr.Execf("exec/hashagg: %s: %w", c.fn, err)
	}
	for _, rs := range c.refs {
		for j, r := range rs {
			rs[j] = base[r>>32] + r&math.MaxUint32
		}
	}
	c.bytes += dataSize(one.Data())
	for _, ch := range c.chunks {
		c.bytes -= dataSize(ch.Data())
	}
	c.chunks = []*array.Struct{one.(*array.Struct)}
	return nil
}

// rows returns each group's row indices into the one chunk, sorted and
// deduped for the final result when final is set.
func (c *collectAcc) rows(start, end int, final bool) ([][]uint64, *array.Struct, error) {
	if err := c.consolidate(); err != nil {
		return nil, nil, err
	}
	if len(c.chunks) == 0 {
		return c.refs[start:end], nil, nil
	}
	st := c.chunks[0]
	if !final || (len(c.order) == 0 && !c.distinct) {
		return c.refs[start:end], st, nil
	}
	type key struct {
		cmp        func(i, j int) int
		valid      []byte
		off        int
		desc       bool
		nullsFirst bool
	}
	var keys []key
	add := func(col arrow.Array, desc, nullsFirst bool) error {
		f, err := compareFunc(col)
		if err != nil {
			return err
		}
		v, o := kernel.ValidBits(col)
		keys = append(keys, key{cmp: f, valid: v, off: o, desc: desc, nullsFirst: nullsFirst})
		return nil
	}
	for i, o := range c.order {
		if err := add(st.Field(c.own+i), o.Desc, o.NullsFirst); err != nil {
			return nil, nil, err
		}
	}
	if len(c.order) == 0 { // DISTINCT alone: by value, ascending
		if err := add(st.Field(0), false, false); err != nil {
			return nil, nil, err
		}
	}
	compare := func(a, b uint64) int {
		i, j := int(a), int(b)
		for _, k := range keys {
			ni := k.valid != nil && !bitutil.BitIsSet(k.valid, k.off+i)
			nj := k.valid != nil && !bitutil.BitIsSet(k.valid, k.off+j)
			switch {
			case ni && nj:
				continue
			case ni != nj:
				if ni == k.nullsFirst {
					return -1
				}
				return 1
			}
			r := k.cmp(i, j)
			if k.desc {
				r = -r
			}
			if r != 0 {
				return r
			}
		}
		return 0
	}
	var same func(i, j int) bool // equal values, for DISTINCT
	if c.distinct {
		f, err := compareFunc(st.Field(0))
		if err != nil {
			return nil, nil, err
		}
		v, o := kernel.ValidBits(st.Field(0))
		same = func(i, j int) bool {
			ni := v != nil && !bitutil.BitIsSet(v, o+i)
			nj := v != nil && !bitutil.BitIsSet(v, o+j)
			return ni == nj && (ni || f(i, j) == 0)
		}
	}
	out := make([][]uint64, end-start)
	for g := start; g < end; g++ {
		rs := slices.Clone(c.refs[g])
		slices.SortStableFunc(rs, compare)
		if same != nil && len(rs) > 1 {
			// The ORDER BY keys are the value, so equal values are adjacent.
			w := 1
			for _, r := range rs[1:] {
				if !same(int(rs[w-1]), int(r)) {
					rs[w] = r
					w++
				}
			}
			rs = rs[:w]
		}
		out[g-start] = rs
	}
	return out, st, nil
}

// list builds a list array of st's rows, one list per group, NULL for a
// group with no rows: of the value (field 0) when rows is false, else of
// whole rows.
func (c *collectAcc) list(m *kernel.ArrayMaker, dt arrow.DataType, groups [][]uint64, st *array.Struct, rows bool) (arrow.Array, error) {
	n := len(groups)
	total := 0
	for _, rs := range groups {
		total += len(rs)
	}
	idx := make([]int32, 0, total)
	offs := make([]int32, n+1)
	valid := make([]byte, bitutil.BytesForBits(int64(n)))
	nulls := 0
	for g, rs := range groups {
		if len(rs) == 0 {
			nulls++
		} else {
			bitutil.SetBit(valid, g)
		}
		for _, r := range rs {
			idx = append(idx, int32(r))
		}
		offs[g+1] = int32(len(idx))
	}
	elem := dt.(*arrow.ListType).Elem()
	var child arrow.Array
	switch {
	case len(idx) == 0:
		child = array.MakeArrayOfNull(m.Mem, elem, 0)
	case !rows:
		var err error
		if child, err = kernel.TakeArray(context.Background(), m.Mem, st.Field(0), idx); err != nil {
			return nil, err
		}
	default:
		kids := make([]arrow.ArrayData, st.NumField())
		for i := range kids {
			a, err := kernel.TakeArray(context.Background(), m.Mem, st.Field(i), idx)
			if err != nil {
				for _, k := range kids[:i] {
					k.Release()
				}
				return nil, err
			}
			kids[i] = a.Data()
		}
		d := array.NewData(elem, len(idx), []*memory.Buffer{nil}, kids, 0, 0)
		for _, k := range kids {
			k.Release()
		}
		child = array.MakeFromData(d)
		d.Release()
	}
	defer child.Release()
	ob := m.NewBuffer(arrow.Int32Traits.CastToBytes(offs))
	defer ob.Release()
	var vb *memory.Buffer
	if nulls > 0 {
		vb = m.NewBuffer(valid)
		defer vb.Release()
	}
	d := array.NewData(dt, n, []*memory.Buffer{vb, ob}, []arrow.ArrayData{child.Data()}, nulls, 0)
	defer d.Release()
	return array.MakeFromData(d), nil
}

func (c *collectAcc) final(m *kernel.ArrayMaker, start, end int) arrow.Array {
	groups, st, err := c.rows(start, end, true)
	if err != nil {
		panic(err) // the interface has no error here; the operator recovers panics as errors
	}
	if c.fn == physical.AggStringAgg {
		return c.join(m, groups, st)
	}
	out, err := c.list(m, c.out, groups, st, false)
	if err != nil {
		panic(err)
	}
	return out
}

// join is string_agg's result: each group's values, every one but the
// first preceded by its own row's separator.
func (c *collectAcc) join(m *kernel.ArrayMaker, groups [][]uint64, st *array.Struct) arrow.Array {
	b := array.NewStringBuilder(m.Mem)
	defer b.Release()
	b.Reserve(len(groups))
	if st == nil {
		for range groups {
			b.AppendNull()
		}
		return b.NewArray()
	}
	vals, seps := st.Field(0).(*array.String), st.Field(1).(*array.String)
	var buf []byte
	for _, rs := range groups {
		if len(rs) == 0 {
			b.AppendNull()
			continue
		}
		buf = buf[:0]
		for k, r := range rs {
			if k > 0 && seps.IsValid(int(r)) {
				buf = append(buf, seps.Value(int(r))...)
			}
			buf = append(buf, vals.Value(int(r))...)
		}
		b.BinaryBuilder.Append(buf)
	}
	return b.NewArray()
}

func (c *collectAcc) state(m *kernel.ArrayMaker, start, end int) []arrow.Array {
	groups, st, err := c.rows(start, end, false)
	if err != nil {
		panic(err)
	}
	out, err := c.list(m, arrow.ListOf(c.rowType), groups, st, true)
	if err != nil {
		panic(err)
	}
	return []arrow.Array{out}
}

// dataSize is the bytes of d's buffers and its children's.
func dataSize(d arrow.ArrayData) int64 {
	n := int64(0)
	for _, b := range d.Buffers() {
		if b != nil {
			n += int64(b.Len())
		}
	}
	for _, k := range d.Children() {
		n += dataSize(k)
	}
	return n
}

// compareFunc returns a three-way comparison of two non-NULL rows of a, in
// the order SQL sorts them.
func compareFunc(a arrow.Array) (func(i, j int) int, error) {
	if c, ok := kernel.RowComparator(a); ok {
		return c, nil
	}
	return nil, qerr.NotImplementedf("exec/hashagg: ordering an aggregate's rows by %s is not supported", a.DataType())
}
