package exec

import (
	"context"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver/exec/execop"
	"github.com/quiverdb/quiver/exec/sort"
	"github.com/quiverdb/quiver/physical"
	"golang.org/x/sync/errgroup"
)

// mergeOp merges the sorted partitions of its input into one sorted
// stream (sort.Merger: k-way merge with a binary heap of input cursors;
// ties go to the lower input partition, so the merge is deterministic):
//
//	in0 (sorted) ─► chan ─┐
//	in1 (sorted) ─► chan ─┼─ sort.Merger ─► batch
//	in2 (sorted) ─► chan ─┘
//
// Open starts one producer goroutine per input partition, owned by the
// operator; each sends into its own bounded channel, selecting on the
// group's context, and closes it when done. Close cancels the group,
// drains the channels and waits for every producer.
type mergeOp struct {
	tc     *execop.TaskContext
	n      *physical.SortPreservingMerge
	schema *arrow.Schema
	keys   *sort.SortKeyExprs
	spec   sort.SortSpec

	ins       []*mergeInput
	merger    *sort.Merger
	cancel    context.CancelFunc
	groupDone chan struct{}
	groupErr  error // written before groupDone is closed
	emitted   int64
	closed    bool
}

type mergeInput struct {
	ch  chan arrow.RecordBatch
	err error // the producer's error, written before ch is closed
}

func newSortPreservingMerge(tc *execop.TaskContext, n *physical.SortPreservingMerge, partition int) (execop.Operator, error) {
	keys, err := sort.CompileSortKeys(n.Keys)
	if err != nil {
		return nil, err
	}
	return &mergeOp{tc: tc, n: n, schema: n.Schema(), keys: keys, spec: sort.NewSortSpec(n.Keys)}, nil
}

func (m *mergeOp) Open(ctx context.Context) error {
	k := m.n.Input.OutputPartitions()
	gctx, cancel := context.WithCancel(ctx)
	m.cancel = cancel
	g, gctx := errgroup.WithContext(gctx)
	m.ins = make([]*mergeInput, k)
	m.groupDone = make(chan struct{})
	sources := make([]sort.Source, k)
	for i := range k {
		in := &mergeInput{ch: make(chan arrow.RecordBatch, 2)}
		m.ins[i] = in
		sources[i] = m.source(in)
		g.Go(func() (err error) {
			defer func() {
				in.err = err
				close(in.ch)
			}()
			defer execop.RecoverRoot(&err, fmt.Sprintf("partition %d of %s", i, m.n.Input))
			return produce(gctx, m.tc, m.n.Input, i, in.ch)
		})
	}
	m.merger = sort.NewMerger(m.tc.Mem, m.schema, m.keys, m.spec, sources)
	go func() {
		m.groupErr = g.Wait()
		close(m.groupDone)
	}()
	return nil
}

// source reads one input partition's batches from its producer.
func (m *mergeOp) source(in *mergeInput) sort.Source {
	return func(ctx context.Context) (arrow.RecordBatch, error) {
		select {
		case b, ok := <-in.ch:
			if ok {
				return b, nil
			}
			if in.err != nil {
				// Report the group's first error, not a sibling's cancellation.
				<-m.groupDone
				return nil, m.groupErr
			}
			return nil, io.EOF
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

func (m *mergeOp) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	want := int64(m.tc.BatchRows())
	if m.n.Fetch >= 0 {
		want = min(want, m.n.Fetch-m.emitted)
	}
	if want <= 0 {
		return nil, io.EOF
	}
	b, err := m.merger.Next(ctx, want)
	if err != nil {
		return nil, err
	}
	m.emitted += b.NumRows()
	return b, nil
}

func (m *mergeOp) Close() error {
	if m.closed {
		return nil
	}
	m.closed = true
	if m.cancel == nil {
		return nil
	}
	m.cancel()
	m.merger.Close()
	for _, in := range m.ins {
		for b := range in.ch {
			b.Release()
		}
	}
	<-m.groupDone
	return nil
}
