package join

import (
	"context"
	"io"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver/exec/execop"
	"github.com/quiverdb/quiver/exec/kernel"
	"github.com/quiverdb/quiver/exec/spill"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
	"golang.org/x/sync/errgroup"
)

// Grace hash join. Under a memory limit a hash join whose build side is
// its own (one probe partition per build: Partitioned mode, or CollectLeft
// run as one task of a stage) collects the build side batch by batch and
// watches the headroom. When the rows held, their concatenated copy and
// the hash table would not fit in about half of what is left (or building
// the table fails at the limit anyway), it stops and goes to disk:
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
// Spill files are spill.Files under the work dir, counted in the join's
// SpilledBytes; a partition's files are removed once it is joined, and
// Close removes any left.

const (
	// gracePartitions is how many files each side is split into per level.
	gracePartitions = 16
	graceBits       = 4 // log2(gracePartitions)
	// graceMaxDepth is how many times a partition may be split again.
	graceMaxDepth = 4
	// graceMul spreads the hash's bits before a level's nibble is taken.
	graceMul = 0xC2B2AE3D27D4EB4F
	// graceFactor: spill once the headroom is below this many times what
	// building the table in memory would take, leaving the rest to probing.
	graceFactor = 2
	// graceMinBytes: a build side smaller than this is not spilled on the
	// headroom estimate (it fails at the limit only if building it does).
	graceMinBytes = 64 << 10
	// graceRowBytes is the per-row memory of a build beyond its columns:
	// match flags, chains and the hash table's slots.
	graceRowBytes = 40
)

// graceFacts are facts about the whole join that one partition's join
// cannot see; they are final before any partition is joined.
type graceFacts struct {
	buildRows    int64
	buildNullKey bool
	rightRows    int64
	rightNullKey bool
}

// graceState is a join that went to disk: its build and probe rows split
// into files, and the partition being joined.
type graceState struct {
	depth   int
	facts   *graceFacts
	ownFact bool // this level counts the facts (the top level)
	left    []*spill.File
	right   []*spill.File
	split   bool // the right side has been split too
	next    int  // next partition to join
	sub     *joinOp
	hashes  []uint64
	rows    [][]int32
}

// graceable reports whether a hash join with these keys may go to disk:
// the build side must be its own (parts == 1) and every key hashable.
func graceable(parts int, keys []kernel.ExprRunner) bool {
	if parts != 1 {
		return false
	}
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

// mustGrace reports whether a build side of bytes in rows rows, held now,
// should go to disk rather than be indexed in memory.
func (j *joinOp) mustGrace(bytes, rows int64) bool {
	return bytes >= graceMinBytes && j.tc.Headroom() < graceFactor*(bytes+graceRowBytes*rows)
}

// collectBuild reads the build side from next (io.EOF at its end) and
// builds it in memory, or splits it and the probe side to disk (the
// joinBuild then carries only the graceState).
func (j *joinOp) collectBuild(ctx context.Context, next func(context.Context) (arrow.RecordBatch, error)) (*joinBuild, error) {
	var held []arrow.RecordBatch
	defer func() { execop.ReleaseAll(held) }()
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
		bytes += spill.Bytes(b)
		rows += b.NumRows()
		if j.mustGrace(bytes, rows) {
			h := held
			held = nil
			return j.startGrace(ctx, h, next)
		}
	}
	for _, b := range held {
		b.Retain() // buildJoinSide releases one reference; held keeps one for a retry on disk
	}
	jb, err := j.buildInMemory(ctx, held)
	if err == nil || !qerr.Is(err, qerr.Resources) {
		return jb, err
	}
	h := held
	held = nil
	return j.startGrace(ctx, h, func(context.Context) (arrow.RecordBatch, error) { return nil, io.EOF })
}

// buildInMemory is buildJoinSide with an allocation over the limit turned
// into its Resources error, so that the caller can go to disk instead.
func (j *joinOp) buildInMemory(ctx context.Context, batches []arrow.RecordBatch) (jb *joinBuild, err error) {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(*execop.LimitError); !ok {
				panic(r)
			}
			err = execop.PanicError(r, "exec/"+j.what+": build side")
		}
	}()
	return buildJoinSide(ctx, j.tc, j.leftSc, batches, j.leftKeys, j.what)
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
	g := &graceState{depth: j.depth, facts: j.facts}
	if g.facts == nil {
		g.facts, g.ownFact = &graceFacts{}, true
	}
	defer func() {
		if err != nil {
			g.close()
		}
	}()
	if g.left, err = g.createFiles(j, j.leftSc, "hashjoin-build"); err != nil {
		return nil, err
	}
	for len(held) > 0 {
		b := held[0]
		held = held[1:]
		err := g.writeSplit(ctx, j, b, j.leftKeys, g.left, true)
		b.Release()
		if err != nil {
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
		err = g.writeSplit(ctx, j, b, j.leftKeys, g.left, true)
		b.Release()
		if err != nil {
			return nil, err
		}
	}
	for _, f := range g.left {
		if err := f.Finish(); err != nil {
			return nil, err
		}
	}
	return &joinBuild{grace: g}, nil
}

// createFiles starts one spill file per partition.
func (g *graceState) createFiles(j *joinOp, schema *arrow.Schema, what string) ([]*spill.File, error) {
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

// writeSplit appends each row of b to the file of its key hash at this
// level, counting the facts at the top level (build: left side).
func (g *graceState) writeSplit(ctx context.Context, j *joinOp, b arrow.RecordBatch, keys []kernel.ExprRunner, files []*spill.File, build bool) error {
	n := int(b.NumRows())
	if n == 0 {
		return nil
	}
	kcols, err := kernel.EvalAll(ctx, j.tc.Mem, keys, b)
	if err != nil {
		return err
	}
	defer kernel.ReleaseArrays(kcols)
	if g.ownFact {
		nullKey := false
		for _, k := range kcols {
			nullKey = nullKey || k.NullN() > 0
		}
		if build {
			g.facts.buildRows += int64(n)
			g.facts.buildNullKey = g.facts.buildNullKey || nullKey
		} else {
			g.facts.rightRows += int64(n)
			g.facts.rightNullKey = g.facts.rightNullKey || nullKey
		}
	}
	g.hashes = kernel.Resize(g.hashes, n)
	kernel.HashColumns(kcols, g.hashes)
	if g.rows == nil {
		g.rows = make([][]int32, gracePartitions)
	}
	for p := range g.rows {
		g.rows[p] = g.rows[p][:0]
	}
	shift := uint(64 - graceBits*(g.depth+1))
	for r, h := range g.hashes {
		p := ((h * graceMul) >> shift) & (gracePartitions - 1)
		g.rows[p] = append(g.rows[p], int32(r))
	}
	for p, rows := range g.rows {
		if len(rows) == 0 {
			continue
		}
		part := b
		if len(rows) < n {
			if part, err = kernel.TakeBatch(ctx, j.tc.Mem, b.Schema(), b, rows); err != nil {
				return err
			}
		} else {
			b.Retain()
		}
		err := files[p].Write(part)
		part.Release()
		if err != nil {
			return err
		}
	}
	return nil
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
			if err := g.left[p].Remove(); err != nil {
				return nil, err
			}
			if err := g.right[p].Remove(); err != nil {
				return nil, err
			}
		}
		if g.next >= len(g.left) {
			return nil, io.EOF
		}
		p := g.next
		g.next++
		if !j.partitionOutputs(g.left[p].Rows(), g.right[p].Rows()) {
			continue
		}
		sub, err := j.partitionJoin(ctx, g.left[p], g.right[p])
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
	if g.right, err = g.createFiles(j, j.rightSchema(), "hashjoin-probe"); err != nil {
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
		j.rightRows += b.NumRows()
		err = g.writeSplit(ctx, j, b, j.rightKeys, g.right, false)
		b.Release()
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
// output anything: pairs need both sides; a side's own rows need that side.
func (j *joinOp) partitionOutputs(leftRows, rightRows int64) bool {
	switch {
	case leftRows == 0 && rightRows == 0:
		return false
	case leftRows == 0:
		return j.emitsProbeRows()
	case rightRows == 0:
		return j.emitsLeftTail()
	}
	return true
}

// partitionJoin opens the join of one partition's files: a joinOp of the
// same kind whose build side is read from left (and may go to disk again,
// one level deeper) and whose probe side is right.
func (j *joinOp) partitionJoin(ctx context.Context, left, right *spill.File) (*joinOp, error) {
	lread, err := left.Reader()
	if err != nil {
		return nil, err
	}
	rread, err := right.Reader()
	if err != nil {
		return nil, err
	}
	sub := &joinOp{
		tc: j.tc, typ: j.typ, what: j.what, node: j.node, schema: j.schema, pairSc: j.pairSc, leftSc: j.leftSc,
		nLeft: j.nLeft, nRight: j.nRight, leftKeys: j.leftKeys, rightKeys: j.rightKeys,
		filter: j.filter, fLeft: j.fLeft, fRight: j.fRight, allLeft: j.allLeft, allRight: j.allRight,
		nullAware: j.nullAware, keyOnly: j.keyOnly, skipMatched: j.skipMatched,
		shared: &joinShared{parts: 1}, right: spill.NewSource(rread),
		facts: j.grace.facts, depth: j.grace.depth + 1,
	}
	sub.makeBuild = func(ctx context.Context) (*joinBuild, error) { return sub.collectBuild(ctx, lread) }
	if err := sub.Open(ctx); err != nil {
		sub.Close()
		return nil, err
	}
	return sub, nil
}

// close ends the partition being joined and removes every file left.
func (g *graceState) close() error {
	var first error
	if g.sub != nil {
		first = g.sub.Close()
		g.sub = nil
	}
	if err := spill.RemoveAll(g.left); err != nil && first == nil {
		first = err
	}
	if err := spill.RemoveAll(g.right); err != nil && first == nil {
		first = err
	}
	return first
}

// The whole join's facts, from graceFacts in a partition's join.

func (j *joinOp) wholeRightEmpty() bool {
	if j.facts != nil {
		return j.facts.rightRows == 0
	}
	return j.shared.rightRows == 0
}

func (j *joinOp) wholeRightNullKey() bool {
	if j.facts != nil {
		return j.facts.rightNullKey
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
	ch     chan arrow.RecordBatch
	cancel context.CancelFunc
	err    error // the first partition's error, written before ch is closed
}

func startPlanSource(ctx context.Context, tc *execop.TaskContext, p physical.Plan, parts []int) *planSource {
	cctx, cancel := context.WithCancel(ctx)
	g, gctx := errgroup.WithContext(cctx)
	s := &planSource{ch: make(chan arrow.RecordBatch, len(parts)), cancel: cancel}
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
				case s.ch <- b:
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
	case b, ok := <-s.ch:
		if !ok {
			if s.err != nil {
				return nil, s.err
			}
			return nil, io.EOF
		}
		return b, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// close stops the partitions still running and waits for them.
func (s *planSource) close() {
	s.cancel()
	for b := range s.ch {
		b.Release()
	}
}

// graceBuild collects the build side from partitions parts of left,
// going to disk if it does not fit.
func (j *joinOp) graceBuild(ctx context.Context, left physical.Plan, parts []int) (*joinBuild, error) {
	src := startPlanSource(ctx, j.tc, left, parts)
	defer src.close()
	return j.collectBuild(ctx, src.next)
}
