package join

import (
	"context"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/quiverdb/quiver/exec/execop"
	"github.com/quiverdb/quiver/exec/hashtable"
	"github.com/quiverdb/quiver/exec/kernel"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
)

// joinOp runs one probe partition of a physical.HashJoin or
// physical.NestedLoopJoin.
//
//	left partitions ──(collect once, shared)──► build: columns + hash table
//	right partition i ──► probe batch ──► candidate (build row, probe row)
//	     pairs, BatchSize at a time ──► Filter (TRUE only) ──► Take ──► out
//	after each probe batch: its unmatched rows (Right/Full), matched
//	(RightSemi) or unmatched (RightAnti) ones; after the last: in
//	the LAST partition to finish, the left-side rows (Left/Full unmatched,
//	Semi, Anti, Mark).
//
// Candidates are the build rows with an equal non-NULL key (hash join) or
// every build row (nested-loop join). Fast paths: with unique build keys no
// chain is walked; Semi/Anti/Mark joins without a filter form no pairs
// (keyOnly) and with one skip build rows already matched; the filter
// gathers only the columns it reads; a contiguous run of rows is output as
// a zero-copy slice (pickColumns). Match flags for build rows are kept
// per partition and OR-merged into the shared state when the partition
// finishes, so the probe loop takes no locks.
type joinOp struct {
	tc     *execop.TaskContext
	node   physical.Plan // the plan node, whose metrics spills count in
	typ    physical.JoinType
	what   string // "hashjoin" or "nljoin", for messages
	nested bool
	schema *arrow.Schema // output
	pairSc *arrow.Schema // left fields then right fields (filter input)
	leftSc *arrow.Schema
	nLeft  int // left column count
	nRight int

	shared    *joinShared
	makeBuild func(context.Context) (*joinBuild, error)
	right     execop.Operator
	leftKeys  []kernel.ExprRunner
	rightKeys []kernel.ExprRunner
	keyStats  keyStats // of the left (build) keys
	filter    *joinFilter
	fLeft     []int // filter columns of the left side (build column indices)
	fRight    []int // filter columns of the right side (probe column indices)
	allLeft   []int // 0..nLeft-1
	allRight  []int // 0..nRight-1
	nullAware bool
	// keyOnly: a Semi/Anti/Mark hash join without a filter only needs to
	// know which keys some probe row has; it marks each key's first build
	// row and spreads the flag along the chain once, in finishProbe.
	keyOnly bool
	// skipMatched: Semi/Anti/Mark joins with a filter (or nested-loop
	// ones) need one TRUE pair per build row; pairs of build rows already
	// matched are not formed again.
	skipMatched bool

	build        *joinBuild
	matched      []bool
	nullMatched  []bool
	rightRows    int64
	rightNullKey bool

	probe    hashtable.Probe
	cur      arrow.RecordBatch // current probe batch
	ids      []uint32          // per probe row: key id or noID
	row      int               // next probe row to pair
	chain    int32             // next build row of row's chain / NLJ: next left row
	inChain  bool
	rMatched []bool  // per probe row of cur (Right/Full/RightSemi/RightAnti)
	rNull    []bool  // per probe row of cur: its key is NULL (null-aware RightAnti)
	outRows  []int32 // probeRowsOut's scratch
	sel      []int32 // startProbe's scratch: the rows whose keys have no NULL
	unmRows  []int32
	unmPos   int
	bIdx     []int32
	pIdx     []int32

	probeDone bool
	tail      []int32 // left rows to emit after probing (Left/Full/Semi/Anti/Mark)
	tailMark  []int8  // Mark: 1 true, 0 false, -1 NULL, per tail row
	tailPos   int
	haveTail  bool
	closed    bool
	released  bool

	// Grace hash join (grace.go): grace is set when the join went to
	// disk; facts and depth are set in the join of one of its partitions.
	grace *graceProbe
	facts *graceFacts
	depth int
}

func NewHashJoin(tc *execop.TaskContext, n *physical.HashJoin, partition int) (execop.Operator, error) {
	if err := checkJoinKeys(n.On); err != nil {
		return nil, err
	}
	if n.Mode == physical.Partitioned && (n.NullAware || n.Type == physical.MarkJoin) {
		return nil, qerr.NotImplementedf("exec/hashjoin: %s join (null_aware=%v) needs the whole right side's NULL keys; plan it with mode CollectLeft", n.Type, n.NullAware)
	}
	if n.Type == physical.RightAntiJoin && n.NullAware && (n.Filter != nil || len(n.On) != 1) {
		// NOT IN with a filter or several keys can be NULL per pair; only
		// the build-side (AntiJoin) form tracks that.
		return nil, qerr.NotImplementedf("exec/hashjoin: null-aware RightAnti join with a filter or %d keys; plan it as AntiJoin", len(n.On))
	}
	j, err := newJoinOp(tc, n.Left, n.Right, n.Type, n.Filter, n.Schema(), partition, "hashjoin")
	if err != nil {
		return nil, err
	}
	j.nullAware = n.NullAware
	j.node = n
	lk := make([]physical.Expr, len(n.On))
	rk := make([]physical.Expr, len(n.On))
	for i, k := range n.On {
		lk[i], rk[i] = k.Left, k.Right
	}
	if j.leftKeys, err = kernel.CompileExprs(lk); err != nil {
		return nil, j.failClose(err)
	}
	if j.rightKeys, err = kernel.CompileExprs(rk); err != nil {
		return nil, j.failClose(err)
	}
	left, leftSc := n.Left, n.Left.Schema()
	j.keyStats.cols, j.keyStats.rows = physical.KeyStats(left, lk)
	if n.Mode == physical.CollectLeft {
		// The probe side is read only after the build: its scan can skip
		// row groups outside the build keys' range.
		ranges := findKeyRangeTarget(tc, n)
		j.shared = tc.Shared(n, func() any { return &joinShared{parts: probeParts(tc, n.Right)} }).(*joinShared)
		makeBuild := func(ctx context.Context) (*joinBuild, error) {
			if limited(tc) && graceable(j.leftKeys) {
				return j.graceBuild(ctx, left, seqInts(left.OutputPartitions()))
			}
			bs, err := execop.CollectAll(ctx, tc, left)
			if err != nil {
				return nil, err
			}
			return j.recordTables(buildJoinSide(ctx, tc, leftSc, bs, j.leftKeys, j.keyStats, j.what, false))
		}
		j.makeBuild = func(ctx context.Context) (*joinBuild, error) {
			jb, err := makeBuild(ctx)
			if err == nil {
				ranges.publish(jb)
			}
			return jb, err
		}
	} else {
		if left.OutputPartitions() != n.Right.OutputPartitions() {
			return nil, j.failClose(qerr.Internalf("exec/hashjoin: partitioned join with %d left and %d right partitions", left.OutputPartitions(), n.Right.OutputPartitions()))
		}
		j.shared = &joinShared{parts: 1}
		j.makeBuild = func(ctx context.Context) (*joinBuild, error) {
			if limited(tc) && graceable(j.leftKeys) {
				return j.graceBuild(ctx, left, []int{partition})
			}
			bs, err := execop.Drain(ctx, tc, left, partition)
			if err != nil {
				return nil, err
			}
			return j.recordTables(buildJoinSide(ctx, tc, leftSc, bs, j.leftKeys, j.keyStats, j.what, false))
		}
	}
	return j, nil
}

// recordTables counts a built side's hash table in the node's EXPLAIN
// ANALYZE figures.
func (j *joinOp) recordTables(jb *joinBuild, err error) (*joinBuild, error) {
	if err == nil && jb.table != nil {
		if m := j.tc.NodeMetrics(j.node); m != nil {
			m.AddTables(jb.table.Figures())
		}
	}
	return jb, err
}

// newJoinOp sets up what hash and nested-loop joins share and builds the
// right (probe) input.
func newJoinOp(tc *execop.TaskContext, left, right physical.Plan, typ physical.JoinType, filter physical.Expr, schema *arrow.Schema, partition int, what string) (*joinOp, error) {
	ls, rs := left.Schema(), right.Schema()
	j := &joinOp{
		tc: tc, typ: typ, what: what, schema: schema, leftSc: ls,
		nLeft: ls.NumFields(), nRight: rs.NumFields(),
		pairSc: arrow.NewSchema(append(append([]arrow.Field{}, ls.Fields()...), rs.Fields()...), nil),
	}
	j.allLeft, j.allRight = seqInts(j.nLeft), seqInts(j.nRight)
	if filter != nil {
		f, err := compileJoinFilter(filter, j.pairSc)
		if err != nil {
			return nil, err
		}
		j.filter = f
		j.fLeft, j.fRight = []int{}, []int{}
		for _, c := range f.cols {
			if c < j.nLeft {
				j.fLeft = append(j.fLeft, c)
			} else {
				j.fRight = append(j.fRight, c-j.nLeft)
			}
		}
	}
	switch typ {
	case physical.SemiJoin, physical.AntiJoin, physical.MarkJoin:
		// newNestedLoopJoin turns keyOnly into skipMatched: it has no keys.
		j.keyOnly = filter == nil
		j.skipMatched = filter != nil
	case physical.RightSemiJoin, physical.RightAntiJoin:
		// Without a filter a probe row's match is its key being found.
		j.keyOnly = filter == nil
	}
	r, err := tc.Build(right, partition)
	if err != nil {
		return nil, err
	}
	j.right = r
	return j, nil
}

// failClose closes what the constructor built and returns err.
func (j *joinOp) failClose(err error) error {
	j.right.Close()
	return err
}

// emitsLeftTail reports whether left rows are emitted after probing.
func (j *joinOp) emitsLeftTail() bool {
	switch j.typ {
	case physical.LeftJoin, physical.FullJoin, physical.SemiJoin, physical.AntiJoin, physical.MarkJoin:
		return true
	}
	return false
}

// emitsProbeRows reports whether, once a probe batch is paired, rows of it
// are output by whether they matched: unmatched ones (Right/Full) padded
// with NULLs, or matched (RightSemi) or unmatched (RightAnti) ones alone.
func (j *joinOp) emitsProbeRows() bool {
	switch j.typ {
	case physical.RightJoin, physical.FullJoin, physical.RightSemiJoin, physical.RightAntiJoin:
		return true
	}
	return false
}

// probeRowsOut lists the rows of the paired batch cur to output
// (emitsProbeRows). A null-aware RightAnti join is NOT IN: against a
// build side with a NULL key no row qualifies, and a row whose key is NULL
// qualifies only against an empty build side.
func (j *joinOp) probeRowsOut() []int32 {
	out := j.outRows[:0] // reused batch to batch; output copies the rows it takes
	defer func() { j.outRows = out[:0] }()
	want := j.typ == physical.RightSemiJoin
	if j.typ == physical.RightAntiJoin && j.nullAware && !j.wholeBuildEmpty() {
		if j.wholeBuildNullKey() {
			return out
		}
		for r, m := range j.rMatched {
			if !m && !j.rNull[r] {
				out = append(out, int32(r))
			}
		}
		return out
	}
	for r, m := range j.rMatched {
		if m == want {
			out = append(out, int32(r))
		}
	}
	return out
}

// emitsPairs reports whether matched pairs are output as they are found.
func (j *joinOp) emitsPairs() bool {
	switch j.typ {
	case physical.InnerJoin, physical.LeftJoin, physical.RightJoin, physical.FullJoin:
		return true
	}
	return false
}

func (j *joinOp) Open(ctx context.Context) error {
	b, err := j.shared.acquire(ctx, j.makeBuild)
	if err != nil {
		return err
	}
	j.build = b
	if b.grace != nil {
		j.grace = &graceProbe{gs: b.grace}
		return j.right.Open(ctx)
	}
	if j.emitsLeftTail() {
		if err := j.tc.Grow(int64(2 * b.n)); err != nil {
			return qerr.Resourcesf("exec/%s: match flags for %d build rows: %w", j.what, b.n, err)
		}
		j.matched = make([]bool, b.n)
		if j.typ == physical.MarkJoin || j.nullAware {
			j.nullMatched = make([]bool, b.n)
		}
	}
	return j.right.Open(ctx)
}

func (j *joinOp) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if j.closed {
		return nil, qerr.Internalf("exec/%s: Next after Close", j.what)
	}
	if j.build == nil {
		return nil, qerr.Internalf("exec/%s: Next before a successful Open", j.what)
	}
	if j.grace != nil {
		return j.graceNext(ctx)
	}
	bs := j.tc.BatchRows()
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if j.probeDone {
			return j.nextTail(ctx, bs)
		}
		if j.cur == nil {
			b, err := j.right.Next(ctx)
			if err == io.EOF {
				j.finishProbe()
				continue
			}
			if err != nil {
				return nil, err
			}
			if err := j.startProbe(ctx, b); err != nil {
				return nil, err
			}
			continue
		}
		if j.row < int(j.cur.NumRows()) {
			out, err := j.pairs(ctx, bs)
			if err != nil || out != nil {
				return out, err
			}
			continue
		}
		// cur is fully paired: the probe rows output by whether they
		// matched, then the next batch.
		if j.emitsProbeRows() {
			if j.unmRows == nil {
				j.unmRows = j.probeRowsOut()
			}
			if j.unmPos < len(j.unmRows) {
				end := min(j.unmPos+bs, len(j.unmRows))
				out, err := j.output(ctx, nil, j.unmRows[j.unmPos:end], nil)
				j.unmPos = end
				return out, err
			}
		}
		j.cur.Release()
		j.cur = nil
	}
}

// startProbe takes over b as the current probe batch and finds each row's
// key id.
func (j *joinOp) startProbe(ctx context.Context, b arrow.RecordBatch) error {
	n := int(b.NumRows())
	j.rightRows += int64(n)
	if n == 0 {
		b.Release()
		return nil
	}
	j.cur = b
	j.row, j.chain, j.inChain = 0, 0, false
	j.unmRows, j.unmPos = nil, 0
	if j.emitsProbeRows() {
		j.rMatched = kernel.GrowSlice(j.rMatched[:0], n)
		clear(j.rMatched)
	}
	trackNull := j.typ == physical.RightAntiJoin && j.nullAware
	if trackNull {
		j.rNull = kernel.GrowSlice(j.rNull[:0], n)
		clear(j.rNull)
	}
	if j.nested {
		return nil
	}
	keys, err := kernel.EvalAll(ctx, j.tc.Mem, j.rightKeys, b)
	if err != nil {
		return err
	}
	defer kernel.ReleaseArrays(keys)
	j.ids = kernel.GrowSlice(j.ids[:0], n)
	hasNull := false
	for _, k := range keys {
		if k.NullN() == 0 {
			continue
		}
		j.rightNullKey = true
		if !hasNull {
			clear(j.ids[:n])
			hasNull = true
		}
		bits, off := kernel.ValidBits(k)
		for r := 0; r < n; r++ {
			if (off+r)&7 == 0 && r+8 <= n && bits[(off+r)>>3] == 0xFF {
				r += 7 // eight valid keys
				continue
			}
			if !bitutil.BitIsSet(bits, off+r) {
				j.ids[r] = hashtable.NoID
				if trackNull {
					j.rNull[r] = true
				}
			}
		}
	}
	var sel []int32
	if hasNull {
		// Non-nil even when empty: an empty selection finds nothing.
		sel = kernel.Scratch(j.sel, n)[:0]
		for r, id := range j.ids[:n] {
			if id != hashtable.NoID {
				sel = append(sel, int32(r))
			}
		}
		j.sel = sel
	}
	j.build.table.Find(&j.probe, keys, n, sel, j.ids)
	return nil
}

// pairs produces up to bs candidate pairs of cur, filters them and returns
// the output batch of the matches (nil if this chunk outputs nothing).
func (j *joinOp) pairs(ctx context.Context, bs int) (arrow.RecordBatch, error) {
	n := int(j.cur.NumRows())
	if j.keyOnly {
		if j.rMatched != nil {
			for r, id := range j.ids[:n] {
				j.rMatched[r] = id != hashtable.NoID
			}
			j.row = n
			return nil, nil
		}
		j.matchKeys(n)
		return nil, nil
	}
	bIdx, pIdx := kernel.Scratch(j.bIdx, bs), kernel.Scratch(j.pIdx, bs)
	var k int
	switch {
	case j.nested:
		k = j.nestedPairs(bIdx, pIdx, n)
	case j.build.unique:
		k = j.uniquePairs(bIdx, pIdx, n)
	default:
		k = j.chainPairs(bIdx, pIdx, n)
	}
	j.bIdx, j.pIdx = bIdx, pIdx
	if k == 0 {
		return nil, nil
	}
	bIdx, pIdx = bIdx[:k], pIdx[:k]
	if j.filter != nil {
		var err error
		if bIdx, pIdx, err = j.applyFilter(ctx, bIdx, pIdx); err != nil {
			return nil, err
		}
	}
	if j.matched != nil {
		for _, b := range bIdx {
			j.matched[b] = true
		}
	}
	if j.rMatched != nil {
		for _, p := range pIdx {
			j.rMatched[p] = true
		}
	}
	if !j.emitsPairs() || len(pIdx) == 0 {
		return nil, nil
	}
	return j.output(ctx, bIdx, pIdx, nil)
}

// matchKeys (keyOnly) marks, for every probe row of cur from j.row on with
// a key in the table, the first build row of that key; finishProbe marks
// the rest of each chain.
func (j *joinOp) matchKeys(n int) {
	head, ids, m := j.build.head, j.ids[:n], j.matched
	for _, id := range ids[j.row:] {
		if id != hashtable.NoID {
			m[head[id]] = true
		}
	}
	j.row = n
}

// spreadKeyMatches (keyOnly) marks every build row whose chain head
// matchKeys marked.
func (j *joinOp) spreadKeyMatches() {
	if j.build.unique || j.build.table == nil {
		return
	}
	m, next := j.matched, j.build.next
	for _, h := range j.build.head {
		if h >= 0 && m[h] {
			for r := next[h]; r >= 0; r = next[r] {
				m[r] = true
			}
		}
	}
}

// uniquePairs fills bIdx, pIdx (len ≥ 1) with the next pairs of cur when
// every key has one build row: no chain to walk, and the probe rows come
// out strictly increasing. It returns the pair count.
func (j *joinOp) uniquePairs(bIdx, pIdx []int32, n int) int {
	head, ids := j.build.head, j.ids[:n]
	k, r := 0, j.row
	if j.skipMatched {
		m := j.matched
		for ; r < n && k < len(pIdx); r++ {
			if id := ids[r]; id != hashtable.NoID && !m[head[id]] {
				bIdx[k], pIdx[k] = head[id], int32(r)
				k++
			}
		}
	} else {
		for ; r < n && k < len(pIdx); r++ {
			if id := ids[r]; id != hashtable.NoID {
				bIdx[k], pIdx[k] = head[id], int32(r)
				k++
			}
		}
	}
	j.row = r
	return k
}

// chainPairs fills bIdx, pIdx with the next pairs of cur by walking each
// probe row's chain of build rows (resumable mid-chain) and returns the
// pair count. With skipMatched, build rows already matched are passed over.
func (j *joinOp) chainPairs(bIdx, pIdx []int32, n int) int {
	head, next := j.build.head, j.build.next
	var skip []bool
	if j.skipMatched {
		skip = j.matched
	}
	k, bs := 0, len(pIdx)
	for k < bs && j.row < n {
		if !j.inChain {
			id := j.ids[j.row]
			if id == hashtable.NoID {
				j.row++
				continue
			}
			j.chain, j.inChain = head[id], true
		}
		for j.chain >= 0 && k < bs {
			c := j.chain
			j.chain = next[c]
			if skip != nil && skip[c] {
				continue
			}
			bIdx[k], pIdx[k] = c, int32(j.row)
			k++
		}
		if j.chain < 0 {
			j.inChain = false
			j.row++
		}
	}
	return k
}

// nestedPairs fills bIdx, pIdx with the next (left row, probe row) pairs of
// the cross product and returns the pair count.
func (j *joinOp) nestedPairs(bIdx, pIdx []int32, n int) int {
	nb := int32(j.build.n)
	var skip []bool
	if j.skipMatched {
		skip = j.matched
	}
	k, bs := 0, len(pIdx)
	for k < bs && j.row < n {
		for j.chain < nb && k < bs {
			c := j.chain
			j.chain++
			if skip != nil && skip[c] {
				continue
			}
			bIdx[k], pIdx[k] = c, int32(j.row)
			k++
		}
		if j.chain >= nb {
			j.chain = 0
			j.row++
		}
	}
	return k
}

// applyFilter evaluates the join filter over the pairs and keeps those where
// it is TRUE (compacting bIdx and pIdx in place); pairs where it is NULL
// mark their build row in nullMatched (mark semantics). Only the columns
// the filter references are gathered.
func (j *joinOp) applyFilter(ctx context.Context, bIdx, pIdx []int32) ([]int32, []int32, error) {
	f := j.filter
	cols := make([]arrow.Array, 0, len(f.cols))
	defer func() { kernel.ReleaseArrays(cols) }()
	var err error
	if cols, err = pickColumns(ctx, j.tc, cols, j.build.cols, j.fLeft, bIdx); err != nil {
		return nil, nil, err
	}
	if cols, err = pickColumns(ctx, j.tc, cols, j.cur.Columns(), j.fRight, pIdx); err != nil {
		return nil, nil, err
	}
	pb := array.NewRecordBatch(f.schema, cols, int64(len(pIdx)))
	defer pb.Release()
	res, err := f.run.Eval(ctx, j.tc.Mem, pb)
	if err != nil {
		return nil, nil, err
	}
	defer res.Release()
	mask, ok := res.(*array.Boolean)
	if !ok {
		return nil, nil, qerr.Internalf("exec/%s: filter returned %s, not boolean", j.what, res.DataType())
	}
	k := 0
	hasNulls := mask.NullN() > 0
	for i := range pIdx {
		if hasNulls && mask.IsNull(i) {
			if j.nullMatched != nil {
				j.nullMatched[bIdx[i]] = true
			}
			continue
		}
		if mask.Value(i) {
			bIdx[k], pIdx[k] = bIdx[i], pIdx[i]
			k++
		}
	}
	return bIdx[:k], pIdx[:k], nil
}

// takeColumns returns cols taken at idx (one kernel call per column).
func takeColumns(ctx context.Context, tc *execop.TaskContext, cols []arrow.Array, idx []int32) ([]arrow.Array, error) {
	out := make([]arrow.Array, 0, len(cols))
	for _, c := range cols {
		a, err := kernel.TakeArray(ctx, tc.Mem, c, idx)
		if err != nil {
			kernel.ReleaseArrays(out)
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}

// nullColumns returns all-NULL columns of the fields' types, n rows each.
func nullColumns(tc *execop.TaskContext, fields []arrow.Field, n int) []arrow.Array {
	out := make([]arrow.Array, len(fields))
	for i, f := range fields {
		out[i] = array.MakeArrayOfNull(tc.Mem, f.Type, n)
	}
	return out
}

// output builds an output batch: left columns taken at bIdx (nil: NULLs),
// right columns taken at pIdx from cur (nil: NULLs), and for Mark joins the
// mark column from mark (1 true, 0 false, -1 NULL). Semi/Anti/Mark output
// only left columns, RightSemi/RightAnti only right ones.
func (j *joinOp) output(ctx context.Context, bIdx, pIdx []int32, mark []int8) (arrow.RecordBatch, error) {
	n := max(len(bIdx), len(pIdx), len(mark))
	cols := make([]arrow.Array, 0, j.schema.NumFields())
	defer func() { kernel.ReleaseArrays(cols) }()
	var err error
	switch {
	case j.typ == physical.RightSemiJoin || j.typ == physical.RightAntiJoin:
	case bIdx != nil:
		if cols, err = pickColumns(ctx, j.tc, cols, j.build.cols, j.allLeft, bIdx); err != nil {
			return nil, err
		}
	default:
		cols = append(cols, nullColumns(j.tc, j.leftSc.Fields(), n)...)
	}
	switch j.typ {
	case physical.SemiJoin, physical.AntiJoin:
	case physical.MarkJoin:
		vals := make([]bool, n)
		valid := make([]bool, n)
		for i, m := range mark {
			vals[i], valid[i] = m == 1, m >= 0
		}
		cols = append(cols, kernel.MakeBool(&kernel.ArrayMaker{Mem: j.tc.Mem}, vals, valid))
	default:
		if pIdx != nil {
			if cols, err = pickColumns(ctx, j.tc, cols, j.cur.Columns(), j.allRight, pIdx); err != nil {
				return nil, err
			}
		} else {
			cols = append(cols, nullColumns(j.tc, j.pairSc.Fields()[j.nLeft:], n)...)
		}
	}
	return array.NewRecordBatch(j.schema, cols, int64(n)), nil
}

// finishProbe merges this partition's findings; the last partition then
// decides which left rows to emit.
func (j *joinOp) finishProbe() {
	j.probeDone = true
	if !j.emitsLeftTail() {
		return
	}
	if j.keyOnly {
		j.spreadKeyMatches()
	}
	last := j.shared.finish(j.matched, j.nullMatched, j.rightRows, j.rightNullKey)
	if !last {
		return
	}
	s := j.shared
	// Reading s.matched without the lock is safe: every other partition has
	// finished writing (finished == parts) before we got here.
	b := j.build
	rightEmpty := j.wholeRightEmpty()
	for r := 0; r < b.n; r++ {
		m := s.matched[r]
		switch j.typ {
		case physical.LeftJoin, physical.FullJoin:
			if !m {
				j.tail = append(j.tail, int32(r))
			}
		case physical.SemiJoin:
			if m {
				j.tail = append(j.tail, int32(r))
			}
		case physical.AntiJoin:
			if !m && (!j.nullAware || j.markOf(r, m, rightEmpty) == 0) {
				j.tail = append(j.tail, int32(r))
			}
		case physical.MarkJoin:
			j.tail = append(j.tail, int32(r))
			j.tailMark = append(j.tailMark, j.markOf(r, m, rightEmpty))
		}
	}
	j.haveTail = true
}

// markOf is SQL's `key IN (right keys)` for left row r: true (1) on a match;
// else NULL (-1) if the right side is non-empty and the comparison may be
// NULL (r's key is NULL, some right key is NULL, or a key-equal pair's
// filter was NULL); else false (0).
func (j *joinOp) markOf(r int, matched, rightEmpty bool) int8 {
	s := j.shared
	switch {
	case matched:
		return 1
	case rightEmpty:
		return 0
	case s.nullMatched != nil && s.nullMatched[r]:
		return -1
	case j.nested:
		return 0
	case j.wholeRightNullKey(), j.build.keyNull != nil && j.build.keyNull[r]:
		return -1
	}
	return 0
}

// nextTail emits the left-side rows in batches.
func (j *joinOp) nextTail(ctx context.Context, bs int) (arrow.RecordBatch, error) {
	if !j.haveTail || j.tailPos >= len(j.tail) {
		return nil, io.EOF
	}
	end := min(j.tailPos+bs, len(j.tail))
	var mark []int8
	if j.tailMark != nil {
		mark = j.tailMark[j.tailPos:end]
	}
	out, err := j.output(ctx, j.tail[j.tailPos:end], nil, mark)
	j.tailPos = end
	return out, err
}

func (j *joinOp) Close() error {
	if j.closed {
		return nil
	}
	j.closed = true
	if j.cur != nil {
		j.cur.Release()
		j.cur = nil
	}
	if j.matched != nil {
		j.tc.Shrink(int64(2 * len(j.matched)))
	}
	err := j.right.Close()
	if j.grace != nil {
		if gerr := j.grace.close(j.tc); err == nil {
			err = gerr
		}
	}
	j.shared.release(j.tc, j.build != nil)
	j.build = nil
	// The per-batch scratch is kept from batch to batch; drop it with the
	// operator.
	j.ids, j.sel, j.outRows, j.bIdx, j.pIdx = nil, nil, nil, nil, nil
	j.rMatched, j.rNull, j.probe = nil, nil, hashtable.Probe{}
	return err
}

// seqInts returns 0, 1, ..., n-1.
func seqInts(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}
