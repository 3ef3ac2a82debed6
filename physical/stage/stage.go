package stage

import (
	"fmt"
	"slices"
	"strings"

	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
)

// Stage is one stage of a job: a plan rooted at a ShuffleWriter that runs as
// Plan.OutputPartitions() independent tasks (task p runs map partition p),
// or, when Whole, as one task that runs every partition.
type Stage struct {
	// ID is 1-based and unique in the job.
	ID int
	// Plan is the stage's root; its UnresolvedShuffles name the input stages.
	Plan *physical.ShuffleWriter
	// Inputs are the ids of the stages whose output Plan reads, in the order
	// they first appear in Plan (depth first, left to right).
	Inputs []int
	// Final marks the job's last stage: its output partitions are the
	// query's result partitions.
	Final bool
	// Whole marks a stage of a job split with Options.InMemory (the job's
	// one stage, or one per shared CTE and the final one reading them):
	// its plan keeps the in-memory exchanges (Repartition, Coalesce,
	// SortPreservingMerge, CollectLeft build sides shared by every probe
	// partition), so it runs as ONE task that builds all of the plan's
	// partitions in one execop.TaskContext (not SinglePartition), in
	// parallel, and reports the files of every map partition it wrote.
	Whole bool
}

// Tasks is the number of tasks of the stage: one per map partition, or
// one for a Whole stage.
func (s *Stage) Tasks() int {
	if s.Whole {
		return 1
	}
	return s.Plan.OutputPartitions()
}

// Graph is a job's stages in dependency order: every stage comes after the
// stages it reads, and the final stage is last.
type Graph struct {
	JobID  string
	Stages []*Stage
}

// Stage returns the stage with id, or nil.
func (g *Graph) Stage(id int) *Stage {
	if id >= 1 && id <= len(g.Stages) && g.Stages[id-1].ID == id {
		return g.Stages[id-1]
	}
	for _, s := range g.Stages {
		if s.ID == id {
			return s
		}
	}
	return nil
}

// Final returns the job's final stage.
func (g *Graph) Final() *Stage { return g.Stages[len(g.Stages)-1] }

// Consumers returns the ids of the stages that read stage id's output.
func (g *Graph) Consumers(id int) []int {
	var out []int
	for _, s := range g.Stages {
		if slices.Contains(s.Inputs, id) {
			out = append(out, s.ID)
		}
	}
	return out
}

// String renders the graph for golden tests: per stage its id, task count,
// output partitioning, inputs, and plan (physical.Indent).
func (g *Graph) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "job %s: %d stages\n", g.JobID, len(g.Stages))
	for _, s := range g.Stages {
		ins := make([]string, len(s.Inputs))
		for i, id := range s.Inputs {
			ins[i] = fmt.Sprint(id)
		}
		fmt.Fprintf(&b, "\nstage %d: tasks=%d outputs=%d inputs=[%s]", s.ID, s.Tasks(), s.Plan.OutputN(), strings.Join(ins, ", "))
		if s.Whole {
			b.WriteString(" whole (one task runs every partition; exchanges in memory)")
		}
		if s.Final {
			b.WriteString(" final")
		}
		b.WriteString("\n")
		b.WriteString(physical.Indent(s.Plan))
	}
	return b.String()
}

// Options shape the stages Split makes.
type Options struct {
	// Compression of every shuffle file (lz4 if empty).
	Compression physical.Compression
	// PinFinal marks the final stage's writer Pinned: a cache
	// materialization, whose files cleanup keeps.
	PinFinal bool
	// InlineLimit is the largest result file the final stage keeps in
	// memory and returns with its location (ShuffleWriter.InlineLimit; 0:
	// never, and never when PinFinal). The final stage's files share
	// physical.MaxInlineBytes, so each may be smaller.
	InlineLimit int64
	// InMemory keeps every exchange in memory: the job is one Whole stage,
	// the plan as the single-node engine runs it, ending in the final
	// writer (pinned with PinFinal). Only a job that runs on one executor
	// may be split so (ARCHITECTURE.md §3); between executors every exchange
	// must be a stage boundary.
	InMemory bool
}

// Split cuts p into the stages of job jobID. The rules, chosen so that the
// tasks of every stage are independent:
//
//   - a hash Repartition ends the producing stage in ShuffleWriter{Keys, N};
//     the consumer reads an UnresolvedShuffle of N partitions;
//   - a Coalesce over more than one partition ends the producing stage in a
//     single writer (N == 1) read as 1 partition; over one partition it is
//     dropped;
//   - a SortPreservingMerge over more than one partition stays in the
//     consumer stage, over an UnresolvedShuffle of the N sorted partitions
//     written by a passthrough writer (N == 0);
//   - a round-robin Repartition is dropped: it only spreads batches inside
//     one process, and a task that built one of its outputs would block on
//     the others (no other task shares its exchange);
//   - the build (left) side of a CollectLeft HashJoin or of a
//     NestedLoopJoin is computed once, in its own stage (passthrough),
//     unless it only reads shuffle or cache data through projections and
//     filters; every probe task then reads all of it;
//   - the probe (right) side of such a join is cut to one partition (single
//     writer) when it has more than one: exec shares the build side and the
//     left-side results (unmatched, semi, anti, mark rows) among all probe
//     partitions of one TaskContext, which in a task holds only one of them;
//   - a SharedCTE read from two places or more is computed once: its input
//     ends a stage (passthrough, so its partitions and their partitioning
//     stay; an input that is itself cut is that stage), which every place
//     reads through an UnresolvedShuffle of that one stage; a SharedCTE
//     read once is its input.
//
// The final stage ends in a passthrough writer whose output partitions are
// the result partitions, or a single writer if the plan has one partition
// (dropped round-robin repartitions may leave the result with fewer
// partitions than p; partition counts carry no meaning in a result).
// When the plan's root is itself a cut without keys (a Coalesce), the stage
// it cuts off is the final stage. Stage ids are 1-based in dependency order.
//
// With opts.InMemory nothing else is cut: the graph is one Whole stage per
// SharedCTE read twice or more, then the final Whole stage, whose writer's
// input is p with those CTEs read through UnresolvedShuffles and otherwise
// unchanged, round-robin repartitions included, since its partitions all
// run in one task and share exchanges.
func Split(jobID string, p physical.Plan, opts Options) (*Graph, error) {
	if !physical.ValidJobID(jobID) {
		return nil, qerr.Internalf("stage: job id %q: want %s", jobID, physical.JobIDSyntax)
	}
	if p == nil {
		return nil, qerr.Internalf("stage: split of job %s: nil plan", jobID)
	}
	comp, err := physical.ParseCompression(string(opts.Compression))
	if err != nil {
		return nil, err
	}
	opts.Compression = comp
	if opts.InMemory {
		return whole(jobID, p, opts)
	}
	s := &splitter{jobID: jobID, opts: opts, refs: sharedRefs(p), ctes: map[int]*physical.UnresolvedShuffle{}, shared: map[int]bool{}}
	root, err := s.visit(p)
	if err != nil {
		return nil, err
	}
	var final *Stage
	if u, ok := root.(*physical.UnresolvedShuffle); ok {
		// (not a shared CTE's stage, which other stages read too).
		if st := s.stages[u.StageID-1]; len(st.Plan.Keys) == 0 && u.StageID == len(s.stages) && !s.shared[u.StageID] {
			final = st // the root was a keyless cut: that stage's output is the result
		}
	}
	if final == nil {
		n := 0
		if root.OutputPartitions() == 1 {
			n = 1
		}
		s.cut(root, nil, n)
		final = s.stages[len(s.stages)-1]
	}
	markFinal(final, opts)
	return &Graph{JobID: jobID, Stages: s.stages}, nil
}

// markFinal makes st the job's final stage: pinned for a cache build, else
// with its share of the inline limit.
func markFinal(st *Stage, opts Options) {
	st.Final = true
	st.Plan.Pinned = opts.PinFinal
	if opts.PinFinal || opts.InlineLimit <= 0 {
		return
	}
	files := max(1, st.Plan.Input.OutputPartitions()) // one a map partition
	st.Plan.InlineLimit = min(opts.InlineLimit, physical.MaxInlineBytes/int64(files))
}

// whole makes the one-stage graph of Options.InMemory: p under the final
// writer, a single writer if p has one partition, else passthrough.
func whole(jobID string, p physical.Plan, opts Options) (*Graph, error) {
	var bad physical.Plan
	walk(p, func(n physical.Plan) {
		switch n.(type) {
		case *physical.ShuffleWriter, *physical.UnresolvedShuffle:
			if bad == nil {
				bad = n
			}
		}
	})
	if bad != nil {
		return nil, qerr.Internalf("stage: split of job %s: the plan already contains %s", jobID, bad)
	}
	refs := sharedRefs(p)
	var out []*Stage
	ctes := map[int]*physical.UnresolvedShuffle{}
	writer := func(in physical.Plan, comp physical.Compression) *Stage {
		n := 0
		if in.OutputPartitions() == 1 {
			n = 1
		}
		id := len(out) + 1
		w := &physical.ShuffleWriter{Input: in, JobID: jobID, StageID: id, N: n, Compression: comp}
		st := &Stage{ID: id, Plan: w, Inputs: Inputs(in), Whole: true}
		out = append(out, st)
		return st
	}
	// lift replaces each SharedCTE read twice or more by the output of a
	// whole stage of its own, its input first.
	var lift func(physical.Plan) physical.Plan
	lift = func(p physical.Plan) physical.Plan {
		if c, ok := p.(*physical.SharedCTE); ok {
			if refs[c.ID] < 2 {
				return lift(c.Input)
			}
			if u, ok := ctes[c.ID]; ok {
				return u
			}
			in := lift(c.Input)
			// Uncompressed: each reference reads them back, on the job's
			// one executor as a rule, where compressing and decompressing
			// cost more CPU than the disk they save.
			st := writer(in, physical.CompressNone)
			u := &physical.UnresolvedShuffle{StageID: st.ID, OutSchema: in.Schema(), Partitions: st.Plan.OutputN()}
			ctes[c.ID] = u
			return u
		}
		cs := p.Children()
		if len(cs) == 0 {
			return p
		}
		nc := make([]physical.Plan, len(cs))
		changed := false
		for i, c := range cs {
			nc[i] = lift(c)
			changed = changed || nc[i] != c
		}
		if !changed {
			return p
		}
		return p.WithChildren(nc)
	}
	final := writer(lift(p), opts.Compression)
	markFinal(final, opts)
	return &Graph{JobID: jobID, Stages: out}, nil
}

type splitter struct {
	jobID  string
	opts   Options
	stages []*Stage
	refs   map[int]int                         // sharedRefs of the plan
	ctes   map[int]*physical.UnresolvedShuffle // what a shared CTE's readers read
	shared map[int]bool                        // the stages shared CTEs end
}

// sharedRefs counts the places that read each SharedCTE of p, as the cut
// computes them: the readers inside a shared CTE's input count once,
// however many places read that CTE.
func sharedRefs(p physical.Plan) map[int]int {
	out := map[int]int{}
	var walk func(physical.Plan)
	walk = func(p physical.Plan) {
		if c, ok := p.(*physical.SharedCTE); ok {
			out[c.ID]++
			if out[c.ID] > 1 {
				return
			}
		}
		if _, ok := p.(*physical.RecursiveQuery); ok {
			return // never cut inside
		}
		for _, c := range p.Children() {
			walk(c)
		}
	}
	walk(p)
	return out
}

// cut ends a stage at in with a writer of keys into n partitions (n == 0:
// passthrough) and returns what its consumer reads instead of in.
func (s *splitter) cut(in physical.Plan, keys []physical.Expr, n int) *physical.UnresolvedShuffle {
	id := len(s.stages) + 1
	w := &physical.ShuffleWriter{Input: in, JobID: s.jobID, StageID: id, Keys: keys, N: n, Compression: s.opts.Compression}
	s.stages = append(s.stages, &Stage{ID: id, Plan: w, Inputs: Inputs(in)})
	return &physical.UnresolvedShuffle{StageID: id, OutSchema: in.Schema(), Partitions: w.OutputN()}
}

// visit returns p with its exchanges cut, registering the stages it cuts off.
func (s *splitter) visit(p physical.Plan) (physical.Plan, error) {
	switch n := p.(type) {
	case *physical.ShuffleWriter:
		return nil, qerr.Internalf("stage: split of job %s: the plan already contains %s", s.jobID, n)
	case *physical.UnresolvedShuffle:
		return nil, qerr.Internalf("stage: split of job %s: the plan already contains %s", s.jobID, n)
	case *physical.Repartition:
		in, err := s.visit(n.Input)
		if err != nil {
			return nil, err
		}
		if len(n.Keys) == 0 {
			return in, nil
		}
		if n.N < 1 {
			return nil, qerr.Internalf("stage: %s has %d output partitions", n, n.N)
		}
		return s.cut(in, n.Keys, n.N), nil
	case *physical.Coalesce:
		in, err := s.visit(n.Input)
		if err != nil {
			return nil, err
		}
		if in.OutputPartitions() == 1 {
			return in, nil
		}
		return s.cut(in, nil, 1), nil
	case *physical.SortPreservingMerge:
		in, err := s.visit(n.Input)
		if err != nil {
			return nil, err
		}
		if in.OutputPartitions() > 1 {
			in = s.cut(in, nil, 0)
		}
		return n.WithChildren([]physical.Plan{in}), nil
	case *physical.HashJoin:
		if n.Mode != physical.CollectLeft {
			return s.children(p)
		}
		l, r, err := s.collectLeft(n.Left, n.Right, emitsBuildRows(n.Type))
		if err != nil {
			return nil, err
		}
		return n.WithChildren([]physical.Plan{l, r}), nil
	case *physical.NestedLoopJoin:
		l, r, err := s.collectLeft(n.Left, n.Right, emitsBuildRows(n.Type))
		if err != nil {
			return nil, err
		}
		return n.WithChildren([]physical.Plan{l, r}), nil
	case *physical.SharedCTE:
		if s.refs[n.ID] < 2 {
			return s.visit(n.Input)
		}
		if u, ok := s.ctes[n.ID]; ok {
			return u, nil
		}
		in, err := s.visit(n.Input)
		if err != nil {
			return nil, err
		}
		u, ok := in.(*physical.UnresolvedShuffle)
		if !ok {
			u = s.cut(in, nil, 0)
		}
		s.ctes[n.ID], s.shared[u.StageID] = u, true
		return u, nil
	case *physical.RecursiveQuery:
		// Its operator builds both terms, in memory, in the task that
		// runs it, iteration after iteration: nothing inside is cut.
		return n, nil
	}
	return s.children(p)
}

// children visits p's children and rebuilds p over them.
func (s *splitter) children(p physical.Plan) (physical.Plan, error) {
	cs := p.Children()
	if len(cs) == 0 {
		return p, nil
	}
	out := make([]physical.Plan, len(cs))
	for i, c := range cs {
		v, err := s.visit(c)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return p.WithChildren(out), nil
}

// emitsBuildRows reports whether a join type outputs left (build) rows
// depending on matches seen by every probe partition; such a join's probe
// side must run as one task, since tasks cannot share match flags.
func emitsBuildRows(t physical.JoinType) bool {
	switch t {
	case physical.InnerJoin, physical.RightJoin:
		return false
	}
	return true
}

// collectLeft visits the sides of a join whose left side every probe
// partition collects whole, and cuts them as Split describes. Each probe
// task builds its own copy of the left side (exec's TaskContext.SinglePartition).
func (s *splitter) collectLeft(left, right physical.Plan, singleProbe bool) (physical.Plan, physical.Plan, error) {
	l, err := s.visit(left)
	if err != nil {
		return nil, nil, err
	}
	r, err := s.visit(right)
	if err != nil {
		return nil, nil, err
	}
	if !readsOnly(l) {
		l = s.cut(l, nil, 0)
	}
	if singleProbe && r.OutputPartitions() > 1 {
		r = s.cut(r, nil, 1)
	}
	return l, r, nil
}

// readsOnly reports whether p only projects and filters data that is
// already materialized (shuffle or cache output, literal rows): cheap
// enough for every probe task to compute it again.
func readsOnly(p physical.Plan) bool {
	switch n := p.(type) {
	case *physical.UnresolvedShuffle, *physical.ShuffleReader, *physical.CacheReader, *physical.Values, *physical.Empty:
		return true
	case *physical.Projection:
		return readsOnly(n.Input)
	case *physical.Filter:
		return readsOnly(n.Input)
	}
	return false
}

// Inputs returns the ids of the stages whose UnresolvedShuffles appear in
// plan, in order of first appearance. ShuffleReaders and CacheReaders are
// not counted: they are resolved.
func Inputs(plan physical.Plan) []int {
	var out []int
	walk(plan, func(p physical.Plan) {
		if u, ok := p.(*physical.UnresolvedShuffle); ok && !slices.Contains(out, u.StageID) {
			out = append(out, u.StageID)
		}
	})
	return out
}

func walk(p physical.Plan, f func(physical.Plan)) {
	f(p)
	for _, c := range p.Children() {
		walk(c, f)
	}
}

// transform rebuilds p bottom-up with f applied to every node; nodes whose
// subtree f leaves alone are kept as they are.
func transform(p physical.Plan, f func(physical.Plan) physical.Plan) physical.Plan {
	cs := p.Children()
	if len(cs) > 0 {
		out := make([]physical.Plan, len(cs))
		changed := false
		for i, c := range cs {
			out[i] = transform(c, f)
			changed = changed || out[i] != c
		}
		if changed {
			p = p.WithChildren(out)
		}
	}
	return f(p)
}

// Resolve returns plan with every UnresolvedShuffle of stage stageID
// replaced by a ShuffleReader over locs (locs[i] lists the files of output
// partition i). If locs has fewer entries than the shuffle has partitions,
// the missing partitions read no files (they are empty). plan is not
// modified; a ShuffleWriter root stays a *physical.ShuffleWriter.
func Resolve(plan physical.Plan, stageID int, locs [][]physical.PartitionLocation) physical.Plan {
	return transform(plan, func(p physical.Plan) physical.Plan {
		u, ok := p.(*physical.UnresolvedShuffle)
		if !ok || u.StageID != stageID {
			return p
		}
		ls := make([][]physical.PartitionLocation, max(u.Partitions, len(locs)))
		for i := range ls {
			if i < len(locs) {
				ls[i] = slices.Clone(locs[i])
			}
		}
		return &physical.ShuffleReader{StageID: stageID, OutSchema: u.OutSchema, Locations: ls}
	})
}

// Unresolve turns the ShuffleReaders reading stage stageID back into
// UnresolvedShuffles (the rollback after a fetch failure). CacheReaders are
// never touched. plan is not modified.
func Unresolve(plan physical.Plan, stageID int) physical.Plan {
	return transform(plan, func(p physical.Plan) physical.Plan {
		r, ok := p.(*physical.ShuffleReader)
		if !ok || r.StageID != stageID {
			return p
		}
		return &physical.UnresolvedShuffle{StageID: stageID, OutSchema: r.OutSchema, Partitions: len(r.Locations)}
	})
}
