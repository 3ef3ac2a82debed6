package eval

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver/physical"
)

// CaseCodes evaluates a CASE whose THENs and ELSE are all non-NULL string
// constants (quantity bands, price tiers) as the id of each row's result
// among its distinct results, without making the strings: an aggregate
// that groups by such a CASE groups on the ids and makes strings only for
// its output groups.
type CaseCodes struct {
	c      *caseNode
	values []string // the distinct results
	ids    []int32  // per branch (the THENs, then the ELSE): its result's id
}

// CompileCaseCodes returns the codes form of e when e is such a CASE.
func CompileCaseCodes(e physical.Expr) (*CaseCodes, bool) {
	ce, ok := e.(*physical.Case)
	if !ok || ce.Type.ID() != arrow.STRING || ce.Else == nil {
		return nil, false
	}
	n, err := compileCase(ce)
	if err != nil {
		return nil, false
	}
	c, ok := n.(*caseNode)
	if !ok || c.fast == nil {
		return nil, false
	}
	k := &CaseCodes{c: c}
	seen := map[string]int32{}
	for _, b := range c.fast {
		if b.lit == nil || b.lit.null {
			return nil, false
		}
		id, ok := seen[b.lit.s]
		if !ok {
			id = int32(len(k.values))
			seen[b.lit.s] = id
			k.values = append(k.values, b.lit.s)
		}
		k.ids = append(k.ids, id)
	}
	return k, true
}

// Values returns the distinct results: id i stands for Values()[i].
func (k *CaseCodes) Values() []string { return k.values }

// Eval returns an Int32 array of the id of each row's result (never NULL).
// ok is false when a condition failed over the batch: the caller then
// evaluates the CASE as an expression, which reports only the errors its
// semantics allow (the conditions here run on every row).
func (k *CaseCodes) Eval(ctx context.Context, mem memory.Allocator, batch arrow.RecordBatch) (out arrow.Array, ok bool) {
	defer func() {
		if r := recover(); r != nil {
			rethrowLimit(r)
			out, ok = nil, false
		}
	}()
	in := &input{cols: batch.Columns(), n: int(batch.NumRows())}
	w := len(k.c.conds)
	choice := make([]uint8, in.n)
	for i := range choice {
		choice[i] = uint8(w)
	}
	// Last WHEN first, so the first TRUE one wins.
	for j := w - 1; j >= 0; j-- {
		ca, err := k.c.conds[j].eval(ctx, mem, in)
		if err != nil {
			return nil, false
		}
		if ca.DataType().ID() != arrow.NULL && ca.NullN() < ca.Len() {
			vals, valid := boolParts(ca)
			markTrue(choice, vals, valid, uint8(j))
		}
		ca.Release()
	}
	// The ids are written straight into the array's buffer: a builder's
	// append per row costs more than the lookup.
	buf := memory.NewResizableBuffer(mem)
	defer buf.Release()
	buf.Resize(in.n * arrow.Int32SizeBytes)
	ids := arrow.Int32Traits.CastFromBytes(buf.Bytes())[:in.n]
	for i, ch := range choice {
		ids[i] = k.ids[ch]
	}
	data := array.NewData(arrow.PrimitiveTypes.Int32, in.n, []*memory.Buffer{nil, buf}, nil, 0, 0)
	defer data.Release()
	return array.NewInt32Data(data), true
}
