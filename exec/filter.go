package exec

import (
	"context"
	"math/bits"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/quiverdb/quiver/exec/eval"
	"github.com/quiverdb/quiver/exec/execop"
	"github.com/quiverdb/quiver/exec/filemap"
	"github.com/quiverdb/quiver/exec/kernel"
	"github.com/quiverdb/quiver/physical"
)

// filterOp keeps the rows of its input where the predicate is TRUE.
// Batches with no selected row are dropped; fully selected batches pass
// through untouched.
//
// A predicate that is a conjunction (a AND b AND ...) is evaluated one
// operand at a time, each narrowing a bitmap of surviving rows. Once at most
// half of the rows still being considered survive, and a costly operand
// remains, the columns the remaining operands read are compacted to the
// survivors, so those run over fewer rows (Q19: the ship-mode IN list keeps
// about two lineitem rows in seven, and the ship-instruction and quantity
// tests then see only those).
// Comparisons of fixed-width columns with each other or with literals are
// not costly: they stream through memory, and gathering their survivors
// from a table held in memory costs more than comparing every row. A row
// is kept only when every operand is TRUE for it, exactly as for the whole
// AND; operands are not evaluated on rows an earlier one rejected once
// compacted, which is the short-circuit SQL allows.
type filterOp struct {
	tc     *execop.TaskContext
	schema *arrow.Schema
	input  execop.Operator
	conj   []*eval.Evaluator // the predicate's AND operands, in order
	needs  [][]int           // needs[k]: the columns operands k.. read
	costly []bool            // costly[k]: some operand k.. is not a cheap comparison
	sel    []int32           // reused selection buffer
	pos    []int32           // reused positions within the compacted rows
	idx    []int32           // reused map from compacted rows to input rows
	mask   []byte            // reused bitmap of surviving rows
	// unread marks the output columns the parent never reads (nil: all
	// are read), filled from nulls instead of gathered (filter_unread.go);
	// read lists the others.
	unread []bool
	read   []int
	nulls  []arrow.Array
	closed bool
}

func newFilter(tc *execop.TaskContext, n *physical.Filter, partition int) (execop.Operator, error) {
	var conj []*eval.Evaluator
	for _, e := range conjuncts(n.Predicate, nil) {
		ev, err := eval.Compile(e)
		if err != nil {
			return nil, err
		}
		conj = append(conj, ev)
	}
	needs := make([][]int, len(conj))
	seen := map[int]bool{}
	for k := len(conj) - 1; k >= 0; k-- {
		for _, c := range conj[k].Columns() {
			if !seen[c] {
				seen[c] = true
				needs[k] = append(needs[k], c)
			}
		}
		if k+1 < len(conj) {
			needs[k] = append(needs[k], needs[k+1]...)
		}
	}
	costly := make([]bool, len(conj))
	for k := len(conj) - 1; k >= 0; k-- {
		costly[k] = !cheapComparison(conj[k].Expr()) || (k+1 < len(conj) && costly[k+1])
	}
	input, err := tc.Build(n.Input, partition)
	if err != nil {
		return nil, err
	}
	f := &filterOp{tc: tc, schema: n.Schema(), input: input, conj: conj, needs: needs, costly: costly}
	if f.unread = unreadOf(tc, n); f.unread != nil {
		for i, u := range f.unread {
			if !u {
				f.read = append(f.read, i)
			}
		}
	}
	return f, nil
}

// cheapComparison reports whether e compares two fixed-width columns or
// literals (=, <>, <, <=, >, >=).
func cheapComparison(e physical.Expr) bool {
	b, ok := e.(*physical.Binary)
	if !ok || b.Op > physical.OpGtEq {
		return false
	}
	for _, o := range []physical.Expr{b.Left, b.Right} {
		switch o.(type) {
		case *physical.Column, *physical.Literal:
		default:
			return false
		}
		if _, fixed := o.DataType().(arrow.FixedWidthDataType); !fixed {
			return false
		}
	}
	return true
}

// conjuncts appends the operands of e's top-level AND tree, left to right.
func conjuncts(e physical.Expr, dst []physical.Expr) []physical.Expr {
	if b, ok := e.(*physical.Binary); ok && b.Op == physical.OpAnd {
		return conjuncts(b.Right, conjuncts(b.Left, dst))
	}
	return append(dst, e)
}

func (f *filterOp) Open(ctx context.Context) error { return f.input.Open(ctx) }

func (f *filterOp) Next(ctx context.Context) (arrow.RecordBatch, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		b, err := f.input.Next(ctx)
		if err != nil {
			return nil, err
		}
		out, err := f.applyReleasing(ctx, b)
		if err != nil {
			return nil, err
		}
		if out != nil {
			return out, nil
		}
	}
}

// applyReleasing is apply that then releases b, also when apply panics
// (a memory limit crossed in an expression panics up to the operator
// boundary).
func (f *filterOp) applyReleasing(ctx context.Context, b arrow.RecordBatch) (arrow.RecordBatch, error) {
	defer b.Release()
	return f.apply(ctx, b)
}

// apply returns b's selected rows, or nil if none; b keeps its reference.
func (f *filterOp) apply(ctx context.Context, b arrow.RecordBatch) (arrow.RecordBatch, error) {
	n := int(b.NumRows())
	if n == 0 {
		return nil, nil
	}
	if len(f.conj) == 1 {
		sel, err := f.conj[0].EvalSelection(ctx, f.tc.Mem, b, f.sel)
		f.sel = sel
		if err != nil {
			return nil, err
		}
		return f.take(ctx, b, sel)
	}
	sel, err := f.refine(ctx, b)
	if err != nil || sel == nil {
		return nil, err
	}
	return f.take(ctx, b, sel)
}

// take returns the rows sel of b: nil for none, b itself for all.
func (f *filterOp) take(ctx context.Context, b arrow.RecordBatch, sel []int32) (arrow.RecordBatch, error) {
	switch int64(len(sel)) {
	case 0:
		return nil, nil
	case b.NumRows():
		b.Retain()
		return b, nil
	}
	if f.unread != nil {
		return f.takeRead(ctx, b, sel)
	}
	out, err := kernel.TakeBatch(ctx, f.tc.Mem, f.schema, b, sel)
	if err != nil {
		return nil, err
	}
	// A gathered cache column keeps its dictionary, so an aggregate or
	// comparison above still works on codes.
	filemap.DeriveGather(b.Columns(), out.Columns(), sel)
	return out, nil
}

// takeRead is take for a parent that reads only the columns f.read: the
// others are NULL columns, not gathered (filter_unread.go).
func (f *filterOp) takeRead(ctx context.Context, b arrow.RecordBatch, sel []int32) (arrow.RecordBatch, error) {
	cols := make([]arrow.Array, len(f.unread))
	if len(f.read) > 0 { // (TakeSome takes every column for none listed)
		var err error
		if cols, err = kernel.TakeSome(ctx, f.tc.Mem, f.schema, b.Columns(), f.read, sel); err != nil {
			return nil, err
		}
	}
	defer kernel.ReleaseArrays(cols)
	filemap.DeriveGather(b.Columns(), cols, sel) // before the NULLs fill the gaps: they get no codes
	for i, u := range f.unread {
		if u {
			cols[i] = f.nullColumn(i, len(sel))
		}
	}
	unreadCols.Add(int64(len(f.unread) - len(f.read)))
	return array.NewRecordBatch(f.schema, cols, int64(len(sel))), nil
}

// refine evaluates the operands in turn and returns the rows of b where all
// are TRUE (nil for none), in f.sel.
func (f *filterOp) refine(ctx context.Context, b arrow.RecordBatch) ([]int32, error) {
	n := int(b.NumRows())
	work, wn := b.Columns(), n // the rows still considered, as columns
	var owned []arrow.Array    // work, when it is a compacted copy
	defer func() { kernel.ReleaseArrays(owned) }()
	compacted := false // work is a compacted copy; f.idx[i] is the row of b that its row i is
	nb := int(bitutil.BytesForBits(int64(n)))
	if cap(f.mask) < nb {
		f.mask = make([]byte, nb)
	}
	mask := f.mask[:nb]
	fillMask(mask, wn)
	for k, ev := range f.conj {
		count, err := ev.Refine(ctx, f.tc.Mem, work, wn, mask)
		if err != nil {
			return nil, err
		}
		if count == 0 {
			return nil, nil
		}
		last := k == len(f.conj)-1
		if !last && (count*2 > wn || !f.costly[k+1]) {
			continue // compaction would not pay: keep narrowing the bitmap
		}
		f.pos = maskIndices(mask, wn, f.pos[:0])
		if !compacted {
			f.sel = append(f.sel[:0], f.pos...)
		} else {
			f.sel = f.sel[:0]
			for _, p := range f.pos {
				f.sel = append(f.sel, f.idx[p])
			}
		}
		if last {
			return f.sel, nil
		}
		next, err := kernel.TakeSome(ctx, f.tc.Mem, f.schema, work, f.needs[k+1], f.pos)
		if err != nil {
			return nil, err
		}
		kernel.ReleaseArrays(owned)
		owned, work, wn = next, next, count
		f.idx, compacted = append(f.idx[:0], f.sel...), true
		fillMask(mask, wn)
	}
	return f.sel, nil // not reached: the last operand returns above
}

// fillMask sets the first n bits of mask (and the rest of their bytes).
func fillMask(mask []byte, n int) {
	m := mask[:bitutil.BytesForBits(int64(n))]
	for i := range m {
		m[i] = 0xff
	}
}

// maskIndices appends the positions of the set bits among the first n of
// mask.
func maskIndices(mask []byte, n int, dst []int32) []int32 {
	for i := 0; i*8 < n; i++ {
		w := mask[i]
		if rest := n - i*8; rest < 8 {
			w &= byte(1)<<rest - 1
		}
		for w != 0 {
			dst = append(dst, int32(i*8+bits.TrailingZeros8(w)))
			w &= w - 1
		}
	}
	return dst
}

func (f *filterOp) Close() error {
	if f.closed {
		return nil
	}
	f.closed = true
	f.releaseNulls()
	return f.input.Close()
}
