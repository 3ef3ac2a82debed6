package sql

import (
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/test_driver"
	"github.com/quiverdb/quiver/logical"
	"github.com/quiverdb/quiver/qerr"
)

func sameType(a, b arrow.DataType) bool { return arrow.TypeEqual(a, b) }

// selectItem is one lowered select-list entry.
type selectItem struct {
	expr  logical.Expr // coerced, without the alias
	alias string       // "" when none
}

func (it selectItem) output() logical.Expr {
	if it.alias != "" {
		return &logical.Alias{Expr: it.expr, Name: it.alias}
	}
	return it.expr
}

// selectStmt lowers SELECT (and VALUES) with SQL's clause order: FROM, WHERE,
// GROUP BY/aggregates, HAVING, window functions, QUALIFY, the select list,
// DISTINCT, ORDER BY, LIMIT.
func (b *builder) selectStmt(s *ast.SelectStmt, outer *scope) (logical.Plan, error) {
	pop, ids, err := b.with(s.With, outer)
	if err != nil {
		return nil, err
	}
	defer pop()
	lp, err := b.selectBody(s, outer)
	if err != nil {
		return nil, err
	}
	return shareCTEs(lp, ids)
}

// selectBody lowers a SELECT (or VALUES) once its WITH queries are visible.
func (b *builder) selectBody(s *ast.SelectStmt, outer *scope) (logical.Plan, error) {
	switch s.Kind {
	case ast.SelectStmtKindValues:
		lp, err := b.values(s.Lists, outer)
		if err != nil {
			return nil, err
		}
		return b.orderLimitOutput(lp, s.OrderBy, s.Limit)
	case ast.SelectStmtKindTable:
		return nil, qerr.NotImplementedf("sql: TABLE statements are not supported")
	}
	qualifyAST, err := resolveNamedWindows(s)
	if err != nil {
		return nil, err
	}
	if s.LockInfo != nil && s.LockInfo.LockType != ast.SelectLockNone {
		return nil, qerr.NotImplementedf("sql: locking clauses are not supported")
	}
	if s.SelectIntoOpt != nil {
		return nil, qerr.NotImplementedf("sql: SELECT INTO is not supported")
	}

	// FROM
	var input logical.Plan
	if s.From == nil {
		input = logical.NewEmptyRelation(true, nil)
	} else if input, err = b.from(s.From.TableRefs, outer); err != nil {
		return nil, err
	}
	in := input.Schema()
	sc := &scope{schema: in, parent: outer}

	// WHERE
	if s.Where != nil {
		pred, err := b.expr(s.Where, &exprCtx{sc: sc, clause: "WHERE"})
		if err != nil {
			return nil, err
		}
		if pred, err = logical.Coerce(pred, in); err != nil {
			return nil, err
		}
		if input, err = logical.NewFilter(input, pred); err != nil {
			return nil, err
		}
	}

	// Select list, over the input (aggregates still inside).
	var items []selectItem
	aliases := map[string]logical.Expr{}
	starFrom := -1 // the first item of the last star's columns
	var distinctOnKeys []ast.ExprNode
	for _, f := range s.Fields.Fields {
		if call, ok := f.Expr.(*ast.FuncCallExpr); ok && call.FnName.L == fnDistinctOn {
			distinctOnKeys = call.Args
			continue
		}
		if call, ok := f.Expr.(*ast.FuncCallExpr); ok && call.FnName.L == fnExclude {
			if starFrom < 0 {
				return nil, qerr.Planf("EXCLUDE must follow * or t.*")
			}
			if items, err = excludeColumns(items, starFrom, call); err != nil {
				return nil, err
			}
			starFrom = -1
			continue
		}
		starFrom = -1
		if f.WildCard != nil {
			starFrom = len(items)
			q := f.WildCard.Table.O
			n := 0
			for i, fl := range in.Fields {
				if q == "" || strings.EqualFold(fl.Qualifier, q) {
					items = append(items, selectItem{expr: outCol(in, i)})
					n++
				}
			}
			if n == 0 && q != "" {
				return nil, qerr.Planf("%s.*: table %q not found in FROM", q, q)
			}
			if n == 0 && q == "" && s.From != nil {
				return nil, qerr.Planf("SELECT * over a relation without columns")
			}
			continue
		}
		e, err := b.expr(f.Expr, &exprCtx{sc: sc, aggOK: true, clause: "SELECT"})
		if err != nil {
			return nil, err
		}
		if e, err = logical.Coerce(e, in); err != nil {
			return nil, err
		}
		it := selectItem{expr: e, alias: f.AsName.O}
		if it.alias != "" {
			aliases[strings.ToLower(it.alias)] = e
		}
		items = append(items, it)
	}
	nameUnaliased(items)

	// ORDER BY keys, lowered over the input; an output alias or ordinal
	// refers to the select item (index ≥ 0).
	type orderKey struct {
		item                    int
		expr                    logical.Expr
		desc, nullsFirst, given bool
	}
	var order []orderKey
	// lowerKey resolves an ORDER BY or DISTINCT ON key.
	lowerKey := func(e ast.ExprNode, desc, nf, given bool, clause string) (orderKey, error) {
		k := orderKey{item: -1, desc: desc, nullsFirst: nf, given: given}
		switch x := e.(type) {
		case *ast.PositionExpr:
			n, err := b.position(x, len(items))
			if err != nil {
				return k, err
			}
			k.item = n
		case *ast.ColumnNameExpr:
			if x.Name.Table.O == "" {
				for i, si := range items {
					if si.alias != "" && strings.EqualFold(si.alias, x.Name.Name.O) {
						k.item = i
						break
					}
				}
			}
		}
		if k.item < 0 {
			x, err := b.expr(e, &exprCtx{sc: sc, aggOK: true, clause: clause, aliases: aliases})
			if err != nil {
				return k, err
			}
			if k.expr, err = logical.Coerce(x, in); err != nil {
				return k, err
			}
		}
		return k, nil
	}
	if s.OrderBy != nil {
		for _, it := range s.OrderBy.Items {
			e, nf, given := unwrapNulls(it.Expr)
			k, err := lowerKey(e, it.Desc, nf, given, "ORDER BY")
			if err != nil {
				return nil, err
			}
			order = append(order, k)
		}
	}
	// DISTINCT ON (keys): the keys must be the leading ORDER BY keys, in
	// any order (without ORDER BY they become it); the first nOn sort keys
	// then partition the rows, and the rest pick each partition's first.
	nOn := 0
	if distinctOnKeys != nil {
		if s.Distinct {
			return nil, qerr.Planf("SELECT DISTINCT ON cannot be combined with SELECT DISTINCT")
		}
		same := func(a, b orderKey) bool {
			str := func(k orderKey) string {
				if k.item >= 0 {
					return items[k.item].expr.String()
				}
				return k.expr.String()
			}
			return a.item >= 0 && a.item == b.item || str(a) == str(b)
		}
		var on []orderKey
		for _, e := range distinctOnKeys {
			k, err := lowerKey(ordinal(e), false, false, false, "DISTINCT ON")
			if err != nil {
				return nil, err
			}
			dup := false
			for _, o := range on {
				dup = dup || same(o, k)
			}
			if !dup {
				on = append(on, k)
			}
		}
		if len(order) == 0 {
			order = on
		} else {
			for _, k := range on {
				found := false
				for j := 0; j < len(on) && j < len(order); j++ {
					found = found || same(order[j], k)
				}
				if !found || len(order) < len(on) {
					return nil, qerr.Planf("SELECT DISTINCT ON expressions must match the leading ORDER BY expressions")
				}
			}
		}
		nOn = len(on)
	}

	// GROUP BY, HAVING and aggregates.
	var (
		groups []logical.Expr
		sets   [][]int // nil for a plain GROUP BY
	)
	if s.GroupBy != nil {
		leaf := func(x ast.ExprNode) (logical.Expr, error) {
			// An integer inside ROLLUP, CUBE or GROUPING SETS is an
			// ordinal too, as in PostgreSQL.
			x = ordinal(x)
			var g logical.Expr
			if p, ok := x.(*ast.PositionExpr); ok {
				n, err := b.position(p, len(items))
				if err != nil {
					return nil, err
				}
				g = items[n].expr
			} else {
				var err error
				if g, err = b.expr(x, &exprCtx{sc: sc, clause: "GROUP BY", aliases: aliases}); err != nil {
					return nil, err
				}
				if g, err = logical.Coerce(g, in); err != nil {
					return nil, err
				}
			}
			if hasAgg(g) {
				return nil, qerr.Planf("aggregate functions are not allowed in GROUP BY: %s", g)
			}
			if err := noWindows("GROUP BY", g); err != nil {
				return nil, err
			}
			return g, nil
		}
		if groups, sets, err = groupBy(s.GroupBy, leaf); err != nil {
			return nil, err
		}
	}
	var having logical.Expr
	if s.Having != nil {
		h, err := b.expr(s.Having.Expr, &exprCtx{sc: sc, aggOK: true, clause: "HAVING", aliases: aliases})
		if err != nil {
			return nil, err
		}
		if having, err = logical.Coerce(h, in); err != nil {
			return nil, err
		}
		if err := noWindows("HAVING", having); err != nil {
			return nil, err
		}
	}
	var qualify logical.Expr
	if qualifyAST != nil {
		q, err := b.expr(qualifyAST, &exprCtx{sc: sc, aggOK: true, clause: "QUALIFY", aliases: aliases})
		if err != nil {
			return nil, err
		}
		if qualify, err = logical.Coerce(q, in); err != nil {
			return nil, err
		}
	}
	var aggs []logical.Expr
	seen := map[string]bool{}
	collect := func(e logical.Expr) {
		logical.InspectExpr(e, func(x logical.Expr) bool {
			if a, ok := x.(*logical.AggExpr); ok {
				if !seen[a.String()] {
					seen[a.String()] = true
					aggs = append(aggs, a)
				}
				return false
			}
			return true
		})
	}
	for _, it := range items {
		collect(it.expr)
	}
	if having != nil {
		collect(having)
	}
	if qualify != nil {
		collect(qualify)
	}
	for _, k := range order {
		if k.expr != nil {
			collect(k.expr)
		}
	}
	var groupingCalls []*logical.ScalarFunc
	seenCall := map[string]bool{}
	findGrouping := func(e logical.Expr) {
		logical.InspectExpr(e, func(x logical.Expr) bool {
			if f, ok := x.(*logical.ScalarFunc); ok && f.Name == groupingFunc && !seenCall[f.String()] {
				seenCall[f.String()] = true
				groupingCalls = append(groupingCalls, f)
			}
			return true
		})
	}
	for _, it := range items {
		findGrouping(it.expr)
	}
	if having != nil {
		findGrouping(having)
	}
	if qualify != nil {
		findGrouping(qualify)
	}
	for _, k := range order {
		if k.expr != nil {
			findGrouping(k.expr)
		}
	}
	rollup := sets != nil
	if len(groupingCalls) > 0 && s.GroupBy == nil {
		return nil, qerr.Planf("%s: GROUPING needs a GROUP BY", groupingCalls[0])
	}
	if len(aggs) > 0 || s.GroupBy != nil || having != nil {
		var (
			agg      logical.Plan
			nKeys    = len(groups) // the aggregate's key columns, before its aggregates
			grouping map[string]logical.Expr
			err      error
		)
		if rollup {
			agg, nKeys, grouping, err = groupingSetsAggregate(input, groups, sets, groupingCalls, aggs)
		} else if grouping, err = plainGrouping(groupingCalls, groups); err == nil {
			agg, err = logical.NewAggregate(input, groups, aggs)
		}
		if err != nil {
			return nil, err
		}
		as := agg.Schema()
		repl := map[string]logical.Expr{}
		for i := range groups {
			repl[groups[i].String()] = outCol(as, i)
		}
		for name, v := range grouping {
			repl[name] = v
		}
		for i := range aggs {
			repl[aggs[i].String()] = outCol(as, nKeys+i)
		}
		rewrite := func(e logical.Expr, clause string) (logical.Expr, error) {
			n := replaceExprs(e, repl)
			for _, c := range logical.ColumnsOf(n) {
				if !as.Has(c.Qualifier, c.Name) {
					return nil, qerr.Planf("column %q must appear in the GROUP BY clause or be used in an aggregate function (in %s)", c.String(), clause)
				}
			}
			return n, nil
		}
		for i := range items {
			if rollup && items[i].alias == "" {
				// The rolled-up keys are internal columns: the item keeps
				// the name it would have had.
				if c, ok := items[i].expr.(*logical.Column); ok {
					items[i].alias = c.Name
				} else {
					items[i].alias = items[i].expr.String()
				}
			}
			if items[i].expr, err = rewrite(items[i].expr, "SELECT"); err != nil {
				return nil, err
			}
		}
		for i := range order {
			if order[i].expr != nil {
				if order[i].expr, err = rewrite(order[i].expr, "ORDER BY"); err != nil {
					return nil, err
				}
			}
		}
		if qualify != nil {
			if qualify, err = rewrite(qualify, "QUALIFY"); err != nil {
				return nil, err
			}
		}
		input = agg
		if having != nil {
			if having, err = rewrite(having, "HAVING"); err != nil {
				return nil, err
			}
			if input, err = logical.NewFilter(input, having); err != nil {
				return nil, err
			}
		}
	}

	// Window functions over the grouped rows, then QUALIFY.
	winExprs := make([]logical.Expr, 0, len(items)+len(order))
	for _, it := range items {
		winExprs = append(winExprs, it.expr)
	}
	for _, k := range order {
		winExprs = append(winExprs, k.expr)
	}
	winExprs = append(winExprs, qualify)
	if input, winExprs, err = windows(input, winExprs); err != nil {
		return nil, err
	}
	if q := winExprs[len(winExprs)-1]; q != nil {
		// QUALIFY filters the rows with their window values.
		if input, err = logical.NewFilter(input, q); err != nil {
			return nil, err
		}
	}
	for i := range items {
		items[i].expr = winExprs[i]
	}
	for i := range order {
		order[i].expr = winExprs[len(items)+i]
	}

	// Projection: the select list, then hidden ORDER BY columns.
	exprs := make([]logical.Expr, 0, len(items))
	for _, it := range items {
		exprs = append(exprs, it.output())
	}
	hidden := 0
	for i, k := range order {
		if k.item >= 0 {
			continue
		}
		for j, it := range items {
			if it.expr.String() == k.expr.String() {
				order[i].item = j
				break
			}
		}
		if order[i].item < 0 {
			if s.Distinct {
				return nil, qerr.Planf("for SELECT DISTINCT, ORDER BY expression %s must appear in the select list", k.expr)
			}
			order[i].item = len(exprs)
			exprs = append(exprs, k.expr)
			hidden++
		}
	}
	proj, err := logical.NewProjection(input, exprs)
	if err != nil {
		return nil, err
	}
	var out logical.Plan = proj
	if nOn > 0 {
		ps := out.Schema()
		keys := make([]logical.SortKey, len(order))
		for i, k := range order {
			keys[i] = sortKey(outCol(ps, k.item), k.desc, k.nullsFirst, k.given)
		}
		if out, err = distinctOn(out, keys, nOn); err != nil {
			return nil, err
		}
	}
	if s.Distinct {
		if out, err = distinct(out); err != nil {
			return nil, err
		}
	}
	if len(order) > 0 {
		ps := out.Schema()
		keys := make([]logical.SortKey, len(order))
		for i, k := range order {
			keys[i] = sortKey(outCol(ps, k.item), k.desc, k.nullsFirst, k.given)
		}
		if out, err = logical.NewSort(out, keys, -1); err != nil {
			return nil, err
		}
	}
	if hidden > 0 {
		ps := out.Schema()
		visible := make([]logical.Expr, len(items))
		for i := range visible {
			visible[i] = outCol(ps, i)
		}
		if out, err = logical.NewProjection(out, visible); err != nil {
			return nil, err
		}
	}
	return b.limit(out, s.Limit)
}

func hasAgg(e logical.Expr) bool {
	found := false
	logical.InspectExpr(e, func(x logical.Expr) bool {
		if _, ok := x.(*logical.AggExpr); ok {
			found = true
		}
		return !found
	})
	return found
}

// replaceExprs replaces, top-down, every sub-expression whose display name is
// a key of repl (group expressions and aggregate calls) by its column.
func replaceExprs(e logical.Expr, repl map[string]logical.Expr) logical.Expr {
	switch e.(type) {
	case *logical.Alias, *logical.Literal:
	default:
		if r, ok := repl[e.String()]; ok {
			return r
		}
	}
	ch := e.Children()
	if len(ch) == 0 {
		return e
	}
	nc := make([]logical.Expr, len(ch))
	for i, c := range ch {
		nc[i] = replaceExprs(c, repl)
	}
	return e.WithChildren(nc)
}

// values lowers VALUES rows: columns column1..N of the common type of each column.
func (b *builder) values(rows []*ast.RowExpr, outer *scope) (logical.Plan, error) {
	if len(rows) == 0 {
		return nil, qerr.Planf("VALUES needs at least one row")
	}
	empty := logical.NewSchema()
	width := len(rows[0].Values)
	out := make([][]logical.Expr, len(rows))
	types := make([]arrow.DataType, width)
	nullable := make([]bool, width)
	for i := range types {
		types[i] = logical.Null
	}
	for r, row := range rows {
		if len(row.Values) != width {
			return nil, qerr.Planf("VALUES row %d has %d columns, want %d", r+1, len(row.Values), width)
		}
		out[r] = make([]logical.Expr, width)
		for c, v := range row.Values {
			e, err := b.expr(v, &exprCtx{sc: &scope{schema: empty, parent: outer}, clause: "VALUES"})
			if err != nil {
				return nil, err
			}
			if e, err = logical.Coerce(e, empty); err != nil {
				return nil, err
			}
			t, n, err := e.DataType(empty)
			if err != nil {
				return nil, err
			}
			st, ok := logical.SuperType(types[c], t)
			if !ok {
				return nil, qerr.Planf("VALUES column %d has types %s and %s", c+1, logical.TypeString(types[c]), logical.TypeString(t))
			}
			types[c], nullable[c] = st, nullable[c] || n
			out[r][c] = e
		}
	}
	fields := make([]logical.Field, width)
	for c := range fields {
		fields[c] = logical.Field{Name: "column" + itoa(c+1), Type: types[c], Nullable: nullable[c]}
		for r := range out {
			out[r][c] = logical.CastTo(out[r][c], types[c])
		}
	}
	return logical.NewValues(logical.NewSchema(fields...), out)
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

// nameUnaliased names each computed select item without an alias by its
// display name with column qualifiers dropped ("sum(l_quantity)", as
// DuckDB and PostgreSQL users expect), unless two items would share a name.
func nameUnaliased(items []selectItem) {
	names := map[string]int{}
	short := make([]string, len(items))
	for i, it := range items {
		if it.alias != "" {
			continue
		}
		if _, isCol := it.expr.(*logical.Column); isCol {
			continue
		}
		short[i] = logical.DisplayName(it.expr)
		names[strings.ToLower(short[i])]++
	}
	for i := range items {
		if short[i] != "" && short[i] != items[i].expr.String() && names[strings.ToLower(short[i])] == 1 {
			items[i].alias = short[i]
		}
	}
}

// excludeColumns drops from items[from:] (one star's columns) the columns
// an EXCLUDE list names; naming a column the star does not have is an error.
func excludeColumns(items []selectItem, from int, call *ast.FuncCallExpr) ([]selectItem, error) {
	drop := map[string]bool{}
	for _, a := range call.Args {
		v, ok := a.(*test_driver.ValueExpr)
		if !ok {
			return nil, qerr.Internalf("sql: malformed %s", fnExclude)
		}
		drop[strings.ToLower(v.GetString())] = false
	}
	out := items[:from]
	for _, it := range items[from:] {
		if c, ok := it.expr.(*logical.Column); ok {
			if _, hit := drop[strings.ToLower(c.Name)]; hit {
				drop[strings.ToLower(c.Name)] = true
				continue
			}
		}
		out = append(out, it)
	}
	for n, used := range drop {
		if !used {
			return nil, qerr.Planf("EXCLUDE: column %q is not among the columns of *", n)
		}
	}
	if len(out) == 0 {
		return nil, qerr.Planf("EXCLUDE removes every column")
	}
	return out, nil
}
