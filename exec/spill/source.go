package spill

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver/exec/execop"
)

// Source is an operator over a function yielding batches (a File's
// Reader): operators that re-run part of their work over what they
// spilled feed it to a fresh copy of themselves. Open and Close do
// nothing; the File stays the spilling operator's to remove.
type Source struct {
	next func(context.Context) (arrow.RecordBatch, error)
}

var _ execop.Operator = (*Source)(nil)

// NewSource returns the operator yielding next's batches (io.EOF at the end).
func NewSource(next func(context.Context) (arrow.RecordBatch, error)) *Source {
	return &Source{next: next}
}

func (s *Source) Open(context.Context) error { return nil }

func (s *Source) Next(ctx context.Context) (arrow.RecordBatch, error) { return s.next(ctx) }

func (s *Source) Close() error { return nil }
