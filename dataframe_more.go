package quiver

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/quiverdb/quiver/catalog"
	"github.com/quiverdb/quiver/format"
	"github.com/quiverdb/quiver/logical"
	"github.com/quiverdb/quiver/qerr"
	"github.com/quiverdb/quiver/sql"
)

// composedAggregate aggregates by groups and computes aggs, which may be
// expressions over aggregates: the aggregates inside them are computed
// once each, and a projection above computes the expressions.
func composedAggregate(input logical.Plan, groups, aggs []logical.Expr) (logical.Plan, error) {
	plain := true
	for _, e := range aggs {
		if _, ok := logical.StripAlias(e).(*logical.AggExpr); !ok {
			plain = false
		}
	}
	if plain {
		return logical.NewAggregate(input, groups, aggs)
	}
	var inner []logical.Expr
	index := map[string]int{}
	for _, e := range aggs {
		found := false
		logical.InspectExpr(e, func(x logical.Expr) bool {
			if a, ok := x.(*logical.AggExpr); ok {
				found = true
				if _, seen := index[a.String()]; !seen {
					index[a.String()] = len(inner)
					inner = append(inner, a)
				}
				return false
			}
			return true
		})
		if !found {
			return nil, qerr.Planf("%s is not an aggregate (use Sum, Avg, Min, Max, Count or an expression over them)", e)
		}
	}
	agg, err := logical.NewAggregate(input, groups, inner)
	if err != nil {
		return nil, err
	}
	as := agg.Schema()
	ref := func(i int) *logical.Column {
		f := as.Field(i)
		return &logical.Column{Qualifier: f.Qualifier, Name: f.Name}
	}
	out := make([]logical.Expr, 0, len(groups)+len(aggs))
	for i := range groups {
		out = append(out, ref(i))
	}
	for _, e := range aggs {
		name := e.String()
		if a, ok := e.(*logical.Alias); ok {
			name, e = a.Name, a.Expr
		}
		r, _, err := logical.TransformExprUp(e, func(x logical.Expr) (logical.Expr, bool, error) {
			if a, ok := x.(*logical.AggExpr); ok {
				return ref(len(groups) + index[a.String()]), true, nil
			}
			return x, false, nil
		})
		if err != nil {
			return nil, err
		}
		out = append(out, &logical.Alias{Expr: r, Name: name})
	}
	return logical.NewProjection(agg, out)
}

// columns returns references to every column of df, in order.
func (df *DataFrame) columns() []logical.Expr {
	s := df.plan.Schema()
	out := make([]logical.Expr, s.Len())
	for i, f := range s.Fields {
		out[i] = &logical.Column{Qualifier: f.Qualifier, Name: f.Name}
	}
	return out
}

// indexOf finds a column by name ("name" or "qualifier.name").
func (df *DataFrame) indexOf(name string) (int, error) {
	c := logical.Col(name)
	return df.plan.Schema().IndexOf(c.Qualifier, c.Name)
}

// WithColumn adds a column computed by x, or replaces the column of that
// name in place.
func (df *DataFrame) WithColumn(name string, x Expr) *DataFrame {
	if df.err != nil {
		return df
	}
	if name == "" {
		return df.fail("WithColumn", qerr.Planf("empty column name"))
	}
	e, err := df.resolve("WithColumn", x)
	if err != nil {
		return df.derive(nil, err)
	}
	if _, isAgg := logical.StripAlias(e).(*logical.AggExpr); isAgg {
		return df.fail("WithColumn", qerr.Planf("%s is an aggregate; use Aggregate", e))
	}
	cols := df.columns()
	named := &logical.Alias{Expr: logical.StripAlias(e), Name: name}
	replaced := false
	for i, f := range df.plan.Schema().Fields {
		if strings.EqualFold(f.Name, name) {
			cols[i], replaced = named, true
		}
	}
	if !replaced {
		cols = append(cols, named)
	}
	in, cols, err := sql.Windows(df.plan, cols)
	if err != nil {
		return df.fail("WithColumn", err)
	}
	p, err := logical.NewProjection(in, cols)
	return df.derive(p, wrap("WithColumn", err))
}

// WithColumnRenamed renames column old (a missing column is an error).
func (df *DataFrame) WithColumnRenamed(old, name string) *DataFrame {
	if df.err != nil {
		return df
	}
	i, err := df.indexOf(old)
	if err != nil {
		return df.fail("WithColumnRenamed", err)
	}
	if name == "" {
		return df.fail("WithColumnRenamed", qerr.Planf("empty column name"))
	}
	cols := df.columns()
	cols[i] = &logical.Alias{Expr: cols[i], Name: name}
	p, err := logical.NewProjection(df.plan, cols)
	return df.derive(p, wrap("WithColumnRenamed", err))
}

// Drop removes the named columns (a missing column is an error).
func (df *DataFrame) Drop(names ...string) *DataFrame {
	if df.err != nil {
		return df
	}
	drop := map[int]bool{}
	for _, n := range names {
		i, err := df.indexOf(n)
		if err != nil {
			return df.fail("Drop", err)
		}
		drop[i] = true
	}
	var cols []logical.Expr
	for i, c := range df.columns() {
		if !drop[i] {
			cols = append(cols, c)
		}
	}
	if len(cols) == 0 {
		return df.fail("Drop", qerr.Planf("no columns would be left"))
	}
	p, err := logical.NewProjection(df.plan, cols)
	return df.derive(p, wrap("Drop", err))
}

// Distinct keeps one of each set of equal rows.
func (df *DataFrame) Distinct() *DataFrame {
	if df.err != nil {
		return df
	}
	p, err := sql.Distinct(df.plan)
	return df.derive(p, wrap("Distinct", err))
}

// other checks a second DataFrame of a binary operation.
func (df *DataFrame) other(op string, o *DataFrame) error {
	switch {
	case o == nil:
		return qerr.Planf("%s: the other DataFrame is nil", op)
	case o.err != nil:
		return qerr.Planf("%s: the other DataFrame: %w", op, o.err)
	case o.s != df.s:
		return qerr.Planf("%s: the two DataFrames belong to different sessions", op)
	}
	return nil
}

// Union appends other's rows to df's (UNION ALL): columns match by
// DistinctOn keeps one row per distinct combination of the on values: the
// first in orderBy order (any one without orderBy), as SQL's SELECT
// DISTINCT ON (on) ... ORDER BY on, orderBy. NULLs in on are equal. The
// result has df's columns; its row order is not defined (Sort it).
func (df *DataFrame) DistinctOn(on []Expr, orderBy ...SortKey) *DataFrame {
	if df.err != nil {
		return df
	}
	if len(on) == 0 {
		return df.fail("DistinctOn", qerr.Planf("no columns to be distinct on"))
	}
	keys := make([]logical.SortKey, 0, len(on)+len(orderBy))
	for _, x := range on {
		e, err := df.resolve("DistinctOn", x)
		if err != nil {
			return df.derive(nil, err)
		}
		keys = append(keys, logical.SortKey{Expr: e, Asc: true})
	}
	for _, k := range orderBy {
		e, err := df.resolve("DistinctOn", k.expr)
		if err != nil {
			return df.derive(nil, err)
		}
		keys = append(keys, logical.SortKey{Expr: e, Asc: k.asc, NullsFirst: k.nullsFirst})
	}
	p, err := sql.DistinctOn(df.plan, keys, len(on))
	return df.derive(p, wrap("DistinctOn", err))
}

// position and widen to common types; the names are df's.
func (df *DataFrame) Union(other *DataFrame) *DataFrame {
	if df.err != nil {
		return df
	}
	if err := df.other("Union", other); err != nil {
		return df.derive(nil, err)
	}
	p, err := sql.UnionAll(df.plan, other.plan)
	return df.derive(p, wrap("Union", err))
}

// UnionDistinct is Union without duplicate rows (UNION).
func (df *DataFrame) UnionDistinct(other *DataFrame) *DataFrame {
	return df.Union(other).Distinct()
}

// Intersect keeps the distinct rows found in both (INTERSECT).
func (df *DataFrame) Intersect(other *DataFrame) *DataFrame {
	if df.err != nil {
		return df
	}
	if err := df.other("Intersect", other); err != nil {
		return df.derive(nil, err)
	}
	p, err := sql.Intersect(df.plan, other.plan)
	return df.derive(p, wrap("Intersect", err))
}

// Except keeps the distinct rows of df not found in other (EXCEPT).
func (df *DataFrame) Except(other *DataFrame) *DataFrame {
	if df.err != nil {
		return df
	}
	if err := df.other("Except", other); err != nil {
		return df.derive(nil, err)
	}
	p, err := sql.Except(df.plan, other.plan)
	return df.derive(p, wrap("Except", err))
}

// IntersectAll keeps each row as often as it is in both: min(m, n) copies
// of a row df has m times and other n times (INTERSECT ALL).
func (df *DataFrame) IntersectAll(other *DataFrame) *DataFrame {
	if df.err != nil {
		return df
	}
	if err := df.other("IntersectAll", other); err != nil {
		return df.derive(nil, err)
	}
	p, err := sql.IntersectAll(df.plan, other.plan)
	return df.derive(p, wrap("IntersectAll", err))
}

// ExceptAll keeps max(m - n, 0) copies of a row df has m times and other
// n times (EXCEPT ALL).
func (df *DataFrame) ExceptAll(other *DataFrame) *DataFrame {
	if df.err != nil {
		return df
	}
	if err := df.other("ExceptAll", other); err != nil {
		return df.derive(nil, err)
	}
	p, err := sql.ExceptAll(df.plan, other.plan)
	return df.derive(p, wrap("ExceptAll", err))
}

// JoinOn joins by column names: leftCols[i] of df equals rightCols[i] of
// right. See Join for the expression form.
func (df *DataFrame) JoinOn(right *DataFrame, how JoinType, leftCols, rightCols []string) *DataFrame {
	if df.err != nil {
		return df
	}
	if err := df.other("JoinOn", right); err != nil {
		return df.derive(nil, err)
	}
	if len(leftCols) == 0 || len(leftCols) != len(rightCols) {
		return df.fail("JoinOn", qerr.Planf("want as many right columns as left ones, at least one (got %d and %d)", len(leftCols), len(rightCols)))
	}
	ls, rs := df.plan.Schema(), right.plan.Schema()
	var on Expr
	for i := range leftCols {
		l, err := df.indexOf(leftCols[i])
		if err != nil {
			return df.fail("JoinOn", qerr.Planf("left side: %w", err))
		}
		r, err := right.indexOf(rightCols[i])
		if err != nil {
			return df.fail("JoinOn", qerr.Planf("right side: %w", err))
		}
		lf, rf := ls.Field(l), rs.Field(r)
		eq := Expr{e: &logical.Binary{Op: logical.OpEq,
			Left:  &logical.Column{Qualifier: lf.Qualifier, Name: lf.Name},
			Right: &logical.Column{Qualifier: rf.Qualifier, Name: rf.Name}}}
		if i == 0 {
			on = eq
		} else {
			on = on.And(eq)
		}
	}
	return df.Join(right, how, on)
}

// Head keeps the first n rows (Limit(0, n)).
func (df *DataFrame) Head(n int64) *DataFrame { return df.Limit(0, n) }

// ShowRows runs the query and prints at most n rows as an aligned table
// (the middle rows elided when there are more).
func (df *DataFrame) ShowRows(ctx context.Context, w io.Writer, n int) error {
	return df.Print(ctx, w, format.Table, format.Options{MaxRows: n})
}

// CreateView registers df's plan as the view name, which SQL and Table can
// then read. The plan is kept as it is (not re-planned from SQL).
func (df *DataFrame) CreateView(name string, replace bool) error {
	if df.err != nil {
		return df.err
	}
	if name == "" {
		return qerr.Planf("CreateView: empty name")
	}
	return df.s.cat.RegisterView(&catalog.View{Name: name, Schema: df.Schema(), Plan: df.plan}, replace)
}

// RegisterDataFrame registers df as the view name (see CreateView).
func (s *Session) RegisterDataFrame(name string, df *DataFrame) error {
	if df == nil {
		return qerr.Planf("RegisterDataFrame: nil DataFrame")
	}
	if df.s != s {
		return qerr.Planf("RegisterDataFrame: the DataFrame belongs to another session")
	}
	return df.CreateView(name, false)
}

// Describe summarizes every column: one row per column with its name, type,
// count of non-null values, count of nulls, minimum and maximum (as text)
// and mean (numeric columns; NULL for others). It is lazy like any query.
func (df *DataFrame) Describe() *DataFrame {
	if df.err != nil {
		return df
	}
	s := df.plan.Schema()
	if s.Len() == 0 {
		return df.fail("Describe", qerr.Planf("no columns"))
	}
	var aggs []logical.Expr
	for _, c := range df.columns() {
		aggs = append(aggs,
			&logical.AggExpr{Func: logical.AggCount, Args: []logical.Expr{c}},
			&logical.AggExpr{Func: logical.AggCount},
			&logical.AggExpr{Func: logical.AggMin, Args: []logical.Expr{c}},
			&logical.AggExpr{Func: logical.AggMax, Args: []logical.Expr{c}})
	}
	const per = 4
	var means []int // aggs index of each numeric column's mean, or -1
	for _, c := range df.columns() {
		t, _, _ := c.DataType(s)
		if logical.IsNumeric(t) {
			means = append(means, len(aggs))
			aggs = append(aggs, &logical.AggExpr{Func: logical.AggAvg, Args: []logical.Expr{c}})
		} else {
			means = append(means, -1)
		}
	}
	for i := range aggs {
		aggs[i] = &logical.Alias{Expr: aggs[i], Name: fmt.Sprintf("__describe_%d", i)}
	}
	agg, err := logical.NewAggregate(df.plan, nil, aggs)
	if err != nil {
		return df.fail("Describe", err)
	}
	as := agg.Schema()
	col := func(i int) logical.Expr { return &logical.Column{Name: as.Field(i).Name} }
	var rows []logical.Plan
	for i, f := range s.Fields {
		count := col(i * per)
		mean := logical.CastTo(logical.Lit(nil), logical.Float64)
		if means[i] >= 0 {
			mean = logical.CastTo(col(means[i]), logical.Float64)
		}
		exprs := []logical.Expr{
			&logical.Alias{Expr: logical.Lit(f.Name), Name: "column_name"},
			&logical.Alias{Expr: logical.Lit(logical.TypeString(f.Type)), Name: "data_type"},
			&logical.Alias{Expr: count, Name: "count"},
			&logical.Alias{Expr: &logical.Binary{Op: logical.OpSub, Left: col(i*per + 1), Right: count}, Name: "null_count"},
			&logical.Alias{Expr: logical.CastTo(col(i*per+2), logical.String), Name: "min"},
			&logical.Alias{Expr: logical.CastTo(col(i*per+3), logical.String), Name: "max"},
			&logical.Alias{Expr: mean, Name: "mean"},
		}
		p, err := logical.NewProjection(agg, exprs)
		if err != nil {
			return df.fail("Describe", err)
		}
		rows = append(rows, p)
	}
	if len(rows) == 1 {
		return df.derive(rows[0], nil)
	}
	u, err := logical.NewUnion(rows)
	return df.derive(u, wrap("Describe", err))
}

// wrap prefixes a planning error with the DataFrame operation.
func wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	return qerr.Planf("%s: %w", op, err)
}

// ReadOption configures ReadParquet, ReadCSV, ReadJSON (and RegisterCSV).
type ReadOption = CSVOption

// HivePartitioning says whether key=value directories become columns
// (default: when every file has the same keys).
func HivePartitioning(on bool) ReadOption {
	return func(o map[string]string) { o["hive_partitioning"] = fmt.Sprint(on) }
}

// ReadParquet returns a DataFrame over the Parquet files at paths (files,
// directories read recursively, or globs with * and **).
func (s *Session) ReadParquet(ctx context.Context, paths []string, opts ...ReadOption) (*DataFrame, error) {
	return s.read(ctx, catalog.Parquet, paths, opts)
}

// ReadCSV returns a DataFrame over the CSV files at paths; the delimiter,
// header and column types are sniffed from a sample unless given.
func (s *Session) ReadCSV(ctx context.Context, paths []string, opts ...ReadOption) (*DataFrame, error) {
	return s.read(ctx, catalog.CSV, paths, opts)
}

// ReadJSON returns a DataFrame over the newline-delimited JSON files at paths.
func (s *Session) ReadJSON(ctx context.Context, paths []string, opts ...ReadOption) (*DataFrame, error) {
	return s.read(ctx, catalog.JSON, paths, opts)
}

func (s *Session) read(ctx context.Context, f catalog.Format, paths []string, opts []ReadOption) (*DataFrame, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		return nil, qerr.Planf("read %s: no paths", f)
	}
	o := map[string]string{}
	for _, fn := range opts {
		fn(o)
	}
	t, err := catalog.OpenFiles(strings.Join(paths, ","), f, paths, o, nil)
	if err != nil {
		return nil, err
	}
	return s.newFrame(logical.NewScan(t, "")), nil
}

// expandStars replaces Col("*") by every column and Col("t.*") by every
// column of relation t.
func (df *DataFrame) expandStars(exprs []Expr) ([]Expr, error) {
	var out []Expr
	for _, x := range exprs {
		c, ok := x.e.(*logical.Column)
		if x.err != nil || !ok || c.Name != "*" {
			out = append(out, x)
			continue
		}
		n := 0
		for _, f := range df.plan.Schema().Fields {
			if c.Qualifier == "" || strings.EqualFold(f.Qualifier, c.Qualifier) {
				out = append(out, Expr{e: &logical.Column{Qualifier: f.Qualifier, Name: f.Name}})
				n++
			}
		}
		if n == 0 {
			return nil, qerr.Planf("%s matches no columns", c)
		}
	}
	return out, nil
}
