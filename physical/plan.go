package physical

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

// Plan is a physical plan node: a description of an operator, its inputs and
// its output partitioning. The set is closed. Nodes are plain data and are
// never mutated after construction.
type Plan interface {
	isPlan()
	// Schema is the node's output Arrow schema.
	Schema() *arrow.Schema
	Children() []Plan
	// WithChildren returns a copy with new children (same count).
	WithChildren(children []Plan) Plan
	// OutputPartitions is the number of output partitions the node produces.
	OutputPartitions() int
	// String describes the node alone on one line.
	String() string
}

// Format is a scan's file format.
type Format string

// Scan formats.
const (
	FormatParquet Format = "parquet"
	FormatCSV     Format = "csv"
	FormatArrow   Format = "arrow"
	FormatJSON    Format = "json" // newline-delimited JSON
	FormatMemory  Format = "memory"
)

// Scan reads a table. FileSchema is the table's full schema; Projection
// lists the columns produced (nil: all), in that order. Each partition reads
// its list of files (FormatMemory: partition i reads the memory table's
// partition i, found by Table name). Predicate (over the projected output,
// may be nil) is a hint for pruning row groups; rows are not filtered by it.
// Fetch ≥ 0 lets each partition stop after that many rows.
//
// A table with hive partition columns (Options[PartitionColumnsOption])
// has them as the last fields of FileSchema; the files hold only the
// others, and each file's values of them are in Options under
// PartitionValuesKey(file) (see PartitionValues).
//
// RowGroups (Parquet only) splits files across partitions: when non-nil it
// parallels Partitions, and partition p reads only the row groups
// RowGroups[p][i] of file Partitions[p][i], so one file may appear in
// several partitions with disjoint ranges. Nil: every file is read whole.
type Scan struct {
	Table      string
	Format     Format
	FileSchema *arrow.Schema
	Projection []int
	Partitions [][]string
	RowGroups  [][]RowGroupRange
	Options    map[string]string
	Predicate  Expr
	Fetch      int64
	// Disjoint lists output columns (positions in the projected schema)
	// whose values never occur in two partitions, as the planner found from
	// the partitions' value ranges (see DisjointColumns); nil: none known.
	Disjoint []int
	// Stats is what the planner knew of the scanned rows (one entry per
	// output column), from the table's footers or memory partitions; nil:
	// nothing. Only the hash tables' layout choice reads it.
	Stats *PlanStats
}

// RowGroupRange is the row groups [Start, End) of one Parquet file.
type RowGroupRange struct{ Start, End int }

// Filter keeps rows where Predicate is true.
type Filter struct {
	Input     Plan
	Predicate Expr
}

// Projection computes Exprs, naming the output columns Names.
type Projection struct {
	Input Plan
	Exprs []Expr
	Names []string
}

// AggMode is how a hash aggregate splits work.
type AggMode int

// Aggregate modes: Partial computes per-partition state, Final merges state
// (its input is a Partial's output, hash-partitioned or coalesced), Single
// does both at once over all rows of each group in one partition.
const (
	AggPartial AggMode = iota
	AggFinal
	AggSingle
)

func (m AggMode) String() string { return [...]string{"Partial", "Final", "Single"}[m] }

// AggFunc mirrors logical.AggFunc.
type AggFunc int

// Aggregate functions.
const (
	AggCount AggFunc = iota
	AggSum
	AggAvg
	AggMin
	AggMax
	AggVarSamp
	AggVarPop
	AggStddevSamp
	AggStddevPop
	AggBoolAnd
	AggBoolOr
	AggBitAnd
	AggBitOr
	AggBitXor
	AggAnyValue
	AggCovarPop
	AggCovarSamp
	AggCorr
	AggStringAgg
	AggPercentileCont
	AggPercentileDisc
	AggArrayAgg
)

// AggLast is the last aggregate function (the codec checks the range).
const AggLast = AggArrayAgg

// PairFunc is the ScalarFunc that passes a two-argument aggregate's
// arguments as one: a struct array of the two (PairType), covar_* and corr's
// (y, x) as Float64, string_agg's (value, separator) as Utf8. A collecting
// aggregate (AggregateExpr.Collects) passes all its arguments so (RowType).
const PairFunc = "pair"

// PairType is the type of a PairFunc call over arguments of types a and b.
func PairType(a, b arrow.DataType) arrow.DataType {
	return arrow.StructOf(arrow.Field{Name: "a", Type: a, Nullable: true}, arrow.Field{Name: "b", Type: b, Nullable: true})
}

// RowType is the type of a PairFunc call over arguments of types ts: a
// struct with one nullable field per argument.
func RowType(ts ...arrow.DataType) *arrow.StructType {
	fs := make([]arrow.Field, len(ts))
	for i, t := range ts {
		fs[i] = arrow.Field{Name: fmt.Sprintf("f%d", i), Type: t, Nullable: true}
	}
	return arrow.StructOf(fs...)
}

// IntervalKeyFunc is the ScalarFunc the planner puts over an interval
// grouping or join key: the interval's length in nanoseconds, a month
// counted as 30 days and a day as 24 hours, as IntervalKeyType, so that
// intervals equal under comparison ('1 mon' and '30 days') hash and match
// alike, as in PostgreSQL and DuckDB.
const IntervalKeyFunc = "interval_key"

// IntervalKeyType is the type of an IntervalKeyFunc call.
var IntervalKeyType = &arrow.Decimal128Type{Precision: 38, Scale: 0}

// AggOrder is the direction of one ORDER BY key inside an aggregate call.
type AggOrder struct {
	Desc       bool
	NullsFirst bool
}

func (f AggFunc) String() string {
	return [...]string{"count", "sum", "avg", "min", "max", "var_samp", "var_pop", "stddev_samp", "stddev_pop",
		"bool_and", "bool_or", "bit_and", "bit_or", "bit_xor", "any_value", "covar_pop", "covar_samp", "corr", "string_agg", "percentile_cont", "percentile_disc", "array_agg"}[f]
}

// AggregateExpr is one aggregate of a HashAggregate. Arg is nil for COUNT(*).
// Type is the final result type. Distinct aggregates run in AggSingle mode,
// or in two phases:
//   - SetState (both phases): AggPartial passes each group's set of
//     distinct values, AggFinal unites the sets and aggregates them.
//     The planner uses it only for integer-like and Date32 arguments;
//     a spilling aggregate re-aggregates its DISTINCT sets of any type so.
//   - otherwise, when each value of Arg occurs in one input partition only
//     (DisjointColumns): a partition's distinct values are then all its
//     group's, AggPartial passes the plain state and AggFinal merges it as
//     the plain aggregate's (Distinct false there).
//
// State layout between Partial and Final (StateFields): count → [Int64];
// sum → [Type]; min, max, bool_*, bit_*, any_value → [Type]; avg → [sum, count Int64] where sum is
// Float64 for integer and float inputs and DECIMAL(38, s) for DECIMAL(p, s);
// var_* and stddev_* → [count Int64, mean Float64, m2 Float64] (the sum
// of squared deviations from the mean, merged by Chan's formula);
// covar_*, corr → [count, mean_y, mean_x, c (the co-moment), m2_y, m2_x];
// string_agg → [text, the separator of its first value]; percentile_* →
// [List<Float64> the group's values, fraction];
// with
// SetState → [List<Arg's type>]; a collecting aggregate (Collects) →
// [List<its rows>] (CollectRowType).
//
// A collecting aggregate (array_agg; string_agg ordered, DISTINCT or
// filtered) keeps its group's rows, so its partial state is complete
// whatever Distinct says: it runs in two phases like a plain aggregate, and
// its final phase sorts (Order) and dedupes (Distinct, by value) each
// group's rows. Its Arg is a PairFunc of RowType: the aggregate's own
// arguments (value; string_agg's separator), one field per Order key, then
// a boolean FILTER condition when Filter is set.
type AggregateExpr struct {
	Func     AggFunc
	Arg      Expr
	Distinct bool
	SetState bool
	Type     arrow.DataType
	Name     string
	Order    []AggOrder
	Filter   bool
}

// Collects reports an aggregate that keeps every row of its group until the
// final phase (see AggregateExpr).
func (a AggregateExpr) Collects() bool {
	return a.Func == AggArrayAgg || (a.Func == AggStringAgg && (len(a.Order) > 0 || a.Distinct || a.Filter))
}

// CollectRowType is a collecting aggregate's row in its partial state: its
// Arg's fields without the FILTER condition.
func (a AggregateExpr) CollectRowType() *arrow.StructType {
	st, ok := a.Arg.DataType().(*arrow.StructType)
	if !ok {
		return arrow.StructOf()
	}
	fs := st.Fields()
	if a.Filter && len(fs) > 0 {
		fs = fs[:len(fs)-1]
	}
	return arrow.StructOf(fs...)
}

func (a AggregateExpr) String() string {
	arg := "*"
	if a.Arg != nil {
		arg = a.Arg.String()
	}
	if a.Distinct {
		arg = "DISTINCT " + arg
	}
	if a.Collects() {
		// The keys and the condition are named by their 1-based field
		// position in the argument struct.
		own := 1
		if a.Func == AggStringAgg {
			own = 2
		}
		for i, o := range a.Order {
			sep := ", "
			if i == 0 {
				sep = " ORDER BY "
			}
			arg += fmt.Sprintf("%s$%d", sep, own+i+1)
			if o.Desc {
				arg += " DESC"
			}
			if o.NullsFirst {
				arg += " NULLS FIRST"
			} else {
				arg += " NULLS LAST"
			}
		}
		if a.Filter {
			return fmt.Sprintf("%s(%s) FILTER (WHERE $%d)", a.Func, arg, own+len(a.Order)+1)
		}
	}
	if a.SetState {
		return fmt.Sprintf("%s(%s) by sets", a.Func, arg)
	}
	return fmt.Sprintf("%s(%s)", a.Func, arg)
}

// DistinctSetType reports whether a DISTINCT aggregate over values of dt
// can run by sets (AggregateExpr.SetState): integer-like types up to
// 64 bits signed or 32 bits unsigned, and Date32.
func DistinctSetType(dt arrow.DataType) bool {
	switch dt.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64,
		arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.DATE32:
		return true
	}
	return false
}

// StateFields is the partial state this aggregate passes from Partial to Final.
func (a AggregateExpr) StateFields() []arrow.Field {
	n := a.Name
	if a.SetState && a.Arg != nil {
		return []arrow.Field{{Name: n + "[distinct]", Type: arrow.ListOf(a.Arg.DataType())}}
	}
	if a.Collects() {
		return []arrow.Field{{Name: n + "[rows]", Type: arrow.ListOf(a.CollectRowType()), Nullable: true}}
	}
	switch a.Func {
	case AggCount:
		return []arrow.Field{{Name: n + "[count]", Type: arrow.PrimitiveTypes.Int64}}
	case AggAvg:
		st := arrow.DataType(arrow.PrimitiveTypes.Float64)
		if d, ok := a.Arg.DataType().(*arrow.Decimal128Type); ok {
			st = &arrow.Decimal128Type{Precision: 38, Scale: d.Scale}
		}
		return []arrow.Field{
			{Name: n + "[sum]", Type: st, Nullable: true},
			{Name: n + "[count]", Type: arrow.PrimitiveTypes.Int64},
		}
	case AggPercentileCont, AggPercentileDisc:
		return []arrow.Field{{Name: n + "[values]", Type: arrow.ListOf(arrow.PrimitiveTypes.Float64)}, {Name: n + "[fraction]", Type: arrow.PrimitiveTypes.Float64}}
	case AggStringAgg:
		return []arrow.Field{{Name: n + "[text]", Type: arrow.BinaryTypes.String, Nullable: true}, {Name: n + "[first_separator]", Type: arrow.BinaryTypes.String, Nullable: true}}
	case AggCovarPop, AggCovarSamp, AggCorr:
		f := func(s string) arrow.Field {
			return arrow.Field{Name: n + "[" + s + "]", Type: arrow.PrimitiveTypes.Float64}
		}
		return []arrow.Field{{Name: n + "[count]", Type: arrow.PrimitiveTypes.Int64}, f("mean_y"), f("mean_x"), f("c"), f("m2_y"), f("m2_x")}
	case AggVarSamp, AggVarPop, AggStddevSamp, AggStddevPop:
		return []arrow.Field{
			{Name: n + "[count]", Type: arrow.PrimitiveTypes.Int64},
			{Name: n + "[mean]", Type: arrow.PrimitiveTypes.Float64},
			{Name: n + "[m2]", Type: arrow.PrimitiveTypes.Float64},
		}
	default:
		return []arrow.Field{{Name: n + "[" + a.Func.String() + "]", Type: a.Type, Nullable: true}}
	}
}

// HashAggregate groups by GroupBy (named GroupNames) and computes Aggs.
// Output: group columns then, in Partial mode, each aggregate's StateFields,
// else each aggregate's result. In Final mode GroupBy are the Partial
// output's group columns and each AggregateExpr.Arg is ignored: its state is
// read from the input columns after the groups, in order.
type HashAggregate struct {
	Input      Plan
	Mode       AggMode
	GroupBy    []Expr
	GroupNames []string
	Aggs       []AggregateExpr
}

// JoinType mirrors logical.JoinType.
type JoinType int

// Join types.
const (
	InnerJoin JoinType = iota
	LeftJoin
	RightJoin
	FullJoin
	SemiJoin
	AntiJoin
	MarkJoin
	// RightSemiJoin and RightAntiJoin are SemiJoin and AntiJoin with the
	// inputs swapped, so that the smaller side is built: they output the
	// Right (probe) rows that have (RightSemi) or lack (RightAnti) a match
	// in Left, Right's columns only. The planner makes them; the logical
	// plan has no such types. A filter sees Left's columns, then Right's.
	RightSemiJoin
	RightAntiJoin
)

func (t JoinType) String() string {
	return [...]string{"Inner", "Left", "Right", "Full", "LeftSemi", "LeftAnti", "LeftMark", "RightSemi", "RightAnti"}[t]
}

// JoinMode is how a hash join distributes its inputs.
type JoinMode int

// Join modes: CollectLeft builds one hash table from all of Left's partitions
// (shared by every probe partition); Partitioned joins left partition i with
// right partition i (both hash-partitioned on the keys into the same count).
const (
	CollectLeft JoinMode = iota
	Partitioned
)

func (m JoinMode) String() string { return [...]string{"CollectLeft", "Partitioned"}[m] }

// JoinOn is one equality key: Left over the left input, Right over the right.
type JoinOn struct{ Left, Right Expr }

// HashJoin joins Left (build side) and Right (probe side) on equal keys
// (NULL keys never match). Filter, if set, is evaluated over the
// concatenation of left and right columns. NullAware: see logical.Join. The
// output is left columns then right columns (Semi/Anti: left only; Mark: left
// plus a nullable Boolean MarkName). Output partitions follow Right.
type HashJoin struct {
	Left, Right Plan
	Mode        JoinMode
	Type        JoinType
	On          []JoinOn
	Filter      Expr
	NullAware   bool
	MarkName    string
}

// NestedLoopJoin joins every Left row (collected once) with every Right row
// where Filter is true (nil: a cross join). Output as HashJoin.
type NestedLoopJoin struct {
	Left, Right Plan
	Type        JoinType
	Filter      Expr
	MarkName    string
}

// SortKey is one sort key.
type SortKey struct {
	Expr       Expr
	Asc        bool
	NullsFirst bool
}

func (k SortKey) String() string {
	d, n := "DESC", "NULLS LAST"
	if k.Asc {
		d = "ASC"
	}
	if k.NullsFirst {
		n = "NULLS FIRST"
	}
	return fmt.Sprintf("%s %s %s", k.Expr, d, n)
}

// Sort sorts each input partition (PreservePartitioning) or, otherwise, the
// single input partition. Fetch ≥ 0 keeps only the first Fetch rows (top-k).
// PartitionLimit, when set, keeps only the rows a ranking filter above the
// window this sort feeds can pass (Fetch is then -1).
type Sort struct {
	Input                Plan
	Keys                 []SortKey
	Fetch                int64
	PreservePartitioning bool
	PartitionLimit       *PartitionLimit
}

// TopKMode is which rows of a window partition a PartitionLimit keeps.
type TopKMode int

// The modes, one per ranking function a filter may bound.
const (
	// TopKRows keeps the first K rows (row_number() <= K).
	TopKRows TopKMode = iota
	// TopKTies keeps the first K rows and every row tied with the K-th
	// on the ORDER BY keys (rank() <= K).
	TopKTies
	// TopKDistinct keeps the rows of the first K distinct ORDER BY values
	// (dense_rank() <= K).
	TopKDistinct
)

var topKModeNames = [...]string{"rows", "ties", "distinct"}

func (m TopKMode) String() string {
	if m < 0 || int(m) >= len(topKModeNames) {
		return fmt.Sprintf("TopKMode(%d)", int(m))
	}
	return topKModeNames[m]
}

// PartitionLimit is a per-window-partition top-k of a Sort: the first Keys
// sort keys are the window's PARTITION BY, the rest its ORDER BY, and of
// each window partition (rows equal on the first Keys keys, NULLs equal)
// only the first K rows by Mode are kept. The rows kept are in sorted order
// and are exactly those whose ranking value is at most K, so the ranking
// functions computed over them are the same as over all rows.
type PartitionLimit struct {
	Keys int
	K    int64
	Mode TopKMode
}

func (l PartitionLimit) String() string {
	return fmt.Sprintf("partition_topk(keys=%d, k=%d, %s)", l.Keys, l.K, l.Mode)
}

// SortPreservingMerge merges sorted partitions into one sorted partition.
type SortPreservingMerge struct {
	Input Plan
	Keys  []SortKey
	Fetch int64
}

// Limit skips Skip rows then passes at most Fetch rows (Fetch < 0: all) of its
// single input partition.
type Limit struct {
	Input Plan
	Skip  int64
	Fetch int64
}

// LocalLimit passes at most Fetch rows of each partition.
type LocalLimit struct {
	Input Plan
	Fetch int64
}

// Union outputs the partitions of each input in turn (UNION ALL).
type Union struct {
	Inputs []Plan
}

// Values produces Rows (literals of OutSchema's types) in one partition.
type Values struct {
	OutSchema *arrow.Schema
	Rows      [][]*Literal
}

// Empty produces no rows, or one row of no columns if ProduceOneRow.
type Empty struct {
	OutSchema     *arrow.Schema
	ProduceOneRow bool
}

// Repartition redistributes all input partitions into N output partitions,
// by hash of Keys (rows with equal keys meet in one partition), or round
// robin when Keys is empty.
//
//	in0 ─┐        ┌─► out0
//	in1 ─┼─ hash ─┼─► out1
//	in2 ─┘        └─► out2
type Repartition struct {
	Input Plan
	Keys  []Expr
	N     int
}

// Coalesce merges all input partitions into one, in no particular order.
type Coalesce struct {
	Input Plan
}

func (*Scan) isPlan()                {}
func (*Filter) isPlan()              {}
func (*Projection) isPlan()          {}
func (*HashAggregate) isPlan()       {}
func (*HashJoin) isPlan()            {}
func (*NestedLoopJoin) isPlan()      {}
func (*Sort) isPlan()                {}
func (*SortPreservingMerge) isPlan() {}
func (*Limit) isPlan()               {}
func (*LocalLimit) isPlan()          {}
func (*Union) isPlan()               {}
func (*Values) isPlan()              {}
func (*Empty) isPlan()               {}
func (*Repartition) isPlan()         {}
func (*Coalesce) isPlan()            {}

// ---- schemas ----

func (s *Scan) Schema() *arrow.Schema {
	if s.Projection == nil {
		return s.FileSchema
	}
	fs := make([]arrow.Field, len(s.Projection))
	for i, c := range s.Projection {
		fs[i] = s.FileSchema.Field(c)
	}
	return arrow.NewSchema(fs, nil)
}
func (f *Filter) Schema() *arrow.Schema { return f.Input.Schema() }
func (p *Projection) Schema() *arrow.Schema {
	fs := make([]arrow.Field, len(p.Exprs))
	for i, e := range p.Exprs {
		fs[i] = arrow.Field{Name: p.Names[i], Type: e.DataType(), Nullable: true}
	}
	return arrow.NewSchema(fs, nil)
}
func (a *HashAggregate) Schema() *arrow.Schema {
	var fs []arrow.Field
	for i, g := range a.GroupBy {
		fs = append(fs, arrow.Field{Name: a.GroupNames[i], Type: g.DataType(), Nullable: true})
	}
	for _, ag := range a.Aggs {
		if a.Mode == AggPartial {
			fs = append(fs, ag.StateFields()...)
		} else {
			fs = append(fs, arrow.Field{Name: ag.Name, Type: ag.Type, Nullable: ag.Func != AggCount})
		}
	}
	return arrow.NewSchema(fs, nil)
}
func joinSchema(l, r *arrow.Schema, t JoinType, mark string) *arrow.Schema {
	nullable := func(fs []arrow.Field) []arrow.Field {
		out := make([]arrow.Field, len(fs))
		for i, f := range fs {
			f.Nullable = true
			out[i] = f
		}
		return out
	}
	lf, rf := l.Fields(), r.Fields()
	switch t {
	case SemiJoin, AntiJoin:
		return l
	case RightSemiJoin, RightAntiJoin:
		return r
	case MarkJoin:
		return arrow.NewSchema(append(lf, arrow.Field{Name: mark, Type: arrow.FixedWidthTypes.Boolean, Nullable: true}), nil)
	case LeftJoin:
		rf = nullable(rf)
	case RightJoin:
		lf = nullable(lf)
	case FullJoin:
		lf, rf = nullable(lf), nullable(rf)
	}
	return arrow.NewSchema(append(lf, rf...), nil)
}
func (j *HashJoin) Schema() *arrow.Schema {
	return joinSchema(j.Left.Schema(), j.Right.Schema(), j.Type, j.MarkName)
}
func (j *NestedLoopJoin) Schema() *arrow.Schema {
	return joinSchema(j.Left.Schema(), j.Right.Schema(), j.Type, j.MarkName)
}
func (s *Sort) Schema() *arrow.Schema { return s.Input.Schema() }
func (s *SortPreservingMerge) Schema() *arrow.Schema {
	return s.Input.Schema()
}
func (l *Limit) Schema() *arrow.Schema       { return l.Input.Schema() }
func (l *LocalLimit) Schema() *arrow.Schema  { return l.Input.Schema() }
func (u *Union) Schema() *arrow.Schema       { return u.Inputs[0].Schema() }
func (v *Values) Schema() *arrow.Schema      { return v.OutSchema }
func (e *Empty) Schema() *arrow.Schema       { return e.OutSchema }
func (r *Repartition) Schema() *arrow.Schema { return r.Input.Schema() }
func (c *Coalesce) Schema() *arrow.Schema    { return c.Input.Schema() }

// ---- children ----

func (*Scan) Children() []Plan                  { return nil }
func (f *Filter) Children() []Plan              { return []Plan{f.Input} }
func (p *Projection) Children() []Plan          { return []Plan{p.Input} }
func (a *HashAggregate) Children() []Plan       { return []Plan{a.Input} }
func (j *HashJoin) Children() []Plan            { return []Plan{j.Left, j.Right} }
func (j *NestedLoopJoin) Children() []Plan      { return []Plan{j.Left, j.Right} }
func (s *Sort) Children() []Plan                { return []Plan{s.Input} }
func (s *SortPreservingMerge) Children() []Plan { return []Plan{s.Input} }
func (l *Limit) Children() []Plan               { return []Plan{l.Input} }
func (l *LocalLimit) Children() []Plan          { return []Plan{l.Input} }
func (u *Union) Children() []Plan               { return u.Inputs }
func (*Values) Children() []Plan                { return nil }
func (*Empty) Children() []Plan                 { return nil }
func (r *Repartition) Children() []Plan         { return []Plan{r.Input} }
func (c *Coalesce) Children() []Plan            { return []Plan{c.Input} }

func (s *Scan) WithChildren([]Plan) Plan            { return s }
func (f *Filter) WithChildren(c []Plan) Plan        { n := *f; n.Input = c[0]; return &n }
func (p *Projection) WithChildren(c []Plan) Plan    { n := *p; n.Input = c[0]; return &n }
func (a *HashAggregate) WithChildren(c []Plan) Plan { n := *a; n.Input = c[0]; return &n }
func (j *HashJoin) WithChildren(c []Plan) Plan {
	n := *j
	n.Left, n.Right = c[0], c[1]
	return &n
}
func (j *NestedLoopJoin) WithChildren(c []Plan) Plan {
	n := *j
	n.Left, n.Right = c[0], c[1]
	return &n
}
func (s *Sort) WithChildren(c []Plan) Plan { n := *s; n.Input = c[0]; return &n }
func (s *SortPreservingMerge) WithChildren(c []Plan) Plan {
	n := *s
	n.Input = c[0]
	return &n
}
func (l *Limit) WithChildren(c []Plan) Plan       { n := *l; n.Input = c[0]; return &n }
func (l *LocalLimit) WithChildren(c []Plan) Plan  { n := *l; n.Input = c[0]; return &n }
func (u *Union) WithChildren(c []Plan) Plan       { return &Union{Inputs: append([]Plan(nil), c...)} }
func (v *Values) WithChildren([]Plan) Plan        { return v }
func (e *Empty) WithChildren([]Plan) Plan         { return e }
func (r *Repartition) WithChildren(c []Plan) Plan { n := *r; n.Input = c[0]; return &n }
func (c *Coalesce) WithChildren(ch []Plan) Plan   { return &Coalesce{Input: ch[0]} }

// ---- partitioning ----

func (s *Scan) OutputPartitions() int           { return max(1, len(s.Partitions)) }
func (f *Filter) OutputPartitions() int         { return f.Input.OutputPartitions() }
func (p *Projection) OutputPartitions() int     { return p.Input.OutputPartitions() }
func (a *HashAggregate) OutputPartitions() int  { return a.Input.OutputPartitions() }
func (j *HashJoin) OutputPartitions() int       { return j.Right.OutputPartitions() }
func (j *NestedLoopJoin) OutputPartitions() int { return j.Right.OutputPartitions() }
func (s *Sort) OutputPartitions() int {
	if s.PreservePartitioning {
		return s.Input.OutputPartitions()
	}
	return 1
}
func (*SortPreservingMerge) OutputPartitions() int { return 1 }
func (*Limit) OutputPartitions() int               { return 1 }
func (l *LocalLimit) OutputPartitions() int        { return l.Input.OutputPartitions() }
func (u *Union) OutputPartitions() int {
	n := 0
	for _, in := range u.Inputs {
		n += in.OutputPartitions()
	}
	return n
}
func (*Values) OutputPartitions() int        { return 1 }
func (*Empty) OutputPartitions() int         { return 1 }
func (r *Repartition) OutputPartitions() int { return r.N }
func (*Coalesce) OutputPartitions() int      { return 1 }

// ---- display ----

func (s *Scan) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%sScan: %s partitions=%d", strings.ToUpper(string(s.Format[:1]))+string(s.Format[1:]), s.Table, s.OutputPartitions())
	if s.Projection != nil {
		names := make([]string, len(s.Projection))
		for i, c := range s.Projection {
			names[i] = s.FileSchema.Field(c).Name
		}
		fmt.Fprintf(&b, " projection=[%s]", strings.Join(names, ", "))
	}
	if s.Predicate != nil {
		fmt.Fprintf(&b, " predicate=%s", s.Predicate)
	}
	if s.Fetch >= 0 {
		fmt.Fprintf(&b, " fetch=%d", s.Fetch)
	}
	b.WriteString(disjointSuffix(s.Schema(), s.Disjoint))
	if s.RowGroups != nil {
		b.WriteString(" row_groups=[")
		for p, rs := range s.RowGroups {
			if p > 0 {
				b.WriteString(", ")
			}
			for i, r := range rs {
				if i > 0 {
					b.WriteString("+")
				}
				fmt.Fprintf(&b, "%d-%d", r.Start, r.End)
			}
		}
		b.WriteString("]")
	}
	return b.String()
}
func (f *Filter) String() string { return "FilterExec: " + f.Predicate.String() }
func (p *Projection) String() string {
	parts := make([]string, len(p.Exprs))
	for i, e := range p.Exprs {
		parts[i] = fmt.Sprintf("%s as %s", e, p.Names[i])
	}
	return "ProjectionExec: " + strings.Join(parts, ", ")
}
func (a *HashAggregate) String() string {
	aggs := make([]string, len(a.Aggs))
	for i, ag := range a.Aggs {
		aggs[i] = ag.String()
	}
	return fmt.Sprintf("HashAggregateExec: mode=%s, gby=[%s], aggr=[%s]", a.Mode, exprList(a.GroupBy), strings.Join(aggs, ", "))
}
func (j *HashJoin) String() string {
	on := make([]string, len(j.On))
	for i, k := range j.On {
		on[i] = fmt.Sprintf("(%s, %s)", k.Left, k.Right)
	}
	s := fmt.Sprintf("HashJoinExec: mode=%s, join_type=%s, on=[%s]", j.Mode, j.Type, strings.Join(on, ", "))
	if j.Filter != nil {
		s += ", filter=" + j.Filter.String()
	}
	if j.NullAware {
		s += ", null_aware"
	}
	return s
}
func (j *NestedLoopJoin) String() string {
	s := "NestedLoopJoinExec: join_type=" + j.Type.String()
	if j.Filter != nil {
		s += ", filter=" + j.Filter.String()
	}
	return s
}
func sortKeys(keys []SortKey) string {
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k.String()
	}
	return strings.Join(parts, ", ")
}
func (s *Sort) String() string {
	out := "SortExec: expr=[" + sortKeys(s.Keys) + "]"
	if s.Fetch >= 0 {
		out = fmt.Sprintf("SortExec: TopK(fetch=%d), expr=[%s]", s.Fetch, sortKeys(s.Keys))
	}
	if s.PartitionLimit != nil {
		out = fmt.Sprintf("SortExec: %s, expr=[%s]", s.PartitionLimit, sortKeys(s.Keys))
	}
	if s.PreservePartitioning {
		out += ", preserve_partitioning=true"
	}
	return out
}
func (s *SortPreservingMerge) String() string {
	out := "SortPreservingMergeExec: [" + sortKeys(s.Keys) + "]"
	if s.Fetch >= 0 {
		out += fmt.Sprintf(", fetch=%d", s.Fetch)
	}
	return out
}
func (l *Limit) String() string {
	if l.Fetch < 0 {
		return fmt.Sprintf("GlobalLimitExec: skip=%d, fetch=None", l.Skip)
	}
	return fmt.Sprintf("GlobalLimitExec: skip=%d, fetch=%d", l.Skip, l.Fetch)
}
func (l *LocalLimit) String() string { return fmt.Sprintf("LocalLimitExec: fetch=%d", l.Fetch) }
func (u *Union) String() string      { return "UnionExec" }
func (v *Values) String() string     { return fmt.Sprintf("ValuesExec: rows=%d", len(v.Rows)) }
func (e *Empty) String() string {
	if e.ProduceOneRow {
		return "EmptyExec: rows=1"
	}
	return "EmptyExec: rows=0"
}
func (r *Repartition) String() string {
	if len(r.Keys) == 0 {
		return fmt.Sprintf("RepartitionExec: partitioning=RoundRobinBatch(%d), input_partitions=%d", r.N, r.Input.OutputPartitions())
	}
	return fmt.Sprintf("RepartitionExec: partitioning=Hash([%s], %d), input_partitions=%d", exprList(r.Keys), r.N, r.Input.OutputPartitions())
}
func (c *Coalesce) String() string { return "CoalescePartitionsExec" }

// Indent renders p as numbered, indented lines (see logical.Indent).
func Indent(p Plan) string {
	var b strings.Builder
	n := 0
	var walk func(Plan, int)
	seen := map[int]bool{}
	walk = func(p Plan, depth int) {
		n++
		line := p.String()
		c, isCTE := p.(*SharedCTE)
		if isCTE && seen[c.ID] {
			line = c.refString()
		}
		fmt.Fprintf(&b, "%02d)%s%s\n", n, strings.Repeat("--", depth), line)
		if isCTE {
			if seen[c.ID] {
				return
			}
			seen[c.ID] = true
		}
		for _, c := range p.Children() {
			walk(c, depth+1)
		}
	}
	walk(p, 0)
	return b.String()
}

// disjointSuffix is EXPLAIN's " disjoint=[names]" for the columns cols of
// schema, or "" when there are none.
func disjointSuffix(schema *arrow.Schema, cols []int) string {
	if len(cols) == 0 {
		return ""
	}
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = schema.Field(c).Name
	}
	return " disjoint=[" + strings.Join(names, ", ") + "]"
}
