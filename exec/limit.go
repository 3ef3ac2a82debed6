package exec

import (
	"context"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver/exec/execop"
	"github.com/quiverdb/quiver/physical"
)

// limitOp skips skip rows, then passes at most fetch rows (fetch < 0: all).
// Once it has passed fetch rows it returns io.EOF without pulling its input
// again, and closes the input at once so upstream work stops early.
type limitOp struct {
	input       execop.Operator
	skip, fetch int64
	seen        int64 // rows passed so far
	done        bool
	closed      bool
}

func newLimit(tc *execop.TaskContext, n *physical.Limit, partition int) (execop.Operator, error) {
	var input execop.Operator
	var err error
	if n.Input.OutputPartitions() == 1 {
		input, err = tc.Build(n.Input, 0)
	} else {
		input = &coalesceOp{tc: tc, input: n.Input}
	}
	if err != nil {
		return nil, err
	}
	return &limitOp{input: input, skip: n.Skip, fetch: n.Fetch}, nil
}

func newLocalLimit(tc *execop.TaskContext, n *physical.LocalLimit, partition int) (execop.Operator, error) {
	input, err := tc.Build(n.Input, partition)
	if err != nil {
		return nil, err
	}
	return &limitOp{input: input, fetch: n.Fetch}, nil
}

func (l *limitOp) Open(ctx context.Context) error { return l.input.Open(ctx) }

func (l *limitOp) Next(ctx context.Context) (arrow.RecordBatch, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if l.done || (l.fetch >= 0 && l.seen >= l.fetch) {
			if !l.done {
				l.done = true
				if err := l.input.Close(); err != nil {
					return nil, err
				}
			}
			return nil, io.EOF
		}
		b, err := l.input.Next(ctx)
		if err != nil {
			return nil, err
		}
		rows := b.NumRows()
		start := int64(0)
		if l.skip > 0 {
			start = min(l.skip, rows)
			l.skip -= start
		}
		end := rows
		if l.fetch >= 0 {
			// start+fetch would overflow for a fetch near MaxInt64 (LIMIT
			// 9223372036854775807 OFFSET 5); what is left is capped at rows.
			end = min(end, start+min(l.fetch-l.seen, rows))
		}
		if start >= end {
			b.Release()
			continue
		}
		l.seen += end - start
		if start == 0 && end == rows {
			return b, nil
		}
		out := b.NewSlice(start, end)
		b.Release()
		return out, nil
	}
}

func (l *limitOp) Close() error {
	if l.closed {
		return nil
	}
	l.closed = true
	return l.input.Close() // idempotent, so fine after the early close in Next
}
