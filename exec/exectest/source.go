package exectest

import (
	"context"
	"errors"
	"io"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver/exec/execop"
)

// Source is an operator over fixed batches. Each Next hands out a new
// reference; the Source keeps its own until Close. ErrAt ≥ 0 makes the
// Next call of that index fail with Err (default a generic error); PanicAt
// ≥ 0 makes it panic.
type Source struct {
	Batches []arrow.RecordBatch
	ErrAt   int
	Err     error
	PanicAt int

	i      int
	closed bool
}

// NewSource returns a Source over bs that takes ownership of them.
func NewSource(bs []arrow.RecordBatch) *Source { return &Source{Batches: bs, ErrAt: -1, PanicAt: -1} }

func (s *Source) Open(ctx context.Context) error { return nil }

func (s *Source) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if s.i == s.PanicAt {
		panic("exectest: source panic on request")
	}
	if s.i == s.ErrAt {
		if s.Err != nil {
			return nil, s.Err
		}
		return nil, errors.New("exectest: source error on request")
	}
	if s.i >= len(s.Batches) {
		return nil, io.EOF
	}
	b := s.Batches[s.i]
	s.i++
	b.Retain()
	return b, nil
}

func (s *Source) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	for _, b := range s.Batches {
		b.Release()
	}
	return nil
}

// Async runs an operator in its own goroutine and delivers its batches
// through an unbuffered channel, sleeping Delay before each, so that its
// consumer cannot rely on data being ready. The goroutine is owned by the
// Async: it exits at the end of the input, on error, or when Close cancels it.
type Async struct {
	op     execop.Operator
	delay  time.Duration
	ch     chan asyncItem
	cancel context.CancelFunc
	wg     sync.WaitGroup
	closed bool
}

type asyncItem struct {
	b   arrow.RecordBatch
	err error
}

// NewAsync wraps op.
func NewAsync(op execop.Operator, delay time.Duration) *Async { return &Async{op: op, delay: delay} }

func (a *Async) Open(ctx context.Context) error {
	if err := a.op.Open(ctx); err != nil {
		return err
	}
	ctx, a.cancel = context.WithCancel(ctx)
	a.ch = make(chan asyncItem)
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		defer close(a.ch)
		for {
			timer := time.NewTimer(a.delay)
			select {
			case <-timer.C:
			case <-ctx.Done():
				timer.Stop()
				return
			}
			b, err := a.op.Next(ctx)
			select {
			case a.ch <- asyncItem{b, err}:
			case <-ctx.Done():
				if b != nil {
					b.Release()
				}
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return nil
}

func (a *Async) Next(ctx context.Context) (arrow.RecordBatch, error) {
	select {
	case it, ok := <-a.ch:
		if !ok {
			return nil, io.EOF
		}
		return it.b, it.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (a *Async) Close() error {
	if a.closed {
		return nil
	}
	a.closed = true
	if a.cancel != nil {
		a.cancel()
		for it := range a.ch {
			if it.b != nil {
				it.b.Release()
			}
		}
		a.wg.Wait()
	}
	return a.op.Close()
}
