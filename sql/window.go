package sql

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/test_driver"
	"github.com/quiverdb/quiver/functions"
	"github.com/quiverdb/quiver/logical"
	"github.com/quiverdb/quiver/qerr"
	"github.com/quiverdb/quiver/temporal"
)

// Window functions: a call `f(...) OVER (...)` in the select list or ORDER
// BY is lowered to a logical.WindowExpr over the query's input (its
// arguments, PARTITION BY and ORDER BY may hold aggregates); selectStmt
// then rewrites it over the grouped rows like any other expression and
// computes every window call of the SELECT in one logical.Window node
// between HAVING and the select list, which the projection reads by name.

// windowClauses are the clauses where a window call may appear.
var windowClauses = map[string]bool{"SELECT": true, "ORDER BY": true, "QUALIFY": true}

// qualifyWindow is the WINDOW-clause name the pre-pass gives QUALIFY's
// condition: `QUALIFY cond` is written `WINDOW quiver_qualify AS
// (PARTITION BY cond)` (or appended to the WINDOW clause there is), which
// TiDB parses in place with any window calls inside; the lowering takes
// the condition back out. User SQL may not use the name.
const qualifyWindow = "quiver_qualify"

// qualifyEdits rewrites the QUALIFY at toks[q] (see qualifyWindow). The
// condition runs to the first ORDER BY, LIMIT, OFFSET, FETCH, set
// operation, WINDOW or ';' at its own parenthesis depth, or to the ')' or
// end closing it.
func qualifyEdits(toks []token, q int) ([]edit, error) {
	t := toks[q]
	// A WINDOW clause of the same SELECT before it: append to that.
	hasWindow := false
	for j, d := q-1, 0; j >= 0; j-- {
		switch {
		case toks[j].punct(")"):
			d++
		case toks[j].punct("("):
			d--
		}
		if d < 0 || (d == 0 && toks[j].is("SELECT")) {
			break
		}
		if d == 0 && toks[j].is("WINDOW") {
			hasWindow = true
		}
	}
	end, d := q+1, 0
	stop := map[string]bool{"ORDER": true, "LIMIT": true, "OFFSET": true, "FETCH": true, "UNION": true, "INTERSECT": true, "EXCEPT": true, "WINDOW": true, "QUALIFY": true}
	for ; end < len(toks); end++ {
		tk := toks[end]
		if tk.punct("(") {
			d++
		} else if tk.punct(")") {
			if d == 0 {
				break
			}
			d--
		} else if d == 0 && (tk.punct(";") || (tk.Kind == tokIdent && stop[strings.ToUpper(tk.Text)])) {
			break
		}
	}
	if end == q+1 {
		return nil, qerr.At(t.Line, t.Col, "QUALIFY needs a condition")
	}
	if end < len(toks) && toks[end].is("QUALIFY") {
		return nil, qerr.At(toks[end].Line, toks[end].Col, "a SELECT has at most one QUALIFY")
	}
	open := "WINDOW " + qualifyWindow + " AS (PARTITION BY "
	if hasWindow {
		open = ", " + qualifyWindow + " AS (PARTITION BY "
	}
	out := []edit{{t.Off, t.End, open}}
	closeAt := toks[end-1].End
	if end < len(toks) && toks[end].is("WINDOW") {
		// QUALIFY written before WINDOW: continue into that clause.
		out = append(out, edit{closeAt, closeAt, "),"}, edit{toks[end].Off, toks[end].End, ""})
	} else {
		out = append(out, edit{closeAt, closeAt, ")"})
	}
	return out, nil
}

// frameIntervalEdits rewrites a frame offset INTERVAL 'text' at toks[i],
// followed by PRECEDING or FOLLOWING, which TiDB reads only with a unit
// word, into INTERVAL quiver_cast('text', 'interval') DAY: the lowering
// takes the interval the cast folds to and ignores the unit.
func frameIntervalEdits(toks []token, i int) []edit {
	if i+2 >= len(toks) || toks[i+1].Kind != tokString || !(toks[i+2].is("PRECEDING") || toks[i+2].is("FOLLOWING")) {
		return nil
	}
	s := toks[i+1]
	return []edit{{s.Off, s.End, fnCast + "('" + strings.ReplaceAll(s.value(), "'", "''") + "', 'interval') DAY"}}
}

// windowCollectEdits rewrites array_agg or string_agg at toks[i], with
// its argument list closing at closeAt and OVER after it, into
// max(quiver_agg('name', '|keys|', args..., keys...)) OVER: TiDB parses
// OVER only after its own aggregates, and the lowering (windowCollect)
// takes the wrapper back off. es are collectingAgg's edits of the ORDER
// BY inside; DISTINCT and FILTER are refused.
func windowCollectEdits(toks []token, i, closeAt int, flags, keys, filter string, es []edit, consumed map[int]bool) ([]edit, error) {
	t, open := toks[i], i+1
	name := strings.ToLower(t.Text)
	switch {
	case flags != "":
		return nil, qerr.NotImplementedf("sql: line %d, column %d: %s(DISTINCT ...) as a window function is not supported", t.Line, t.Col, name)
	case filter != "":
		return nil, qerr.NotImplementedf("sql: line %d, column %d: FILTER on %s as a window function is not supported", t.Line, t.Col, name)
	case open+1 == closeAt:
		return nil, qerr.At(t.Line, t.Col, "%s needs an argument", t.Text)
	}
	consumed[i], consumed[open] = true, true
	return append(es,
		edit{t.Off, t.End, "max(" + fnCollectAgg},
		edit{toks[open].Off, toks[open].End, "('" + name + "', '|" + keys + "|', "},
		edit{toks[closeAt].End, toks[closeAt].End, ")"}), nil
}

// windowCollect recognises the pre-pass's max(quiver_agg('name',
// '|keys|', args..., keys...)) (windowCollectEdits) and returns the
// aggregate's name, its arguments and sort keys (keys last), and the
// keys' directions.
func windowCollect(n *ast.WindowFuncExpr) (string, []ast.ExprNode, []logical.AggOrder, bool, error) {
	if !strings.EqualFold(n.Name, "max") || len(n.Args) != 1 {
		return "", nil, nil, false, nil
	}
	f, ok := n.Args[0].(*ast.FuncCallExpr)
	if !ok || !strings.EqualFold(f.FnName.L, fnCollectAgg) {
		return "", nil, nil, false, nil
	}
	str := func(e ast.ExprNode) (string, bool) {
		v, ok := e.(*test_driver.ValueExpr)
		if !ok {
			return "", false
		}
		s, ok := v.GetValue().(string)
		return s, ok
	}
	if len(f.Args) < 3 {
		return "", nil, nil, false, qerr.Internalf("sql: malformed window %s", fnCollectAgg)
	}
	name, ok1 := str(f.Args[0])
	flags, ok2 := str(f.Args[1])
	parts := strings.Split(flags, "|")
	if !ok1 || !ok2 || len(parts) != 3 || len(parts[1])%2 != 0 {
		return "", nil, nil, false, qerr.Internalf("sql: malformed window %s", fnCollectAgg)
	}
	var order []logical.AggOrder
	for k := 0; k < len(parts[1]); k += 2 {
		order = append(order, logical.AggOrder{Desc: parts[1][k] == 'd', NullsFirst: parts[1][k+1] == 'f'})
	}
	return name, f.Args[2:], order, true, nil
}

// windowArgs is the clause name window arguments are lowered under, so a
// window call nested in another is refused.
const windowArgs = "window function arguments"

// resolveNamedWindows takes QUALIFY's condition (qualifyWindow) out of
// the WINDOW clause and returns it, then replaces, in the SELECT's own
// expressions and the condition (not in subqueries), every reference to a
// WINDOW-clause definition by the spec it names, merged with what the
// reference adds: `OVER w` takes w whole, `OVER (w ORDER BY x ROWS ...)`
// takes w's PARTITION BY (and ORDER BY, if it has one and the reference
// has none) and adds its own.
func resolveNamedWindows(s *ast.SelectStmt) (qualify ast.ExprNode, err error) {
	specs := s.WindowSpecs[:0:0]
	for _, w := range s.WindowSpecs {
		if w.Name.L == qualifyWindow && w.PartitionBy != nil && len(w.PartitionBy.Items) == 1 {
			qualify = w.PartitionBy.Items[0].Expr
			continue
		}
		specs = append(specs, w)
	}
	s.WindowSpecs = specs
	defs := map[string]*ast.WindowSpec{}
	for i := range s.WindowSpecs {
		w := &s.WindowSpecs[i]
		if _, dup := defs[w.Name.L]; dup {
			return nil, qerr.Planf("window %q is defined twice", w.Name.O)
		}
		defs[w.Name.L] = w
	}
	// Definitions may build on earlier ones (w2 AS (w1 ORDER BY x)).
	for i := range s.WindowSpecs {
		w := &s.WindowSpecs[i]
		merged, err := mergeWindowSpec(w, w.Ref.L, defs, 0)
		if err != nil {
			return nil, err
		}
		merged.Name = w.Name
		*w = merged
	}
	var firstErr error
	v := &windowNamer{defs: defs, err: &firstErr}
	for _, f := range s.Fields.Fields {
		if f.Expr != nil {
			f.Expr.Accept(v)
		}
	}
	if s.OrderBy != nil {
		for _, it := range s.OrderBy.Items {
			it.Expr.Accept(v)
		}
	}
	if qualify != nil {
		qualify.Accept(v)
	}
	return qualify, firstErr
}

// mergeWindowSpec returns spec with the named window ref (if any)
// underneath: PARTITION BY only from ref, ORDER BY from whichever has
// one, the frame from spec.
func mergeWindowSpec(spec *ast.WindowSpec, ref string, defs map[string]*ast.WindowSpec, depth int) (ast.WindowSpec, error) {
	out := *spec
	if ref == "" {
		return out, nil
	}
	if depth > len(defs) {
		return out, qerr.Planf("window %q refers to itself", ref)
	}
	base, ok := defs[ref]
	if !ok {
		return out, qerr.Planf("window %q is not defined", ref)
	}
	b, err := mergeWindowSpec(base, base.Ref.L, defs, depth+1)
	if err != nil {
		return out, err
	}
	if spec.PartitionBy != nil {
		return out, qerr.Planf("a window that refers to window %q cannot have its own PARTITION BY", ref)
	}
	if b.Frame != nil {
		return out, qerr.Planf("window %q has a frame and cannot be referred to with more clauses", ref)
	}
	out.PartitionBy = b.PartitionBy
	if b.OrderBy != nil {
		if spec.OrderBy != nil {
			return out, qerr.Planf("window %q has an ORDER BY; a window referring to it cannot add another", ref)
		}
		out.OrderBy = b.OrderBy
	}
	out.Ref = ast.CIStr{}
	return out, nil
}

// windowNamer substitutes named windows in window calls.
type windowNamer struct {
	defs map[string]*ast.WindowSpec
	err  *error
}

func (v *windowNamer) Enter(n ast.Node) (ast.Node, bool) {
	switch n := n.(type) {
	case *ast.SubqueryExpr:
		return n, true // a subquery has its own WINDOW clause
	case *ast.WindowFuncExpr:
		if *v.err != nil {
			return n, true
		}
		spec := &n.Spec
		switch {
		case spec.OnlyAlias || (spec.Name.L != "" && spec.Ref.L == "" && spec.PartitionBy == nil && spec.OrderBy == nil && spec.Frame == nil):
			def, ok := v.defs[spec.Name.L]
			if !ok {
				*v.err = qerr.Planf("window %q is not defined", spec.Name.O)
				return n, true
			}
			n.Spec = *def
			n.Spec.Name = ast.CIStr{}
		case spec.Ref.L != "":
			merged, err := mergeWindowSpec(spec, spec.Ref.L, v.defs, 0)
			if err != nil {
				*v.err = err
				return n, true
			}
			n.Spec = merged
		}
	}
	return n, false
}

func (v *windowNamer) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// window lowers one window function call.
func (b *builder) window(n *ast.WindowFuncExpr, ctx *exprCtx) (logical.Expr, error) {
	name := strings.ToLower(n.Name)
	if ctx.inAgg {
		return nil, qerr.Planf("window function %s cannot be used inside an aggregate function", name)
	}
	if !windowClauses[ctx.clause] {
		if ctx.clause == windowArgs {
			return nil, qerr.Planf("window function calls cannot be nested: %s", name)
		}
		return nil, qerr.Planf("window functions are not allowed in %s: %s", ctx.clause, name)
	}
	if n.FromLast {
		return nil, qerr.NotImplementedf("sql: FROM LAST in window function %s is not supported", name)
	}
	if n.Spec.Name.L != "" || n.Spec.Ref.L != "" {
		return nil, qerr.Planf("window %q is not defined", n.Spec.Name.O+n.Spec.Ref.O)
	}
	cname, cargs, aggOrder, collect, err := windowCollect(n)
	if err != nil {
		return nil, err
	}
	if collect {
		name, n.Args = cname, cargs
	}
	if args, marked := windowDistinctArgs(n.Args); marked {
		if len(args) != 1 {
			return nil, qerr.NotImplementedf("sql: window %s(DISTINCT ...) over %d columns is not supported (one is)", name, len(args))
		}
		n.Args, n.Distinct = args, true
	}
	if f, ok := functions.Lookup(name); ok {
		if _, err := f.Match(len(n.Args) - len(aggOrder)); err != nil {
			return nil, err
		}
	}
	inner := *ctx
	inner.clause = windowArgs
	lower := func(e ast.ExprNode) (logical.Expr, error) { return b.expr(e, &inner) }
	args := make([]logical.Expr, 0, 3)
	for _, a := range n.Args {
		e, err := lower(a)
		if err != nil {
			return nil, err
		}
		args = append(args, e)
	}
	w := &logical.WindowExpr{IgnoreNulls: n.IgnoreNull, Distinct: n.Distinct, Order: aggOrder}
	if fn, ok := logical.ParseWindowFunc(name); ok {
		w.Func = fn
	} else if agg, ok := logical.ParseAggFunc(name); ok {
		w.Func, w.Agg = logical.WinAggregate, agg
		// TiDB reads COUNT(*) as COUNT(1); counting a constant counts rows.
		if l, ok := singleLiteral(args); ok && agg == logical.AggCount && !l.IsNull() {
			args = nil
		}
	} else {
		return nil, qerr.Planf("unknown window function %q", name)
	}
	switch w.Func {
	case logical.WinLag, logical.WinLead:
		if len(args) < 1 || len(args) > 3 {
			return nil, qerr.Planf("window function %s takes 1 to 3 arguments, got %d", name, len(args))
		}
		if len(args) < 2 {
			args = append(args, logical.Lit(int64(1)))
		}
		if len(args) < 3 {
			args = append(args, logical.Lit(nil))
		}
	}
	w.Args = args
	spec := n.Spec
	if spec.PartitionBy != nil {
		for _, it := range spec.PartitionBy.Items {
			e, err := lower(it.Expr)
			if err != nil {
				return nil, err
			}
			w.PartitionBy = append(w.PartitionBy, e)
		}
	}
	if spec.OrderBy != nil {
		for _, it := range spec.OrderBy.Items {
			x, nf, given := unwrapNulls(it.Expr)
			if p, ok := x.(*ast.PositionExpr); ok {
				return nil, qerr.NotImplementedf("sql: a position (%d) in a window's ORDER BY is not supported", p.N)
			}
			e, err := lower(x)
			if err != nil {
				return nil, err
			}
			w.OrderBy = append(w.OrderBy, sortKey(e, it.Desc, nf, given))
		}
	}
	w.Frame = logical.DefaultFrame(len(w.OrderBy) > 0)
	if spec.Frame != nil {
		f, err := b.frame(spec.Frame, &inner)
		if err != nil {
			return nil, err
		}
		w.Frame = f
	}
	return w, nil
}

func singleLiteral(args []logical.Expr) (*logical.Literal, bool) {
	if len(args) != 1 {
		return nil, false
	}
	l, ok := args[0].(*logical.Literal)
	return l, ok
}

// frame lowers ROWS | RANGE | GROUPS BETWEEN start AND end (or a start
// alone, which ends at the current row).
func (b *builder) frame(f *ast.FrameClause, ctx *exprCtx) (logical.WindowFrame, error) {
	var out logical.WindowFrame
	switch f.Type {
	case ast.Rows:
		out.Unit = logical.FrameRows
	case ast.Ranges:
		out.Unit = logical.FrameRange
	case ast.Groups:
		out.Unit = logical.FrameGroups
	default:
		return out, qerr.NotImplementedf("sql: window frame type %d is not supported", f.Type)
	}
	var err error
	if out.Start, err = b.frameBound(&f.Extent.Start, ctx); err != nil {
		return out, err
	}
	end := &f.Extent.End
	if end.Expr == nil && !end.UnBounded && end.Type == ast.Following {
		// Only a start was written: the frame ends at the current row.
		out.End = logical.FrameBound{Kind: logical.CurrentRow}
	} else if out.End, err = b.frameBound(end, ctx); err != nil {
		return out, err
	}
	return out, nil
}

func (b *builder) frameBound(fb *ast.FrameBound, ctx *exprCtx) (logical.FrameBound, error) {
	switch {
	case fb.Type == ast.CurrentRow:
		return logical.FrameBound{Kind: logical.CurrentRow}, nil
	case fb.UnBounded && fb.Type == ast.Preceding:
		return logical.FrameBound{Kind: logical.UnboundedPreceding}, nil
	case fb.UnBounded:
		return logical.FrameBound{Kind: logical.UnboundedFollowing}, nil
	}
	out := logical.FrameBound{Kind: logical.Following}
	if fb.Type == ast.Preceding {
		out.Kind = logical.Preceding
	}
	e, err := b.expr(fb.Expr, ctx)
	if err != nil {
		return out, err
	}
	l, ok := e.(*logical.Literal)
	if !ok || l.Value == nil {
		return out, qerr.Planf("a window frame offset must be a non-negative constant, not %s", e)
	}
	if l.Type.ID() == arrow.INTERVAL_MONTH_DAY_NANO {
		// INTERVAL '1 month' (the pre-pass's cast; TiDB's unit is a stand-in).
		out.IsInterval, out.Interval = true, l.Value.(arrow.MonthDayNanoInterval)
		return out, nil
	}
	if fb.Unit != ast.TimeUnitInvalid {
		// INTERVAL '3' DAY, INTERVAL 2 HOUR.
		text := fmt.Sprint(l.Value)
		switch v := l.Value.(type) {
		case string:
			text = v
		case decimal128.Num:
			text = v.ToString(l.Type.(*arrow.Decimal128Type).Scale)
		}
		text += " " + fb.Unit.String()
		iv, ok := temporal.ParseInterval(text)
		if !ok {
			return out, qerr.Planf("invalid interval in a window frame: INTERVAL %s %s", l, fb.Unit)
		}
		out.IsInterval, out.Interval = true, iv
		return out, nil
	}
	switch v := l.Value.(type) {
	case int64:
		out.Offset = v
	case decimal128.Num:
		if !v.FitsInPrecision(18) {
			return out, qerr.Planf("window frame offset %s is too large", l)
		}
		out.Offset, out.Scale = int64(v.LowBits()), l.Type.(*arrow.Decimal128Type).Scale
		if v.Sign() < 0 {
			out.Offset = -int64(v.Abs().LowBits())
		}
	case float64:
		// A float literal (1e-3): its shortest decimal form.
		s := strconv.FormatFloat(v, 'f', -1, 64)
		whole, frac, _ := strings.Cut(s, ".")
		n, err := strconv.ParseInt(whole+frac, 10, 64)
		if err != nil || len(frac) > 18 {
			return out, qerr.Planf("window frame offset %s has too many digits", l)
		}
		out.Offset, out.Scale = n, int32(len(frac))
	default:
		return out, qerr.Planf("a window frame offset must be a non-negative number or an INTERVAL, not %s", l)
	}
	if out.Offset < 0 {
		return out, qerr.Planf("window frame offsets must not be negative, not %s", l)
	}
	// 2.50 is 25 tenths: the fewest decimal places, so that a whole
	// number is an integer offset.
	for out.Scale > 0 && out.Offset%10 == 0 {
		out.Offset /= 10
		out.Scale--
	}
	return out, nil
}

// hasWindow reports whether e calls a window function.
func hasWindow(e logical.Expr) bool {
	found := false
	logical.InspectExpr(e, func(x logical.Expr) bool {
		if _, ok := x.(*logical.WindowExpr); ok {
			found = true
		}
		return !found
	})
	return found
}

// noWindows refuses window calls in a clause that is evaluated before
// them (GROUP BY, HAVING).
func noWindows(clause string, es ...logical.Expr) error {
	for _, e := range es {
		if e != nil && hasWindow(e) {
			return qerr.Planf("window functions are not allowed in %s: %s", clause, e)
		}
	}
	return nil
}

// windows computes the window calls of exprs (the select items and ORDER
// BY keys, already over input) in one Window node over input, and returns
// it with exprs rewritten to read the node's columns. Without window
// calls it returns input and exprs unchanged.
func windows(input logical.Plan, exprs []logical.Expr) (logical.Plan, []logical.Expr, error) {
	var list []logical.Expr
	seen := map[string]bool{}
	for _, e := range exprs {
		if e == nil {
			continue
		}
		logical.InspectExpr(e, func(x logical.Expr) bool {
			if w, ok := x.(*logical.WindowExpr); ok {
				if !seen[w.String()] {
					seen[w.String()] = true
					list = append(list, w)
				}
				return false
			}
			return true
		})
	}
	if len(list) == 0 {
		return input, exprs, nil
	}
	win, err := logical.NewWindow(input, list)
	if err != nil {
		return nil, nil, err
	}
	ws := win.Schema()
	n := input.Schema().Len()
	repl := make(map[string]logical.Expr, len(list))
	for j, w := range list {
		repl[w.String()] = outCol(ws, n+j)
	}
	out := make([]logical.Expr, len(exprs))
	for i, e := range exprs {
		if e != nil {
			out[i] = replaceExprs(e, repl)
		}
	}
	return win, out, nil
}
