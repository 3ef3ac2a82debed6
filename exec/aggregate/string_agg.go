package aggregate

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/quiverdb/quiver/exec/kernel"
	"github.com/quiverdb/quiver/qerr"
)

// stringAggAcc is string_agg(value, separator): each group's non-NULL
// values joined, every value but the group's first preceded by its own
// row's separator (as PostgreSQL; a NULL separator adds nothing). The
// partial state keeps the separator of the text's first value, which goes
// between two partial texts when they are merged. The texts' bytes are
// accounted after each batch (memSize).
type stringAggAcc struct {
	text  [][]byte
	first [][]byte // the separator of the first value
	seen  []bool
	bytes int64
}

func (a *stringAggAcc) resize(n int) {
	a.text, a.first, a.seen = kernel.GrowSlice(a.text, n), kernel.GrowSlice(a.first, n), kernel.GrowSlice(a.seen, n)
}

func (a *stringAggAcc) bytesPerGroup() int64 { return 49 }

func (a *stringAggAcc) memSize() int64 { return a.bytes }

// add appends text (whose first value had separator sep) to group g.
func (a *stringAggAcc) add(g uint32, text, sep []byte) {
	before := cap(a.text[g]) + cap(a.first[g])
	if !a.seen[g] {
		a.seen[g] = true
		a.text[g] = append(a.text[g][:0], text...)
		a.first[g] = append(a.first[g][:0], sep...)
	} else {
		a.text[g] = append(append(a.text[g], sep...), text...)
	}
	a.bytes += int64(cap(a.text[g]) + cap(a.first[g]) - before)
}

func (a *stringAggAcc) update(_ context.Context, groups []uint32, arg arrow.Array) error {
	st, ok := arg.(*array.Struct)
	if !ok || st.NumField() != 2 {
		return qerr.Internalf("exec/hashagg: string_agg of %s", arg.DataType())
	}
	return a.fold(groups, st.Field(0), st.Field(1))
}

func (a *stringAggAcc) fold(groups []uint32, vals, seps arrow.Array) error {
	v, ok1 := vals.(*array.String)
	s, ok2 := seps.(*array.String)
	if !ok1 || !ok2 {
		return qerr.Internalf("exec/hashagg: string_agg of %s and %s", vals.DataType(), seps.DataType())
	}
	vo, vd := v.ValueOffsets(), v.ValueBytes()
	so, sd := s.ValueOffsets(), s.ValueBytes()
	for i, g := range groups {
		if v.IsNull(i) {
			continue
		}
		var sep []byte // views of the arrays' bytes; add copies them
		if s.IsValid(i) {
			sep = sd[so[i]-so[0] : so[i+1]-so[0]]
		}
		a.add(g, vd[vo[i]-vo[0]:vo[i+1]-vo[0]], sep)
	}
	return nil
}

func (a *stringAggAcc) merge(_ context.Context, groups []uint32, state []arrow.Array) error {
	if len(state) != 2 {
		return qerr.Internalf("exec/hashagg: string_agg: partial state of %d columns", len(state))
	}
	return a.fold(groups, state[0], state[1])
}

func (a *stringAggAcc) final(m *kernel.ArrayMaker, start, end int) arrow.Array {
	return a.strings(m, a.text, start, end)
}

func (a *stringAggAcc) strings(m *kernel.ArrayMaker, vals [][]byte, start, end int) arrow.Array {
	b := array.NewStringBuilder(m.Mem)
	defer b.Release()
	b.Reserve(end - start)
	for g := start; g < end; g++ {
		if !a.seen[g] {
			b.AppendNull()
			continue
		}
		b.BinaryBuilder.Append(vals[g])
	}
	return b.NewArray()
}

func (a *stringAggAcc) state(m *kernel.ArrayMaker, start, end int) []arrow.Array {
	return []arrow.Array{a.strings(m, a.text, start, end), a.strings(m, a.first, start, end)}
}
