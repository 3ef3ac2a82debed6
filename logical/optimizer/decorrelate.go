package optimizer

// decorrelate_subqueries turns subquery expressions into joins. After it no
// ScalarSubquery, Exists, InSubquery or OuterRef remains in the plan; a form
// it cannot remove is a qerr.NotImplementedf naming the form.
//
//	Filter: a AND EXISTS (<subquery: Filter: outer_ref(o.k) = i.k AND i.x <> outer_ref(o.x)>)
//	→ Filter: a
//	    LeftSemi Join: on=[o.k = __sq_1.k] filter=__sq_1.x <> o.x
//	      <outer input>, SubqueryAlias: __sq_1 (Projection: i.k, i.x ...)
//
//	NOT EXISTS → LeftAnti; x IN (q) → LeftSemi on x = q's column; x NOT IN (q) →
//	LeftAnti null_aware; a subquery under OR or another expression → LeftMark,
//	the mark column replacing the expression (projected away above).
//
// The null-aware and mark NULL rules look at the whole right side, which is
// the set only when q is uncorrelated. A correlated x NOT IN (q) becomes a
// LeftAnti join on the correlation with filter `x = v OR x IS NULL OR v IS
// NULL`; a correlated IN that is not a filter conjunct becomes two LeftMark
// joins (some v = x; some x or v NULL) and CASE WHEN m1 THEN TRUE WHEN m2 THEN
// NULL ELSE FALSE END. A correlated global aggregate yields one row for every
// outer row, so IN / NOT IN over it is = / <> its value (joined as a scalar).
//
//	Filter: p = (<subquery: Projection: min(v) / Aggregate: [] [min(v)] /
//	             Filter: i.k = outer_ref(o.k)>)
//	→ Projection: <the input's columns>
//	    Filter: p = __sq_1.min(v)
//	      Left Join: on=[o.k = __sq_1.k]
//	        <outer input>, SubqueryAlias: __sq_1 (Aggregate: groupBy=[i.k], aggr=[min(v)])
//
// Correlated predicates are pulled up out of Filters through Projections,
// SubqueryAliases, Sorts, inner joins (and the preserved side of outer, semi
// and anti joins) and, for equalities only, through an Aggregate, whose group
// keys gain the inner side (an aggregate value that is not NULL over no rows,
// such as COUNT, is restored with coalesce). An uncorrelated scalar subquery
// is cross joined (inner when it is a global aggregate and so exactly one row,
// left otherwise). It does not fire on plans without subqueries, and refuses
// correlation under a Limit, a Union, a Cache, the null-supplying side of an
// outer join, or a non-equality under an aggregate. It does not check at run
// time that a scalar subquery yields at most one row.

import (
	"context"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver/logical"
	"github.com/quiverdb/quiver/qerr"
)

// DecorrelateSubqueries rewrites subquery expressions as joins.
type DecorrelateSubqueries struct{}

// Name implements Rule.
func (DecorrelateSubqueries) Name() string { return "decorrelate_subqueries" }

// Rewrite implements Rule.
func (DecorrelateSubqueries) Rewrite(_ context.Context, p logical.Plan) (logical.Plan, bool, error) {
	d := &decorrelator{}
	d.nm.n = maxSubqueryAliasIndex(p)
	np, changed, err := d.plan(p)
	if err != nil {
		return nil, false, err
	}
	if err := checkNoSubqueries(np); err != nil {
		return nil, false, err
	}
	return np, changed, nil
}

// maxSubqueryAliasIndex finds the largest N of an existing __sq_N alias so new names stay unique.
func maxSubqueryAliasIndex(p logical.Plan) int {
	n := 0
	logical.Inspect(p, func(x logical.Plan) bool {
		if a, ok := x.(*logical.SubqueryAlias); ok && strings.HasPrefix(a.Alias, "__sq_") {
			var k int
			if _, err := fmt.Sscanf(a.Alias, "__sq_%d", &k); err == nil && k > n {
				n = k
			}
		}
		return true
	})
	return n
}

func checkNoSubqueries(p logical.Plan) error {
	var err error
	logical.Inspect(p, func(x logical.Plan) bool {
		for _, e := range x.Exprs() {
			logical.InspectExpr(e, func(s logical.Expr) bool {
				if err != nil {
					return false
				}
				switch s := s.(type) {
				case *logical.ScalarSubquery, *logical.Exists, *logical.InSubquery:
					err = qerr.NotImplementedf("decorrelate subqueries: subquery %s in %s is not supported", s, x)
				case *logical.OuterRef:
					err = qerr.NotImplementedf("decorrelate subqueries: correlated reference %s in %s could not be decorrelated", s, x)
				}
				return err == nil
			})
		}
		return err == nil
	})
	return err
}

type decorrelator struct {
	nm      namer
	changed bool
}

// plan decorrelates every Filter and Projection of p that holds subqueries.
func (d *decorrelator) plan(p logical.Plan) (logical.Plan, bool, error) {
	d.changed = false
	np, _, err := logical.TransformUp(p, func(n logical.Plan) (logical.Plan, bool, error) {
		switch n := n.(type) {
		case *logical.Filter:
			if hasSubquery(n.Predicate) {
				r, err := d.filter(n)
				return r, err == nil, err
			}
		case *logical.Projection:
			for _, e := range n.List {
				if hasSubquery(e) {
					r, err := d.projection(n)
					return r, err == nil, err
				}
			}
		}
		return n, false, nil
	})
	return np, d.changed, err
}

// subqueryKind says how a subquery expression is joined.
type subqueryKind int

const (
	kindSemi subqueryKind = iota
	kindAnti
	kindMark
	kindScalar
)

func (d *decorrelator) filter(f *logical.Filter) (logical.Plan, error) {
	x := f.Input
	var rest []logical.Expr
	for _, c := range logical.SplitAnd(f.Predicate) {
		neg := false
		inner := c
		if n, ok := c.(*logical.Not); ok {
			neg, inner = true, n.Expr
		}
		var err error
		switch s := inner.(type) {
		case *logical.Exists:
			kind := kindSemi
			if s.Negated != neg {
				kind = kindAnti
			}
			x, _, err = d.attach(x, s.Plan, nil, kind, false)
			if err != nil {
				return nil, err
			}
			continue
		case *logical.InSubquery:
			if !hasSubquery(s.Expr) {
				kind := kindSemi
				if s.Negated != neg {
					kind = kindAnti
				}
				var r logical.Expr
				x, r, err = d.attach(x, s.Plan, s.Expr, kind, kind == kindAnti)
				if err != nil {
					return nil, err
				}
				if r != nil { // the IN became a comparison with a joined value
					rest = append(rest, r)
				}
				continue
			}
		}
		if !hasSubquery(c) {
			rest = append(rest, c)
			continue
		}
		var nc logical.Expr
		x, nc, err = d.replaceIn(x, c)
		if err != nil {
			return nil, err
		}
		rest = append(rest, nc)
	}
	var out logical.Plan = x
	if len(rest) > 0 {
		nf, err := logical.NewFilter(x, logical.And(rest...))
		if err != nil {
			return nil, err
		}
		out = nf
	}
	return restoreSchema(out, f.Schema())
}

func (d *decorrelator) projection(p *logical.Projection) (logical.Plan, error) {
	x := p.Input
	list := make([]logical.Expr, len(p.List))
	for i, e := range p.List {
		if !hasSubquery(e) {
			list[i] = e
			continue
		}
		var ne logical.Expr
		var err error
		x, ne, err = d.replaceIn(x, e)
		if err != nil {
			return nil, err
		}
		list[i] = aliasBack(ne, e)
	}
	return logical.NewProjection(x, list)
}

// replaceIn joins every subquery inside e to x and replaces it with the
// joined column (scalar) or mark (EXISTS/IN).
func (d *decorrelator) replaceIn(x logical.Plan, e logical.Expr) (logical.Plan, logical.Expr, error) {
	ne, _, err := logical.TransformExprUp(e, func(s logical.Expr) (logical.Expr, bool, error) {
		var r logical.Expr
		var err error
		switch s := s.(type) {
		case *logical.ScalarSubquery:
			x, r, err = d.attach(x, s.Plan, nil, kindScalar, false)
		case *logical.Exists:
			x, r, err = d.attach(x, s.Plan, nil, kindMark, false)
			if err == nil {
				// A mark is NULL when a comparison was NULL; EXISTS is never NULL.
				r = &logical.ScalarFunc{Name: "coalesce", Args: []logical.Expr{r, logical.Lit(false)}}
				if s.Negated {
					r = &logical.Not{Expr: r}
				}
			}
		case *logical.InSubquery:
			x, r, err = d.attach(x, s.Plan, s.Expr, kindMark, false)
			if err == nil && s.Negated {
				r = &logical.Not{Expr: r}
			}
		default:
			return s, false, nil
		}
		return r, err == nil, err
	})
	return x, ne, err
}

// attach decorrelates subquery q and joins it to x. lhs is the IN operand
// (nil otherwise). It returns the new x and, for scalar and mark kinds, the
// expression that replaces the subquery.
func (d *decorrelator) attach(x logical.Plan, q logical.Plan, lhs logical.Expr, kind subqueryKind, nullAware bool) (logical.Plan, logical.Expr, error) {
	d.changed = true
	// Nested subqueries first: they are correlated to q (or uncorrelated).
	inner := &decorrelator{nm: d.nm}
	q, _, err := inner.plan(q)
	d.nm = inner.nm
	if err != nil {
		return nil, nil, err
	}
	if lhs != nil && planHasOuterRef(q) && exactlyOneRow(q) {
		return d.inOneRow(x, q, lhs, kind)
	}
	qq, corr, agg, err := d.pull(q)
	if err != nil {
		return nil, nil, err
	}
	alias := d.nm.next("__sq")
	taken := map[string]bool{}
	for _, f := range x.Schema().Fields {
		taken[strings.ToLower(f.Name)] = true
	}
	pick := func(name string) string {
		n := name
		for k := 1; taken[strings.ToLower(n)]; k++ {
			n = fmt.Sprintf("%s_%d", name, k)
		}
		taken[strings.ToLower(n)] = true
		return n
	}
	qs := qq.Schema()
	var list []logical.Expr
	valueName := ""
	if kind == kindScalar || lhs != nil {
		if qs.Len() < 1 {
			return nil, nil, qerr.Planf("subquery returns no columns")
		}
		v, ok := columnFor(qs, 0)
		if !ok {
			return nil, nil, qerr.NotImplementedf("decorrelate subqueries: subquery column %s cannot be referenced", qs.Field(0).QualifiedName())
		}
		valueName = pick(qs.Field(0).Name)
		list = append(list, namedAs(v, valueName))
	}
	// Inner columns the correlated predicates use, by index in qs.
	innerName := map[int]string{}
	for _, c := range corr {
		for _, col := range logical.ColumnsOf(c) {
			i, err := qs.IndexOf(col.Qualifier, col.Name)
			if err != nil {
				return nil, nil, qerr.Internalf("decorrelate subqueries: correlated column %s: %w", col, err)
			}
			if _, ok := innerName[i]; ok {
				continue
			}
			ref, ok := columnFor(qs, i)
			if !ok {
				return nil, nil, qerr.NotImplementedf("decorrelate subqueries: correlated column %s is ambiguous in the subquery", col)
			}
			innerName[i] = pick(qs.Field(i).Name)
			list = append(list, namedAs(ref, innerName[i]))
		}
	}
	var right logical.Plan = qq
	if len(list) > 0 {
		pr, err := logical.NewProjection(qq, list)
		if err != nil {
			return nil, nil, err
		}
		right = pr
	} else if kind == kindSemi || kind == kindAnti || kind == kindMark {
		// Uncorrelated EXISTS: only whether a row exists matters.
		right = qq
	}
	sq := logical.NewSubqueryAlias(right, alias)
	xs := x.Schema()
	var on []logical.EquiPair
	var filters []logical.Expr
	for _, c := range corr {
		var bad error
		nc, _, _ := logical.TransformExprUp(c, func(e logical.Expr) (logical.Expr, bool, error) {
			switch e := e.(type) {
			case *logical.Column:
				i, _ := qs.IndexOf(e.Qualifier, e.Name)
				return &logical.Column{Qualifier: alias, Name: innerName[i]}, true, nil
			case *logical.OuterRef:
				i, err := xs.IndexOf(e.Qualifier, e.Name)
				if err != nil {
					bad = qerr.NotImplementedf("decorrelate subqueries: correlated reference %s does not resolve in the enclosing query: %w", e, err)
					return e, false, nil
				}
				f := xs.Field(i)
				return &logical.Column{Qualifier: f.Qualifier, Name: f.Name}, true, nil
			}
			return e, false, nil
		})
		if bad != nil {
			return nil, nil, bad
		}
		if pair, ok := equiPair(nc, xs, sq.Schema()); ok {
			on = append(on, pair)
		} else {
			filters = append(filters, nc)
		}
	}
	if lhs != nil {
		r := logical.Expr(&logical.Column{Qualifier: alias, Name: valueName})
		lt, _, err := lhs.DataType(xs)
		if err != nil {
			return nil, nil, err
		}
		rt, _, err := r.DataType(sq.Schema())
		if err != nil {
			return nil, nil, err
		}
		if !arrow.TypeEqual(lt, rt) {
			r = &logical.Cast{Expr: r, Type: lt}
		}
		switch {
		case len(corr) == 0 || kind == kindSemi:
			on = append([]logical.EquiPair{{Left: lhs, Right: r}}, on...)
		case kind == kindAnti:
			// Correlated NOT IN. The null-aware join decides from the whole
			// right side (any NULL value, any row at all), but the set is
			// the rows matching the correlation for each outer row, and
			// for a row whose set is empty NOT IN is TRUE even when lhs is
			// NULL. In WHERE, NULL and FALSE both drop the row, so the row
			// stays exactly when no row of its set has lhs = r TRUE or
			// NULL: an anti join on the correlation with that filter.
			filters = append(filters, &logical.Binary{Op: logical.OpOr,
				Left: &logical.Binary{Op: logical.OpOr,
					Left:  &logical.Binary{Op: logical.OpEq, Left: lhs, Right: r},
					Right: &logical.IsNull{Expr: lhs}},
				Right: &logical.IsNull{Expr: r}})
			nullAware = false
		case kind == kindMark:
			return d.correlatedInMark(x, right, alias, lhs, r, on, filters, pick)
		}
	}
	var typ logical.JoinType
	markName := ""
	switch kind {
	case kindSemi:
		typ = logical.SemiJoin
	case kindAnti:
		typ = logical.AntiJoin
	case kindMark:
		typ = logical.MarkJoin
		markName = pick("__mark" + strings.TrimPrefix(alias, "__sq"))
	case kindScalar:
		typ = logical.LeftJoin
		if len(corr) == 0 && exactlyOneRow(q) {
			typ = logical.InnerJoin
		}
	}
	j, err := logical.NewJoin(x, sq, typ, on, logical.And(filters...), nullAware, markName)
	if err != nil {
		return nil, nil, err
	}
	switch kind {
	case kindMark:
		return j, &logical.Column{Name: markName}, nil
	case kindScalar:
		var v logical.Expr = &logical.Column{Qualifier: alias, Name: valueName}
		if agg && len(corr) > 0 {
			if lit, ok := emptyValue(q); ok {
				vt, _, err := v.DataType(j.Schema())
				if err != nil {
					return nil, nil, err
				}
				var fill logical.Expr = lit
				if !arrow.TypeEqual(vt, lit.Type) {
					fill = &logical.Cast{Expr: lit, Type: vt}
				}
				v = &logical.ScalarFunc{Name: "coalesce", Args: []logical.Expr{v, fill}}
			}
		}
		return j, v, nil
	}
	return j, nil, nil
}

// inOneRow joins a correlated subquery that yields exactly one row for
// every outer row (a global aggregate: over no inner rows it still yields
// one, such as NULL for max or 0 for count) as a scalar subquery; lhs IN it
// is then lhs = value, and NOT IN lhs <> value, with their NULLs. A semi or
// anti join would see no row for an outer row without inner rows and treat
// the set as empty. It returns the comparison (for a mark: the IN).
func (d *decorrelator) inOneRow(x, q logical.Plan, lhs logical.Expr, kind subqueryKind) (logical.Plan, logical.Expr, error) {
	j, v, err := d.attach(x, q, nil, kindScalar, false)
	if err != nil {
		return nil, nil, err
	}
	lt, _, err := lhs.DataType(j.Schema())
	if err != nil {
		return nil, nil, err
	}
	vt, _, err := v.DataType(j.Schema())
	if err != nil {
		return nil, nil, err
	}
	if !arrow.TypeEqual(lt, vt) {
		v = &logical.Cast{Expr: v, Type: lt}
	}
	var cmp logical.Expr = &logical.Binary{Op: logical.OpEq, Left: lhs, Right: v}
	if kind == kindAnti {
		cmp = &logical.Not{Expr: cmp}
	}
	return j, cmp, nil
}

// correlatedInMark joins a correlated `lhs IN (subquery)` that is not a
// conjunct of a filter (under OR, NOT or in a select list) and returns its
// three-valued result. The mark join's NULL rules look at the whole right
// side, not at the set of the outer row, so two marks over the correlation
// keys are used instead: m1, some row of the set has lhs = r; m2, some row of
// the set has lhs or r NULL. IN is TRUE if m1, else NULL if m2, else FALSE
// (also when the set is empty). r is the subquery's value column under
// alias, on and filters the correlation over x and alias.
func (d *decorrelator) correlatedInMark(x, right logical.Plan, alias string, lhs, r logical.Expr,
	on []logical.EquiPair, filters []logical.Expr, pick func(string) string) (logical.Plan, logical.Expr, error) {
	eq := &logical.Binary{Op: logical.OpEq, Left: lhs, Right: r}
	m1 := pick("__mark" + strings.TrimPrefix(alias, "__sq"))
	j1, err := logical.NewJoin(x, logical.NewSubqueryAlias(right, alias), logical.MarkJoin, on,
		logical.And(append(append([]logical.Expr(nil), filters...), eq)...), false, m1)
	if err != nil {
		return nil, nil, err
	}
	// The second join reads the same subquery under a fresh alias.
	alias2 := d.nm.next("__sq")
	requalify := func(e logical.Expr) logical.Expr {
		ne, _, _ := logical.TransformExprUp(e, func(e logical.Expr) (logical.Expr, bool, error) {
			if c, ok := e.(*logical.Column); ok && c.Qualifier == alias {
				return &logical.Column{Qualifier: alias2, Name: c.Name}, true, nil
			}
			return e, false, nil
		})
		return ne
	}
	on2 := make([]logical.EquiPair, len(on))
	for i, p := range on {
		on2[i] = logical.EquiPair{Left: p.Left, Right: requalify(p.Right)}
	}
	filters2 := make([]logical.Expr, 0, len(filters)+1)
	for _, f := range filters {
		filters2 = append(filters2, requalify(f))
	}
	filters2 = append(filters2, &logical.Binary{Op: logical.OpOr,
		Left: &logical.IsNull{Expr: lhs}, Right: &logical.IsNull{Expr: requalify(r)}})
	m2 := pick("__mark" + strings.TrimPrefix(alias2, "__sq"))
	j2, err := logical.NewJoin(j1, logical.NewSubqueryAlias(right, alias2), logical.MarkJoin, on2,
		logical.And(filters2...), false, m2)
	if err != nil {
		return nil, nil, err
	}
	// A mark may itself be NULL (its own NULL rules); CASE WHEN treats that
	// as not TRUE, which is what both marks mean here.
	in := &logical.Case{
		Whens: []logical.When{
			{Cond: &logical.Column{Name: m1}, Then: logical.Lit(true)},
			{Cond: &logical.Column{Name: m2}, Then: nullOf(logical.Bool)},
		},
		Else: logical.Lit(false),
	}
	return j2, in, nil
}

// namedAs is col, or col aliased when the subquery's output must rename it.
func namedAs(col *logical.Column, name string) logical.Expr {
	if col.Name == name {
		return col
	}
	return &logical.Alias{Expr: col, Name: name}
}

// equiPair splits "a = b" into a join key pair when one side is over the left
// schema only and the other over the right only, with equal types.
func equiPair(e logical.Expr, ls, rs *logical.Schema) (logical.EquiPair, bool) {
	b, ok := e.(*logical.Binary)
	if !ok || b.Op != logical.OpEq || !hasColumns(b.Left) || !hasColumns(b.Right) {
		return logical.EquiPair{}, false
	}
	l, r := b.Left, b.Right
	if !(resolvesIn(l, ls) && resolvesIn(r, rs)) {
		l, r = r, l
		if !(resolvesIn(l, ls) && resolvesIn(r, rs)) {
			return logical.EquiPair{}, false
		}
	}
	// A column resolving on both sides would make the pair ambiguous.
	if resolvesIn(l, rs) || resolvesIn(r, ls) {
		return logical.EquiPair{}, false
	}
	lt, _, err1 := l.DataType(ls)
	rt, _, err2 := r.DataType(rs)
	if err1 != nil || err2 != nil || !arrow.TypeEqual(lt, rt) {
		return logical.EquiPair{}, false
	}
	return logical.EquiPair{Left: l, Right: r}, true
}

// exactlyOneRow reports whether q always yields one row: a global aggregate
// under projections, aliases and sorts.
func exactlyOneRow(q logical.Plan) bool {
	switch q := q.(type) {
	case *logical.Aggregate:
		return len(q.GroupBy) == 0
	case *logical.Projection:
		return exactlyOneRow(q.Input)
	case *logical.SubqueryAlias:
		return exactlyOneRow(q.Input)
	case *logical.Sort:
		return exactlyOneRow(q.Input)
	}
	return false
}

// emptyValue is the value a global-aggregate scalar subquery takes over no
// rows, when that is not NULL (COUNT is 0): the left join gives NULL for a
// missing group, which coalesce replaces with it.
func emptyValue(q logical.Plan) (*logical.Literal, bool) {
	switch q := q.(type) {
	case *logical.SubqueryAlias:
		return emptyValue(q.Input)
	case *logical.Sort:
		return emptyValue(q.Input)
	case *logical.Aggregate:
		if len(q.GroupBy) != 0 || len(q.Aggs) == 0 {
			return nil, false
		}
		if a, ok := logical.StripAlias(q.Aggs[0]).(*logical.AggExpr); ok && a.Func == logical.AggCount {
			return &logical.Literal{Type: logical.Int64, Value: int64(0)}, true
		}
		return nil, false
	case *logical.Projection:
		a, ok := q.Input.(*logical.Aggregate)
		if !ok || len(a.GroupBy) != 0 {
			return nil, false
		}
		as := a.Schema()
		e, ok := mapColumns(logical.StripAlias(q.List[0]), func(c *logical.Column) (logical.Expr, bool) {
			i, err := as.IndexOf(c.Qualifier, c.Name)
			if err != nil {
				return nil, false
			}
			if ae, ok := logical.StripAlias(a.Aggs[i]).(*logical.AggExpr); ok && ae.Func == logical.AggCount {
				return &logical.Literal{Type: logical.Int64, Value: int64(0)}, true
			}
			return nullOf(as.Field(i).Type), true
		})
		if !ok {
			return nil, false
		}
		lit, ok := simplifyExpr(e, nil).(*logical.Literal)
		if !ok || lit.Value == nil {
			return nil, false
		}
		return lit, true
	}
	return nil, false
}

func planHasOuterRef(p logical.Plan) bool {
	found := false
	logical.Inspect(p, func(x logical.Plan) bool {
		for _, e := range x.Exprs() {
			if hasOuterRef(e) {
				found = true
			}
		}
		return !found
	})
	return found
}

// factorCorrelatedOr takes the conjuncts shared by both sides out of each
// correlated OR conjunct of a subquery's filter (simplify's factorOr,
// which does not reach into subqueries), so that a correlation repeated in
// every branch, as in TPC-DS q41's (k = outer_ref(o.k) AND a) OR
// (k = outer_ref(o.k) AND b), becomes a conjunct pull can take up.
func factorCorrelatedOr(pred logical.Expr) logical.Expr {
	keys := logical.NewExprKeys()
	var out []logical.Expr
	for _, c := range logical.SplitAnd(pred) {
		if b, ok := c.(*logical.Binary); ok && b.Op == logical.OpOr && hasOuterRef(b) {
			out = append(out, logical.SplitAnd(factorOrTree(b, keys))...)
			continue
		}
		out = append(out, c)
	}
	return logical.And(out...)
}

// factorOrTree applies factorOr bottom-up over a chain of ORs, so that a
// conjunct shared by three or more branches comes out too.
func factorOrTree(b *logical.Binary, keys *logical.ExprKeys) logical.Expr {
	n := *b
	if l, ok := b.Left.(*logical.Binary); ok && l.Op == logical.OpOr {
		n.Left = factorOrTree(l, keys)
	}
	if r, ok := b.Right.(*logical.Binary); ok && r.Op == logical.OpOr {
		n.Right = factorOrTree(r, keys)
	}
	return factorOr(&n, keys)
}

// pull removes the correlated conjuncts (those with OuterRefs) from q and
// returns them rewritten over the new plan's schema; agg reports that an
// aggregate was regrouped by correlated keys.
func (d *decorrelator) pull(q logical.Plan) (logical.Plan, []logical.Expr, bool, error) {
	if !planHasOuterRef(q) {
		return q, nil, false, nil
	}
	notImpl := func(what string) error {
		return qerr.NotImplementedf("decorrelate subqueries: correlated subquery with a correlated reference %s is not supported", what)
	}
	for _, e := range q.Exprs() {
		if !hasOuterRef(e) {
			continue
		}
		switch q.(type) {
		case *logical.Filter, *logical.Join:
		default:
			return nil, nil, false, notImpl("in " + q.String())
		}
	}
	switch q := q.(type) {
	case *logical.Filter:
		in, corr, agg, err := d.pull(q.Input)
		if err != nil {
			return nil, nil, false, err
		}
		var keep []logical.Expr
		for _, c := range logical.SplitAnd(factorCorrelatedOr(q.Predicate)) {
			if hasOuterRef(c) {
				corr = append(corr, c)
			} else {
				keep = append(keep, c)
			}
		}
		if len(keep) == 0 {
			return in, corr, agg, nil
		}
		nf, err := logical.NewFilter(in, logical.And(keep...))
		return nf, corr, agg, err
	case *logical.Projection:
		in, corr, agg, err := d.pull(q.Input)
		if err != nil {
			return nil, nil, false, err
		}
		list := append([]logical.Expr(nil), q.List...)
		have := map[string]bool{}
		for _, e := range list {
			if c, ok := e.(*logical.Column); ok {
				if i, err := in.Schema().IndexOf(c.Qualifier, c.Name); err == nil {
					have[fmt.Sprint(i)] = true
				}
			}
		}
		for _, c := range corr {
			for _, col := range logical.ColumnsOf(c) {
				i, err := in.Schema().IndexOf(col.Qualifier, col.Name)
				if err != nil {
					return nil, nil, false, qerr.Internalf("decorrelate subqueries: %w", err)
				}
				if have[fmt.Sprint(i)] {
					continue
				}
				have[fmt.Sprint(i)] = true
				ref, ok := columnFor(in.Schema(), i)
				if !ok {
					return nil, nil, false, notImpl(col.String() + " (ambiguous column)")
				}
				list = append(list, ref)
			}
		}
		np, err := logical.NewProjection(in, list)
		return np, corr, agg, err
	case *logical.SubqueryAlias:
		in, corr, agg, err := d.pull(q.Input)
		if err != nil {
			return nil, nil, false, err
		}
		na := logical.NewSubqueryAlias(in, q.Alias)
		for k, c := range corr {
			nc, ok := mapColumns(c, func(col *logical.Column) (logical.Expr, bool) {
				i, err := in.Schema().IndexOf(col.Qualifier, col.Name)
				if err != nil {
					return nil, false
				}
				r, ok := columnFor(na.Schema(), i)
				return r, ok
			})
			if !ok {
				return nil, nil, false, notImpl(c.String() + " through alias " + q.Alias)
			}
			corr[k] = nc
		}
		return na, corr, agg, nil
	case *logical.Sort:
		if q.Fetch >= 0 {
			return nil, nil, false, notImpl("under ORDER BY ... LIMIT")
		}
		in, corr, agg, err := d.pull(q.Input)
		if err != nil {
			return nil, nil, false, err
		}
		ns, err := logical.NewSort(in, q.Keys, q.Fetch)
		return ns, corr, agg, err
	case *logical.Join:
		l, r := q.Left, q.Right
		var corr []logical.Expr
		agg := false
		var err error
		var lc, rc []logical.Expr
		var la, ra bool
		if planHasOuterRef(l) {
			if q.Type == logical.RightJoin || q.Type == logical.FullJoin {
				return nil, nil, false, notImpl("on the null-supplying side of a " + q.Type.String() + " join")
			}
			if l, lc, la, err = d.pull(l); err != nil {
				return nil, nil, false, err
			}
		}
		if planHasOuterRef(r) {
			if q.Type != logical.InnerJoin && q.Type != logical.RightJoin {
				return nil, nil, false, notImpl("on the right side of a " + q.Type.String() + " join")
			}
			if r, rc, ra, err = d.pull(r); err != nil {
				return nil, nil, false, err
			}
		}
		corr = append(append(corr, lc...), rc...)
		agg = la || ra
		for _, p := range q.On {
			if hasOuterRef(p.Left) || hasOuterRef(p.Right) {
				return nil, nil, false, notImpl("in a join key")
			}
		}
		var keep []logical.Expr
		for _, c := range logical.SplitAnd(q.Filter) {
			if hasOuterRef(c) {
				if q.Type != logical.InnerJoin {
					return nil, nil, false, notImpl("in the condition of a " + q.Type.String() + " join")
				}
				corr = append(corr, c)
			} else {
				keep = append(keep, c)
			}
		}
		nj, err := logical.NewJoin(l, r, q.Type, q.On, logical.And(keep...), q.NullAware, q.MarkName)
		if err != nil {
			return nil, nil, false, err
		}
		if q.Type == logical.SemiJoin || q.Type == logical.AntiJoin || q.Type == logical.MarkJoin {
			for _, c := range corr {
				if !resolvesInOrOuter(c, nj.Schema()) {
					return nil, nil, false, notImpl(c.String() + " below a " + q.Type.String() + " join")
				}
			}
		}
		return nj, corr, agg, nil
	case *logical.Aggregate:
		in, corr, _, err := d.pull(q.Input)
		if err != nil {
			return nil, nil, false, err
		}
		groupBy := append([]logical.Expr(nil), q.GroupBy...)
		for k, c := range corr {
			b, ok := c.(*logical.Binary)
			if !ok || b.Op != logical.OpEq {
				return nil, nil, false, notImpl(c.String() + " (not an equality) under an aggregate")
			}
			innerSide, outerSide := b.Left, b.Right
			if hasOuterRef(innerSide) {
				innerSide, outerSide = outerSide, innerSide
			}
			if hasOuterRef(innerSide) || hasColumns(outerSide) || !hasColumns(innerSide) {
				return nil, nil, false, notImpl(c.String() + " under an aggregate")
			}
			found := false
			for _, g := range groupBy {
				if g.String() == innerSide.String() {
					found = true
				}
			}
			if !found {
				groupBy = append(groupBy, innerSide)
			}
			var ref logical.Expr = innerSide
			if _, isCol := innerSide.(*logical.Column); !isCol {
				ref = &logical.Column{Name: innerSide.String()}
			}
			corr[k] = &logical.Binary{Op: logical.OpEq, Left: ref, Right: outerSide}
		}
		na, err := logical.NewAggregate(in, groupBy, q.Aggs)
		if err != nil {
			return nil, nil, false, err
		}
		if len(groupBy) == len(q.GroupBy) {
			return na, corr, true, nil
		}
		// Keep the original output columns first (the added keys would come
		// before the aggregates), then the added keys.
		ns := na.Schema()
		var list []logical.Expr
		for i := range q.Schema().Fields {
			k := i
			if i >= len(q.GroupBy) {
				k = i + len(groupBy) - len(q.GroupBy)
			}
			ref, ok := columnFor(ns, k)
			if !ok {
				return nil, nil, false, notImpl("(ambiguous aggregate output " + ns.Field(k).Name + ")")
			}
			list = append(list, ref)
		}
		for k := len(q.GroupBy); k < len(groupBy); k++ {
			ref, ok := columnFor(ns, k)
			if !ok {
				return nil, nil, false, notImpl("(ambiguous group key " + ns.Field(k).Name + ")")
			}
			list = append(list, ref)
		}
		np, err := logical.NewProjection(na, list)
		return np, corr, true, err
	}
	return nil, nil, false, notImpl("under " + q.String())
}

// resolvesInOrOuter reports whether every column of e resolves in s (outer references aside).
func resolvesInOrOuter(e logical.Expr, s *logical.Schema) bool {
	for _, c := range logical.ColumnsOf(e) {
		if !s.Has(c.Qualifier, c.Name) {
			return false
		}
	}
	return true
}
