package join

import (
	"context"
	"io"
	"math"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver/exec/execop"
	"github.com/quiverdb/quiver/exec/kernel"
	"github.com/quiverdb/quiver/exec/spill"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
	"golang.org/x/sync/errgroup"
)

// Grace hash join. Under a memory limit a hash join collects its build
// side batch by batch as a spillable consumer (an execop.Spiller) and
// watches the room left in its fair share of the limits. When the rows
// held, their concatenated copy and the hash table would not fit in about
// half of it (or building the table fails at the limit anyway), it stops
// and goes to disk:
//
//	build rows held + the rest of the left input ──split by key hash──► L0..L15
//	the whole right input                         ──split by key hash──► R0..R15
//	for p in 0..15: join Lp with Rp as an ordinary hash join
//
// Equal keys hash equally, so every match lies within one pair (Lp, Rp),
// and each partition's join emits what the whole join would for its rows:
// its pairs, its unmatched rows of either side, its Semi/Anti/Mark rows.
// Rows with a NULL key never match and land in whichever partition their
// hash picks. What a partition cannot see is kept for it in graceFacts:
// whether the whole right side is empty or has a NULL key (Mark and
// null-aware Anti joins) and whether the whole build side is empty or has
// a NULL key (null-aware RightAnti).
//
// A partition whose build side still does not fit is split again the same
// way by the next four bits of the hash, up to graceMaxDepth levels; past
// that (one key with more rows than the limit can hold) the join fails
// with a Resources error that says so. The file is picked by bits of the
// hash multiplied by an odd constant, taken from the top down one nibble
// per level: the exchange that partitioned the join's inputs used the hash
// modulo the partition count, so the rows of one input partition still
// spread over every file.
//
// A build side shared by several probe partitions (CollectLeft with the
// partitions of a whole stage in one task) is split once and shared the
// same way: each probe partition splits its own input, then joins the
// partitions in order; partition p's build is made once, by the first
// probe partition to reach it, and its left-side rows are emitted by the
// last to finish it, as for any shared build side.
//
// Spill files are spill.Files under the work dir, counted in the join's
// SpilledBytes; a probe partition's files are removed once each partition
// is joined, the build files when the last probe partition closes (at
// once when there is one), and Close removes any left.

const (
	// gracePartitions is how many files each side is split into per level.
	gracePartitions = 16
	graceBits       = 4 // log2(gracePartitions)
	// graceMaxDepth is how many times a partition may be split again.
	graceMaxDepth = 4
	// graceMul spreads the hash's bits before a level's nibble is taken.
	graceMul = 0xC2B2AE3D27D4EB4F
	// graceFactor: spill once the room left in the build's share is below
	// this many times what building the table in memory would take,
	// leaving the rest to probing.
	graceFactor = 2
	// graceMinBytes: a build side smaller than this is not spilled on the
	// headroom estimate (it fails at the limit only if building it does).
	graceMinBytes = 64 << 10
	// graceRowBytes is the per-row memory of a build beyond its columns:
	// match flags, chains and the hash table's slots.
	graceRowBytes = 40
)

// graceFacts are facts about the whole join that one partition's join
// cannot see. The build side's are written before the build is shared;
// the probe side's are added by every probe partition as it splits its
// input, and are final before any partition's left-side rows are decided
// (the last probe partition to finish a partition decides them, and each
// splits all its input before joining any partition).
type graceFacts struct {
	buildRows    int64
	buildNullKey bool
	rightRows    atomic.Int64
	rightNullKey atomic.Bool
}

// graceSpill is the build side of a join that went to disk, shared like
// any build side by the probe partitions of its node: the build rows split
// into files, and per partition the joinShared its partition joins share.
type graceSpill struct {
	tc      *execop.TaskContext
	op      *joinOp // the join that split it: its build settings make partitions again
	depth   int
	parts   int // probe partitions sharing it
	facts   *graceFacts
	ownFact bool // this level counts the facts (the top level)
	left    []*spill.File

	mu   sync.Mutex
	subs []*joinShared // per partition, made on first use
}

// sub is partition p's joinShared. Shared by several probe partitions,
// whose turns at it may be far apart, its build is held only while one of
// them uses it: remake makes it again from the file, in memory, as it
// was made the first time.
func (gs *graceSpill) sub(p int) *joinShared {
	gs.mu.Lock()
	defer gs.mu.Unlock()
	if gs.subs == nil {
		gs.subs = make([]*joinShared, len(gs.left))
	}
	if gs.subs[p] == nil {
		s := &joinShared{parts: gs.parts}
		if gs.parts > 1 {
			s.remake = func(ctx context.Context) (*joinBuild, error) { return gs.remake(ctx, p, len(s.matched)) }
		}
		gs.subs[p] = s
	}
	return gs.subs[p]
}

// remake reads partition p's build file again and builds it in memory.
func (gs *graceSpill) remake(ctx context.Context, p, rows int) (*joinBuild, error) {
	read, err := gs.left[p].Reader()
	if err != nil {
		return nil, err
	}
	var bs []arrow.RecordBatch
	for {
		b, err := read(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			execop.ReleaseAll(bs)
			return nil, err
		}
		bs = append(bs, b)
	}
	jb, err := gs.op.recordTables(gs.op.buildInMemory(ctx, bs, true))
	if err != nil {
		return nil, err
	}
	if jb.n != rows {
		jb.release(gs.tc)
		return nil, qerr.Internalf("exec/%s: a spilled partition's build side came back with %d rows, not %d", gs.op.what, jb.n, rows)
	}
	return jb, nil
}

// close removes the build files and frees the partitions' builds; the
// last probe partition to close calls it. A partition's build is freed by
// the last probe partition to close its join, but probe partitions that
// stopped early (an error, a LIMIT) never reach some partitions of a
// deeper split, whose builds only this frees.
func (gs *graceSpill) close() error {
	gs.mu.Lock()
	subs := gs.subs
	gs.subs = nil
	gs.mu.Unlock()
	for _, s := range subs {
		if s != nil {
			s.drop(gs.tc)
		}
	}
	return spill.RemoveAll(gs.left)
}

// graceProbe is one probe partition of a join that went to disk: its probe
// rows split into files, and the partition being joined.
type graceProbe struct {
	gs    *graceSpill
	right []*spill.File
	split bool // the probe input has been split
	next  int  // next partition to join
	sub   *joinOp
	sp    graceSplitter
}

// graceSplitter's scratch is reused batch to batch.
type graceSplitter struct {
	hashes []uint64
	rows   [][]int32
}

// graceable reports whether a hash join with these keys may go to disk:
// every key must be hashable.
func graceable(keys []kernel.ExprRunner) bool {
	for _, k := range keys {
		if !hashableKey(k.Type) {
			return false
		}
	}
	return true
}

// hashableKey lists the types kernel.HashColumns hashes.
func hashableKey(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.BOOL, arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64,
		arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64,
		arrow.FLOAT32, arrow.FLOAT64, arrow.DECIMAL128, arrow.STRING, arrow.LARGE_STRING,
		arrow.BINARY, arrow.LARGE_BINARY, arrow.DATE32, arrow.DATE64, arrow.TIMESTAMP:
		return true
	}
	return false
}

// limited reports whether a memory limit applies to the task.
func limited(tc *execop.TaskContext) bool { return tc.Headroom() < math.MaxInt64/4 }

// mustGrace reports whether a build side of bytes in rows rows, held now
// (and reported to mem), should go to disk rather than be indexed in memory.
func mustGrace(mem *execop.Spiller, bytes, rows int64) bool {
	return bytes >= graceMinBytes && mem.Room() < graceFactor*(bytes+graceRowBytes*rows)
}

// collectBuild reads the build side from next (io.EOF at its end) and
// builds it in memory, or splits it and the probe side to disk (the
// joinBuild then carries only the graceState). part, if set, is the input
// partition of the batch next returned last: an in-memory build holds
// its rows in partition order, as execop.CollectAll returns them, so
// that a join's output order does not depend on which partition came
// first.
func (j *joinOp) collectBuild(ctx context.Context, next func(context.Context) (arrow.RecordBatch, error), part func() int) (*joinBuild, error) {
	var held []arrow.RecordBatch
	var parts []int
	defer func() { execop.ReleaseAll(held) }()
	// The build side is spillable while it is collected; once indexed in
	// memory or split to disk it is not.
	mem := j.tc.NewSpiller()
	defer mem.Close()
	var bytes, rows int64
	for {
		b, err := next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		held = append(held, b)
		if part != nil {
			parts = append(parts, part())
		}
		bytes += spill.Bytes(b)
		rows += b.NumRows()
		mem.SetHeld(bytes)
		if mustGrace(mem, bytes, rows) {
			mem.Close()
			h := held
			held = nil
			return j.startGrace(ctx, h, next)
		}
	}
	if part != nil {
		byPartition(held, parts)
	}
	for _, b := range held {
		b.Retain() // buildJoinSide releases one reference; held keeps one for a retry on disk
	}
	jb, err := j.buildInMemory(ctx, held, j.depth > 0)
	if err == nil {
		// The held batches, their concatenated copy (of more than one) and
		// the table.
		copied := bytes
		if len(held) == 1 {
			copied = 0
		}
		mem.SetHeld(bytes + copied + jb.bytes)
	}
	if err == nil && bytes >= graceMinBytes && mem.Room() < jb.bytes+bytes {
		// It fit, but took more than it left for the rest of the query
		// (a hash table's layout can take far more than the per-row
		// estimate above): the rule of graceFactor, with the real size.
		jb.release(j.tc)
		jb, err = nil, qerr.Resourcesf("exec/%s: build side too large for the room left", j.what)
	}
	mem.Close()
	if err == nil || !qerr.Is(err, qerr.Resources) {
		return j.recordTables(jb, err)
	}
	h := held
	held = nil
	return j.startGrace(ctx, h, func(context.Context) (arrow.RecordBatch, error) { return nil, io.EOF })
}

// byPartition orders batches by their partitions, keeping the order of
// each partition's batches.
func byPartition(batches []arrow.RecordBatch, parts []int) {
	idx := make([]int, len(batches))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return parts[idx[a]] < parts[idx[b]] })
	sorted := make([]arrow.RecordBatch, len(batches))
	for i, k := range idx {
		sorted[i] = batches[k]
	}
	copy(batches, sorted)
}

// buildInMemory is buildJoinSide with an allocation over the limit turned
// into its Resources error, so that the caller can go to disk instead.
func (j *joinOp) buildInMemory(ctx context.Context, batches []arrow.RecordBatch, spread bool) (jb *joinBuild, err error) {
	defer recoverLimit(&err, j.what)
	return buildJoinSide(ctx, j.tc, j.leftSc, batches, j.leftKeys, j.keyStats, j.what, spread)
}

// startGrace splits held (taken over) and the rest of next into build
// files and returns the joinBuild that carries them.
func (j *joinOp) startGrace(ctx context.Context, held []arrow.RecordBatch, next func(context.Context) (arrow.RecordBatch, error)) (_ *joinBuild, err error) {
	defer func() { execop.ReleaseAll(held) }()
	var rows, bytes int64
	for _, b := range held {
		rows += b.NumRows()
		bytes += spill.Bytes(b)
	}
	if j.depth >= graceMaxDepth {
		return nil, qerr.Resourcesf("exec/%s: a build partition of %d rows (at least %d bytes) still does not fit under the memory limit after splitting it %d times by key hash (a join key with that many rows?); raise quiver.memory_limit",
			j.what, rows, bytes, graceMaxDepth)
	}
	gs := &graceSpill{tc: j.tc, op: j, depth: j.depth, parts: j.shared.parts, facts: j.facts}
	if gs.facts == nil {
		gs.facts, gs.ownFact = &graceFacts{}, true
	}
	defer func() {
		if err != nil {
			gs.close()
		}
	}()
	if gs.left, err = createFiles(j, j.leftSc, "hashjoin-build"); err != nil {
		return nil, err
	}
	var sp graceSplitter
	write := func(b arrow.RecordBatch) error {
		defer b.Release()
		nullKey, err := sp.write(ctx, j, b, j.leftKeys, gs.left, gs.depth)
		if gs.ownFact {
			gs.facts.buildRows += b.NumRows()
			gs.facts.buildNullKey = gs.facts.buildNullKey || nullKey
		}
		return err
	}
	for len(held) > 0 {
		b := held[0]
		held = held[1:]
		if err := write(b); err != nil {
			return nil, err
		}
	}
	for {
		b, err := next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if err := write(b); err != nil {
			return nil, err
		}
	}
	for _, f := range gs.left {
		if err := f.Finish(); err != nil {
			return nil, err
		}
	}
	return &joinBuild{grace: gs}, nil
}

// createFiles starts one spill file per partition.
func createFiles(j *joinOp, schema *arrow.Schema, what string) ([]*spill.File, error) {
	files := make([]*spill.File, 0, gracePartitions)
	for range gracePartitions {
		f, err := spill.Create(j.tc, j.node, schema, what)
		if err != nil {
			spill.RemoveAll(files)
			return nil, err
		}
		files = append(files, f)
	}
	return files, nil
}

// write appends each row of b (the caller keeps it) to the file of its
// key hash at level depth, and reports whether some key was NULL. An
// allocation over the limit is returned as its error, with what was made
// released.
func (sp *graceSplitter) write(ctx context.Context, j *joinOp, b arrow.RecordBatch, keys []kernel.ExprRunner, files []*spill.File, depth int) (nullKey bool, err error) {
	defer recoverLimit(&err, j.what)
	n := int(b.NumRows())
	if n == 0 {
		return false, nil
	}
	kcols, err := kernel.EvalAll(ctx, j.tc.Mem, keys, b)
	if err != nil {
		return false, err
	}
	defer kernel.ReleaseArrays(kcols)
	for _, k := range kcols {
		nullKey = nullKey || k.NullN() > 0
	}
	sp.hashes = kernel.Resize(sp.hashes, n)
	kernel.HashColumns(kcols, sp.hashes)
	if sp.rows == nil {
		sp.rows = make([][]int32, gracePartitions)
	}
	for p := range sp.rows {
		sp.rows[p] = sp.rows[p][:0]
	}
	shift := uint(64 - graceBits*(depth+1))
	for r, h := range sp.hashes {
		p := ((h * graceMul) >> shift) & (gracePartitions - 1)
		sp.rows[p] = append(sp.rows[p], int32(r))
	}
	for p, rows := range sp.rows {
		if len(rows) == 0 {
			continue
		}
		if err := writeRows(ctx, j, b, rows, files[p]); err != nil {
			return nullKey, err
		}
	}
	return nullKey, nil
}

// writeRows appends rows of b to f.
func writeRows(ctx context.Context, j *joinOp, b arrow.RecordBatch, rows []int32, f *spill.File) error {
	if len(rows) == int(b.NumRows()) {
		return f.Write(b)
	}
	part, err := kernel.TakeBatch(ctx, j.tc.Mem, b.Schema(), b, rows)
	if err != nil {
		return err
	}
	defer part.Release()
	return f.Write(part)
}

// recoverLimit turns a panic of an allocation over the memory limit into
// its Resources error (deferred releases have run); any other panic goes on.
func recoverLimit(err *error, what string) {
	if r := recover(); r != nil {
		if _, ok := r.(*execop.LimitError); !ok {
			panic(r)
		}
		*err = execop.PanicError(r, "exec/"+what)
	}
}

// graceNext is Next of a join that went to disk: the probe side is split
// on the first call, then the partitions are joined one after another.
func (j *joinOp) graceNext(ctx context.Context) (arrow.RecordBatch, error) {
	g := j.grace
	if !g.split {
		if err := j.splitProbe(ctx); err != nil {
			return nil, err
		}
	}
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if g.sub != nil {
			b, err := g.sub.Next(ctx)
			if err != io.EOF {
				return b, err
			}
			err = g.sub.Close()
			g.sub = nil
			if err != nil {
				return nil, err
			}
			// The partition is joined: give its disk back now.
			p := g.next - 1
			if err := g.right[p].Remove(); err != nil {
				return nil, err
			}
			if g.gs.parts == 1 {
				if err := g.gs.left[p].Remove(); err != nil {
					return nil, err
				}
			}
		}
		if g.next >= len(g.gs.left) {
			return nil, io.EOF
		}
		p := g.next
		g.next++
		if !j.partitionOutputs(g.gs.left[p].Rows(), g.right[p].Rows(), g.gs.parts > 1) {
			continue
		}
		sub, err := j.partitionJoin(ctx, p)
		if err != nil {
			return nil, err
		}
		g.sub = sub
	}
}

// splitProbe writes the whole probe input to the right-side files.
func (j *joinOp) splitProbe(ctx context.Context) error {
	g := j.grace
	var err error
	if g.right, err = createFiles(j, j.rightSchema(), "hashjoin-probe"); err != nil {
		return err
	}
	for {
		b, err := j.right.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		n := b.NumRows()
		nullKey, err := g.sp.write(ctx, j, b, j.rightKeys, g.right, g.gs.depth)
		b.Release()
		if g.gs.ownFact {
			g.gs.facts.rightRows.Add(n)
			if nullKey {
				g.gs.facts.rightNullKey.Store(true)
			}
		}
		if err != nil {
			return err
		}
	}
	for _, f := range g.right {
		if err := f.Finish(); err != nil {
			return err
		}
	}
	g.split = true
	return nil
}

// rightSchema is the probe input's schema.
func (j *joinOp) rightSchema() *arrow.Schema {
	return arrow.NewSchema(j.pairSc.Fields()[j.nLeft:], nil)
}

// partitionOutputs reports whether a partition with these row counts can
// output anything: pairs need both sides; a side's own rows need that
// side. When several probe partitions share the build, each must join
// every partition the others join (the last to finish one emits its
// left-side rows, the last to close frees its build), so only what all
// of them see, the build side's rows, may skip one.
func (j *joinOp) partitionOutputs(leftRows, rightRows int64, shared bool) bool {
	switch {
	case leftRows == 0 && !j.emitsProbeRows():
		return false
	case shared:
		return true
	case leftRows == 0 && rightRows == 0:
		return false
	case rightRows == 0:
		return j.emitsLeftTail()
	}
	return true
}

// partitionJoin opens the join of partition p: a joinOp of the same kind
// whose build side is read from the partition's build file (by whichever
// probe partition gets there first; it may go to disk again, one level
// deeper) and whose probe side is this probe partition's file.
func (j *joinOp) partitionJoin(ctx context.Context, p int) (*joinOp, error) {
	g := j.grace
	rread, err := g.right[p].Reader()
	if err != nil {
		return nil, err
	}
	sub := &joinOp{
		tc: j.tc, typ: j.typ, what: j.what, node: j.node, schema: j.schema, pairSc: j.pairSc, leftSc: j.leftSc,
		nLeft: j.nLeft, nRight: j.nRight, leftKeys: j.leftKeys, rightKeys: j.rightKeys,
		filter: j.filter, fLeft: j.fLeft, fRight: j.fRight, allLeft: j.allLeft, allRight: j.allRight,
		nullAware: j.nullAware, keyOnly: j.keyOnly, skipMatched: j.skipMatched,
		shared: g.gs.sub(p), right: spill.NewSource(rread),
		facts: g.gs.facts, depth: g.gs.depth + 1,
	}
	left := g.gs.left[p]
	sub.makeBuild = func(ctx context.Context) (*joinBuild, error) {
		lread, err := left.Reader()
		if err != nil {
			return nil, err
		}
		return sub.collectBuild(ctx, lread, nil)
	}
	if err := sub.Open(ctx); err != nil {
		sub.Close()
		return nil, err
	}
	return sub, nil
}

// close ends the partition being joined, leaves the partitions not
// reached (so that their shared builds are freed when the others are
// done) and removes this probe partition's files.
func (g *graceProbe) close(tc *execop.TaskContext) error {
	var first error
	if g.sub != nil {
		first = g.sub.Close()
		g.sub = nil
	}
	if g.gs.parts > 1 {
		for p := g.next; p < len(g.gs.left); p++ {
			g.gs.sub(p).release(tc, false)
		}
		g.next = len(g.gs.left)
	}
	if err := spill.RemoveAll(g.right); err != nil && first == nil {
		first = err
	}
	return first
}

// The whole join's facts, from graceFacts in a partition's join.

func (j *joinOp) wholeRightEmpty() bool {
	if j.facts != nil {
		return j.facts.rightRows.Load() == 0
	}
	return j.shared.rightRows == 0
}

func (j *joinOp) wholeRightNullKey() bool {
	if j.facts != nil {
		return j.facts.rightNullKey.Load()
	}
	return j.shared.rightNullKey
}

func (j *joinOp) wholeBuildEmpty() bool {
	if j.facts != nil {
		return j.facts.buildRows == 0
	}
	return j.build.n == 0
}

func (j *joinOp) wholeBuildNullKey() bool {
	if j.facts != nil {
		return j.facts.buildNullKey
	}
	return j.build.keyNull != nil
}

// planSource yields the batches of partitions of p as they come, every
// partition running in its own goroutine as execop.CollectAll runs them
// (the partitions of an exchange must be drained together). It owns the
// goroutines: they end at their partition's end or error, or when close
// cancels them; close waits for them and releases what they sent that
// was not taken.
type planSource struct {
	ch     chan partBatch
	last   int // the partition of the batch next returned last
	cancel context.CancelFunc
	err    error // the first partition's error, written before ch is closed
}

func startPlanSource(ctx context.Context, tc *execop.TaskContext, p physical.Plan, parts []int) *planSource {
	cctx, cancel := context.WithCancel(ctx)
	g, gctx := errgroup.WithContext(cctx)
	s := &planSource{ch: make(chan partBatch, len(parts)), cancel: cancel}
	for _, i := range parts {
		g.Go(func() (err error) {
			defer execop.RecoverRoot(&err, "partition of "+p.String())
			op, err := tc.Build(p, i)
			if err != nil {
				return err
			}
			defer func() {
				if cerr := op.Close(); err == nil && cerr != nil {
					err = cerr
				}
			}()
			if err := op.Open(gctx); err != nil {
				return err
			}
			for {
				b, err := op.Next(gctx)
				if err == io.EOF {
					return nil
				}
				if err != nil {
					return err
				}
				select {
				case s.ch <- partBatch{b, i}:
				case <-gctx.Done():
					b.Release()
					return gctx.Err()
				}
			}
		})
	}
	go func() {
		defer func() {
			if r := recover(); r != nil {
				s.err = execop.PanicError(r, "collecting "+p.String())
			}
			close(s.ch)
		}()
		s.err = g.Wait()
	}()
	return s
}

func (s *planSource) next(ctx context.Context) (arrow.RecordBatch, error) {
	select {
	case pb, ok := <-s.ch:
		if !ok {
			if s.err != nil {
				return nil, s.err
			}
			return nil, io.EOF
		}
		s.last = pb.part
		return pb.b, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// partBatch is a batch and the partition it came from.
type partBatch struct {
	b    arrow.RecordBatch
	part int
}

func (s *planSource) lastPart() int { return s.last }

// close stops the partitions still running and waits for them.
func (s *planSource) close() {
	s.cancel()
	for pb := range s.ch {
		pb.b.Release()
	}
}

// graceBuild collects the build side from partitions parts of left,
// going to disk if it does not fit.
func (j *joinOp) graceBuild(ctx context.Context, left physical.Plan, parts []int) (*joinBuild, error) {
	src := startPlanSource(ctx, j.tc, left, parts)
	defer src.close()
	return j.collectBuild(ctx, src.next, src.lastPart)
}
