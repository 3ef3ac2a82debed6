package exec

import (
	"context"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver/exec/execop"
	"github.com/quiverdb/quiver/exec/kernel"
	"github.com/quiverdb/quiver/exec/sort"
	"github.com/quiverdb/quiver/physical"
	"golang.org/x/sync/errgroup"
)

// exchange is the state of one Repartition node shared by its N output
// partitions (found through TaskContext.Shared):
//
//	in0 ─┐                      ┌─► outs[0] ─► consumer 0
//	in1 ─┼─ hash / round robin ─┼─► outs[1] ─► consumer 1
//	in2 ─┘   (one goroutine     └─► outs[2] ─► consumer 2
//	          per input partition)
//
// The first consumer to Open starts the producers, once per query. The
// exchange owns them; they stop when their input ends or fails, when the
// first Open's ctx is cancelled, or when every consumer has closed. A
// send selects on the group's context and on the target consumer's closed
// signal, so a consumer that closes early never blocks the others: batches
// routed to it are discarded. When all producers have exited, a goroutine
// closes every output channel and releases what closed consumers left in
// them; the last consumer's Close waits for that.
//
// All N output partitions of a Repartition must be built and closed (Build
// is called for each by whoever runs the plan), or the producers only stop
// at cancellation.
type exchange struct {
	tc   *execop.TaskContext
	n    *physical.Repartition
	keys *sort.SortKeyExprs // key expressions (only the evaluation part is used)

	startOnce sync.Once
	outs      []chan arrow.RecordBatch
	closedCh  []chan struct{} // closed when consumer i closes
	closeOnce []sync.Once
	open      atomic.Int64 // consumers not yet closed
	cancel    context.CancelFunc
	done      chan struct{} // closed once producers exited and outs are closed
	err       error         // the producers' first error, written before done
}

func newRepartition(tc *execop.TaskContext, n *physical.Repartition, partition int) (execop.Operator, error) {
	var keys *sort.SortKeyExprs
	if len(n.Keys) > 0 {
		sk := make([]physical.SortKey, len(n.Keys))
		for i, k := range n.Keys {
			sk[i] = physical.SortKey{Expr: k}
		}
		var err error
		if keys, err = sort.CompileSortKeys(sk); err != nil {
			return nil, err
		}
	}
	ex := tc.Shared(n, func() any {
		ex := &exchange{tc: tc, n: n, keys: keys,
			outs:      make([]chan arrow.RecordBatch, n.N),
			closedCh:  make([]chan struct{}, n.N),
			closeOnce: make([]sync.Once, n.N),
			done:      make(chan struct{}),
		}
		for i := range n.N {
			ex.outs[i] = make(chan arrow.RecordBatch, 2)
			ex.closedCh[i] = make(chan struct{})
		}
		ex.open.Store(int64(n.N))
		return ex
	}).(*exchange)
	return &repartitionOp{ex: ex, partition: partition}, nil
}

// start launches the producers with a context derived from the first
// consumer's ctx.
func (ex *exchange) start(ctx context.Context) {
	gctx, cancel := context.WithCancel(ctx)
	ex.cancel = cancel
	g, gctx := errgroup.WithContext(gctx)
	for i := range ex.n.Input.OutputPartitions() {
		g.Go(func() (err error) {
			defer execop.RecoverRoot(&err, fmt.Sprintf("partition %d of %s", i, ex.n.Input))
			return ex.produce(gctx, i)
		})
	}
	go func() {
		err := g.Wait()
		cancel()
		ex.err = err
		for i, ch := range ex.outs {
			close(ch)
			select {
			case <-ex.closedCh[i]:
				for b := range ch {
					b.Release()
				}
			default:
			}
		}
		close(ex.done)
	}()
}

// produce runs input partition p and routes its rows.
func (ex *exchange) produce(ctx context.Context, p int) (err error) {
	op, err := ex.tc.Build(ex.n.Input, p)
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
	next := p % ex.n.N // round robin starts at a different output per producer
	var parts kernel.HashPartitioner
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		b, err := op.Next(ctx)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if b.NumRows() == 0 {
			b.Release()
			continue
		}
		if ex.keys == nil || ex.n.N == 1 {
			if err := ex.send(ctx, next, b); err != nil {
				return err
			}
			next = (next + 1) % ex.n.N
			continue
		}
		if err := ex.routeReleasing(ctx, b, &parts); err != nil {
			return err
		}
	}
}

// routeReleasing is route that then releases b, also when route panics (a
// memory limit crossed in the key expressions panics up to the goroutine
// root).
func (ex *exchange) routeReleasing(ctx context.Context, b arrow.RecordBatch, parts *kernel.HashPartitioner) error {
	defer b.Release()
	return ex.route(ctx, b, parts)
}

// route sends each row of b to output hash(keys) % N; b keeps its
// reference. The scratch slices are reused across batches.
func (ex *exchange) route(ctx context.Context, b arrow.RecordBatch, parts *kernel.HashPartitioner) error {
	n := int(b.NumRows())
	arrs, _, err := ex.keys.Eval(ctx, ex.tc.Mem, b)
	if err != nil {
		return err
	}
	parts.Split(arrs, n, ex.n.N)
	kernel.ReleaseArrays(arrs)
	for t := range ex.n.N {
		rows := parts.Rows(t)
		if len(rows) == 0 {
			continue
		}
		select {
		case <-ex.closedCh[t]:
			continue // nobody reads it any more
		default:
		}
		var out arrow.RecordBatch
		if len(rows) == n {
			b.Retain()
			out = b
		} else if out, err = kernel.TakeBatch(ctx, ex.tc.Mem, b.Schema(), b, rows); err != nil {
			return err
		}
		if err := ex.send(ctx, t, out); err != nil {
			return err
		}
	}
	return nil
}

// send hands b to output t, or discards it if consumer t has closed.
func (ex *exchange) send(ctx context.Context, t int, b arrow.RecordBatch) error {
	select {
	case ex.outs[t] <- b:
		return nil
	case <-ex.closedCh[t]:
		b.Release()
		return nil
	case <-ctx.Done():
		b.Release()
		return ctx.Err()
	}
}

// repartitionOp is output partition `partition` of an exchange.
type repartitionOp struct {
	ex        *exchange
	partition int
	closed    bool
}

func (r *repartitionOp) Open(ctx context.Context) error {
	r.ex.startOnce.Do(func() { r.ex.start(ctx) })
	return nil
}

func (r *repartitionOp) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	select {
	case b, ok := <-r.ex.outs[r.partition]:
		if !ok {
			<-r.ex.done
			if r.ex.err != nil {
				return nil, r.ex.err
			}
			return nil, io.EOF
		}
		return b, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Close marks this consumer closed; batches routed to it from now on are
// discarded. The last consumer to close stops the producers and waits for
// them.
func (r *repartitionOp) Close() error {
	if r.closed {
		return nil
	}
	r.closed = true
	ex := r.ex
	ex.closeOnce[r.partition].Do(func() { close(ex.closedCh[r.partition]) })
	// Release what is already buffered for us; producers may add a little
	// more, which the exchange releases once they exit.
	for drained := false; !drained; {
		select {
		case b, ok := <-ex.outs[r.partition]:
			if !ok {
				drained = true
				break
			}
			b.Release()
		default:
			drained = true
		}
	}
	if ex.open.Add(-1) == 0 {
		// Never started (no consumer opened): nothing runs.
		started := false
		ex.startOnce.Do(func() {})
		if ex.cancel != nil {
			started = true
			ex.cancel()
		}
		if started {
			<-ex.done
		}
	}
	return nil
}
