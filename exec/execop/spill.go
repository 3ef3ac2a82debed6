package execop

import "math"

// Fair shares for spillable consumers. Operators that can free memory by
// spilling it to disk or emitting it early (a full sort's buffered rows, a
// hash aggregate's groups, a hash join's build side while it is collected)
// register a Spiller and ask it how much more they may take. Every other
// reservation is unspillable and keeps the plain first-come rule of
// reserveOwn.
//
// At each limited count the consumer's memory goes against (the task's
// allocator and the executor's pool), a spillable consumer may hold
//
//	share = (limit − unspillable − limit/spillReserveDiv) / spillers
//
// where unspillable is what the count holds beyond what its spillable
// consumers report, and spillers is how many are registered there. The
// consumer spills once what it holds plus what it is about to take would
// cross its share. Spillable consumers thus never take together more than
// the limit less the unspillable memory less a reserve, so scans,
// exchanges and other partitions' current batches, which cannot spill,
// still find room; without shares, each consumer measured only the room
// left, and two of them beside each other could leave nothing for what
// cannot spill although spilling more would have made room.

// spillReserveDiv: a limit's 1/spillReserveDiv is kept out of every
// share, for unspillable memory that grows between two checks.
const spillReserveDiv = 8

// Spiller is one spillable consumer's registration with the counts its
// task's memory goes against. The zero of accounting (a task whose Mem is
// not an AccountingAllocator) makes a Spiller that grants any room. Not
// safe for concurrent use; the counts it feeds are.
type Spiller struct {
	a          *AccountingAllocator // nil: memory not accounted
	held       int64
	registered bool
	closed     bool
}

// NewSpiller returns an unregistered Spiller over the task's memory; it
// registers on the first SetHeld of a positive size, so that an operator
// that never receives input takes no share from the others.
func (tc *TaskContext) NewSpiller() *Spiller {
	return &Spiller{a: tc.accounting()}
}

// NewSpiller returns an unregistered Spiller counting against a (and its
// pool).
func (a *AccountingAllocator) NewSpiller() *Spiller { return &Spiller{a: a} }

// levels calls f with each count the consumer's memory goes against.
func (s *Spiller) levels(f func(l *AccountingAllocator)) {
	if s.a == nil {
		return
	}
	f(s.a)
	if s.a.pool != nil {
		f(s.a.pool)
	}
}

// SetHeld reports that the consumer now holds n bytes it could free by
// spilling (counted in the task's allocator: reservations and Arrow
// buffers alike). The first positive report registers the consumer.
func (s *Spiller) SetHeld(n int64) {
	if s.a == nil || s.closed {
		return
	}
	n = max(n, 0)
	if !s.registered {
		if n == 0 {
			return
		}
		s.registered = true
		s.levels(func(l *AccountingAllocator) { l.spillers.Add(1) })
	}
	if d := n - s.held; d != 0 {
		s.levels(func(l *AccountingAllocator) { l.spillHeld.Add(d) })
	}
	s.held = n
}

// Held is the size last reported with SetHeld.
func (s *Spiller) Held() int64 { return s.held }

// Room is how many more bytes the consumer may take before it must spill:
// its share less what it holds at every limited count, and no more than the
// allocator's Headroom; 0 when it is over its share, math.MaxInt64 without
// a limit. An unregistered consumer is counted as if it were registered.
func (s *Spiller) Room() int64 {
	if s.a == nil {
		return math.MaxInt64
	}
	room := s.a.Headroom()
	s.levels(func(l *AccountingAllocator) {
		if l.limit <= 0 {
			return
		}
		n := l.spillers.Load()
		if !s.registered || s.closed {
			n++
		}
		unspillable := max(l.cur.Load()-l.spillHeld.Load(), 0)
		share := (l.limit - unspillable - l.limit/spillReserveDiv) / max(n, 1)
		room = min(room, share-s.held)
	})
	return max(room, 0)
}

// Close deregisters the consumer: what it still holds counts as
// unspillable from now on (an operator past the phase in which it can
// spill calls it then). Idempotent; SetHeld after Close does nothing.
func (s *Spiller) Close() {
	if s.closed {
		return
	}
	s.closed = true
	if s.registered {
		held := s.held
		s.levels(func(l *AccountingAllocator) {
			l.spillHeld.Add(-held)
			l.spillers.Add(-1)
		})
	}
	s.held = 0
}
