package sql

import (
	"slices"
	"strconv"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/quiverdb/quiver/logical"
	"github.com/quiverdb/quiver/qerr"
)

// Marker functions the pre-pass writes for the grouping constructs of a
// GROUP BY, which TiDB does not parse; the lowering (groupBy) reads them
// back. An element in parentheses inside ROLLUP, CUBE or GROUPING SETS,
// and (), become a fnGroupSet call.
const (
	fnRollup       = "quiver_rollup"        // ROLLUP(...)
	fnCube         = "quiver_cube"          // CUBE(...)
	fnGroupingSets = "quiver_grouping_sets" // GROUPING SETS (...)
	fnGroupSet     = "quiver_group_set"     // (a, b) or () inside one of those
)

// groupByEnds are the words that end a GROUP BY list at its own depth.
var groupByEnds = map[string]bool{"HAVING": true, "ORDER": true, "LIMIT": true, "WINDOW": true, "QUALIFY": true,
	"UNION": true, "INTERSECT": true, "EXCEPT": true, "OFFSET": true, "FETCH": true, "WITH": true, "INTO": true, "FOR": true, "LOCK": true}

// groupByEdits rewrites the grouping constructs of the GROUP BY list whose
// GROUP is token at into marker calls.
func groupByEdits(toks []token, at int, matching func(int) int) ([]edit, error) {
	var edits []edit
	// construct[d] says whether the parenthesis open at depth d (relative
	// to the list) belongs to ROLLUP, CUBE or GROUPING SETS.
	construct := []bool{false}
	elementStart := func(j int) bool {
		// The first token of an element: after BY, after ',' in the list,
		// or after '(' or ',' directly inside a construct.
		if j == at+2 {
			return true
		}
		if len(construct) == 1 {
			return toks[j-1].punct(",")
		}
		if !construct[len(construct)-1] {
			return false
		}
		return toks[j-1].punct("(") || toks[j-1].punct(",")
	}
	for j := at + 2; j < len(toks); j++ {
		t := toks[j]
		depth := len(construct) - 1
		if depth == 0 && (t.punct(")") || t.punct(";") || (t.Kind == tokIdent && groupByEnds[strings.ToUpper(t.Text)])) {
			break
		}
		switch {
		case (t.is("ROLLUP") || t.is("CUBE")) && j+1 < len(toks) && toks[j+1].punct("("):
			name := fnRollup
			if t.is("CUBE") {
				name = fnCube
			}
			edits = append(edits, edit{t.Off, t.End, name})
			construct = append(construct, true)
			j++
		case t.is("GROUPING") && j+2 < len(toks) && toks[j+1].is("SETS") && toks[j+2].punct("("):
			edits = append(edits, edit{t.Off, toks[j+1].End, fnGroupingSets})
			construct = append(construct, true)
			j += 2
		case t.punct("(") && j+1 < len(toks) && (toks[j+1].is("SELECT") || toks[j+1].is("WITH")):
			// A subquery: its own GROUP BY is rewritten on its own.
			if j = matching(j); j < 0 {
				return edits, nil // TiDB reports the syntax error
			}
		case t.punct("("):
			closeAt := matching(j)
			if closeAt < 0 {
				return edits, nil // TiDB reports the syntax error
			}
			after := closeAt + 1
			ends := after >= len(toks) || toks[after].punct(",") || toks[after].punct(")") || toks[after].punct(";") ||
				(toks[after].Kind == tokIdent && groupByEnds[strings.ToUpper(toks[after].Text)])
			isSet := elementStart(j) && ends && (construct[len(construct)-1] || closeAt == j+1)
			if isSet {
				edits = append(edits, edit{t.Off, t.Off, fnGroupSet})
			}
			construct = append(construct, false)
		case t.punct(")"):
			construct = construct[:len(construct)-1]
		}
	}
	return edits, nil
}

// groupBy lowers the GROUP BY list: its distinct key expressions and,
// when it uses ROLLUP, CUBE, GROUPING SETS, () or WITH ROLLUP, its grouping
// sets (each a list of indexes into keys), in PostgreSQL's order and with
// its duplicates; sets is nil for a plain list. leaf lowers one key
// expression (ordinal, alias or expression).
func groupBy(g *ast.GroupByClause, leaf func(ast.ExprNode) (logical.Expr, error)) (keys []logical.Expr, sets [][]int, err error) {
	index := map[string]int{}
	key := func(e ast.ExprNode) (int, error) {
		x, err := leaf(e)
		if err != nil {
			return 0, err
		}
		s := x.String()
		if i, ok := index[s]; ok {
			return i, nil
		}
		index[s] = len(keys)
		keys = append(keys, x)
		return len(keys) - 1, nil
	}
	var (
		element func(e ast.ExprNode, top bool) ([][]int, error)
		count   int
	)
	grow := func(n int) error {
		if n > logical.MaxGroupingSets {
			return qerr.Planf("GROUP BY makes more than %d grouping sets", logical.MaxGroupingSets)
		}
		return nil
	}
	// unit lowers an element of ROLLUP or CUBE: one key or a parenthesised
	// list of them, as one set.
	unit := func(e ast.ExprNode) ([]int, error) {
		if c, ok := e.(*ast.FuncCallExpr); ok {
			switch c.FnName.L {
			case fnGroupSet:
				var out []int
				for _, a := range c.Args {
					if isGroupingMarker(a) {
						return nil, qerr.Planf("a parenthesised list in ROLLUP or CUBE may hold only expressions")
					}
					k, err := key(a)
					if err != nil {
						return nil, err
					}
					out = append(out, k)
				}
				return out, nil
			case fnRollup, fnCube, fnGroupingSets:
				return nil, qerr.Planf("ROLLUP, CUBE and GROUPING SETS cannot be nested inside ROLLUP or CUBE")
			}
		}
		k, err := key(e)
		return []int{k}, err
	}
	element = func(e ast.ExprNode, top bool) ([][]int, error) {
		c, ok := e.(*ast.FuncCallExpr)
		if !ok || !isGroupingMarker(c) {
			k, err := key(e)
			return [][]int{{k}}, err
		}
		count++
		if len(c.Args) == 0 && c.FnName.L != fnGroupSet {
			return nil, qerr.Planf("ROLLUP, CUBE and GROUPING SETS need at least one element")
		}
		switch c.FnName.L {
		case fnGroupSet:
			var set []int
			for _, a := range c.Args {
				if isGroupingMarker(a) {
					return nil, qerr.Planf("a parenthesised list in GROUPING SETS may hold only expressions")
				}
				k, err := key(a)
				if err != nil {
					return nil, err
				}
				set = append(set, k)
			}
			return [][]int{set}, nil
		case fnRollup:
			units := make([][]int, len(c.Args))
			for i, a := range c.Args {
				if units[i], err = unit(a); err != nil {
					return nil, err
				}
			}
			if err := grow(len(units) + 1); err != nil {
				return nil, err
			}
			// ROLLUP(a, b, c): (a, b, c), (a, b), (a), ().
			out := make([][]int, 0, len(units)+1)
			for n := len(units); n >= 0; n-- {
				var set []int
				for _, u := range units[:n] {
					set = append(set, u...)
				}
				out = append(out, set)
			}
			return out, nil
		case fnCube:
			units := make([][]int, len(c.Args))
			for i, a := range c.Args {
				if units[i], err = unit(a); err != nil {
					return nil, err
				}
			}
			if len(units) > 12 {
				return nil, qerr.Planf("CUBE takes at most 12 elements (%d grouping sets at most), got %d", logical.MaxGroupingSets, len(units))
			}
			// Every subset, from all elements down to none; an element
			// is in the set when its bit (the first element the highest)
			// of the mask is set.
			n := len(units)
			out := make([][]int, 0, 1<<n)
			for mask := (1 << n) - 1; mask >= 0; mask-- {
				var set []int
				for i, u := range units {
					if mask&(1<<(n-1-i)) != 0 {
						set = append(set, u...)
					}
				}
				out = append(out, set)
			}
			return out, nil
		default: // fnGroupingSets
			var out [][]int
			for _, a := range c.Args {
				s, err := element(a, false)
				if err != nil {
					return nil, err
				}
				out = append(out, s...)
				if err := grow(len(out)); err != nil {
					return nil, err
				}
			}
			return out, nil
		}
	}
	// The list is the cross product of its elements' sets: each result
	// set concatenates one set of every element.
	acc := [][]int{{}}
	for _, it := range g.Items {
		s, err := element(it.Expr, true)
		if err != nil {
			return nil, nil, err
		}
		if err := grow(len(acc) * len(s)); err != nil {
			return nil, nil, err
		}
		next := make([][]int, 0, len(acc)*len(s))
		for _, a := range acc {
			for _, b := range s {
				next = append(next, union(a, b))
			}
		}
		acc = next
	}
	if g.Rollup {
		// MySQL's GROUP BY a, b WITH ROLLUP is ROLLUP(a, b).
		if count > 0 {
			return nil, nil, qerr.Planf("WITH ROLLUP cannot be combined with ROLLUP, CUBE or GROUPING SETS")
		}
		var all []int
		for i := range keys {
			all = append(all, i)
		}
		acc = nil
		for n := len(all); n >= 0; n-- {
			acc = append(acc, all[:n:n])
		}
		count++
	}
	if count == 0 {
		return keys, nil, nil
	}
	return keys, acc, nil
}

// union is a's keys, then b's not in a.
func union(a, b []int) []int {
	out := append([]int(nil), a...)
	for _, k := range b {
		dup := false
		for _, x := range out {
			dup = dup || x == k
		}
		if !dup {
			out = append(out, k)
		}
	}
	return out
}

func isGroupingMarker(e ast.ExprNode) bool {
	c, ok := e.(*ast.FuncCallExpr)
	if !ok {
		return false
	}
	switch c.FnName.L {
	case fnRollup, fnCube, fnGroupingSets, fnGroupSet:
		return true
	}
	return false
}

// groupingFunc is GROUPING(key, ...): which of its arguments the row's
// grouping set does not group by, as bits (the first argument the most
// significant), as in PostgreSQL.
const groupingFunc = "grouping"

// groupingValue is GROUPING(args) for grouping set set of keys: a bit per
// argument, the first the highest, set when the set does not hold it.
func groupingValue(c *logical.ScalarFunc, keyOf map[string]int, set []int) (int32, error) {
	if len(c.Args) == 0 || len(c.Args) > 31 {
		return 0, qerr.Planf("%s: GROUPING takes from 1 to 31 GROUP BY expressions", c)
	}
	var v int32
	for _, a := range c.Args {
		k, ok := keyOf[a.String()]
		if !ok {
			return 0, qerr.Planf("%s: the arguments of GROUPING must be GROUP BY expressions (%s is not)", c, a)
		}
		in := false
		for _, x := range set {
			in = in || x == k
		}
		v <<= 1
		if !in {
			v |= 1
		}
	}
	return v, nil
}

// plainGrouping is each GROUPING call's value under a plain GROUP BY of
// keys: 0, once its arguments are checked to be keys.
func plainGrouping(calls []*logical.ScalarFunc, keys []logical.Expr) (map[string]logical.Expr, error) {
	keyOf := map[string]int{}
	all := make([]int, len(keys))
	for i, k := range keys {
		keyOf[k.String()] = i
		all[i] = i
	}
	out := map[string]logical.Expr{}
	for _, c := range calls {
		if len(keys) == 0 {
			return nil, qerr.Planf("%s: GROUPING needs a GROUP BY", c)
		}
		v, err := groupingValue(c, keyOf, all)
		if err != nil {
			return nil, err
		}
		out[c.String()] = logical.Lit(v)
	}
	return out, nil
}

// groupingSetsAggregate aggregates input by the grouping sets sets of
// keys with one Expand and one Aggregate grouped by the Expand's key
// columns and the set's ordinal. It returns the plan (the keys, the
// ordinal, then aggs' results), how many columns precede the aggregates,
// and, by display name, each GROUPING call's value over the plan's output.
func groupingSetsAggregate(input logical.Plan, keys []logical.Expr, sets [][]int, calls []*logical.ScalarFunc, aggs []logical.Expr) (logical.Plan, int, map[string]logical.Expr, error) {
	exKeys := keys
	if slices.ContainsFunc(keys, hasSubquery) {
		// A key with a subquery is computed by a projection below the
		// Expand, where subqueries are decorrelated as in any select list.
		in := input.Schema()
		cols := make([]logical.Expr, 0, in.Len()+len(keys))
		for i := range in.Len() {
			cols = append(cols, outCol(in, i))
		}
		for i, k := range keys {
			cols = append(cols, &logical.Alias{Expr: k, Name: "__quiver_gs_input_" + strconv.Itoa(i)})
		}
		p, err := logical.NewProjection(input, cols)
		if err != nil {
			return nil, 0, nil, err
		}
		ps := p.Schema()
		exKeys = make([]logical.Expr, len(keys))
		for i := range keys {
			exKeys[i] = outCol(ps, in.Len()+i)
		}
		input = p
	}
	ex, err := logical.NewExpand(input, exKeys, sets)
	if err != nil {
		return nil, 0, nil, err
	}
	es := ex.Schema()
	w := input.Schema().Len()
	groups := make([]logical.Expr, 0, len(keys)+1)
	for i := range keys {
		groups = append(groups, outCol(es, w+i))
	}
	groups = append(groups, outCol(es, w+len(keys)))
	if ex.HasEmptySet() {
		// The filler rows of the empty sets must count for nothing.
		marker := outCol(es, w+len(keys)+1)
		guarded := make([]logical.Expr, len(aggs))
		for i, a := range aggs {
			if guarded[i], err = guardFiller(a, marker); err != nil {
				return nil, 0, nil, err
			}
		}
		aggs = guarded
	}
	agg, err := logical.NewAggregate(ex, groups, aggs)
	if err != nil {
		return nil, 0, nil, err
	}
	keyOf := map[string]int{}
	for i, k := range keys {
		keyOf[k.String()] = i
	}
	ordinal := outCol(agg.Schema(), len(keys))
	values := map[string]logical.Expr{}
	for _, c := range calls {
		cs := &logical.Case{Operand: ordinal}
		for s, set := range sets {
			v, err := groupingValue(c, keyOf, set)
			if err != nil {
				return nil, 0, nil, err
			}
			cs.Whens = append(cs.Whens, logical.When{Cond: logical.Lit(int32(s)), Then: logical.Lit(v)})
		}
		values[c.String()] = cs
	}
	return agg, len(groups), values, nil
}

// guardFiller rewrites aggregate a so that the empty sets' filler rows,
// whose marker is NULL and every other column NULL, count for nothing:
// COUNT(*) counts the marker, and a first argument that could be non-NULL
// over NULL columns reads NULL where the marker is. Every aggregate here
// skips NULL values; one that keeps them could not be guarded so.
func guardFiller(a logical.Expr, marker logical.Expr) (logical.Expr, error) {
	x, ok := logical.StripAlias(a).(*logical.AggExpr)
	if !ok {
		return nil, qerr.Internalf("grouping sets: %s is not an aggregate", a)
	}
	if x.Collects() {
		// array_agg keeps NULL values, so the filler rows are filtered out
		// instead: FILTER (WHERE [cond AND] marker IS NOT NULL).
		n := x.WithChildren(x.Args).(*logical.AggExpr)
		keep := logical.Expr(&logical.IsNull{Expr: marker, Negated: true})
		if n.Filter {
			n.Args[len(n.Args)-1] = &logical.Binary{Op: logical.OpAnd, Left: n.Args[len(n.Args)-1], Right: keep}
		} else {
			n.Args, n.Filter = append(n.Args, keep), true
		}
		return &logical.Alias{Expr: n, Name: a.String()}, nil
	}
	if !skipsNulls(x.Func) {
		return nil, qerr.NotImplementedf("sql: aggregate %s is not supported with an empty grouping set", x.Func)
	}
	n := &logical.AggExpr{Func: x.Func, Args: append([]logical.Expr(nil), x.Args...), Distinct: x.Distinct}
	switch {
	case len(n.Args) == 0:
		n.Args = []logical.Expr{marker}
	case !nullOnNullColumns(n.Args[0]):
		n.Args[0] = &logical.Case{Whens: []logical.When{{Cond: marker, Then: n.Args[0]}}}
	}
	return &logical.Alias{Expr: n, Name: a.String()}, nil
}

// skipsNulls lists the aggregates that ignore NULL values.
func skipsNulls(f logical.AggFunc) bool {
	switch f {
	case logical.AggCount, logical.AggSum, logical.AggAvg, logical.AggMin, logical.AggMax,
		logical.AggVarSamp, logical.AggVarPop, logical.AggStddevSamp, logical.AggStddevPop,
		logical.AggBoolAnd, logical.AggBoolOr, logical.AggBitAnd, logical.AggBitOr, logical.AggBitXor,
		logical.AggAnyValue, logical.AggCovarPop, logical.AggCovarSamp, logical.AggCorr,
		logical.AggStringAgg, logical.AggPercentileCont, logical.AggPercentileDisc:
		return true
	}
	return false
}

// nullOnNullColumns reports whether e is surely NULL when every column it
// reads is NULL: a column, or arithmetic, comparison, negation or a cast
// over such an expression.
func nullOnNullColumns(e logical.Expr) bool {
	switch x := e.(type) {
	case *logical.Column:
		return true
	case *logical.Cast:
		return nullOnNullColumns(x.Expr)
	case *logical.Negative:
		return nullOnNullColumns(x.Expr)
	case *logical.Binary:
		if x.Op.IsArithmetic() || x.Op.IsComparison() || x.Op == logical.OpConcat {
			return nullOnNullColumns(x.Left) || nullOnNullColumns(x.Right)
		}
	}
	return false
}

// hasSubquery reports whether e holds a subquery.
func hasSubquery(e logical.Expr) bool {
	found := false
	logical.InspectExpr(e, func(x logical.Expr) bool {
		switch x.(type) {
		case *logical.ScalarSubquery, *logical.Exists, *logical.InSubquery:
			found = true
		}
		return !found
	})
	return found
}
