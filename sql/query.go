package sql

import (
	"fmt"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/test_driver"
	"github.com/quiverdb/quiver/logical"
	"github.com/quiverdb/quiver/qerr"
)

// scope is the set of columns names resolve against; parent is the
// enclosing query's scope (its columns become OuterRefs).
type scope struct {
	schema *logical.Schema
	parent *scope
}

// outCol references field i of s exactly (qualifier and name).
func outCol(s *logical.Schema, i int) *logical.Column {
	f := s.Field(i)
	return &logical.Column{Qualifier: f.Qualifier, Name: f.Name}
}

// resultSet lowers a query node (SELECT, VALUES or a set operation).
func (b *builder) resultSet(n ast.Node, outer *scope) (logical.Plan, error) {
	switch n := n.(type) {
	case *ast.SelectStmt:
		return b.selectStmt(n, outer)
	case *ast.SetOprStmt:
		pop, ids, err := b.with(n.With, outer)
		if err != nil {
			return nil, err
		}
		defer pop()
		lp, err := b.setOprList(n.SelectList, outer)
		if err != nil {
			return nil, err
		}
		if lp, err = b.orderLimitOutput(lp, n.OrderBy, n.Limit); err != nil {
			return nil, err
		}
		return shareCTEs(lp, ids)
	case *ast.SetOprSelectList:
		return b.setOprList(n, outer)
	case *ast.SubqueryExpr:
		return b.resultSet(n.Query, outer)
	}
	return nil, qerr.NotImplementedf("sql: %T in a query is not supported", n)
}

// with plans the CTEs of a WITH clause and makes them visible until pop.
// ids are the WITH queries' ids, for shareCTEs once the query that the
// clause belongs to is planned.
func (b *builder) with(w *ast.WithClause, outer *scope) (pop func(), ids []int, err error) {
	if w == nil {
		return func() {}, nil, nil
	}
	m := map[string]cteDef{}
	b.ctes = append(b.ctes, m)
	pop = func() { b.ctes = b.ctes[:len(b.ctes)-1] }
	for _, cte := range w.CTEs {
		if w.IsRecursive && refersTo(cte.Query.Query, cte.Name.L) > 0 {
			lp, err := b.recursiveCTE(cte, outer)
			if err != nil {
				pop()
				return nil, nil, err
			}
			m[cte.Name.L] = cteDef{name: cte.Name.O, plan: lp}
			continue
		}
		lp, err := b.resultSet(cte.Query.Query, outer)
		if err != nil {
			pop()
			return nil, nil, err
		}
		if len(cte.ColNameList) > 0 {
			if lp, err = renameColumns(lp, cte.ColNameList, cte.Name.O); err != nil {
				pop()
				return nil, nil, err
			}
		}
		id := b.newCTEID()
		ids = append(ids, id)
		m[cte.Name.L] = cteDef{id: id, name: cte.Name.O, plan: lp}
	}
	return pop, ids, nil
}

// renameColumns projects lp's columns under new names.
func renameColumns(lp logical.Plan, names []ast.CIStr, rel string) (logical.Plan, error) {
	s := lp.Schema()
	if len(names) > s.Len() {
		return nil, qerr.Planf("%s has %d columns but %d column names were given", rel, s.Len(), len(names))
	}
	// Fewer names rename the first columns only (as PostgreSQL). A
	// projection is renamed in place, so that columns it names alike
	// (SELECT 1, 1) need not be told apart by name.
	if p, ok := lp.(*logical.Projection); ok {
		exprs := make([]logical.Expr, len(p.List))
		for i, e := range p.List {
			exprs[i] = e
			if i < len(names) {
				exprs[i] = &logical.Alias{Expr: logical.StripAlias(e), Name: names[i].O}
			}
		}
		return logical.NewProjection(p.Input, exprs)
	}
	exprs := make([]logical.Expr, s.Len())
	for i := range exprs {
		name := s.Field(i).Name
		if i < len(names) {
			name = names[i].O
		}
		exprs[i] = &logical.Alias{Expr: outCol(s, i), Name: name}
	}
	return logical.NewProjection(lp, exprs)
}

func (b *builder) setOprList(l *ast.SetOprSelectList, outer *scope) (logical.Plan, error) {
	pop, ids, err := b.with(l.With, outer)
	if err != nil {
		return nil, err
	}
	defer pop()
	lp, err := b.setOprTerms(l, outer)
	if err != nil {
		return nil, err
	}
	return shareCTEs(lp, ids)
}

// setOprTerms combines the terms of a set operation list.
func (b *builder) setOprTerms(l *ast.SetOprSelectList, outer *scope) (logical.Plan, error) {
	// INTERSECT binds tighter than UNION and EXCEPT (the parser lists them
	// flat): the first pass folds each run of INTERSECTs into one term, the
	// second combines the terms left to right.
	var (
		terms []logical.Plan
		ops   []ast.SetOprType // ops[i] joins terms[i] to what comes before it
	)
	for i, item := range l.Selects {
		var op *ast.SetOprType
		switch n := item.(type) {
		case *ast.SelectStmt:
			op = n.AfterSetOperator
		case *ast.SetOprSelectList:
			op = n.AfterSetOperator
		}
		next, err := b.resultSet(item, outer)
		if err != nil {
			return nil, err
		}
		if i == 0 {
			terms, ops = append(terms, next), append(ops, ast.UnionAll)
			continue
		}
		if op == nil {
			return nil, qerr.Internalf("sql: set operation without an operator")
		}
		switch *op {
		case ast.Intersect, ast.IntersectAll:
			last := len(terms) - 1
			if terms[last], err = setOp(terms[last], next, false, *op == ast.IntersectAll); err != nil {
				return nil, err
			}
		case ast.UnionAll, ast.Union, ast.Except, ast.ExceptAll:
			terms, ops = append(terms, next), append(ops, *op)
		default:
			return nil, qerr.NotImplementedf("sql: set operation %s is not supported", op.String())
		}
	}
	cur := terms[0]
	for i, next := range terms[1:] {
		var err error
		switch op := ops[i+1]; op {
		case ast.UnionAll, ast.Union:
			inputs := []logical.Plan{cur, next}
			if u, ok := cur.(*logical.Union); ok {
				inputs = append(append([]logical.Plan(nil), u.Inputs...), next)
			}
			if cur, err = unionAll(inputs); err != nil {
				return nil, err
			}
			if op == ast.Union {
				if cur, err = distinct(cur); err != nil {
					return nil, err
				}
			}
		case ast.Except, ast.ExceptAll:
			if cur, err = setOp(cur, next, true, op == ast.ExceptAll); err != nil {
				return nil, err
			}
		}
	}
	if l.OrderBy != nil || l.Limit != nil {
		return b.orderLimitOutput(cur, l.OrderBy, l.Limit)
	}
	return cur, nil
}

// unionAll widens the inputs' column types to common types and unions them.
func unionAll(inputs []logical.Plan) (logical.Plan, error) {
	first := inputs[0].Schema()
	types := make([]logical.Field, first.Len())
	copy(types, first.Fields)
	for _, in := range inputs[1:] {
		s := in.Schema()
		if s.Len() != first.Len() {
			return nil, qerr.Planf("each UNION query must have the same number of columns: %d and %d", first.Len(), s.Len())
		}
		for i := range types {
			t, ok := logical.SuperType(types[i].Type, s.Field(i).Type)
			if !ok {
				return nil, qerr.Planf("UNION column %d (%s): types %s and %s cannot be matched", i+1, first.Field(i).Name,
					logical.TypeString(types[i].Type), logical.TypeString(s.Field(i).Type))
			}
			types[i].Type = t
		}
	}
	out := make([]logical.Plan, len(inputs))
	for k, in := range inputs {
		s := in.Schema()
		var exprs []logical.Expr
		changed := false
		for i := range types {
			var e logical.Expr = outCol(s, i)
			if !sameType(s.Field(i).Type, types[i].Type) {
				e = &logical.Alias{Expr: logical.CastTo(e, types[i].Type), Name: s.Field(i).Name}
				changed = true
			}
			exprs = append(exprs, e)
		}
		out[k] = in
		if changed {
			p, err := logical.NewProjection(in, exprs)
			if err != nil {
				return nil, err
			}
			out[k] = p
		}
	}
	return logical.NewUnion(out)
}

// Names of the columns intersectExcept tags each side's rows with.
const (
	setLeftTag  = "__quiver_set_left"
	setRightTag = "__quiver_set_right"
)

// taggedUnion is the union of left's and right's rows, each with two
// more columns, setLeftTag and setRightTag: 1, 0 on left rows and 0, 1 on
// right ones; n is the sides' column count. what names the operation in
// the error for sides of different widths.
func taggedUnion(left, right logical.Plan, what string) (u logical.Plan, n int, err error) {
	n = left.Schema().Len()
	if m := right.Schema().Len(); m != n {
		return nil, 0, qerr.Planf("each %s query must have the same number of columns: %d and %d", what, n, m)
	}
	tag := func(p logical.Plan, l, r int64) (logical.Plan, error) {
		s := p.Schema()
		exprs := make([]logical.Expr, 0, n+2)
		for i := range n {
			exprs = append(exprs, outCol(s, i))
		}
		exprs = append(exprs, &logical.Alias{Expr: logical.Lit(l), Name: setLeftTag}, &logical.Alias{Expr: logical.Lit(r), Name: setRightTag})
		return logical.NewProjection(p, exprs)
	}
	lt, err := tag(left, 1, 0)
	if err != nil {
		return nil, 0, err
	}
	rt, err := tag(right, 0, 1)
	if err != nil {
		return nil, 0, err
	}
	u, err = unionAll([]logical.Plan{lt, rt})
	return u, n, err
}

// intersectExcept lowers left INTERSECT right, or left EXCEPT right when
// except (both DISTINCT): each side's rows are tagged with the side they
// come from, the union of both is grouped by every column (grouping treats
// NULLs as equal, as set operations must), and the groups kept are those
// seen on both sides (INTERSECT) or on the left only (EXCEPT). The result
// has the left side's column names.
func intersectExcept(left, right logical.Plan, except bool) (logical.Plan, error) {
	what := "INTERSECT"
	if except {
		what = "EXCEPT"
	}
	u, n, err := taggedUnion(left, right, what)
	if err != nil {
		return nil, err
	}
	us := u.Schema()
	groups := make([]logical.Expr, n)
	for i := range groups {
		groups[i] = outCol(us, i)
	}
	aggs := []logical.Expr{
		&logical.AggExpr{Func: logical.AggMax, Args: []logical.Expr{outCol(us, n)}},
		&logical.AggExpr{Func: logical.AggMax, Args: []logical.Expr{outCol(us, n+1)}},
	}
	agg, err := logical.NewAggregate(u, groups, aggs)
	if err != nil {
		return nil, err
	}
	as := agg.Schema()
	onRight := int64(1)
	if except {
		onRight = 0
	}
	keep := &logical.Binary{Op: logical.OpAnd,
		Left:  &logical.Binary{Op: logical.OpEq, Left: outCol(as, n), Right: logical.Lit(int64(1))},
		Right: &logical.Binary{Op: logical.OpEq, Left: outCol(as, n+1), Right: logical.Lit(onRight)},
	}
	f, err := logical.NewFilter(agg, keep)
	if err != nil {
		return nil, err
	}
	fs, ls := f.Schema(), left.Schema()
	out := make([]logical.Expr, n)
	for i := range out {
		out[i] = &logical.Alias{Expr: outCol(fs, i), Name: ls.Field(i).Name}
	}
	return logical.NewProjection(f, out)
}

// distinct groups lp by all its columns.
func distinct(lp logical.Plan) (logical.Plan, error) {
	s := lp.Schema()
	groups := make([]logical.Expr, s.Len())
	for i := range groups {
		groups[i] = outCol(s, i)
	}
	return logical.NewAggregate(lp, groups, nil)
}

// orderLimitOutput applies ORDER BY (over output columns: names and
// ordinals) and LIMIT to a set operation's result.
func (b *builder) orderLimitOutput(lp logical.Plan, ob *ast.OrderByClause, lim *ast.Limit) (logical.Plan, error) {
	if ob != nil {
		s := lp.Schema()
		keys := make([]logical.SortKey, len(ob.Items))
		for i, it := range ob.Items {
			e, nullsFirst, explicit := unwrapNulls(it.Expr)
			var key logical.Expr
			switch e := e.(type) {
			case *ast.PositionExpr:
				n, err := b.position(e, s.Len())
				if err != nil {
					return nil, err
				}
				key = outCol(s, n)
			default:
				x, err := b.expr(e, &exprCtx{sc: &scope{schema: s}, clause: "ORDER BY"})
				if err != nil {
					return nil, err
				}
				if key, err = logical.Coerce(x, s); err != nil {
					return nil, err
				}
			}
			keys[i] = sortKey(key, it.Desc, nullsFirst, explicit)
		}
		var err error
		if lp, err = logical.NewSort(lp, keys, -1); err != nil {
			return nil, err
		}
	}
	return b.limit(lp, lim)
}

func sortKey(e logical.Expr, desc, nullsFirst, explicit bool) logical.SortKey {
	if !explicit {
		nullsFirst = desc
	}
	return logical.SortKey{Expr: e, Asc: !desc, NullsFirst: nullsFirst}
}

// unwrapNulls strips the NULLS FIRST/LAST marker the pre-pass wrote. TiDB
// turns a bare integer ORDER BY item into a PositionExpr, but inside the
// marker call it stays a constant, so that rule is applied again here:
// without it `ORDER BY 1 NULLS FIRST` would sort by the constant 1.
func unwrapNulls(e ast.ExprNode) (inner ast.ExprNode, nullsFirst, explicit bool) {
	if f, ok := e.(*ast.FuncCallExpr); ok && len(f.Args) == 1 {
		switch f.FnName.L {
		case fnNullsFirst:
			return ordinal(f.Args[0]), true, true
		case fnNullsLast:
			return ordinal(f.Args[0]), false, true
		}
	}
	return e, false, false
}

// ordinal is TiDB's ORDER BY rule: an integer constant item is a select-list
// position.
func ordinal(e ast.ExprNode) ast.ExprNode {
	if v, ok := e.(*test_driver.ValueExpr); ok {
		if n, ok := v.GetValue().(int64); ok {
			return &ast.PositionExpr{N: int(n)}
		}
	}
	return e
}

func (b *builder) position(e *ast.PositionExpr, n int) (int, error) {
	if e.P != nil {
		return 0, qerr.NotImplementedf("sql: parameter markers are not supported")
	}
	if e.N < 1 || e.N > n {
		return 0, qerr.Planf("position %d is not in select list (1 to %d)", e.N, n)
	}
	return e.N - 1, nil
}

func (b *builder) limit(lp logical.Plan, lim *ast.Limit) (logical.Plan, error) {
	if lim == nil {
		return lp, nil
	}
	num := func(e ast.ExprNode, what string) (int64, error) {
		if e == nil {
			return 0, nil
		}
		x, err := b.expr(e, &exprCtx{sc: &scope{schema: logical.NewSchema()}, clause: what})
		if err != nil {
			return 0, err
		}
		if l, ok := x.(*logical.Literal); ok {
			if v, ok := l.Value.(int64); ok && v >= 0 {
				return v, nil
			}
		}
		return 0, qerr.Planf("%s must be a non-negative integer, not %s", what, x)
	}
	fetch, err := num(lim.Count, "LIMIT")
	if err != nil {
		return nil, err
	}
	if lim.Count == nil {
		fetch = -1
	}
	skip, err := num(lim.Offset, "OFFSET")
	if err != nil {
		return nil, err
	}
	return &logical.Limit{Input: lp, Skip: skip, Fetch: fetch}, nil
}

// ---- FROM -------------------------------------------------------------------

func (b *builder) from(n ast.ResultSetNode, outer *scope) (logical.Plan, error) {
	switch n := n.(type) {
	case *ast.Join:
		return b.join(n, outer)
	case *ast.TableSource:
		return b.tableSource(n, outer)
	case *ast.SelectStmt, *ast.SetOprStmt:
		lp, err := b.resultSet(n, outer)
		if err != nil {
			return nil, err
		}
		b.nextN++
		return logical.NewSubqueryAlias(lp, fmt.Sprintf("subquery_%d", b.nextN)), nil
	}
	return nil, qerr.NotImplementedf("sql: %T in FROM is not supported", n)
}

func (b *builder) tableSource(ts *ast.TableSource, outer *scope) (logical.Plan, error) {
	alias := ts.AsName.O
	var lp logical.Plan
	switch src := ts.Source.(type) {
	case *ast.TableName:
		var err error
		if lp, err = b.tableRef(src, alias); err != nil {
			return nil, err
		}
	case *ast.SelectStmt, *ast.SetOprStmt:
		var err error
		if lp, err = b.resultSet(src, outer); err != nil {
			return nil, err
		}
		if alias == "" {
			b.nextN++
			alias = fmt.Sprintf("subquery_%d", b.nextN)
		}
		lp = logical.NewSubqueryAlias(lp, alias)
	default:
		var err error
		if lp, err = b.from(src, outer); err != nil {
			return nil, err
		}
		if alias != "" {
			lp = logical.NewSubqueryAlias(lp, alias)
		}
	}
	if cols, ok := b.colAliases[strings.ToLower(alias)]; ok && len(ts.ColumnNames) == 0 && alias != "" {
		for _, c := range cols {
			ts.ColumnNames = append(ts.ColumnNames, ast.NewCIStr(c))
		}
	}
	if len(ts.ColumnNames) > 0 {
		p, err := renameColumns(lp, ts.ColumnNames, alias)
		if err != nil {
			return nil, err
		}
		lp = logical.NewSubqueryAlias(p, alias)
	}
	return lp, nil
}

// tableRef resolves a name: CTEs (innermost first), then views, then tables.
func (b *builder) tableRef(tn *ast.TableName, alias string) (logical.Plan, error) {
	if tn.Schema.L == infoSchemaName {
		return b.infoSchema(tn.Name.L, alias)
	}
	if tn.Schema.O != "" {
		return nil, qerr.NotImplementedf("sql: schema-qualified table names (%s.%s) are not supported", tn.Schema.O, tn.Name.O)
	}
	name := tn.Name.O
	if fs, ok := b.files[name]; ok {
		return b.fileScan(fs, alias)
	}
	if alias == "" {
		alias = name
	}
	for i := len(b.ctes) - 1; i >= 0; i-- {
		if d, ok := b.ctes[i][tn.Name.L]; ok {
			if d.id == 0 { // recursive: never shared
				return logical.NewSubqueryAlias(d.plan, alias), nil
			}
			r, err := logical.NewCTERef(d.id, d.name, d.plan)
			if err != nil {
				return nil, err
			}
			return logical.NewSubqueryAlias(r, alias), nil
		}
	}
	b.p.noteRef(name)
	// A name marked by CACHE TABLE reads through its Cache node.
	if c, ok := b.p.cat.Cached(name); ok {
		if lp, ok := c.Plan.(logical.Plan); ok {
			if alias == name {
				alias = c.Name
			}
			return logical.NewSubqueryAlias(lp, alias), nil
		}
	}
	if v, ok := b.p.cat.View(name); ok {
		lp, err := b.planView(v)
		if err != nil {
			return nil, err
		}
		if alias == name {
			alias = v.Name
		}
		return logical.NewSubqueryAlias(lp, alias), nil
	}
	if t, ok := b.p.cat.Table(name); ok {
		if alias == name {
			alias = t.Name
		}
		return b.inSessionZone(logical.NewScan(t, alias), alias)
	}
	return nil, unknownTable(name)
}

// UnknownTableError is the cause of the planning error for a name in FROM
// that is no table, view, CTE or cached name of the catalog; callers find it
// with errors.As, whatever the error's position or wrapping.
type UnknownTableError struct {
	Name string // as written in the statement
}

func (e *UnknownTableError) Error() string { return fmt.Sprintf("table %q not found", e.Name) }

// unknownTable is the planning error for name, its message the cause's.
func unknownTable(name string) error {
	return qerr.Planf("%w", &UnknownTableError{Name: name})
}

func (b *builder) join(j *ast.Join, outer *scope) (logical.Plan, error) {
	if j.Right == nil {
		return b.from(j.Left, outer)
	}
	l, err := b.from(j.Left, outer)
	if err != nil {
		return nil, err
	}
	r, err := b.from(j.Right, outer)
	if err != nil {
		return nil, err
	}
	typ := logical.InnerJoin
	switch {
	case j.StraightJoin:
		typ = logical.FullJoin
	case j.Tp == ast.LeftJoin:
		typ = logical.LeftJoin
	case j.Tp == ast.RightJoin:
		typ = logical.RightJoin
	}
	using := j.Using
	if j.NaturalJoin {
		// NATURAL JOIN is USING every column name both sides have (in the
		// left side's order); with none in common it is a cross join.
		using = commonColumns(l.Schema(), r.Schema())
		if len(using) == 0 && typ == logical.InnerJoin {
			return logical.NewJoin(l, r, logical.InnerJoin, nil, nil, false, "")
		}
		if len(using) == 0 {
			return nil, qerr.Planf("NATURAL %s JOIN: the two sides have no column name in common", strings.ToUpper(typ.String()))
		}
	}
	if len(using) > 0 {
		return b.joinUsing(l, r, typ, using)
	}
	if j.On == nil {
		if typ != logical.InnerJoin {
			return nil, qerr.Planf("%s JOIN needs an ON or USING condition", strings.ToUpper(typ.String()))
		}
		return logical.NewJoin(l, r, logical.InnerJoin, nil, nil, false, "")
	}
	joined := l.Schema().Join(r.Schema())
	cond, err := b.expr(j.On.Expr, &exprCtx{sc: &scope{schema: joined, parent: outer}, clause: "JOIN ON"})
	if err != nil {
		return nil, err
	}
	if cond, err = logical.Coerce(cond, joined); err != nil {
		return nil, err
	}
	return joinOn(l, r, typ, cond)
}

type side int

const (
	sideNone side = iota
	sideLeft
	sideRight
)

// sideOf says whether e references only the left or only the right input.
func sideOf(e logical.Expr, ls, rs *logical.Schema) side {
	pure := true
	logical.InspectExpr(e, func(x logical.Expr) bool {
		switch x.(type) {
		case *logical.OuterRef, *logical.ScalarSubquery, *logical.Exists, *logical.InSubquery:
			pure = false
		}
		return pure
	})
	cols := logical.ColumnsOf(e)
	if !pure || len(cols) == 0 {
		return sideNone
	}
	inL, inR := true, true
	for _, c := range cols {
		inL = inL && ls.Has(c.Qualifier, c.Name)
		inR = inR && rs.Has(c.Qualifier, c.Name)
	}
	switch {
	case inL && !inR:
		return sideLeft
	case inR && !inL:
		return sideRight
	}
	return sideNone
}

// joinOn puts each conjunct "l = r" with one side over each input into the
// join's equi-pairs (both sides of one type) and the rest into its filter.
func joinOn(l, r logical.Plan, typ logical.JoinType, cond logical.Expr) (logical.Plan, error) {
	ls, rs := l.Schema(), r.Schema()
	var on []logical.EquiPair
	var rest []logical.Expr
	for _, c := range logical.SplitAnd(cond) {
		if bin, ok := c.(*logical.Binary); ok && bin.Op == logical.OpEq {
			a, z := sideOf(bin.Left, ls, rs), sideOf(bin.Right, ls, rs)
			var pair *logical.EquiPair
			switch {
			case a == sideLeft && z == sideRight:
				pair = &logical.EquiPair{Left: bin.Left, Right: bin.Right}
			case a == sideRight && z == sideLeft:
				pair = &logical.EquiPair{Left: bin.Right, Right: bin.Left}
			}
			if pair != nil {
				lt, _, err := pair.Left.DataType(ls)
				if err != nil {
					return nil, err
				}
				rt, _, err := pair.Right.DataType(rs)
				if err != nil {
					return nil, err
				}
				if !sameType(lt, rt) {
					t, ok := logical.SuperType(lt, rt)
					if !ok {
						return nil, qerr.Planf("join keys %s and %s have incompatible types %s and %s", pair.Left, pair.Right, logical.TypeString(lt), logical.TypeString(rt))
					}
					pair.Left, pair.Right = logical.CastTo(pair.Left, t), logical.CastTo(pair.Right, t)
				}
				on = append(on, *pair)
				continue
			}
		}
		rest = append(rest, c)
	}
	return logical.NewJoin(l, r, typ, on, logical.And(rest...), false, "")
}

// joinUsing joins on equal USING columns and keeps one copy of each.
func (b *builder) joinUsing(l, r logical.Plan, typ logical.JoinType, using []*ast.ColumnName) (logical.Plan, error) {
	ls, rs := l.Schema(), r.Schema()
	var conds []logical.Expr
	usingIdx := map[int]int{} // right index → left index
	leftUsing := map[int]bool{}
	for _, u := range using {
		li, err := ls.IndexOf("", u.Name.O)
		if err != nil {
			return nil, qerr.Planf("USING column %q: %s", u.Name.O, msgOf(err))
		}
		ri, err := rs.IndexOf("", u.Name.O)
		if err != nil {
			return nil, qerr.Planf("USING column %q: %s", u.Name.O, msgOf(err))
		}
		usingIdx[ri] = li
		leftUsing[li] = true
		conds = append(conds, &logical.Binary{Op: logical.OpEq, Left: outCol(ls, li), Right: outCol(rs, ri)})
	}
	joined := ls.Join(rs)
	cond, err := logical.Coerce(logical.And(conds...), joined)
	if err != nil {
		return nil, err
	}
	j, err := joinOn(l, r, typ, cond)
	if err != nil {
		return nil, err
	}
	js := j.Schema()
	var exprs []logical.Expr
	n := ls.Len()
	for i := 0; i < ls.Len(); i++ {
		switch {
		case leftUsing[i] && typ == logical.RightJoin:
			continue
		case leftUsing[i] && typ == logical.FullJoin:
			for ri, li := range usingIdx {
				if li == i {
					exprs = append(exprs, &logical.Alias{Name: ls.Field(i).Name, Expr: &logical.ScalarFunc{Name: "coalesce",
						Args: []logical.Expr{outCol(js, i), outCol(js, n+ri)}}})
				}
			}
		default:
			exprs = append(exprs, outCol(js, i))
		}
	}
	for i := 0; i < rs.Len(); i++ {
		if _, ok := usingIdx[i]; ok && typ != logical.RightJoin {
			continue
		}
		exprs = append(exprs, outCol(js, n+i))
	}
	for i, e := range exprs {
		if exprs[i], err = logical.Coerce(e, js); err != nil {
			return nil, err
		}
	}
	return logical.NewProjection(j, exprs)
}

// commonColumns are the column names that both schemas have, in s's order,
// each once.
func commonColumns(s, o *logical.Schema) []*ast.ColumnName {
	theirs := map[string]bool{}
	for _, f := range o.Fields {
		theirs[strings.ToLower(f.Name)] = true
	}
	var out []*ast.ColumnName
	seen := map[string]bool{}
	for _, f := range s.Fields {
		k := strings.ToLower(f.Name)
		if theirs[k] && !seen[k] {
			seen[k] = true
			out = append(out, &ast.ColumnName{Name: ast.NewCIStr(f.Name)})
		}
	}
	return out
}
