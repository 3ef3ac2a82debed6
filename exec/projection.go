package exec

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/quiverdb/quiver/exec/eval"
	"github.com/quiverdb/quiver/exec/execop"
	"github.com/quiverdb/quiver/exec/kernel"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
)

// projectionOp computes one column per expression. Plain column references
// are passed through without evaluation.
type projectionOp struct {
	tc     *execop.TaskContext
	schema *arrow.Schema
	input  execop.Operator
	evs    []*eval.Evaluator // nil where the expression is a plain column
	cols   []int             // the input column of plain column references
	closed bool
}

func newProjection(tc *execop.TaskContext, n *physical.Projection, partition int) (execop.Operator, error) {
	p := &projectionOp{tc: tc, schema: n.Schema(), evs: make([]*eval.Evaluator, len(n.Exprs)), cols: make([]int, len(n.Exprs))}
	in := n.Input.Schema()
	for i, e := range n.Exprs {
		if c, ok := e.(*physical.Column); ok && c.Index >= 0 && c.Index < in.NumFields() &&
			arrow.TypeEqual(in.Field(c.Index).Type, p.schema.Field(i).Type) {
			p.cols[i] = c.Index
			continue
		}
		ev, err := eval.Compile(e)
		if err != nil {
			return nil, err
		}
		p.evs[i] = ev
	}
	input, err := tc.Build(n.Input, partition)
	if err != nil {
		return nil, err
	}
	p.input = input
	return p, nil
}

func (p *projectionOp) Open(ctx context.Context) error { return p.input.Open(ctx) }

func (p *projectionOp) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	b, err := p.input.Next(ctx)
	if err != nil {
		return nil, err
	}
	defer b.Release()
	cols := make([]arrow.Array, len(p.evs))
	defer kernel.ReleaseArrays(cols)
	for i, ev := range p.evs {
		if ev == nil {
			c := b.Column(p.cols[i])
			c.Retain()
			cols[i] = c
			continue
		}
		c, err := ev.Eval(ctx, p.tc.Mem, b)
		if err != nil {
			return nil, err
		}
		cols[i] = c
		if !arrow.TypeEqual(c.DataType(), p.schema.Field(i).Type) {
			return nil, qerr.Internalf("exec: projection: expression %s produced %s, want %s", ev.Expr(), c.DataType(), p.schema.Field(i).Type)
		}
	}
	return array.NewRecordBatch(p.schema, cols, b.NumRows()), nil
}

func (p *projectionOp) Close() error {
	if p.closed {
		return nil
	}
	p.closed = true
	return p.input.Close()
}
