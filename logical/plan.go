package logical

import (
	"fmt"
	"math"
	"strings"

	"github.com/quiverdb/quiver/catalog"
	"github.com/quiverdb/quiver/qerr"
)

// Plan is a logical plan node. The set of nodes is closed (sealed by an
// unexported method); plans are immutable and build new nodes on rewrite.
//
// Contract: Schema is fixed at construction; WithChildren and WithExprs
// re-validate and return a planning error if the new parts do not fit;
// String describes the node alone (not its children) on one line.
type Plan interface {
	isPlan()
	Schema() *Schema
	Children() []Plan
	WithChildren(children []Plan) (Plan, error)
	// Exprs returns the node's own expressions (not its children's), in a fixed order.
	Exprs() []Expr
	// WithExprs returns a copy with Exprs replaced; len must match Exprs.
	WithExprs(exprs []Expr) (Plan, error)
	String() string
}

func exprList(es []Expr) string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.String()
	}
	return strings.Join(parts, ", ")
}

func wantChildren(p Plan, got []Plan, n int) error {
	if len(got) != n {
		return qerr.Internalf("%T.WithChildren: want %d children, got %d", p, n, len(got))
	}
	return nil
}

// ---- Scan -------------------------------------------------------------------

// Scan reads a catalog table. Projection lists the table columns read (nil:
// all). Filters are conjuncts pushed down for pruning (row groups, files);
// they are a hint: the Filter above the scan stays. Qualifier names the
// relation (the table name or its alias).
type Scan struct {
	Table      *catalog.Table
	Qualifier  string
	Projection []int
	Filters    []Expr
	Fetch      int64 // rows the scan may stop after, -1 for all
	schema     *Schema
}

// NewScan returns a scan of all columns of t.
func NewScan(t *catalog.Table, qualifier string) *Scan {
	s := &Scan{Table: t, Qualifier: qualifier, Fetch: -1}
	s.schema = s.computeSchema()
	return s
}

func (s *Scan) computeSchema() *Schema {
	full := FromArrow(s.Qualifier, s.Table.Schema)
	if s.Projection == nil {
		return full
	}
	fs := make([]Field, len(s.Projection))
	for i, c := range s.Projection {
		fs[i] = full.Fields[c]
	}
	return &Schema{Fields: fs}
}

// WithProjection returns the scan reading only the given table columns.
func (s *Scan) WithProjection(cols []int) *Scan {
	n := *s
	n.Projection = cols
	n.schema = n.computeSchema()
	return &n
}

// WithFilters returns the scan with pushed-down filters.
func (s *Scan) WithFilters(f []Expr) *Scan {
	n := *s
	n.Filters = f
	return &n
}

func (*Scan) isPlan()                               {}
func (s *Scan) Schema() *Schema                     { return s.schema }
func (s *Scan) Children() []Plan                    { return nil }
func (s *Scan) WithChildren(c []Plan) (Plan, error) { return s, wantChildren(s, c, 0) }
func (s *Scan) Exprs() []Expr                       { return s.Filters }
func (s *Scan) WithExprs(e []Expr) (Plan, error)    { return s.WithFilters(e), nil }
func (s *Scan) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "TableScan: %s", s.Table.Name)
	if s.Qualifier != "" && !strings.EqualFold(s.Qualifier, s.Table.Name) {
		fmt.Fprintf(&b, " AS %s", s.Qualifier)
	}
	if s.Projection != nil {
		names := make([]string, len(s.Projection))
		for i, c := range s.Projection {
			names[i] = s.Table.Schema.Field(c).Name
		}
		fmt.Fprintf(&b, " projection=[%s]", strings.Join(names, ", "))
	}
	if len(s.Filters) > 0 {
		fmt.Fprintf(&b, " filters=[%s]", exprList(s.Filters))
	}
	if s.Fetch >= 0 {
		fmt.Fprintf(&b, " fetch=%d", s.Fetch)
	}
	return b.String()
}

// ---- Filter -----------------------------------------------------------------

// Filter keeps the rows where Predicate is true (not false, not NULL).
type Filter struct {
	Input     Plan
	Predicate Expr
}

// NewFilter checks that predicate is boolean over input.
func NewFilter(input Plan, predicate Expr) (*Filter, error) {
	t, _, err := predicate.DataType(input.Schema())
	if err != nil {
		return nil, err
	}
	if t.ID() != Bool.ID() && t.ID() != Null.ID() {
		return nil, qerr.Planf("filter predicate %s must be boolean, not %s", predicate, TypeString(t))
	}
	return &Filter{Input: input, Predicate: predicate}, nil
}

func (*Filter) isPlan()            {}
func (f *Filter) Schema() *Schema  { return f.Input.Schema() }
func (f *Filter) Children() []Plan { return []Plan{f.Input} }
func (f *Filter) WithChildren(c []Plan) (Plan, error) {
	if err := wantChildren(f, c, 1); err != nil {
		return nil, err
	}
	return NewFilter(c[0], f.Predicate)
}
func (f *Filter) Exprs() []Expr                    { return []Expr{f.Predicate} }
func (f *Filter) WithExprs(e []Expr) (Plan, error) { return NewFilter(f.Input, e[0]) }
func (f *Filter) String() string                   { return "Filter: " + f.Predicate.String() }

// ---- Projection -------------------------------------------------------------

// Projection computes one output column per expression.
type Projection struct {
	Input  Plan
	List   []Expr
	schema *Schema
}

// NewProjection types exprs over input.
func NewProjection(input Plan, exprs []Expr) (*Projection, error) {
	fs := make([]Field, len(exprs))
	for i, e := range exprs {
		f, err := FieldOf(e, input.Schema())
		if err != nil {
			return nil, err
		}
		fs[i] = f
	}
	return &Projection{Input: input, List: exprs, schema: &Schema{Fields: fs}}, nil
}

func (*Projection) isPlan()            {}
func (p *Projection) Schema() *Schema  { return p.schema }
func (p *Projection) Children() []Plan { return []Plan{p.Input} }
func (p *Projection) WithChildren(c []Plan) (Plan, error) {
	if err := wantChildren(p, c, 1); err != nil {
		return nil, err
	}
	return NewProjection(c[0], p.List)
}
func (p *Projection) Exprs() []Expr                    { return p.List }
func (p *Projection) WithExprs(e []Expr) (Plan, error) { return NewProjection(p.Input, e) }
func (p *Projection) String() string                   { return "Projection: " + exprList(p.List) }

// ---- Aggregate --------------------------------------------------------------

// Aggregate groups by GroupBy and computes Aggs (each an *AggExpr, possibly
// under an Alias). Output: the group columns, then the aggregates. Without
// GroupBy it produces exactly one row.
type Aggregate struct {
	Input   Plan
	GroupBy []Expr
	Aggs    []Expr
	schema  *Schema
}

// NewAggregate types the group and aggregate expressions over input.
func NewAggregate(input Plan, groupBy, aggs []Expr) (*Aggregate, error) {
	fs := make([]Field, 0, len(groupBy)+len(aggs))
	for _, e := range append(append([]Expr(nil), groupBy...), aggs...) {
		f, err := FieldOf(e, input.Schema())
		if err != nil {
			return nil, err
		}
		fs = append(fs, f)
	}
	for _, a := range aggs {
		if _, ok := StripAlias(a).(*AggExpr); !ok {
			return nil, qerr.Planf("%s is not an aggregate function", a)
		}
	}
	return &Aggregate{Input: input, GroupBy: groupBy, Aggs: aggs, schema: &Schema{Fields: fs}}, nil
}

// StripAlias returns e without any Alias wrappers.
func StripAlias(e Expr) Expr {
	for {
		a, ok := e.(*Alias)
		if !ok {
			return e
		}
		e = a.Expr
	}
}

func (*Aggregate) isPlan()            {}
func (a *Aggregate) Schema() *Schema  { return a.schema }
func (a *Aggregate) Children() []Plan { return []Plan{a.Input} }
func (a *Aggregate) WithChildren(c []Plan) (Plan, error) {
	if err := wantChildren(a, c, 1); err != nil {
		return nil, err
	}
	return NewAggregate(c[0], a.GroupBy, a.Aggs)
}
func (a *Aggregate) Exprs() []Expr {
	return append(append([]Expr(nil), a.GroupBy...), a.Aggs...)
}
func (a *Aggregate) WithExprs(e []Expr) (Plan, error) {
	n := len(a.GroupBy)
	return NewAggregate(a.Input, e[:n:n], e[n:])
}
func (a *Aggregate) String() string {
	return fmt.Sprintf("Aggregate: groupBy=[%s], aggr=[%s]", exprList(a.GroupBy), exprList(a.Aggs))
}

// ---- Join -------------------------------------------------------------------

// JoinType is the kind of join.
type JoinType int

// Join types. Semi, anti and mark joins output only the left columns (mark
// adds one nullable Boolean column named by Join.MarkName: true if a match
// exists, NULL if none matched but a comparison was NULL, else false).
const (
	InnerJoin JoinType = iota
	LeftJoin
	RightJoin
	FullJoin
	SemiJoin
	AntiJoin
	MarkJoin
)

var joinNames = [...]string{"Inner", "Left", "Right", "Full", "LeftSemi", "LeftAnti", "LeftMark"}

func (t JoinType) String() string { return joinNames[t] }

// EquiPair is one equality condition Left = Right of a join; Left is over the
// left input's schema and Right over the right's.
type EquiPair struct{ Left, Right Expr }

// Join combines Left and Right where every On pair is equal (NULLs never
// match) and Filter (over the concatenated schema; may be nil) is true.
// No On and no Filter is a cross join. NullAware (anti joins only) gives NOT IN
// semantics: if any right key is NULL, no left row passes; a left row whose key
// is NULL passes only if the right side is empty.
type Join struct {
	Left, Right Plan
	Type        JoinType
	On          []EquiPair
	Filter      Expr
	NullAware   bool
	MarkName    string
	schema      *Schema
}

// NewJoin types the join's conditions and computes its schema.
func NewJoin(left, right Plan, typ JoinType, on []EquiPair, filter Expr, nullAware bool, markName string) (*Join, error) {
	ls, rs := left.Schema(), right.Schema()
	for _, p := range on {
		lt, _, err := p.Left.DataType(ls)
		if err != nil {
			return nil, err
		}
		rt, _, err := p.Right.DataType(rs)
		if err != nil {
			return nil, err
		}
		if lt.ID() != rt.ID() {
			return nil, qerr.Planf("join keys %s and %s have different types %s and %s", p.Left, p.Right, TypeString(lt), TypeString(rt))
		}
	}
	if filter != nil {
		if _, _, err := filter.DataType(ls.Join(rs)); err != nil {
			return nil, err
		}
	}
	var schema *Schema
	switch typ {
	case InnerJoin:
		schema = ls.Join(rs)
	case LeftJoin:
		schema = ls.Join(rs.WithNullable())
	case RightJoin:
		schema = ls.WithNullable().Join(rs)
	case FullJoin:
		schema = ls.WithNullable().Join(rs.WithNullable())
	case SemiJoin, AntiJoin:
		schema = ls
	case MarkJoin:
		if markName == "" {
			markName = "mark"
		}
		schema = ls.Join(NewSchema(Field{Name: markName, Type: Bool, Nullable: true}))
	}
	return &Join{Left: left, Right: right, Type: typ, On: on, Filter: filter, NullAware: nullAware, MarkName: markName, schema: schema}, nil
}

func (*Join) isPlan()            {}
func (j *Join) Schema() *Schema  { return j.schema }
func (j *Join) Children() []Plan { return []Plan{j.Left, j.Right} }
func (j *Join) WithChildren(c []Plan) (Plan, error) {
	if err := wantChildren(j, c, 2); err != nil {
		return nil, err
	}
	return NewJoin(c[0], c[1], j.Type, j.On, j.Filter, j.NullAware, j.MarkName)
}

// Exprs lists the On pairs (left, right, left, right, ...) then the Filter if any.
func (j *Join) Exprs() []Expr {
	var out []Expr
	for _, p := range j.On {
		out = append(out, p.Left, p.Right)
	}
	if j.Filter != nil {
		out = append(out, j.Filter)
	}
	return out
}
func (j *Join) WithExprs(e []Expr) (Plan, error) {
	on := make([]EquiPair, len(j.On))
	for i := range on {
		on[i] = EquiPair{Left: e[2*i], Right: e[2*i+1]}
	}
	var f Expr
	if j.Filter != nil {
		f = e[2*len(on)]
	}
	return NewJoin(j.Left, j.Right, j.Type, on, f, j.NullAware, j.MarkName)
}
func (j *Join) String() string {
	if len(j.On) == 0 && j.Filter == nil && j.Type == InnerJoin {
		return "CrossJoin:"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s Join:", j.Type)
	if len(j.On) > 0 {
		parts := make([]string, len(j.On))
		for i, p := range j.On {
			parts[i] = fmt.Sprintf("%s = %s", p.Left, p.Right)
		}
		fmt.Fprintf(&b, " on=[%s]", strings.Join(parts, ", "))
	}
	if j.Filter != nil {
		fmt.Fprintf(&b, " filter=%s", j.Filter)
	}
	if j.NullAware {
		b.WriteString(" null_aware")
	}
	return b.String()
}

// ---- Sort -------------------------------------------------------------------

// SortKey is one ORDER BY key. Without an explicit NULLS FIRST/LAST, NullsFirst
// is !Asc (NULLs sort as larger than every value).
type SortKey struct {
	Expr       Expr
	Asc        bool
	NullsFirst bool
}

func (k SortKey) String() string {
	dir, nulls := "DESC", "NULLS LAST"
	if k.Asc {
		dir = "ASC"
	}
	if k.NullsFirst {
		nulls = "NULLS FIRST"
	}
	return fmt.Sprintf("%s %s %s", k.Expr, dir, nulls)
}

// Sort orders its input by Keys. Fetch ≥ 0 keeps only the first Fetch rows (top-k).
type Sort struct {
	Input Plan
	Keys  []SortKey
	Fetch int64
}

// NewSort types the keys over input.
func NewSort(input Plan, keys []SortKey, fetch int64) (*Sort, error) {
	for _, k := range keys {
		if _, _, err := k.Expr.DataType(input.Schema()); err != nil {
			return nil, err
		}
	}
	return &Sort{Input: input, Keys: keys, Fetch: fetch}, nil
}

func (*Sort) isPlan()            {}
func (s *Sort) Schema() *Schema  { return s.Input.Schema() }
func (s *Sort) Children() []Plan { return []Plan{s.Input} }
func (s *Sort) WithChildren(c []Plan) (Plan, error) {
	if err := wantChildren(s, c, 1); err != nil {
		return nil, err
	}
	return NewSort(c[0], s.Keys, s.Fetch)
}
func (s *Sort) Exprs() []Expr {
	out := make([]Expr, len(s.Keys))
	for i, k := range s.Keys {
		out[i] = k.Expr
	}
	return out
}
func (s *Sort) WithExprs(e []Expr) (Plan, error) {
	keys := make([]SortKey, len(s.Keys))
	for i, k := range s.Keys {
		k.Expr = e[i]
		keys[i] = k
	}
	return NewSort(s.Input, keys, s.Fetch)
}
func (s *Sort) String() string {
	parts := make([]string, len(s.Keys))
	for i, k := range s.Keys {
		parts[i] = k.String()
	}
	out := "Sort: " + strings.Join(parts, ", ")
	if s.Fetch >= 0 {
		out += fmt.Sprintf(", fetch=%d", s.Fetch)
	}
	return out
}

// ---- Limit ------------------------------------------------------------------

// Limit skips Skip rows then passes at most Fetch rows (Fetch < 0: all).
type Limit struct {
	Input Plan
	Skip  int64
	Fetch int64
}

func (*Limit) isPlan()            {}
func (l *Limit) Schema() *Schema  { return l.Input.Schema() }
func (l *Limit) Children() []Plan { return []Plan{l.Input} }
func (l *Limit) WithChildren(c []Plan) (Plan, error) {
	if err := wantChildren(l, c, 1); err != nil {
		return nil, err
	}
	return &Limit{Input: c[0], Skip: l.Skip, Fetch: l.Fetch}, nil
}
func (l *Limit) Exprs() []Expr                  { return nil }
func (l *Limit) WithExprs([]Expr) (Plan, error) { return l, nil }
func (l *Limit) String() string {
	if l.Fetch < 0 {
		return fmt.Sprintf("Limit: skip=%d, fetch=None", l.Skip)
	}
	return fmt.Sprintf("Limit: skip=%d, fetch=%d", l.Skip, l.Fetch)
}

// AddRows is a + b for row counts (both ≥ 0), saturating at math.MaxInt64:
// LIMIT and OFFSET may each be as large as an int64, and a sum that wrapped
// negative would read as "no limit" or make a rewrite oscillate. No input
// has 2^63 rows, so the saturated value bounds nothing, which is right.
func AddRows(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// ---- Union ------------------------------------------------------------------

// Union concatenates its inputs (UNION ALL); all inputs have the same column
// types, the output takes the first input's names. UNION (distinct) is an
// Aggregate over a Union.
type Union struct {
	Inputs []Plan
	schema *Schema
}

// NewUnion checks that the inputs agree in arity and types.
func NewUnion(inputs []Plan) (*Union, error) {
	if len(inputs) < 2 {
		return nil, qerr.Internalf("union needs at least two inputs")
	}
	first := inputs[0].Schema()
	fs := make([]Field, first.Len())
	copy(fs, first.Fields)
	for _, in := range inputs[1:] {
		s := in.Schema()
		if s.Len() != first.Len() {
			return nil, qerr.Planf("UNION inputs have %d and %d columns", first.Len(), s.Len())
		}
		for i := range fs {
			if s.Field(i).Type.ID() != fs[i].Type.ID() {
				return nil, qerr.Planf("UNION column %d has types %s and %s", i+1, TypeString(fs[i].Type), TypeString(s.Field(i).Type))
			}
			fs[i].Nullable = fs[i].Nullable || s.Field(i).Nullable
		}
	}
	return &Union{Inputs: inputs, schema: &Schema{Fields: fs}}, nil
}

func (*Union) isPlan()                               {}
func (u *Union) Schema() *Schema                     { return u.schema }
func (u *Union) Children() []Plan                    { return u.Inputs }
func (u *Union) WithChildren(c []Plan) (Plan, error) { return NewUnion(c) }
func (u *Union) Exprs() []Expr                       { return nil }
func (u *Union) WithExprs([]Expr) (Plan, error)      { return u, nil }
func (u *Union) String() string                      { return "Union" }

// ---- Values -----------------------------------------------------------------

// Values is an inline table: each row is a list of expressions without column
// references, already cast to the schema's types.
type Values struct {
	Rows   [][]Expr
	schema *Schema
}

// NewValues builds an inline table with the given schema.
func NewValues(schema *Schema, rows [][]Expr) (*Values, error) {
	for _, r := range rows {
		if len(r) != schema.Len() {
			return nil, qerr.Planf("VALUES rows must all have %d columns", schema.Len())
		}
	}
	return &Values{Rows: rows, schema: schema}, nil
}

func (*Values) isPlan()                               {}
func (v *Values) Schema() *Schema                     { return v.schema }
func (v *Values) Children() []Plan                    { return nil }
func (v *Values) WithChildren(c []Plan) (Plan, error) { return v, wantChildren(v, c, 0) }
func (v *Values) Exprs() []Expr {
	var out []Expr
	for _, r := range v.Rows {
		out = append(out, r...)
	}
	return out
}
func (v *Values) WithExprs(e []Expr) (Plan, error) {
	rows := make([][]Expr, len(v.Rows))
	w := v.schema.Len()
	for i := range rows {
		rows[i] = e[i*w : (i+1)*w : (i+1)*w]
	}
	return NewValues(v.schema, rows)
}
func (v *Values) String() string { return fmt.Sprintf("Values: %d rows", len(v.Rows)) }

// ---- EmptyRelation ----------------------------------------------------------

// EmptyRelation produces no rows, or one row of no columns if ProduceOneRow
// (SELECT without FROM).
type EmptyRelation struct {
	ProduceOneRow bool
	schema        *Schema
}

// NewEmptyRelation returns an empty relation with the given schema.
func NewEmptyRelation(produceOneRow bool, schema *Schema) *EmptyRelation {
	if schema == nil {
		schema = NewSchema()
	}
	return &EmptyRelation{ProduceOneRow: produceOneRow, schema: schema}
}

func (*EmptyRelation) isPlan()                               {}
func (e *EmptyRelation) Schema() *Schema                     { return e.schema }
func (e *EmptyRelation) Children() []Plan                    { return nil }
func (e *EmptyRelation) WithChildren(c []Plan) (Plan, error) { return e, wantChildren(e, c, 0) }
func (e *EmptyRelation) Exprs() []Expr                       { return nil }
func (e *EmptyRelation) WithExprs([]Expr) (Plan, error)      { return e, nil }
func (e *EmptyRelation) String() string {
	return fmt.Sprintf("EmptyRelation: rows=%d", map[bool]int{false: 0, true: 1}[e.ProduceOneRow])
}

// ---- SubqueryAlias ----------------------------------------------------------

// SubqueryAlias re-qualifies its input's columns with Alias (FROM (...) AS a,
// a CTE or view reference).
type SubqueryAlias struct {
	Input  Plan
	Alias  string
	schema *Schema
}

// NewSubqueryAlias re-qualifies input's schema.
func NewSubqueryAlias(input Plan, alias string) *SubqueryAlias {
	return &SubqueryAlias{Input: input, Alias: alias, schema: input.Schema().WithQualifier(alias)}
}

func (*SubqueryAlias) isPlan()            {}
func (a *SubqueryAlias) Schema() *Schema  { return a.schema }
func (a *SubqueryAlias) Children() []Plan { return []Plan{a.Input} }
func (a *SubqueryAlias) WithChildren(c []Plan) (Plan, error) {
	if err := wantChildren(a, c, 1); err != nil {
		return nil, err
	}
	return NewSubqueryAlias(c[0], a.Alias), nil
}
func (a *SubqueryAlias) Exprs() []Expr                  { return nil }
func (a *SubqueryAlias) WithExprs([]Expr) (Plan, error) { return a, nil }
func (a *SubqueryAlias) String() string                 { return "SubqueryAlias: " + a.Alias }

// ---- Cache ------------------------------------------------------------------

// Cache marks Input to be computed once and reused (ARCHITECTURE.md §4). Its schema
// is its input's. Optimizer rules never push anything into Input from outside
// and keep CacheID when they rewrite Input.
type Cache struct {
	CacheID   string // UUID v4, one per Cache() call
	SessionID string
	Input     Plan
	Options   map[string]string
	Name      string // the CACHE TABLE name, empty for df.Cache()
	// Sealed hides Input from tree walks (Children returns none) while the
	// optimizer runs over a plan whose cache inputs are optimized already:
	// rules never cross a Cache boundary, so an input optimized on its own
	// is what they would make of it in place. Schema and the estimates still
	// read Input. A sealed Cache never leaves the optimizer's caller
	// (UnsealCaches); the codec does not carry the mark.
	Sealed bool
}

func (*Cache) isPlan()           {}
func (c *Cache) Schema() *Schema { return c.Input.Schema() }
func (c *Cache) Children() []Plan {
	if c.Sealed {
		return nil
	}
	return []Plan{c.Input}
}
func (c *Cache) WithChildren(ch []Plan) (Plan, error) {
	if c.Sealed && len(ch) == 0 {
		return c, nil
	}
	if err := wantChildren(c, ch, 1); err != nil {
		return nil, err
	}
	n := *c
	n.Input = ch[0]
	return &n, nil
}

// UnsealCaches returns p with every sealed Cache (Cache.Sealed) opened again.
func UnsealCaches(p Plan) (Plan, error) {
	out, _, err := TransformUp(p, func(n Plan) (Plan, bool, error) {
		c, ok := n.(*Cache)
		if !ok || !c.Sealed {
			return n, false, nil
		}
		u := *c
		u.Sealed = false
		return &u, true, nil
	})
	return out, err
}

func (c *Cache) Exprs() []Expr                  { return nil }
func (c *Cache) WithExprs([]Expr) (Plan, error) { return c, nil }
func (c *Cache) String() string {
	if c.Name != "" {
		return fmt.Sprintf("Cache: %s id=%s", c.Name, c.CacheID)
	}
	return "Cache: id=" + c.CacheID
}
