package quiver

import (
	"maps"

	"github.com/google/uuid"
	"github.com/quiverdb/quiver/logical"
	"github.com/quiverdb/quiver/qerr"
	"github.com/quiverdb/quiver/sql"
)

// derive returns a new DataFrame over p, or one carrying err. The receiver
// is never changed.
func (df *DataFrame) derive(p logical.Plan, err error) *DataFrame {
	if err != nil {
		return &DataFrame{s: df.s, err: err}
	}
	return &DataFrame{s: df.s, plan: p}
}

func (df *DataFrame) fail(op string, err error) *DataFrame {
	return &DataFrame{s: df.s, err: qerr.Planf("%s: %w", op, err)}
}

// resolve coerces x over df's schema for operation op.
func (df *DataFrame) resolve(op string, x Expr) (logical.Expr, error) {
	if x.err != nil {
		return nil, qerr.Planf("%s: %w", op, x.err)
	}
	if err := checkWindowed(x.e); err != nil {
		return nil, qerr.Planf("%s: %w", op, err)
	}
	e, err := logical.Coerce(x.e, df.plan.Schema())
	if err != nil {
		return nil, qerr.Planf("%s: %w", op, err)
	}
	return e, nil
}

// Filter keeps the rows where e is true.
func (df *DataFrame) Filter(e Expr) *DataFrame {
	if df.err != nil {
		return df
	}
	pred, err := df.resolve("Filter", e)
	if err != nil {
		return df.derive(nil, err)
	}
	f, err := logical.NewFilter(df.plan, pred)
	if err != nil {
		return df.fail("Filter", err)
	}
	return df.derive(f, nil)
}

// Select computes one output column per expression. Col("*") stands for
// every column and Col("t.*") for every column of relation t.
func (df *DataFrame) Select(exprs ...Expr) *DataFrame {
	if df.err != nil {
		return df
	}
	if len(exprs) == 0 {
		return df.fail("Select", qerr.Planf("no columns"))
	}
	exprs, err := df.expandStars(exprs)
	if err != nil {
		return df.fail("Select", err)
	}
	list := make([]logical.Expr, len(exprs))
	for i, x := range exprs {
		e, err := df.resolve("Select", x)
		if err != nil {
			return df.derive(nil, err)
		}
		if _, isAgg := logical.StripAlias(e).(*logical.AggExpr); isAgg {
			return df.fail("Select", qerr.Planf("%s is an aggregate; use Aggregate", e))
		}
		list[i] = e
	}
	in, list, err := sql.Windows(df.plan, list)
	if err != nil {
		return df.fail("Select", err)
	}
	p, err := logical.NewProjection(in, list)
	if err != nil {
		return df.fail("Select", err)
	}
	return df.derive(p, nil)
}

// Aggregate groups by groupBy and computes aggs (made with Sum, Avg, Min,
// Max, Count, CountDistinct, optionally renamed with As, and expressions over
// them such as Sum(x).Mul(2) or Sum(x).Div(Count(y))). The result has the
// group columns then the aggregates.
func (df *DataFrame) Aggregate(groupBy []Expr, aggs []Expr) *DataFrame {
	if df.err != nil {
		return df
	}
	if len(groupBy) == 0 && len(aggs) == 0 {
		return df.fail("Aggregate", qerr.Planf("no group keys and no aggregates"))
	}
	groups := make([]logical.Expr, len(groupBy))
	for i, x := range groupBy {
		e, err := df.resolve("Aggregate", x)
		if err != nil {
			return df.derive(nil, err)
		}
		groups[i] = e
	}
	as := make([]logical.Expr, len(aggs))
	for i, x := range aggs {
		e, err := df.resolve("Aggregate", x)
		if err != nil {
			return df.derive(nil, err)
		}
		as[i] = e
	}
	p, err := composedAggregate(df.plan, groups, as)
	if err != nil {
		return df.fail("Aggregate", err)
	}
	return df.derive(p, nil)
}

// Join combines df (left) with right where on is true. Equalities between a
// left and a right column become hash-join keys. Name clashes between the
// two sides must be resolved with Alias first.
func (df *DataFrame) Join(right *DataFrame, how JoinType, on Expr) *DataFrame {
	if df.err != nil {
		return df
	}
	if right == nil {
		return df.fail("Join", qerr.Planf("right DataFrame is nil"))
	}
	if right.err != nil {
		return df.derive(nil, qerr.Planf("Join: right side: %w", right.err))
	}
	if right.s != df.s {
		return df.fail("Join", qerr.Planf("the two DataFrames belong to different sessions"))
	}
	kind, ok := joinKinds[how]
	if !ok {
		return df.fail("Join", qerr.Planf("unknown join type %d", int(how)))
	}
	if on.err != nil {
		return df.derive(nil, qerr.Planf("Join: %w", on.err))
	}
	ls, rs := df.plan.Schema(), right.plan.Schema()
	both := ls.Join(rs)
	cond, err := logical.Coerce(on.e, both)
	if err != nil {
		return df.fail("Join", err)
	}
	var pairs []logical.EquiPair
	var rest []logical.Expr
	for _, c := range logical.SplitAnd(cond) {
		if b, ok := c.(*logical.Binary); ok && b.Op == logical.OpEq {
			switch {
			case over(b.Left, ls) && over(b.Right, rs):
				pairs = append(pairs, logical.EquiPair{Left: b.Left, Right: b.Right})
				continue
			case over(b.Left, rs) && over(b.Right, ls):
				pairs = append(pairs, logical.EquiPair{Left: b.Right, Right: b.Left})
				continue
			}
		}
		rest = append(rest, c)
	}
	j, err := logical.NewJoin(df.plan, right.plan, kind, pairs, logical.And(rest...), false, "")
	if err != nil {
		return df.fail("Join", err)
	}
	return df.derive(j, nil)
}

// over reports whether every column of e resolves in s.
func over(e logical.Expr, s *logical.Schema) bool {
	cols := logical.ColumnsOf(e)
	for _, c := range cols {
		if !s.Has(c.Qualifier, c.Name) {
			return false
		}
	}
	return len(cols) > 0
}

// Alias re-qualifies df's columns as name.column (for self-joins).
func (df *DataFrame) Alias(name string) *DataFrame {
	if df.err != nil {
		return df
	}
	if name == "" {
		return df.fail("Alias", qerr.Planf("empty name"))
	}
	return df.derive(logical.NewSubqueryAlias(df.plan, name), nil)
}

// Sort orders the rows by keys.
func (df *DataFrame) Sort(keys ...SortKey) *DataFrame {
	if df.err != nil {
		return df
	}
	if len(keys) == 0 {
		return df.fail("Sort", qerr.Planf("no sort keys"))
	}
	ks := make([]logical.SortKey, len(keys))
	for i, k := range keys {
		e, err := df.resolve("Sort", k.expr)
		if err != nil {
			return df.derive(nil, err)
		}
		ks[i] = logical.SortKey{Expr: e, Asc: k.asc, NullsFirst: k.nullsFirst}
	}
	p, err := logical.NewSort(df.plan, ks, -1)
	if err != nil {
		return df.fail("Sort", err)
	}
	return df.derive(p, nil)
}

// Limit skips offset rows and keeps at most n (n < 0: all the rest).
func (df *DataFrame) Limit(offset, n int64) *DataFrame {
	if df.err != nil {
		return df
	}
	if offset < 0 {
		return df.fail("Limit", qerr.Planf("negative offset %d", offset))
	}
	if n < 0 {
		n = -1
	}
	return df.derive(&logical.Limit{Input: df.plan, Skip: offset, Fetch: n}, nil)
}

// Cache marks df to be computed once and reused by later actions on it or
// on DataFrames built from it. It is lazy: nothing runs until an action.
// Each call mints a new cache entry.
func (df *DataFrame) Cache() *DataFrame {
	if df.err != nil {
		return df
	}
	return df.derive(&logical.Cache{CacheID: uuid.NewString(), SessionID: df.s.id, Input: df.plan}, nil)
}

// CacheWithOptions is Cache with the entry options CACHE TABLE takes in
// OPTIONS (ttl, consistency, scope); {"scope": "global"} keeps the entry
// after the session closes, for later sessions of the tenant to attach to.
func (df *DataFrame) CacheWithOptions(opts map[string]string) *DataFrame {
	if df.err != nil {
		return df
	}
	if err := validateCacheOptions("(DataFrame)", opts); err != nil {
		return df.fail("Cache", err)
	}
	if err := checkSortBy("(DataFrame) cache", opts, df.plan.Schema().Arrow()); err != nil {
		return df.fail("Cache", err)
	}
	return df.derive(&logical.Cache{CacheID: uuid.NewString(), SessionID: df.s.id, Input: df.plan, Options: maps.Clone(opts)}, nil)
}
