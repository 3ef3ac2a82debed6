package expand

import (
	"context"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/quiverdb/quiver/exec/eval"
	"github.com/quiverdb/quiver/exec/execop"
	"github.com/quiverdb/quiver/exec/kernel"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
)

// Expand is the operator of one partition of a physical.Expand.
type Expand struct {
	tc     *execop.TaskContext
	n      *physical.Expand
	schema *arrow.Schema
	input  execop.Operator
	evs    []*eval.Evaluator // nil where the key is a plain column
	cols   []int             // the input column of plain column keys
	inSet  [][]bool          // per set, per key: grouped by it
	filler []int32           // the ordinals of the empty sets whose filler rows are still to come
	marker bool              // the output has the row marker column

	batch arrow.RecordBatch // the input batch being expanded
	keys  []arrow.Array     // its key columns
	next  int               // the next set to emit for batch
	done  bool              // the input has ended

	// Constant columns for batches of constLen rows.
	constLen int
	nulls    []arrow.Array // per key
	ordinals []arrow.Array // per set
	trues    arrow.Array

	closed bool
}

// NewExpand builds partition of n.
func NewExpand(tc *execop.TaskContext, n *physical.Expand, partition int) (execop.Operator, error) {
	if len(n.Sets) == 0 || len(n.KeyNames) != len(n.Keys) {
		return nil, qerr.Internalf("expand: %d sets, %d keys, %d key names", len(n.Sets), len(n.Keys), len(n.KeyNames))
	}
	e := &Expand{tc: tc, n: n, schema: n.Schema(), evs: make([]*eval.Evaluator, len(n.Keys)), cols: make([]int, len(n.Keys)),
		marker: n.HasEmptySet()}
	if e.marker && partition == 0 {
		for s, set := range n.Sets {
			if len(set) == 0 {
				e.filler = append(e.filler, int32(s))
			}
		}
	}
	in := n.Input.Schema()
	for i, k := range n.Keys {
		if c, ok := k.(*physical.Column); ok && c.Index >= 0 && c.Index < in.NumFields() && arrow.TypeEqual(in.Field(c.Index).Type, k.DataType()) {
			e.cols[i] = c.Index
			continue
		}
		ev, err := eval.Compile(k)
		if err != nil {
			return nil, err
		}
		e.evs[i] = ev
	}
	e.inSet = make([][]bool, len(n.Sets))
	for s, set := range n.Sets {
		e.inSet[s] = make([]bool, len(n.Keys))
		for _, k := range set {
			if k < 0 || k >= len(n.Keys) {
				return nil, qerr.Internalf("expand: grouping set key %d of %d", k, len(n.Keys))
			}
			e.inSet[s][k] = true
		}
	}
	input, err := tc.Build(n.Input, partition)
	if err != nil {
		return nil, err
	}
	e.input = input
	return e, nil
}

// Open opens the input.
func (e *Expand) Open(ctx context.Context) error { return e.input.Open(ctx) }

// Next returns the current input batch for the next grouping set, reading
// the next input batch when every set has had it.
func (e *Expand) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for e.batch == nil {
		if e.done {
			if len(e.filler) > 0 {
				return e.fillerRows()
			}
			return nil, io.EOF
		}
		b, err := e.input.Next(ctx)
		if err == io.EOF {
			e.done = true
			continue
		}
		if err != nil {
			return nil, err
		}
		if b.NumRows() == 0 {
			b.Release()
			continue
		}
		if err := e.take(ctx, b); err != nil {
			return nil, err
		}
	}
	out, err := e.expand(e.next)
	if err != nil {
		return nil, err
	}
	e.next++
	if e.next == len(e.n.Sets) {
		e.drop()
	}
	return out, nil
}

// take makes b the batch being expanded and evaluates its keys.
func (e *Expand) take(ctx context.Context, b arrow.RecordBatch) error {
	e.batch, e.next = b, 0
	e.keys = make([]arrow.Array, len(e.evs))
	for i, ev := range e.evs {
		if ev == nil {
			c := b.Column(e.cols[i])
			c.Retain()
			e.keys[i] = c
			continue
		}
		c, err := ev.Eval(ctx, e.tc.Mem, b)
		if err != nil {
			e.drop()
			return err
		}
		e.keys[i] = c
		if !arrow.TypeEqual(c.DataType(), e.n.Keys[i].DataType()) {
			e.drop()
			return qerr.Internalf("expand: key %s produced %s, want %s", ev.Expr(), c.DataType(), e.n.Keys[i].DataType())
		}
	}
	return e.constants(int(b.NumRows()))
}

// drop releases the batch being expanded and its keys.
func (e *Expand) drop() {
	if e.batch != nil {
		e.batch.Release()
		e.batch = nil
	}
	kernel.ReleaseArrays(e.keys)
	e.keys = nil
}

// constants makes the constant columns for batches of n rows, unless the
// last batch had as many.
func (e *Expand) constants(n int) error {
	if n == e.constLen && e.ordinals != nil {
		return nil
	}
	e.releaseConstants()
	e.constLen = n
	mem := e.tc.Mem
	e.nulls = make([]arrow.Array, len(e.n.Keys))
	for i, k := range e.n.Keys {
		e.nulls[i] = array.MakeArrayOfNull(mem, k.DataType(), n)
	}
	e.ordinals = make([]arrow.Array, len(e.n.Sets)) // made on first use
	if e.marker {
		b := array.NewBooleanBuilder(mem)
		b.Reserve(n)
		for range n {
			b.UnsafeAppend(true)
		}
		e.trues = b.NewArray()
		b.Release()
	}
	return nil
}

func (e *Expand) releaseConstants() {
	kernel.ReleaseArrays(e.nulls)
	kernel.ReleaseArrays(e.ordinals)
	e.nulls, e.ordinals = nil, nil
	if e.trues != nil {
		e.trues.Release()
		e.trues = nil
	}
}

// expand returns the current batch for grouping set s.
func (e *Expand) expand(s int) (arrow.RecordBatch, error) {
	b := e.batch
	cols := make([]arrow.Array, 0, e.schema.NumFields())
	cols = append(cols, b.Columns()...)
	for i := range e.n.Keys {
		if e.inSet[s][i] {
			cols = append(cols, e.keys[i])
		} else {
			cols = append(cols, e.nulls[i])
		}
	}
	ord := e.ordinal(s)
	cols = append(cols, ord)
	if e.marker {
		cols = append(cols, e.trues)
	}
	// NewRecordBatch retains every column.
	out := array.NewRecordBatch(e.schema, cols, b.NumRows())
	if len(e.n.Sets) > cachedOrdinals {
		ord.Release()
	}
	return out, nil
}

// cachedOrdinals is how many sets' ordinal columns are kept for reuse;
// with more sets (a large CUBE) each is made when used and dropped, so the
// held memory does not grow with the number of sets.
const cachedOrdinals = 64

// ordinal returns the ordinal column of set s for the current batch
// length; with more than cachedOrdinals sets the caller releases it.
func (e *Expand) ordinal(s int) arrow.Array {
	if a := e.ordinals[s]; a != nil {
		return a
	}
	b := array.NewInt32Builder(e.tc.Mem)
	b.Reserve(e.constLen)
	for range e.constLen {
		b.UnsafeAppend(int32(s))
	}
	a := b.NewArray()
	b.Release()
	if len(e.n.Sets) <= cachedOrdinals {
		e.ordinals[s] = a
	}
	return a
}

// fillerRows is the next batch of the filler rows, one per empty grouping
// set: its ordinal, every other column NULL (the row marker too).
func (e *Expand) fillerRows() (arrow.RecordBatch, error) {
	n := min(len(e.filler), e.tc.BatchRows())
	ords := e.filler[:n]
	e.filler = e.filler[n:]
	mem := e.tc.Mem
	cols := make([]arrow.Array, e.schema.NumFields())
	defer kernel.ReleaseArrays(cols)
	gid := e.schema.NumFields() - 2
	for i, f := range e.schema.Fields() {
		if i == gid {
			b := array.NewInt32Builder(mem)
			b.AppendValues(ords, nil)
			cols[i] = b.NewArray()
			b.Release()
			continue
		}
		cols[i] = array.MakeArrayOfNull(mem, f.Type, n)
	}
	return array.NewRecordBatch(e.schema, cols, int64(n)), nil
}

// Close releases what the operator holds and closes its input.
func (e *Expand) Close() error {
	if e.closed {
		return nil
	}
	e.closed = true
	e.drop()
	e.releaseConstants()
	return e.input.Close()
}
