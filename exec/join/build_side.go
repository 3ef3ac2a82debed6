package join

import (
	"context"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/quiverdb/quiver/exec/execop"
	"github.com/quiverdb/quiver/exec/hashtable"
	"github.com/quiverdb/quiver/exec/kernel"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
)

// joinBuild is the build (left) side of a hash or nested-loop join: every
// left row concatenated into one array per column, and for a hash join a
// hashTable of the distinct non-NULL keys with a chain of rows per key.
// Read-only once built, so every probe partition may read it concurrently.
type joinBuild struct {
	cols    []arrow.Array // left columns, n rows each
	n       int
	table   *hashtable.Table // nil for a nested-loop join
	head    []int32          // per key id: first row with that key
	next    []int32          // per row: next row with the same key, -1 at the end
	keyNull []bool           // per row: some key is NULL (nil if none is)
	unique  bool             // every key has one row: every chain is its head alone
	bytes   int64            // reserved with tc.Grow
	grace   *graceSpill      // the join went to disk (grace.go): no rows are held
}

// release frees what jb holds.
func (jb *joinBuild) release(tc *execop.TaskContext) {
	kernel.ReleaseArrays(jb.cols)
	tc.Shrink(jb.bytes)
	if jb.grace != nil {
		jb.grace.close()
	}
}

// joinShared is the state of one join node shared by its probe partitions:
// the build side (computed once) and, for the rows only the build side
// knows, what the probe partitions found. In CollectLeft mode it is shared
// via tc.Shared by all Right.OutputPartitions() partitions; in Partitioned
// mode each partition has its own (parts = 1).
//
// The left-side results (unmatched rows of Left/Full joins, Semi/Anti/Mark
// rows) are emitted exactly once, by the last partition to finish probing.
// The build side is released when the last of parts partitions closes.
type joinShared struct {
	parts int
	once  sync.Once
	build *joinBuild
	err   error

	mu           sync.Mutex
	matched      []bool // per left row: some pair matched (filter TRUE)
	nullMatched  []bool // per left row: some key-equal pair's filter was NULL (mark)
	rightRows    int64
	rightNullKey bool
	finished     int
	closed       int

	// remake, when set (a partition of a grace join shared by several
	// probe partitions, grace.go), makes the build again from its file:
	// an in-memory build is dropped whenever no partition is using it and
	// made again by the next to need it (same rows, same order, so the
	// match flags, which are kept, still apply). users counts the
	// partitions using it now.
	remake func(context.Context) (*joinBuild, error)
	users  int
}

// acquire builds the left side once (the first caller's ctx runs it; the
// others wait) and returns it.
func (s *joinShared) acquire(ctx context.Context, mk func(context.Context) (*joinBuild, error)) (*joinBuild, error) {
	s.once.Do(func() {
		s.build, s.err = mk(ctx)
		if s.err == nil {
			s.matched = make([]bool, s.build.n)
			s.nullMatched = make([]bool, s.build.n)
		}
	})
	if s.err != nil || s.remake == nil {
		return s.build, s.err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.build == nil {
		b, err := s.remake(ctx)
		if err != nil {
			return nil, err
		}
		s.build = b
	}
	s.users++
	return s.build, nil
}

// finish merges one partition's findings; it reports whether the caller is
// the last partition, which must then emit the left-side results.
func (s *joinShared) finish(matched, nullMatched []bool, rightRows int64, rightNullKey bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, m := range matched {
		if m {
			s.matched[i] = true
		}
	}
	for i, m := range nullMatched {
		if m {
			s.nullMatched[i] = true
		}
	}
	s.rightRows += rightRows
	s.rightNullKey = s.rightNullKey || rightNullKey
	s.finished++
	return s.finished == s.parts
}

// release is called once per partition Close (used: the partition
// acquired the build); the last one frees the build, and so does the last
// user of a build that can be made again.
func (s *joinShared) release(tc *execop.TaskContext, used bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed++
	if used && s.remake != nil {
		s.users--
	}
	if s.build == nil {
		return
	}
	if s.closed == s.parts || (s.remake != nil && s.users == 0 && s.build.grace == nil) {
		s.build.release(tc)
		s.build = nil
	}
}

// drop frees the build whatever the partitions' count (grace.go: no
// partition uses it any more).
func (s *joinShared) drop(tc *execop.TaskContext) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.build != nil {
		s.build.release(tc)
		s.build = nil
	}
}

// keyStats is what the plan guarantees of the build side's keys (one entry
// per key; nil: nothing) and an upper bound of its rows (-1: unknown).
type keyStats struct {
	cols []physical.ColumnStats
	rows int64
}

// buildJoinSide concatenates batches (of schema) into a joinBuild and, with
// keys, indexes them. It takes over the batches' references.
// spread says the keys are one hash partition of a key column (a grace
// join's), spread thin over their range: integer keys then go to hashed
// slots at once.
func buildJoinSide(ctx context.Context, tc *execop.TaskContext, schema *arrow.Schema, batches []arrow.RecordBatch, keys []kernel.ExprRunner, stats keyStats, what string, spread bool) (_ *joinBuild, err error) {
	defer execop.ReleaseAll(batches)
	jb := &joinBuild{}
	defer func() {
		if err != nil {
			kernel.ReleaseArrays(jb.cols)
			tc.Shrink(jb.bytes)
		}
	}()
	for _, b := range batches {
		jb.n += int(b.NumRows())
	}
	if int64(jb.n) >= 1<<31-1 {
		return nil, qerr.Resourcesf("exec/%s: build side has %d rows; at most 2^31-1 are supported", what, jb.n)
	}
	jb.cols = make([]arrow.Array, schema.NumFields())
	for c := range jb.cols {
		if len(batches) == 0 {
			jb.cols[c] = array.MakeArrayOfNull(tc.Mem, schema.Field(c).Type, 0)
			continue
		}
		parts := make([]arrow.Array, len(batches))
		for i, b := range batches {
			parts[i] = b.Column(c)
		}
		if len(parts) == 1 {
			parts[0].Retain()
			jb.cols[c] = parts[0]
			continue
		}
		a, err := array.Concatenate(parts, tc.Mem)
		if err != nil {
			return nil, qerr.Execf("exec/%s: concatenate build column %q: %w", what, schema.Field(c).Name, err)
		}
		jb.cols[c] = a
	}
	// Arrow computes an array's null count lazily, writing it on first use;
	// every probe partition reads these columns at once, so compute it now.
	for _, a := range jb.cols {
		a.NullN()
	}
	// flags (matched, nullMatched per partition and shared) and chains
	jb.bytes = int64(jb.n) * 16
	if err := tc.Grow(jb.bytes); err != nil {
		jb.bytes = 0
		return nil, qerr.Resourcesf("exec/%s: build side of %d rows: %w", what, jb.n, err)
	}
	if keys == nil {
		return jb, nil
	}
	all := array.NewRecordBatch(schema, jb.cols, int64(jb.n))
	defer all.Release()
	kcols, err := kernel.EvalAll(ctx, tc.Mem, keys, all)
	if err != nil {
		return nil, err
	}
	defer kernel.ReleaseArrays(kcols)
	types := make([]arrow.DataType, len(keys))
	for i, k := range keys {
		types[i] = k.Type
	}
	if jb.table, err = hashtable.NewWithStats(types, stats.cols, stats.rows); err != nil {
		return nil, err
	}
	if spread {
		jb.table.PreferHashed()
	}
	worst := jb.table.WorstCase(kcols, jb.n)
	if err := tc.Grow(worst); err != nil {
		return nil, qerr.Resourcesf("exec/%s: hash table for %d build rows: %w", what, jb.n, err)
	}
	jb.bytes += worst
	for _, k := range kcols {
		if k.NullN() == 0 {
			continue
		}
		if jb.keyNull == nil {
			jb.keyNull = make([]bool, jb.n)
		}
		bits, off := kernel.ValidBits(k)
		for r := range jb.keyNull {
			if !bitutil.BitIsSet(bits, off+r) {
				jb.keyNull[r] = true
			}
		}
	}
	sel := make([]int32, 0, jb.n)
	for r := 0; r < jb.n; r++ {
		if jb.keyNull == nil || !jb.keyNull[r] {
			sel = append(sel, int32(r))
		}
	}
	ids := make([]uint32, jb.n)
	var p hashtable.Probe
	jb.table.FindOrInsert(&p, kcols, jb.n, sel, ids)
	jb.head = make([]int32, jb.table.Len())
	for i := range jb.head {
		jb.head[i] = -1
	}
	jb.next = make([]int32, jb.n)
	jb.unique = jb.table.Len() == len(sel)
	// Insert in reverse so each chain lists its rows in input order.
	for i := len(sel) - 1; i >= 0; i-- {
		r := sel[i]
		id := ids[r]
		jb.next[r] = jb.head[id]
		jb.head[id] = r
	}
	// Settle the reservation to what the table really holds.
	actual := jb.table.MemSize() + int64(len(jb.head))*4
	if actual < worst {
		tc.Shrink(worst - actual)
	} else if err := tc.Grow(actual - worst); err != nil {
		jb.bytes -= worst
		tc.Shrink(worst)
		return nil, qerr.Resourcesf("exec/%s: hash table for %d build rows: %w", what, jb.n, err)
	}
	jb.bytes += actual - worst
	return jb, nil
}

// checkJoinKeys requires each key pair to have one type (decimals: equal
// scale too), since keys are compared by stored value.
func checkJoinKeys(on []physical.JoinOn) error {
	for _, k := range on {
		lt, rt := k.Left.DataType(), k.Right.DataType()
		if arrow.TypeEqual(lt, rt) {
			continue
		}
		ld, lok := lt.(*arrow.Decimal128Type)
		rd, rok := rt.(*arrow.Decimal128Type)
		if lok && rok && ld.Scale == rd.Scale {
			continue
		}
		return qerr.NotImplementedf("exec/hashjoin: join key %s (%s) = %s (%s): key types differ; cast both sides to one type", k.Left, lt, k.Right, rt)
	}
	return nil
}

// probeParts is how many probe partitions share one build side in tc: all of
// right's, or one when tc runs a single task of a stage.
func probeParts(tc *execop.TaskContext, right physical.Plan) int {
	if tc.SinglePartition {
		return 1
	}
	return right.OutputPartitions()
}
