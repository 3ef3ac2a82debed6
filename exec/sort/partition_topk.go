package sort

import (
	"context"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver/exec/kernel"
	"github.com/quiverdb/quiver/exec/spill"
	"github.com/quiverdb/quiver/physical"
)

// A sort with a PartitionLimit keeps of each window partition (rows equal
// on the first Keys sort keys) only the rows its ranking filter can pass.
// Buffered input is compacted (sorted, then cut per partition) whenever it
// outgrows both a batch and the rows kept so far, so the sorting done is at
// most about twice a full sort's. After a compaction, a partition already
// holding its K rows (or K distinct values) has a last kept row, and an
// incoming row of that partition sorting after it (or, counting rows, not
// before it) cannot pass the filter: it is dropped on arrival, after a
// binary search for its partition among the kept ones and one comparison.
//
// When a compaction drops less than a quarter of many buffered rows the
// limit cuts too little to pay: the sort becomes a full sort (which may spill),
// and the filter above the window does all the work.

// partTop is the state of a per-partition limit between compactions, over
// the kept rows in data (sorted, perm the identity).
type partTop struct {
	starts   []int32 // first row of each partition in data
	last     []int32 // per partition: its last kept row when full, else -1
	reserved int64   // Grow'n for starts and last
}

// giveUpBatches: a compaction of at least this many batches of buffered
// rows that drops less than a quarter of them ends the per-partition limit.
const giveUpBatches = 16

// partCompactRows is the buffered rows past which the input is compacted.
func (s *sortOp) partCompactRows() int64 {
	n := int64(s.tc.BatchRows())
	if s.data != nil {
		n = max(n, s.data.NumRows())
	}
	return n
}

// addPartitionBatch counts the batch just buffered and compacts when the
// buffered rows are due or memory runs short; when the kept rows alone
// leave too little memory it gives up on the limit and spills them.
func (s *sortOp) addPartitionBatch(ctx context.Context, b arrow.RecordBatch) error {
	s.bufBytes += spill.Bytes(b)
	if s.bufRows <= s.partCompactRows() && !s.partMustSpill() {
		return nil
	}
	if err := s.compactPartitions(ctx, false); err != nil {
		return err
	}
	if s.plim == nil || !s.partMustSpill() {
		return nil
	}
	if err := s.endPartitionLimit(ctx); err != nil {
		return err
	}
	return s.spill(ctx)
}

// partMustSpill is mustSpill for the rows a per-partition limit holds: the
// kept ones and the buffered ones, whose bytes bufBytes counts.
func (s *sortOp) partMustSpill() bool {
	if s.bufBytes < minSpillBytes {
		return false
	}
	rows := s.bufRows
	if s.data != nil {
		rows += s.data.NumRows()
	}
	s.mem.SetHeld(s.bufBytes)
	return s.mem.Room() < spillFactor*(s.bufBytes+4*rows)
}

// compactPartitions sorts data and the buffered rows and keeps only each
// partition's first rows by the limit, in sorted order. Unless final, it
// gives up on the limit when it dropped too few of the buffered rows.
func (s *sortOp) compactPartitions(ctx context.Context, final bool) error {
	fresh := s.bufRows
	if err := s.sortBuffered(ctx, -1); err != nil {
		return err
	}
	s.releaseTop()
	if s.data == nil {
		return nil
	}
	arrs, keys, err := s.keys.Eval(ctx, s.tc.Mem, s.data)
	if err != nil {
		return err
	}
	defer kernel.ReleaseArrays(arrs)
	// keep overwrites perm in place: it never passes the row being read.
	c := rankCutter{spec: s.spec, lim: *s.plim}
	keep := c.keep(keys, 0, s.perm, s.perm[:0])
	total := len(s.perm)
	s.perm = keep
	if !final && 4*int64(total-len(keep)) < fresh && fresh >= int64(giveUpBatches*s.tc.BatchRows()) {
		return s.endPartitionLimit(ctx)
	}
	top, err := kernel.TakeBatch(ctx, s.tc.Mem, s.schema, s.data, keep)
	if err != nil {
		return err
	}
	s.data.Release()
	s.data = top
	s.bufBytes = spill.Bytes(top)
	for i := range s.perm {
		s.perm[i] = int32(i)
	}
	return s.markFull(ctx)
}

// markFull finds the partitions of data and the last row of each that is
// full, and keeps data's keys for dropBeyondPartitionTop.
func (s *sortOp) markFull(ctx context.Context) error {
	n := int(s.data.NumRows())
	arrs, keys, err := s.keys.Eval(ctx, s.tc.Mem, s.data)
	if err != nil {
		return err
	}
	if need := 8 * int64(n); need > s.part.reserved {
		if err := s.tc.Grow(need - s.part.reserved); err != nil {
			kernel.ReleaseArrays(arrs)
			return err
		}
		s.part.reserved = need
	}
	l := s.plim
	pk, nk := l.Keys, len(keys)
	p := &s.part
	p.starts, p.last = p.starts[:0], p.last[:0]
	var rows, rank int64
	anyFull := false
	for r := 0; r < n; r++ {
		if r == 0 || s.spec.compareKeys(keys, r-1, keys, r, 0, pk) != 0 {
			p.starts = append(p.starts, int32(r))
			p.last = append(p.last, -1)
			rows, rank = 1, 1
		} else {
			rows++
			switch l.Mode {
			case physical.TopKRows:
				rank = rows
			case physical.TopKTies:
				// Full once K rows are kept: whatever ties the last one
				// stays, whatever sorts after has at least K before it.
				rank = rows
			case physical.TopKDistinct:
				if s.spec.compareKeys(keys, r-1, keys, r, pk, nk) != 0 {
					rank++
				}
			}
		}
		if rank >= l.K {
			p.last[len(p.last)-1] = int32(r)
			anyFull = true
		}
	}
	if !anyFull {
		kernel.ReleaseArrays(arrs)
		return nil
	}
	s.topArrs, s.topKeys = arrs, keys
	return nil
}

// dropBeyondPartitionTop returns the rows of b (which it takes over) that
// may still pass the limit, or nil when none may.
func (s *sortOp) dropBeyondPartitionTop(ctx context.Context, b arrow.RecordBatch) (arrow.RecordBatch, error) {
	if s.topKeys == nil {
		return b, nil
	}
	arrs, keys, err := s.keys.Eval(ctx, s.tc.Mem, b)
	if err != nil {
		b.Release()
		return nil, err
	}
	defer kernel.ReleaseArrays(arrs)
	l := s.plim
	pk, nk := l.Keys, len(keys)
	starts, last, top := s.part.starts, s.part.last, s.topKeys
	// A tie with the last kept row loses when counting rows (the kept one
	// came first) and stays otherwise.
	worse := 0
	if l.Mode == physical.TopKRows {
		worse = -1
	}
	keep := s.keep[:0]
	n := int(b.NumRows())
	for r := 0; r < n; r++ {
		part, found := slices.BinarySearchFunc(starts, r, func(start int32, r int) int {
			return s.spec.compareKeys(top, int(start), keys, r, 0, pk)
		})
		if found && last[part] >= 0 && s.spec.compareKeys(keys, r, top, int(last[part]), pk, nk) > worse {
			continue
		}
		keep = append(keep, int32(r))
	}
	s.keep = keep
	return s.keepRows(ctx, b, n, keep)
}

// endPartitionLimit turns the sort into a full sort of the rows kept (data
// through perm) and what is still to come, cut by the limit only as it is
// emitted.
func (s *sortOp) endPartitionLimit(ctx context.Context) error {
	s.cut = s.plim
	kept, err := kernel.TakeBatch(ctx, s.tc.Mem, s.schema, s.data, s.perm)
	if err != nil {
		return err
	}
	s.data.Release()
	s.data = kept
	s.plim = nil
	s.releasePart()
	s.buf = append(s.buf, s.data)
	s.bufRows += s.data.NumRows()
	s.bufBytes = spill.Bytes(s.data)
	s.data = nil
	s.perm = s.perm[:0]
	return nil
}

func (s *sortOp) releasePart() {
	s.tc.Shrink(s.part.reserved)
	s.part = partTop{}
}

// cutSorted keeps of the sorted rows (data through perm) those passing the
// limit, after a full sort.
func (s *sortOp) cutSorted(ctx context.Context) error {
	if s.data == nil {
		return nil
	}
	arrs, keys, err := s.keys.Eval(ctx, s.tc.Mem, s.data)
	if err != nil {
		return err
	}
	defer kernel.ReleaseArrays(arrs)
	c := rankCutter{spec: s.spec, lim: *s.cut}
	s.perm = c.keep(keys, 0, s.perm, s.perm[:0])
	return nil
}

// nextMerged is the next batch of the merged runs with only the rows
// passing the limit.
func (s *sortOp) nextMerged(ctx context.Context) (arrow.RecordBatch, error) {
	if s.stream == nil {
		s.stream = &rankCutter{spec: s.spec, lim: *s.cut}
	}
	for {
		b, err := s.merger.Next(ctx, int64(s.tc.BatchRows()))
		if err != nil {
			return nil, err
		}
		arrs, keys, err := s.keys.Eval(ctx, s.tc.Mem, b)
		if err != nil {
			b.Release()
			return nil, err
		}
		// The cutter compares the next batch's first row with this
		// batch's last: its keys live until then.
		kernel.ReleaseArrays(s.streamArrs)
		s.streamArrs = arrs
		n := int(b.NumRows())
		s.keep = s.stream.keep(keys, n, nil, s.keep[:0])
		switch len(s.keep) {
		case n:
			return b, nil
		case 0:
			b.Release()
			continue
		}
		out, err := kernel.TakeBatch(ctx, s.tc.Mem, s.schema, b, s.keep)
		b.Release()
		return out, err
	}
}

// rankCutter passes, of rows in sorted order, those whose row number,
// rank or dense rank within their window partition is at most the limit's
// K; the rows may come in several calls.
type rankCutter struct {
	spec SortSpec
	lim  physical.PartitionLimit
	// rows: the partition's rows so far; rank: the limit's count at the
	// previous row (rows, rank or distinct values).
	rows, rank int64
	prevKeys   []SortKeyCol // nil before the first row
	prevRow    int
}

// keep appends to out the rows of keys in order (when order is nil, rows
// 0..n-1) that pass, and returns out; out may share order's array when it
// starts at its beginning.
func (c *rankCutter) keep(keys []SortKeyCol, n int, order []int32, out []int32) []int32 {
	pk, nk := c.lim.Keys, len(keys)
	if order != nil {
		n = len(order)
	}
	for i := range n {
		ri := i
		if order != nil {
			ri = int(order[i])
		}
		if c.prevKeys == nil || c.spec.compareKeys(c.prevKeys, c.prevRow, keys, ri, 0, pk) != 0 {
			c.rows, c.rank = 1, 1
		} else {
			c.rows++
			switch c.lim.Mode {
			case physical.TopKRows:
				c.rank = c.rows
			case physical.TopKTies:
				if c.spec.compareKeys(c.prevKeys, c.prevRow, keys, ri, pk, nk) != 0 {
					c.rank = c.rows
				}
			case physical.TopKDistinct:
				if c.spec.compareKeys(c.prevKeys, c.prevRow, keys, ri, pk, nk) != 0 {
					c.rank++
				}
			}
		}
		c.prevKeys, c.prevRow = keys, ri
		if c.rank <= c.lim.K {
			out = append(out, int32(ri))
		}
	}
	return out
}
