package sort

import (
	"cmp"
	"context"
	"errors"
	"io"
	"math"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver/exec/execop"
	"github.com/quiverdb/quiver/exec/kernel"
	"github.com/quiverdb/quiver/exec/spill"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
)

// sortOp sorts one partition: it pulls its whole input, concatenates it,
// sorts a permutation of row indices with comparators typed per key column
// (stable: equal rows keep their input order), then emits the rows in
// batches of BatchSize by taking them through the permutation.
//
// With Fetch ≥ 0 it keeps only the best Fetch rows (top-k): buffered input
// is compacted to the Fetch best rows whenever it exceeds max(2·Fetch,
// BatchSize) rows, so memory stays bounded by about 2·Fetch + BatchSize rows.
// Once Fetch rows are kept, an incoming row that does not sort strictly
// before the worst kept row cannot enter the top (a tie loses to the earlier
// row), so it is dropped on arrival: on most inputs almost every row is,
// and compaction sorts only the few that remain.
//
// The permutation is reserved with Grow; batches are accounted by the
// allocator.
type sortOp struct {
	tc     *execop.TaskContext
	n      *physical.Sort
	schema *arrow.Schema
	input  execop.Operator
	keys   *SortKeyExprs
	spec   SortSpec

	buf      []arrow.RecordBatch // input not yet sorted
	bufRows  int64
	bufBytes int64 // of buf, counted for a full sort only (spill.go)
	// A full sort that spilled: its runs on disk, then their merge.
	runs   []*spill.File
	merger *Merger
	// mem registers a full sort as a spillable consumer while it reads its
	// input (spill.go).
	mem  *execop.Spiller
	data arrow.RecordBatch // sorted rows come from here, through perm
	// With Fetch > 0, after a compaction that left Fetch rows: the key
	// arrays of data (released at the next compaction and by Close) and
	// typed access to them; the worst kept row is the last one.
	topArrs  []arrow.Array
	topKeys  []SortKeyCol
	keep     []int32 // scratch rows of dropBeyondTop
	perm     []int32
	reserved int64
	// plim is the plan's per-partition limit while it still applies
	// (partition_topk.go); part holds its state.
	plim *physical.PartitionLimit
	part partTop
	// cut is the limit once the sort gave up on it, applied to the sorted
	// rows; stream and streamArrs apply it to merged runs.
	cut        *physical.PartitionLimit
	stream     *rankCutter
	streamArrs []arrow.Array
	off        int
	sorted     bool
	closed     bool
}

func NewSort(tc *execop.TaskContext, n *physical.Sort, partition int) (execop.Operator, error) {
	keys, err := CompileSortKeys(n.Keys)
	if err != nil {
		return nil, err
	}
	if l := n.PartitionLimit; l != nil && (l.K < 1 || l.Keys < 0 || l.Keys > len(n.Keys) || n.Fetch >= 0) {
		return nil, qerr.Internalf("exec: sort %s over %d keys with fetch %d", l, len(n.Keys), n.Fetch)
	}
	input, err := buildInput(tc, n.Input, partition, n.PreservePartitioning)
	if err != nil {
		return nil, err
	}
	return &sortOp{tc: tc, n: n, schema: n.Schema(), input: input, keys: keys, spec: NewSortSpec(n.Keys), mem: tc.NewSpiller(), plim: n.PartitionLimit}, nil
}

// buildInput returns the operator for partition of input when partitions
// map one to one (preserve), else one operator over all of input's partitions.
func buildInput(tc *execop.TaskContext, input physical.Plan, partition int, preserve bool) (execop.Operator, error) {
	if preserve {
		return tc.Build(input, partition)
	}
	// One partition builds directly; several merge through the coalescing
	// exchange (which is exec's).
	return tc.Build(&physical.Coalesce{Input: input}, 0)
}

func (s *sortOp) Open(ctx context.Context) error { return s.input.Open(ctx) }

func (s *sortOp) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !s.sorted {
		if err := s.consume(ctx); err != nil {
			return nil, err
		}
		s.sorted = true
	}
	if s.merger != nil {
		if s.cut != nil {
			return s.nextMerged(ctx)
		}
		return s.merger.Next(ctx, int64(s.tc.BatchRows()))
	}
	if s.data == nil || s.off >= len(s.perm) {
		return nil, io.EOF
	}
	end := min(len(s.perm), s.off+s.tc.BatchRows())
	out, err := kernel.TakeBatch(ctx, s.tc.Mem, s.schema, s.data, s.perm[s.off:end])
	if err != nil {
		return nil, err
	}
	s.off = end
	return out, nil
}

// consume pulls the whole input and leaves the sorted result in data/perm.
func (s *sortOp) consume(ctx context.Context) error {
	fetch := s.n.Fetch
	if fetch == 0 {
		return nil
	}
	limit := int64(-1)
	// A fetch past MaxInt64/2 (LIMIT near 2^63) bounds nothing, and 2*fetch
	// would wrap negative and compact at every batch.
	if fetch > 0 && fetch <= math.MaxInt64/2 {
		limit = max(2*fetch, int64(s.tc.BatchRows()))
	}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		b, err := s.input.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		if s.plim != nil {
			if b, err = s.dropBeyondPartitionTop(ctx, b); err != nil {
				return err
			}
			if b == nil {
				continue
			}
		} else if s.topKeys != nil {
			if b, err = s.dropBeyondTop(ctx, b); err != nil {
				return err
			}
			if b == nil {
				continue
			}
		}
		if b.NumRows() == 0 {
			b.Release()
			continue
		}
		s.buf = append(s.buf, b)
		s.bufRows += b.NumRows()
		if s.plim != nil {
			if err := s.addPartitionBatch(ctx, b); err != nil {
				return err
			}
			continue
		}
		if fetch < 0 {
			s.bufBytes += spill.Bytes(b)
			if s.mustSpill() {
				if err := s.spill(ctx); err != nil {
					return err
				}
			}
		}
		if limit > 0 && s.bufRows > limit {
			if err := s.sortBuffered(ctx, fetch); err != nil {
				return err
			}
		}
	}
	// Past its input the sort cannot spill: what it holds is unspillable.
	s.mem.Close()
	if err := s.input.Close(); err != nil {
		return err
	}
	if len(s.runs) > 0 {
		return s.startMerge(ctx)
	}
	if s.plim != nil {
		return s.compactPartitions(ctx, true)
	}
	if err := s.sortBuffered(ctx, fetch); err != nil {
		return err
	}
	if s.cut != nil {
		return s.cutSorted(ctx)
	}
	return nil
}

// dropBeyondTop returns the rows of b (which it takes over) that sort
// strictly before the worst of the fetch rows kept in data, or nil when
// none does.
func (s *sortOp) dropBeyondTop(ctx context.Context, b arrow.RecordBatch) (arrow.RecordBatch, error) {
	arrs, keys, err := s.keys.Eval(ctx, s.tc.Mem, b)
	if err != nil {
		b.Release()
		return nil, err
	}
	defer kernel.ReleaseArrays(arrs)
	worst := int(s.data.NumRows()) - 1
	keep := s.keep[:0]
	n := int(b.NumRows())
	for r := 0; r < n; r++ {
		if s.spec.Compare(keys, r, s.topKeys, worst) < 0 {
			keep = append(keep, int32(r))
		}
	}
	s.keep = keep
	return s.keepRows(ctx, b, n, keep)
}

// keepRows returns the rows keep (ascending) of b, which has n rows: b
// itself when it keeps them all, nil when none. It takes over b.
func (s *sortOp) keepRows(ctx context.Context, b arrow.RecordBatch, n int, keep []int32) (arrow.RecordBatch, error) {
	switch len(keep) {
	case n:
		return b, nil
	case 0:
		b.Release()
		return nil, nil
	}
	defer b.Release()
	return kernel.TakeBatch(ctx, s.tc.Mem, s.schema, b, keep)
}

// sortBuffered sorts data plus the buffered batches. With fetch ≥ 0 it
// compacts the result to its first fetch rows (a new data batch in sorted
// order, perm the identity).
func (s *sortOp) sortBuffered(ctx context.Context, fetch int64) error {
	if s.data != nil {
		// data holds the previous top rows, already compacted and sorted;
		// it goes first so that stability keeps earlier rows first.
		s.buf = append([]arrow.RecordBatch{s.data}, s.buf...)
		s.bufRows += s.data.NumRows()
		s.data = nil
	}
	if len(s.buf) == 0 {
		return nil
	}
	all, err := kernel.ConcatBatches(s.tc.Mem, s.schema, s.buf)
	execop.ReleaseAll(s.buf)
	s.buf, s.bufRows = s.buf[:0], 0
	if err != nil {
		return err
	}
	s.data = all
	n := int(all.NumRows())
	if err := s.reservePerm(int64(n)); err != nil {
		return err
	}
	s.perm = s.perm[:0]
	for i := range n {
		s.perm = append(s.perm, int32(i))
	}
	arrs, keys, err := s.keys.Eval(ctx, s.tc.Mem, all)
	if err != nil {
		return err
	}
	defer kernel.ReleaseArrays(arrs)
	spec := s.spec
	if fetch > 0 && fetch <= math.MaxInt64/4 && int64(n) > 4*fetch {
		// Few rows wanted from many: select them with a bounded heap (about
		// one comparison a row) and sort only those.
		s.perm = selectTop(s.perm, int(fetch), func(a, b int32) int {
			if c := spec.Compare(keys, int(a), keys, int(b)); c != 0 {
				return c
			}
			return cmp.Compare(a, b) // stability: earlier rows first
		})
	} else {
		// An unstable sort with the row order as the last key is stable and
		// takes fewer comparisons and moves than a stable merge sort.
		slices.SortFunc(s.perm, func(a, b int32) int {
			if c := spec.Compare(keys, int(a), keys, int(b)); c != 0 {
				return c
			}
			return cmp.Compare(a, b)
		})
	}
	if fetch >= 0 && int64(n) > fetch {
		s.perm = s.perm[:fetch]
	}
	if fetch >= 0 {
		top, err := kernel.TakeBatch(ctx, s.tc.Mem, s.schema, all, s.perm)
		if err != nil {
			return err
		}
		s.data.Release()
		s.data = top
		for i := range s.perm {
			s.perm[i] = int32(i)
		}
		s.releaseTop()
		if fetch > 0 && int64(len(s.perm)) == fetch {
			if s.topArrs, s.topKeys, err = s.keys.Eval(ctx, s.tc.Mem, top); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s *sortOp) releaseTop() {
	kernel.ReleaseArrays(s.topArrs)
	s.topArrs, s.topKeys = nil, nil
}

// reservePerm makes room for a permutation of n rows, reserving its memory.
func (s *sortOp) reservePerm(n int64) error {
	if need := 4 * n; need > s.reserved {
		if err := s.tc.Grow(need - s.reserved); err != nil {
			return err
		}
		s.reserved = need
	}
	if int64(cap(s.perm)) < n {
		s.perm = make([]int32, 0, n)
	}
	return nil
}

func (s *sortOp) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	s.mem.Close()
	runsErr := s.closeRuns()
	execop.ReleaseAll(s.buf)
	s.buf = nil
	if s.data != nil {
		s.data.Release()
		s.data = nil
	}
	s.releaseTop()
	s.perm = nil
	s.releasePart()
	kernel.ReleaseArrays(s.streamArrs)
	s.streamArrs = nil
	s.tc.Shrink(s.reserved)
	s.reserved = 0
	return errors.Join(s.input.Close(), runsErr)
}

// selectTop reorders rows so that its first k entries are the k smallest
// by less-than-zero of compare (a strict total order), sorted, and returns
// rows. It keeps the k best seen in a max-heap whose root is the worst of
// them: a row that does not beat the root costs one comparison.
func selectTop(rows []int32, k int, compare func(a, b int32) int) []int32 {
	if k >= len(rows) {
		slices.SortFunc(rows, compare)
		return rows
	}
	h := rows[:k] // rows[:k] becomes the heap; rows[k:] are scanned
	for i := k/2 - 1; i >= 0; i-- {
		siftDown(h, i, compare)
	}
	for _, r := range rows[k:] {
		if compare(r, h[0]) < 0 {
			h[0] = r
			siftDown(h, 0, compare)
		}
	}
	slices.SortFunc(h, compare)
	return rows
}

// siftDown restores the max-heap order of h below position i.
func siftDown(h []int32, i int, compare func(a, b int32) int) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		m := l
		if r := l + 1; r < len(h) && compare(h[r], h[l]) > 0 {
			m = r
		}
		if compare(h[m], h[i]) <= 0 {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}
