package sort

import (
	"context"

	"github.com/quiverdb/quiver/exec/kernel"
	"github.com/quiverdb/quiver/exec/spill"
)

// External sort: when the batches a full sort buffers, plus the copy and
// index array sorting them needs, would not fit in the sort's fair share of
// the task's and the executor's memory limits (an execop.Spiller: the sort
// is a spillable consumer while it reads its input), the buffered rows are
// sorted and written to a spill file (an Arrow IPC stream:
// dictionary-encoded columns may change dictionaries between batches) as
// one sorted run, and their memory is released. At the end of the input the rest is spilled too and
// the runs are merged (Merger), one batch of each in memory at a time.
// Runs are merged in the order they were written, so the sort stays
// stable. The files are spill.Files (under the work dir) and are
// removed by Close, whatever happened.

// spillFactor: spill once the room left in the sort's share is below this
// many times what sorting the buffered rows in memory would take, leaving
// the rest of the share for the batches the spill writes and the merge
// reads.
const spillFactor = 2

// minSpillBytes: a run is not written for less than this, so that a
// task whose memory is taken by something else writes no storm of tiny
// files (it fails with the memory limit instead).
const minSpillBytes = 64 << 10

// mustSpill reports whether the buffered rows should go to disk now.
func (s *sortOp) mustSpill() bool {
	if len(s.buf) == 0 || s.bufBytes < minSpillBytes {
		return false
	}
	need := s.bufBytes + 4*s.bufRows // the sorted copy and the permutation
	s.mem.SetHeld(s.bufBytes)
	return s.mem.Room() < spillFactor*need
}

// spill sorts the buffered rows and writes them as a new run.
func (s *sortOp) spill(ctx context.Context) error {
	if err := s.sortBuffered(ctx, -1); err != nil {
		return err
	}
	s.bufBytes = 0
	run, err := spill.Create(s.tc, s.n, s.schema, "sort")
	if err != nil {
		return err
	}
	s.runs = append(s.runs, run) // Close removes it, written or not
	rows := s.spillBatchRows()
	for off := 0; off < len(s.perm); {
		end := min(len(s.perm), off+rows)
		b, err := kernel.TakeBatch(ctx, s.tc.Mem, s.schema, s.data, s.perm[off:end])
		if err != nil {
			return err
		}
		err = run.Write(b)
		b.Release()
		if err != nil {
			return err
		}
		off = end
	}
	if err := run.Finish(); err != nil {
		return err
	}
	s.data.Release()
	s.data = nil
	s.perm = nil
	s.tc.Shrink(s.reserved)
	s.reserved = 0
	s.mem.SetHeld(0)
	return nil
}

// spillBatchRows is the rows per batch of a run being written: the merge
// holds one batch of every run at once, so a run's batches are kept to
// about a sixteenth of the memory left now (and at most 1 MiB), sized by
// the average row of the data being spilled.
func (s *sortOp) spillBatchRows() int {
	n := s.data.NumRows()
	if n == 0 {
		return s.tc.BatchRows()
	}
	target := min(s.tc.Headroom()/16, 1<<20)
	rowBytes := max(spill.Bytes(s.data)/n, 1)
	return int(max(1, min(int64(s.tc.BatchRows()), target/rowBytes)))
}

// startMerge spills what is still buffered and sets up the merge of every
// run.
func (s *sortOp) startMerge(ctx context.Context) error {
	if len(s.buf) > 0 {
		if err := s.spill(ctx); err != nil {
			return err
		}
	}
	sources := make([]Source, len(s.runs))
	for i, run := range s.runs {
		next, err := run.Reader()
		if err != nil {
			return err
		}
		sources[i] = next
	}
	s.merger = NewMerger(s.tc.Mem, s.schema, s.keys, s.spec, sources)
	return nil
}

// closeRuns ends the merge and removes every spill file.
func (s *sortOp) closeRuns() error {
	if s.merger != nil {
		s.merger.Close()
		s.merger = nil
	}
	err := spill.RemoveAll(s.runs)
	s.runs = nil
	return err
}
