package planner

import (
	"context"
	"runtime"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver/catalog"
	"github.com/quiverdb/quiver/logical"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
)

// Config are the settings that shape a physical plan.
type Config struct {
	// TargetPartitions is how many partitions run in parallel (GOMAXPROCS if ≤ 0).
	TargetPartitions int
	// CollectLeftRows: a join whose build side is estimated at most this many
	// rows builds one shared hash table (CollectLeft); larger ones are
	// hash-partitioned on the keys.
	CollectLeftRows float64
	// DistinctSetsRows: a DISTINCT aggregate over multiple partitions whose
	// input is estimated at least this many rows runs in two phases by
	// sets (physical.AggregateExpr.SetState); smaller inputs exchange their
	// rows, which costs less than the extra grouping pass of the sets.
	DistinctSetsRows float64
	// MaxRecursionDepth bounds the runs of a WITH RECURSIVE query's
	// recursive term (physical.RecursiveQuery.MaxDepth; ≤ 0: no limit).
	MaxRecursionDepth int64
	// ShareCTEs plans the references to a shared WITH query
	// (logical.CTERef) as one physical.SharedCTE, which only the stage
	// cutter may run; without it (the local engine) every reference
	// computes its input again.
	ShareCTEs bool
	// Caches, if set, lowers Cache nodes that are materialized (hits) to
	// CacheReaders; a Cache node it does not resolve runs its input.
	Caches CacheResolver
}

// CacheResolver is the cache lowering hook: the scheduler resolves every
// Cache node of a plan before physical planning and answers here.
type CacheResolver interface {
	// ResolveCache returns the CacheReader for c when its entry is
	// materialized, or ok=false to plan c's input instead.
	ResolveCache(c *logical.Cache) (reader *physical.CacheReader, ok bool)
}

// Defaults of Config's thresholds.
const (
	DefaultCollectLeftRows  = 2_000_000
	DefaultDistinctSetsRows = 500_000
)

// Planner turns optimized logical plans into physical plans.
type Planner struct {
	cfg  Config
	ctes map[int]sharedCTE // with ShareCTEs: each CTE's planned node
}

// sharedCTE is a planned shared CTE and the logical plan it was planned from.
type sharedCTE struct {
	node *physical.SharedCTE
	key  string // logical.Indent of the CTE's input
}

// New returns a planner with cfg (zero fields take defaults).
func New(cfg Config) *Planner {
	if cfg.TargetPartitions <= 0 {
		cfg.TargetPartitions = runtime.GOMAXPROCS(0)
	}
	if cfg.CollectLeftRows <= 0 {
		cfg.CollectLeftRows = DefaultCollectLeftRows
	}
	if cfg.DistinctSetsRows <= 0 {
		cfg.DistinctSetsRows = DefaultDistinctSetsRows
	}
	return &Planner{cfg: cfg}
}

// Plan translates p. This is the one type switch from logical to physical nodes.
func (pl *Planner) Plan(ctx context.Context, p logical.Plan) (physical.Plan, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	switch n := p.(type) {
	case *logical.Scan:
		return pl.scan(n)
	case *logical.Filter:
		in, err := pl.Plan(ctx, n.Input)
		if err != nil {
			return nil, err
		}
		pred, err := Expr(n.Predicate, n.Input.Schema())
		if err != nil {
			return nil, err
		}
		return &physical.Filter{Input: withCacheHint(in, pred), Predicate: pred}, nil
	case *logical.Projection:
		in, err := pl.Plan(ctx, n.Input)
		if err != nil {
			return nil, err
		}
		es, err := exprs(n.List, n.Input.Schema())
		if err != nil {
			return nil, err
		}
		return &physical.Projection{Input: in, Exprs: es, Names: names(n.Schema())}, nil
	case *logical.SubqueryAlias:
		return pl.Plan(ctx, n.Input)
	case *logical.Cache:
		if pl.cfg.Caches != nil {
			if r, ok := pl.cfg.Caches.ResolveCache(n); ok {
				return r, nil
			}
		}
		return pl.Plan(ctx, n.Input)
	case *logical.CTERef:
		return pl.cteRef(ctx, n)
	case *logical.Aggregate:
		return pl.aggregate(ctx, n)
	case *logical.Join:
		return pl.join(ctx, n)
	case *logical.Sort:
		return pl.sort(ctx, n)
	case *logical.Window:
		return pl.window(ctx, n)
	case *logical.Write:
		return pl.write(ctx, n)
	case *logical.Expand:
		return pl.expand(ctx, n)
	case *logical.Limit:
		return pl.limit(ctx, n)
	case *logical.Union:
		ins := make([]physical.Plan, len(n.Inputs))
		for i, c := range n.Inputs {
			in, err := pl.Plan(ctx, c)
			if err != nil {
				return nil, err
			}
			ins[i] = in
		}
		return &physical.Union{Inputs: ins}, nil
	case *logical.Values:
		rows := make([][]*physical.Literal, len(n.Rows))
		for i, r := range n.Rows {
			rows[i] = make([]*physical.Literal, len(r))
			for j, e := range r {
				lit, ok := logical.StripAlias(e).(*logical.Literal)
				if !ok {
					return nil, qerr.NotImplementedf("planner: VALUES entries must be constants, got %s", e)
				}
				t := n.Schema().Field(j).Type
				if lit.Value != nil && !arrow.TypeEqual(lit.Type, t) {
					return nil, qerr.Internalf("planner: VALUES literal %s has type %s, column has %s", lit, lit.Type, t)
				}
				rows[i][j] = &physical.Literal{Type: t, Value: lit.Value}
			}
		}
		return &physical.Values{OutSchema: n.Schema().Arrow(), Rows: rows}, nil
	case *logical.EmptyRelation:
		return &physical.Empty{OutSchema: n.Schema().Arrow(), ProduceOneRow: n.ProduceOneRow}, nil
	case *logical.RecursiveQuery:
		return pl.recursive(ctx, n)
	case *logical.WorkTable:
		return &physical.WorkTable{Name: n.Name, OutSchema: n.Schema().Arrow()}, nil
	}
	return nil, qerr.Internalf("planner: unknown logical node %T", p)
}

func names(s *logical.Schema) []string {
	out := make([]string, s.Len())
	for i, f := range s.Fields {
		out[i] = f.Name
	}
	return out
}

func (pl *Planner) scan(n *logical.Scan) (physical.Plan, error) {
	t, opts := hivePartitions(n) // hive partitions pruned by the filters
	out := &physical.Scan{
		Table:      t.Name,
		Format:     physical.Format(t.Format),
		FileSchema: t.Schema,
		Projection: n.Projection,
		Options:    opts,
		Fetch:      n.Fetch,
	}
	var rgRows [][]int64
	var rgRanges [][][]catalog.KeyRange
	if t.Format == catalog.Parquet {
		// Unreadable footers (a scheduler that cannot see the files) leave
		// both nil: one partition per file, no ranges.
		rgRows, rgRanges, _ = catalog.ParquetRowGroups(t)
	}
	if t.Format == catalog.Memory {
		out.Partitions = make([][]string, t.NumPartitions())
	} else if !pl.splitParquet(t, rgRows, out) {
		for _, f := range t.Files {
			out.Partitions = append(out.Partitions, []string{f})
		}
	}
	// Pushed-down filters are a pruning hint: keep those that translate.
	var preds []physical.Expr
	for _, f := range n.Filters {
		if p, err := Expr(f, n.Schema()); err == nil {
			preds = append(preds, p)
		}
	}
	out.Predicate = andAll(preds)
	out.Disjoint = disjointColumns(t, rgRanges, out)
	out.Stats = scanStats(t, rgRows, rgRanges, out)
	var plan physical.Plan = out
	if out.OutputPartitions() < pl.cfg.TargetPartitions && t.Format != catalog.Memory {
		// A scan yields one partition per file; spread its batches so the
		// operators above run target_partitions-way parallel.
		plan = &physical.Repartition{Input: plan, N: pl.cfg.TargetPartitions}
	}
	return plan, nil
}

// disjointColumns lists the scan's output columns whose value ranges over
// its partitions do not overlap (see catalog.Disjoint), from a memory
// table's partition ranges or a Parquet table's row-group statistics
// (rgRanges, parallel to t.Files).
func disjointColumns(t *catalog.Table, rgRanges [][][]catalog.KeyRange, s *physical.Scan) []int {
	parts := s.OutputPartitions()
	if parts <= 1 {
		return nil
	}
	// rangeOf is partition p's range of table column c.
	var rangeOf func(p, c int) catalog.KeyRange
	switch {
	case t.Format == catalog.Memory && len(t.PartitionRanges) == parts:
		rangeOf = func(p, c int) catalog.KeyRange {
			if c >= len(t.PartitionRanges[p]) {
				return catalog.KeyRange{}
			}
			return t.PartitionRanges[p][c]
		}
	case t.Format == catalog.Parquet && len(rgRanges) == len(t.Files):
		fileIndex := make(map[string]int, len(t.Files))
		for i, f := range t.Files {
			fileIndex[f] = i
		}
		rangeOf = func(p, c int) catalog.KeyRange {
			r := catalog.EmptyRange
			for i, f := range s.Partitions[p] {
				fi, ok := fileIndex[f]
				if !ok {
					return catalog.KeyRange{}
				}
				rgs := rgRanges[fi]
				lo, hi := 0, len(rgs)
				if s.RowGroups != nil {
					lo, hi = s.RowGroups[p][i].Start, s.RowGroups[p][i].End
				}
				if rgs == nil || hi > len(rgs) {
					return catalog.KeyRange{}
				}
				for _, rg := range rgs[lo:hi] {
					if c >= len(rg) {
						return catalog.KeyRange{}
					}
					r = r.Union(rg[c])
				}
			}
			return r
		}
	default:
		return nil
	}
	var out []int
	ranges := make([]catalog.KeyRange, parts)
	for j := range s.Schema().NumFields() {
		c := j
		if s.Projection != nil {
			c = s.Projection[j]
		}
		for p := range ranges {
			ranges[p] = rangeOf(p, c)
		}
		if catalog.Disjoint(ranges) {
			out = append(out, j)
		}
	}
	return out
}

// scanStats is what the table's metadata guarantees of the scan's output
// columns (physical.ColumnStats): each column's range over every row group
// or memory partition, the bound of its distinct values, and the rows;
// nil when the metadata knows no range at all.
func scanStats(t *catalog.Table, rgRows [][]int64, rgRanges [][][]catalog.KeyRange, s *physical.Scan) *physical.PlanStats {
	fields := t.Schema.NumFields()
	whole := make([]catalog.KeyRange, fields)
	for c := range whole {
		whole[c] = catalog.EmptyRange
	}
	rows := t.Rows
	switch {
	case t.Format == catalog.Memory && len(t.PartitionRanges) > 0:
		for _, pr := range t.PartitionRanges {
			for c := range whole {
				if c < len(pr) {
					whole[c] = whole[c].Union(pr[c])
				} else {
					whole[c] = catalog.KeyRange{}
				}
			}
		}
	case t.Format == catalog.Parquet && len(rgRanges) == len(t.Files) && len(rgRows) == len(t.Files):
		rows = 0
		for i, rgs := range rgRanges {
			for _, n := range rgRows[i] {
				rows += n
			}
			if rgs == nil || len(rgs) != len(rgRows[i]) {
				for c := range whole {
					whole[c] = catalog.KeyRange{}
				}
				continue
			}
			for _, rg := range rgs {
				for c := range whole {
					if c < len(rg) {
						whole[c] = whole[c].Union(rg[c])
					} else {
						whole[c] = catalog.KeyRange{}
					}
				}
			}
		}
	default:
		return nil
	}
	out := &physical.PlanStats{Rows: rows, Cols: make([]physical.ColumnStats, s.Schema().NumFields())}
	if rows < 0 {
		out.Rows = -1
	}
	for j := range out.Cols {
		c := j
		if s.Projection != nil {
			c = s.Projection[j]
		}
		if c >= fields {
			continue // a hive partition column: constant per file, not in the footers
		}
		r := whole[c]
		cs := physical.ColumnStats{LongestAtLeast: r.LongestAtLeast}
		if r.Known {
			cs.Bounded, cs.NoNulls, cs.Lo, cs.Hi = true, true, r.Lo, r.Hi
			if r.Lo > r.Hi { // no rows
				cs.Lo, cs.Hi = 0, 0
			}
		} else if r.Bounded && r.Lo <= r.Hi {
			cs.Bounded, cs.Lo, cs.Hi = true, r.Lo, r.Hi // NULLs possible
		}
		if c < len(t.Distinct) && t.Distinct[c] > 0 {
			cs.Distinct = t.Distinct[c]
		}
		out.Cols[j] = cs
	}
	return out
}

// splitParquet spreads a Parquet table with fewer files than
// target_partitions over target_partitions scan partitions by row-group
// ranges, so one big file is decoded by several goroutines. The row groups of
// all files, in file order, are cut into contiguous runs of about equal row
// counts (a row group is never split). It reports false, leaving out
// untouched, when splitting would not add partitions (enough files already,
// too few row groups) or the row groups are unknown.
func (pl *Planner) splitParquet(t *catalog.Table, rgs [][]int64, out *physical.Scan) bool {
	n := pl.cfg.TargetPartitions
	if t.Format != catalog.Parquet || len(t.Files) >= n || len(rgs) != len(t.Files) {
		return false
	}
	var total int64
	units := 0
	for _, f := range rgs {
		for _, r := range f {
			total += r
		}
		units += len(f)
	}
	if units <= len(t.Files) || total == 0 {
		return false
	}
	n = min(n, units)
	out.Partitions = make([][]string, 0, n)
	out.RowGroups = make([][]physical.RowGroupRange, 0, n)
	var files []string
	var ranges []physical.RowGroupRange
	var done int64
	seen := 0
	for fi, f := range rgs {
		start := 0
		for rg, r := range f {
			done += r
			seen++
			// Close the current partition once it holds its share of the
			// rows, keeping enough row groups for the partitions left.
			p := len(out.Partitions)
			unitsLeft := units - seen
			if p < n-1 && (done*int64(n) >= total*int64(p+1) || unitsLeft == n-1-p) {
				files = append(files, t.Files[fi])
				ranges = append(ranges, physical.RowGroupRange{Start: start, End: rg + 1})
				out.Partitions = append(out.Partitions, files)
				out.RowGroups = append(out.RowGroups, ranges)
				files, ranges = nil, nil
				start = rg + 1
			}
		}
		if start < len(f) {
			files = append(files, t.Files[fi])
			ranges = append(ranges, physical.RowGroupRange{Start: start, End: len(f)})
		}
	}
	out.Partitions = append(out.Partitions, files)
	out.RowGroups = append(out.RowGroups, ranges)
	return true
}

func andAll(es []physical.Expr) physical.Expr {
	var out physical.Expr
	for _, e := range es {
		if out == nil {
			out = e
		} else {
			out = &physical.Binary{Op: physical.OpAnd, Left: out, Right: e, Type: arrow.FixedWidthTypes.Boolean}
		}
	}
	return out
}

func (pl *Planner) aggregate(ctx context.Context, n *logical.Aggregate) (physical.Plan, error) {
	in, err := pl.Plan(ctx, n.Input)
	if err != nil {
		return nil, err
	}
	is := n.Input.Schema()
	groups, err := exprs(n.GroupBy, is)
	if err != nil {
		return nil, err
	}
	outNames := names(n.Schema())
	g := len(groups)
	aggs := make([]physical.AggregateExpr, len(n.Aggs))
	distinct := false
	for i, a := range n.Aggs {
		if aggs[i], err = aggregate(a, is, outNames[g+i]); err != nil {
			return nil, err
		}
		if aggs[i].Distinct && aggs[i].Func == physical.AggCount && aggs[i].Arg.DataType().ID() == arrow.INTERVAL_MONTH_DAY_NANO {
			// Distinct intervals are distinct lengths, as they compare.
			aggs[i].Arg = &physical.ScalarFunc{Name: physical.IntervalKeyFunc, Args: []physical.Expr{aggs[i].Arg}, Type: physical.IntervalKeyType}
		}
		// A collecting aggregate's partial state holds every row, so its
		// DISTINCT needs no special plan.
		distinct = distinct || (aggs[i].Distinct && !aggs[i].Collects())
	}
	groupNames := outNames[:g]
	if iv := intervalKeys(groups); len(iv) > 0 {
		// Interval keys group by their length ('1 mon' with '30 days', as
		// PostgreSQL groups them); each group shows one of its intervals,
		// kept by an extra any_value that a projection puts back in place.
		exprs := make([]physical.Expr, 0, g+len(aggs))
		names := slices.Clone(outNames)
		for k, e := range groups {
			exprs = append(exprs, e) // typed below, once the plan's schema is known
			if slices.Contains(iv, k) {
				aggs = append(aggs, physical.AggregateExpr{Func: physical.AggAnyValue, Arg: e, Type: e.DataType(), Name: groupNames[k] + "[interval]"})
				groups[k] = &physical.ScalarFunc{Name: physical.IntervalKeyFunc, Args: []physical.Expr{e}, Type: physical.IntervalKeyType}
			}
		}
		p := pl.aggregatePlan(in, n, groups, groupNames, aggs, distinct)
		ps := p.Schema()
		extra := g + len(n.Aggs)
		for k := range exprs {
			src := k
			if slices.Contains(iv, k) {
				src = extra
				extra++
			}
			exprs[k] = &physical.Column{Index: src, Name: ps.Field(src).Name, Type: ps.Field(src).Type}
		}
		for i := range n.Aggs {
			exprs = append(exprs, &physical.Column{Index: g + i, Name: ps.Field(g + i).Name, Type: ps.Field(g + i).Type})
		}
		return &physical.Projection{Input: p, Exprs: exprs, Names: names}, nil
	}
	return pl.aggregatePlan(in, n, groups, groupNames, aggs, distinct), nil
}

// hashKeys is keys as an exchange hashes them: an interval by its length
// (IntervalKeyFunc), so that intervals equal under comparison meet.
func hashKeys(keys []physical.Expr) []physical.Expr {
	iv := intervalKeys(keys)
	if len(iv) == 0 {
		return keys
	}
	out := slices.Clone(keys)
	for _, k := range iv {
		out[k] = &physical.ScalarFunc{Name: physical.IntervalKeyFunc, Args: []physical.Expr{out[k]}, Type: physical.IntervalKeyType}
	}
	return out
}

// intervalKeys lists the positions of the interval-typed keys.
func intervalKeys(keys []physical.Expr) []int {
	var out []int
	for i, k := range keys {
		if k.DataType().ID() == arrow.INTERVAL_MONTH_DAY_NANO {
			out = append(out, i)
		}
	}
	return out
}

// aggregatePlan chooses the phases and exchanges of an aggregate.
func (pl *Planner) aggregatePlan(in physical.Plan, n *logical.Aggregate, groups []physical.Expr, groupNames []string, aggs []physical.AggregateExpr, distinct bool) physical.Plan {
	g := len(groups)
	if in.OutputPartitions() > 1 && groupedByDisjoint(in, groups) {
		// Every group lives in one input partition: aggregate each
		// partition on its own, with no exchange and no second phase.
		return &physical.HashAggregate{Input: in, Mode: physical.AggSingle, GroupBy: groups, GroupNames: groupNames, Aggs: aggs}
	}
	if in.OutputPartitions() > 1 && distinct && distinctOverDisjoint(in, aggs) {
		// Each DISTINCT argument value lives in one input partition, so
		// per-partition distinct values are final: two phases, with the
		// final one merging plain states and only partial rows exchanged.
		finals := slices.Clone(aggs)
		for i := range finals {
			finals[i].Distinct = finals[i].Distinct && finals[i].Collects()
		}
		return pl.twoPhase(in, groups, groupNames, aggs, finals)
	}
	if in.OutputPartitions() > 1 && distinct && distinctBySets(aggs) && estimate(n.Input) >= pl.cfg.DistinctSetsRows {
		// Each partition dedupes its own rows and passes every group's set
		// of distinct values; the final phase unites the sets. Only the
		// sets are exchanged, not the rows.
		sets := slices.Clone(aggs)
		for i := range sets {
			sets[i].SetState = sets[i].Distinct && !sets[i].Collects()
		}
		return pl.twoPhase(in, groups, groupNames, sets, sets)
	}
	if in.OutputPartitions() == 1 || distinct {
		// One pass over all rows of each group in one partition.
		if in.OutputPartitions() > 1 {
			if g > 0 {
				in = &physical.Repartition{Input: in, Keys: groups, N: pl.cfg.TargetPartitions}
			} else {
				in = &physical.Coalesce{Input: in}
			}
		}
		return &physical.HashAggregate{Input: in, Mode: physical.AggSingle, GroupBy: groups, GroupNames: groupNames, Aggs: aggs}
	}
	return pl.twoPhase(in, groups, groupNames, aggs, aggs)
}

// twoPhase plans a Partial aggregate per input partition, an exchange of
// its rows by group, and a Final aggregate merging them; partial and final
// are the same aggregates but for DISTINCT (see distinctOverDisjoint).
func (pl *Planner) twoPhase(in physical.Plan, groups []physical.Expr, groupNames []string, partialAggs, finalAggs []physical.AggregateExpr) physical.Plan {
	g := len(groups)
	partial := &physical.HashAggregate{Input: in, Mode: physical.AggPartial, GroupBy: groups, GroupNames: groupNames, Aggs: partialAggs}
	ps := partial.Schema()
	finalGroups := make([]physical.Expr, g)
	for i := range finalGroups {
		finalGroups[i] = &physical.Column{Index: i, Name: groupNames[i], Type: ps.Field(i).Type}
	}
	var mid physical.Plan
	if g > 0 {
		mid = &physical.Repartition{Input: partial, Keys: finalGroups, N: pl.cfg.TargetPartitions}
	} else {
		mid = &physical.Coalesce{Input: partial}
	}
	return &physical.HashAggregate{Input: mid, Mode: physical.AggFinal, GroupBy: finalGroups, GroupNames: groupNames, Aggs: finalAggs}
}

// distinctOverDisjoint reports whether every DISTINCT aggregate's argument
// is a plain column whose values never occur in two of in's partitions.
func distinctOverDisjoint(in physical.Plan, aggs []physical.AggregateExpr) bool {
	disjoint := physical.DisjointColumns(in)
	for _, a := range aggs {
		if !a.Distinct || a.Collects() {
			continue
		}
		c, ok := a.Arg.(*physical.Column)
		if !ok || !slices.Contains(disjoint, c.Index) {
			return false
		}
	}
	return true
}

// distinctBySets reports whether every DISTINCT aggregate can run by sets
// (physical.DistinctSetType).
func distinctBySets(aggs []physical.AggregateExpr) bool {
	for _, a := range aggs {
		if a.Distinct && !a.Collects() && (a.Arg == nil || !physical.DistinctSetType(a.Arg.DataType())) {
			return false
		}
	}
	return true
}

// groupedByDisjoint reports whether a group column is a plain column whose
// values never occur in two of in's partitions (physical.DisjointColumns).
func groupedByDisjoint(in physical.Plan, groups []physical.Expr) bool {
	disjoint := physical.DisjointColumns(in)
	for _, g := range groups {
		if c, ok := g.(*physical.Column); ok && slices.Contains(disjoint, c.Index) {
			return true
		}
	}
	return false
}

var joinTypes = map[logical.JoinType]physical.JoinType{
	logical.InnerJoin: physical.InnerJoin, logical.LeftJoin: physical.LeftJoin,
	logical.RightJoin: physical.RightJoin, logical.FullJoin: physical.FullJoin,
	logical.SemiJoin: physical.SemiJoin, logical.AntiJoin: physical.AntiJoin,
	logical.MarkJoin: physical.MarkJoin,
}

func (pl *Planner) join(ctx context.Context, n *logical.Join) (physical.Plan, error) {
	left, err := pl.Plan(ctx, n.Left)
	if err != nil {
		return nil, err
	}
	right, err := pl.Plan(ctx, n.Right)
	if err != nil {
		return nil, err
	}
	ls, rs := n.Left.Schema(), n.Right.Schema()
	typ := joinTypes[n.Type]
	if len(n.On) == 0 {
		var filter physical.Expr
		if n.Filter != nil {
			if filter, err = Expr(n.Filter, ls.Join(rs)); err != nil {
				return nil, err
			}
		}
		return &physical.NestedLoopJoin{Left: left, Right: right, Type: typ, Filter: filter, MarkName: n.MarkName}, nil
	}
	on := make([]physical.JoinOn, len(n.On))
	for i, p := range n.On {
		l, err := Expr(p.Left, ls)
		if err != nil {
			return nil, err
		}
		r, err := Expr(p.Right, rs)
		if err != nil {
			return nil, err
		}
		if ld, ok := l.DataType().(*arrow.Decimal128Type); ok {
			rd := r.DataType().(*arrow.Decimal128Type)
			if ld.Scale != rd.Scale || ld.Precision != rd.Precision {
				t := logical.Decimal(logical.MaxDecimalPrecision, max(ld.Scale, rd.Scale))
				l, r = castTo(l, t), castTo(r, t)
			}
		} else if !arrow.TypeEqual(l.DataType(), r.DataType()) {
			return nil, qerr.Internalf("planner: join keys %s and %s have types %s and %s", l, r, l.DataType(), r.DataType())
		}
		if l.DataType().ID() == arrow.INTERVAL_MONTH_DAY_NANO {
			// Intervals match by length, as they compare.
			l = &physical.ScalarFunc{Name: physical.IntervalKeyFunc, Args: []physical.Expr{l}, Type: physical.IntervalKeyType}
			r = &physical.ScalarFunc{Name: physical.IntervalKeyFunc, Args: []physical.Expr{r}, Type: physical.IntervalKeyType}
		}
		on[i] = physical.JoinOn{Left: l, Right: r}
	}
	// The hash table is built from the left input: for inner and outer joins
	// put the clearly smaller estimated side there, then restore column order.
	buildLeft := n.Left
	swapped, canSwap := swappedType[n.Type]
	doSwap := canSwap && estimate(n.Right) < estimate(n.Left)/2
	fschema := ls.Join(rs)
	// A semi or anti join outputs left rows; when the right side is clearly
	// smaller, build it instead and probe with the left rows (RightSemi,
	// RightAnti), which output the probe rows in their own order. NOT IN
	// (null-aware) swaps only with one key and no filter, where a NULL
	// build key decides alone.
	semiSwap := false
	if rt, ok := probeSideType[n.Type]; ok && !doSwap && estimate(n.Right) < estimate(n.Left)/2 &&
		(!n.NullAware || (n.Filter == nil && len(on) == 1)) {
		semiSwap = true
		typ = rt
	}
	if doSwap || semiSwap {
		left, right = right, left
		buildLeft = n.Right
		if doSwap {
			typ = joinTypes[swapped]
		}
		for i := range on {
			on[i] = physical.JoinOn{Left: on[i].Right, Right: on[i].Left}
		}
		fschema = rs.Join(ls)
	}
	var filter physical.Expr
	if n.Filter != nil {
		if filter, err = Expr(n.Filter, fschema); err != nil {
			return nil, err
		}
	}
	out := &physical.HashJoin{Type: typ, On: on, Filter: filter, NullAware: n.NullAware, MarkName: n.MarkName}
	// NOT IN and mark joins need the whole right side's NULL keys in one
	// place, which only a shared build side sees.
	needsWhole := n.NullAware || n.Type == logical.MarkJoin
	if !needsWhole && pl.cfg.TargetPartitions > 1 && coPartitioned(left, right, on) {
		// Both sides are already split by the join keys (q97's two
		// aggregates): each partition pair joins on its own, building a
		// part of the left side, with nothing moved.
		out.Mode = physical.Partitioned
		out.Left, out.Right = left, right
	} else if needsWhole || estimate(buildLeft) <= pl.cfg.CollectLeftRows || pl.cfg.TargetPartitions == 1 {
		out.Mode = physical.CollectLeft
		out.Left, out.Right = left, right
	} else {
		out.Mode = physical.Partitioned
		lk, rk := make([]physical.Expr, len(on)), make([]physical.Expr, len(on))
		for i, k := range on {
			lk[i], rk[i] = k.Left, k.Right
		}
		out.Left = &physical.Repartition{Input: left, Keys: lk, N: pl.cfg.TargetPartitions}
		out.Right = &physical.Repartition{Input: right, Keys: rk, N: pl.cfg.TargetPartitions}
	}
	if !doSwap {
		return out, nil
	}
	// Restore the logical column order: original left columns, then right.
	js := out.Schema()
	nl, nr := ls.Len(), rs.Len()
	cols := make([]physical.Expr, 0, nl+nr)
	for i := 0; i < nl; i++ {
		cols = append(cols, &physical.Column{Index: nr + i, Name: js.Field(nr + i).Name, Type: js.Field(nr + i).Type})
	}
	for i := 0; i < nr; i++ {
		cols = append(cols, &physical.Column{Index: i, Name: js.Field(i).Name, Type: js.Field(i).Type})
	}
	return &physical.Projection{Input: out, Exprs: cols, Names: names(n.Schema())}, nil
}

// probeSideType is the physical join that gives a semi or anti join's
// rows by probing with its left input.
var probeSideType = map[logical.JoinType]physical.JoinType{
	logical.SemiJoin: physical.RightSemiJoin, logical.AntiJoin: physical.RightAntiJoin,
}

var swappedType = map[logical.JoinType]logical.JoinType{
	logical.InnerJoin: logical.InnerJoin, logical.LeftJoin: logical.RightJoin,
	logical.RightJoin: logical.LeftJoin, logical.FullJoin: logical.FullJoin,
}

func (pl *Planner) sort(ctx context.Context, n *logical.Sort) (physical.Plan, error) {
	in, err := pl.Plan(ctx, n.Input)
	if err != nil {
		return nil, err
	}
	keys := make([]physical.SortKey, len(n.Keys))
	for i, k := range n.Keys {
		e, err := Expr(k.Expr, n.Input.Schema())
		if err != nil {
			return nil, err
		}
		keys[i] = physical.SortKey{Expr: e, Asc: k.Asc, NullsFirst: k.NullsFirst}
	}
	if in.OutputPartitions() == 1 {
		return &physical.Sort{Input: in, Keys: keys, Fetch: n.Fetch}, nil
	}
	local := &physical.Sort{Input: in, Keys: keys, Fetch: n.Fetch, PreservePartitioning: true}
	return &physical.SortPreservingMerge{Input: local, Keys: keys, Fetch: n.Fetch}, nil
}

func (pl *Planner) limit(ctx context.Context, n *logical.Limit) (physical.Plan, error) {
	in, err := pl.Plan(ctx, n.Input)
	if err != nil {
		return nil, err
	}
	if in.OutputPartitions() > 1 {
		if n.Fetch >= 0 {
			in = &physical.LocalLimit{Input: in, Fetch: logical.AddRows(n.Skip, n.Fetch)}
		}
		in = &physical.Coalesce{Input: in}
	}
	return &physical.Limit{Input: in, Skip: n.Skip, Fetch: n.Fetch}, nil
}

// estimate is the estimated output rows of p (logical.Estimate).
func estimate(p logical.Plan) float64 { return logical.Estimate(p).Rows }

// withCacheHint gives a cache read under a filter the filter's conjuncts
// as its pruning hint (physical.CacheReader.Predicate), through a
// projection of plain columns; in is returned unchanged otherwise.
func withCacheHint(in physical.Plan, pred physical.Expr) physical.Plan {
	switch n := in.(type) {
	case *physical.CacheReader:
		c := *n
		c.Predicate = pred
		return &c
	case *physical.Projection:
		r, ok := n.Input.(*physical.CacheReader)
		if !ok {
			return in
		}
		cols := make([]int, len(n.Exprs))
		for i, e := range n.Exprs {
			c, ok := e.(*physical.Column)
			if !ok {
				cols[i] = -1
				continue
			}
			cols[i] = c.Index
		}
		hint := remapConjuncts(pred, cols)
		if hint == nil {
			return in
		}
		c := *r
		c.Predicate = hint
		p := *n
		p.Input = &c
		return &p
	}
	return in
}

// remapConjuncts keeps the conjuncts of pred that compare one column with
// literals (comparisons, IN, IS NULL), their columns moved through cols
// (output position → input position, -1: computed); nil when none is left.
func remapConjuncts(pred physical.Expr, cols []int) physical.Expr {
	col := func(e physical.Expr) (*physical.Column, bool) {
		c, ok := e.(*physical.Column)
		if !ok || c.Index < 0 || c.Index >= len(cols) || cols[c.Index] < 0 {
			return nil, false
		}
		m := *c
		m.Index = cols[c.Index]
		return &m, true
	}
	var out []physical.Expr
	var walk func(physical.Expr)
	walk = func(e physical.Expr) {
		switch e := e.(type) {
		case *physical.Binary:
			if e.Op == physical.OpAnd {
				walk(e.Left)
				walk(e.Right)
				return
			}
			if c, ok := col(e.Left); ok {
				if _, lit := e.Right.(*physical.Literal); lit {
					b := *e
					b.Left = c
					out = append(out, &b)
				}
			} else if c, ok := col(e.Right); ok {
				if _, lit := e.Left.(*physical.Literal); lit {
					b := *e
					b.Right = c
					out = append(out, &b)
				}
			}
		case *physical.InList:
			if c, ok := col(e.Expr); ok {
				l := *e
				l.Expr = c
				out = append(out, &l)
			}
		case *physical.IsNull:
			if c, ok := col(e.Expr); ok {
				l := *e
				l.Expr = c
				out = append(out, &l)
			}
		}
	}
	walk(pred)
	return andAll(out)
}
