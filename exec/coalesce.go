package exec

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver/exec/execop"
	"github.com/quiverdb/quiver/physical"
	"golang.org/x/sync/errgroup"
)

func newCoalesce(tc *execop.TaskContext, n *physical.Coalesce, partition int) (execop.Operator, error) {
	if n.Input.OutputPartitions() == 1 {
		return tc.Build(n.Input, 0)
	}
	return &coalesceOp{tc: tc, input: n.Input}, nil
}

// coalesceOp merges every partition of input into one stream:
//
//	in0 ─┐
//	in1 ─┼─► bounded channel ─► Next
//	in2 ─┘
//
// Open starts one producer goroutine per input partition. The operator owns
// them: each exits when its partition ends, fails, or the group's context is
// cancelled (by the first failure, by the caller's ctx, or by Close). Every
// send selects on that context, so Close never waits on a blocked producer.
// A goroutine closes the channel once all producers have exited; the
// group's first error is then reported by Next.
type coalesceOp struct {
	tc     *execop.TaskContext
	input  physical.Plan
	ch     chan arrow.RecordBatch
	cancel context.CancelFunc
	err    error // written before ch is closed, read after
	closed bool
}

func (c *coalesceOp) Open(ctx context.Context) error {
	n := c.input.OutputPartitions()
	gctx, cancel := context.WithCancel(ctx)
	c.cancel = cancel
	g, gctx := errgroup.WithContext(gctx)
	c.ch = make(chan arrow.RecordBatch, max(2, n))
	for i := range n {
		g.Go(func() (err error) {
			defer execop.RecoverRoot(&err, fmt.Sprintf("partition %d of %s", i, c.input))
			return produce(gctx, c.tc, c.input, i, c.ch)
		})
	}
	go func() {
		c.err = g.Wait()
		close(c.ch)
	}()
	return nil
}

// produce runs one partition of p and sends its non-empty batches to ch
// until the end, an error or ctx is done.
func produce(ctx context.Context, tc *execop.TaskContext, p physical.Plan, partition int, ch chan<- arrow.RecordBatch) (err error) {
	op, err := tc.Build(p, partition)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := op.Close(); err == nil && cerr != nil {
			err = cerr
		}
	}()
	if err := op.Open(ctx); err != nil {
		return err
	}
	for {
		b, err := op.Next(ctx)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if b.NumRows() == 0 {
			b.Release()
			continue
		}
		select {
		case ch <- b:
		case <-ctx.Done():
			b.Release()
			return ctx.Err()
		}
	}
}

func (c *coalesceOp) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	select {
	case b, ok := <-c.ch:
		if !ok {
			if c.err != nil {
				return nil, c.err
			}
			return nil, io.EOF
		}
		return b, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Close cancels the producers, discards what they already sent and waits
// for all of them to exit.
func (c *coalesceOp) Close() error {
	if c.closed {
		return nil
	}
	c.closed = true
	if c.ch == nil {
		return nil
	}
	c.cancel()
	for b := range c.ch {
		b.Release()
	}
	return nil
}
