package sql

import (
	"math"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/pingcap/tidb/pkg/parser/opcode"
	"github.com/pingcap/tidb/pkg/parser/test_driver"
	"github.com/quiverdb/quiver/functions"
	"github.com/quiverdb/quiver/logical"
	"github.com/quiverdb/quiver/qerr"
	"github.com/quiverdb/quiver/temporal"
)

// exprCtx is where an expression is lowered.
type exprCtx struct {
	sc      *scope
	aggOK   bool                    // aggregate calls allowed (SELECT, HAVING, ORDER BY)
	inAgg   bool                    // inside an aggregate's arguments
	clause  string                  // for error messages
	aliases map[string]logical.Expr // select-list aliases visible as a fallback
}

var binOps = map[opcode.Op]logical.BinaryOp{
	opcode.EQ: logical.OpEq, opcode.NE: logical.OpNotEq, opcode.LT: logical.OpLt, opcode.LE: logical.OpLtEq,
	opcode.GT: logical.OpGt, opcode.GE: logical.OpGtEq, opcode.LogicAnd: logical.OpAnd, opcode.LogicOr: logical.OpOr,
	opcode.Plus: logical.OpAdd, opcode.Minus: logical.OpSub, opcode.Mul: logical.OpMul, opcode.Div: logical.OpDiv,
	opcode.Mod: logical.OpMod,
}

// expr lowers one AST expression (not yet coerced).
func (b *builder) expr(n ast.ExprNode, ctx *exprCtx) (logical.Expr, error) {
	switch n := n.(type) {
	case *test_driver.ValueExpr:
		return literal(n)
	case *ast.ParenthesesExpr:
		return b.expr(n.Expr, ctx)
	case *ast.ColumnNameExpr:
		return b.column(n.Name, ctx)
	case *ast.BinaryOperationExpr:
		if n.Op == opcode.NullEQ { // the pre-pass's spelling of ||
			return b.concat(n, ctx)
		}
		op, ok := binOps[n.Op]
		if !ok {
			return nil, qerr.NotImplementedf("sql: operator %s is not supported", n.Op)
		}
		l, r, err := b.pair(n.L, n.R, ctx)
		if err != nil {
			return nil, err
		}
		return &logical.Binary{Op: op, Left: l, Right: r}, nil
	case *ast.UnaryOperationExpr:
		x, err := b.expr(n.V, ctx)
		if err != nil {
			return nil, err
		}
		switch n.Op {
		case opcode.Plus:
			return x, nil
		case opcode.Minus:
			if l, ok := x.(*logical.Literal); ok {
				if neg, ok := negate(l); ok {
					return neg, nil
				}
			}
			return &logical.Negative{Expr: x}, nil
		case opcode.Not, opcode.Not2:
			return &logical.Not{Expr: x}, nil
		}
		return nil, qerr.NotImplementedf("sql: unary operator %s is not supported", n.Op)
	case *ast.IsNullExpr:
		x, err := b.expr(n.Expr, ctx)
		if err != nil {
			return nil, err
		}
		return &logical.IsNull{Expr: x, Negated: n.Not}, nil
	case *ast.IsTruthExpr:
		// x IS TRUE ≡ CASE WHEN x THEN true ELSE false END (never NULL).
		x, err := b.expr(n.Expr, ctx)
		if err != nil {
			return nil, err
		}
		cond := x
		if n.True == 0 {
			cond = &logical.Not{Expr: x}
		}
		var e logical.Expr = &logical.Case{Whens: []logical.When{{Cond: cond, Then: logical.Lit(true)}}, Else: logical.Lit(false)}
		if n.Not {
			e = &logical.Not{Expr: e}
		}
		return e, nil
	case *ast.BetweenExpr:
		x, err := b.expr(n.Expr, ctx)
		if err != nil {
			return nil, err
		}
		lo, hi, err := b.pair(n.Left, n.Right, ctx)
		if err != nil {
			return nil, err
		}
		if n.Not {
			return &logical.Binary{Op: logical.OpOr,
				Left:  &logical.Binary{Op: logical.OpLt, Left: x, Right: lo},
				Right: &logical.Binary{Op: logical.OpGt, Left: x, Right: hi}}, nil
		}
		return &logical.Binary{Op: logical.OpAnd,
			Left:  &logical.Binary{Op: logical.OpGtEq, Left: x, Right: lo},
			Right: &logical.Binary{Op: logical.OpLtEq, Left: x, Right: hi}}, nil
	case *ast.PatternInExpr:
		x, err := b.expr(n.Expr, ctx)
		if err != nil {
			return nil, err
		}
		if n.Sel != nil {
			lp, err := b.subquery(n.Sel, ctx)
			if err != nil {
				return nil, err
			}
			return &logical.InSubquery{Expr: x, Plan: lp, Negated: n.Not}, nil
		}
		list := make([]logical.Expr, len(n.List))
		for i, it := range n.List {
			if list[i], err = b.expr(it, ctx); err != nil {
				return nil, err
			}
		}
		return &logical.InList{Expr: x, List: list, Negated: n.Not}, nil
	case *ast.PatternLikeOrIlikeExpr:
		if n.EscapeExplicit && n.Escape != '\\' {
			return nil, qerr.NotImplementedf("sql: LIKE ... ESCAPE %q is not supported", string(n.Escape))
		}
		x, p, err := b.pair(n.Expr, n.Pattern, ctx)
		if err != nil {
			return nil, err
		}
		return &logical.Like{Expr: x, Pattern: p, Negated: n.Not, CaseInsensitive: !n.IsLike}, nil
	case *ast.CaseExpr:
		c := &logical.Case{}
		var err error
		if n.Value != nil {
			if c.Operand, err = b.expr(n.Value, ctx); err != nil {
				return nil, err
			}
		}
		for _, w := range n.WhenClauses {
			cond, then, err := b.pair(w.Expr, w.Result, ctx)
			if err != nil {
				return nil, err
			}
			c.Whens = append(c.Whens, logical.When{Cond: cond, Then: then})
		}
		if n.ElseClause != nil {
			if c.Else, err = b.expr(n.ElseClause, ctx); err != nil {
				return nil, err
			}
		}
		return c, nil
	case *ast.SubqueryExpr:
		lp, err := b.subquery(n, ctx)
		if err != nil {
			return nil, err
		}
		if lp.Schema().Len() != 1 {
			return nil, qerr.Planf("scalar subquery must return one column, not %d", lp.Schema().Len())
		}
		return &logical.ScalarSubquery{Plan: lp}, nil
	case *ast.ExistsSubqueryExpr:
		lp, err := b.subquery(n.Sel, ctx)
		if err != nil {
			return nil, err
		}
		return &logical.Exists{Plan: lp, Negated: n.Not}, nil
	case *ast.CompareSubqueryExpr:
		x, err := b.expr(n.L, ctx)
		if err != nil {
			return nil, err
		}
		lp, err := b.subquery(n.R, ctx)
		if err != nil {
			return nil, err
		}
		switch {
		case n.Op == opcode.EQ && !n.All:
			return &logical.InSubquery{Expr: x, Plan: lp}, nil
		case n.Op == opcode.NE && n.All:
			return &logical.InSubquery{Expr: x, Plan: lp, Negated: true}, nil
		}
		return nil, qerr.NotImplementedf("sql: %s ANY/ALL (subquery) is not supported", n.Op)
	case *ast.AggregateFuncExpr:
		return b.aggregate(n, ctx)
	case *ast.FuncCallExpr:
		return b.call(n, ctx)
	case *ast.FuncCastExpr:
		x, err := b.expr(n.Expr, ctx)
		if err != nil {
			return nil, err
		}
		var t arrow.DataType
		switch n.Tp.GetType() {
		case mysql.TypeDouble, mysql.TypeFloat:
			t = logical.Float64
		case mysql.TypeLonglong:
			t = logical.Int64
		case mysql.TypeNewDecimal:
			t = logical.Decimal(int32(n.Tp.GetFlen()), int32(max(0, n.Tp.GetDecimal())))
		case mysql.TypeVarString, mysql.TypeString, mysql.TypeVarchar:
			t = logical.String
		case mysql.TypeDate:
			t = logical.Date
		default:
			return nil, qerr.NotImplementedf("sql: CAST to %s is not supported", n.Tp)
		}
		return &logical.Cast{Expr: x, Type: t}, nil
	case *ast.PositionExpr:
		return nil, qerr.Planf("a position (%d) is only allowed as a whole ORDER BY or GROUP BY item", n.N)
	case *ast.WindowFuncExpr:
		return b.window(n, ctx)
	case *ast.DefaultExpr:
		return nil, qerr.NotImplementedf("sql: DEFAULT is not supported")
	case *ast.VariableExpr:
		return nil, qerr.NotImplementedf("sql: variables (@%s) are not supported", n.Name)
	case *ast.RowExpr:
		return nil, qerr.NotImplementedf("sql: row expressions are not supported")
	case *ast.PatternRegexpExpr:
		// The pre-pass's marker for a IS [NOT] DISTINCT FROM b: equality
		// where NULL equals NULL, never NULL itself.
		l, err := b.expr(n.Expr, ctx)
		if err != nil {
			return nil, err
		}
		r, err := b.expr(n.Pattern, ctx)
		if err != nil {
			return nil, err
		}
		var e logical.Expr = &logical.Case{Whens: []logical.When{
			{Cond: &logical.IsNull{Expr: l}, Then: &logical.IsNull{Expr: r}},
			{Cond: &logical.IsNull{Expr: r}, Then: logical.Lit(false)},
		}, Else: &logical.Binary{Op: logical.OpEq, Left: l, Right: r}}
		if n.Not {
			e = &logical.Not{Expr: e}
		}
		return e, nil
	}
	return nil, qerr.NotImplementedf("sql: expression %T is not supported", n)
}

func (b *builder) pair(l, r ast.ExprNode, ctx *exprCtx) (logical.Expr, logical.Expr, error) {
	x, err := b.expr(l, ctx)
	if err != nil {
		return nil, nil, err
	}
	y, err := b.expr(r, ctx)
	if err != nil {
		return nil, nil, err
	}
	return x, y, nil
}

// concat lowers the pre-pass's a <=> b (written a || b). TiDB gives it
// comparison precedence, PostgreSQL binds it tighter than comparisons:
// (x = a) || b is re-associated to x = (a || b).
func (b *builder) concat(n *ast.BinaryOperationExpr, ctx *exprCtx) (logical.Expr, error) {
	if cmp, ok := n.L.(*ast.BinaryOperationExpr); ok {
		switch cmp.Op {
		case opcode.EQ, opcode.NE, opcode.LT, opcode.LE, opcode.GT, opcode.GE:
			inner := &ast.BinaryOperationExpr{Op: opcode.NullEQ, L: cmp.R, R: n.R}
			return b.expr(&ast.BinaryOperationExpr{Op: cmp.Op, L: cmp.L, R: inner}, ctx)
		}
	}
	l, r, err := b.pair(n.L, n.R, ctx)
	if err != nil {
		return nil, err
	}
	return &logical.Binary{Op: logical.OpConcat, Left: l, Right: r}, nil
}

// column resolves a column name in the scope, then among the select-list
// aliases, then in enclosing scopes (as an OuterRef).
func (b *builder) column(cn *ast.ColumnName, ctx *exprCtx) (logical.Expr, error) {
	if cn.Schema.O != "" {
		return nil, qerr.NotImplementedf("sql: schema-qualified column %s.%s.%s is not supported", cn.Schema.O, cn.Table.O, cn.Name.O)
	}
	q, name := cn.Table.O, cn.Name.O
	s := ctx.sc.schema
	i, err := s.IndexOf(q, name)
	if err == nil {
		f := s.Field(i)
		return &logical.Column{Qualifier: f.Qualifier, Name: f.Name}, nil
	}
	if strings.Contains(err.Error(), "ambiguous") {
		return nil, err
	}
	if q == "" && ctx.aliases != nil {
		if e, ok := ctx.aliases[strings.ToLower(name)]; ok {
			return e, nil
		}
	}
	for p := ctx.sc.parent; p != nil; p = p.parent {
		if j, perr := p.schema.IndexOf(q, name); perr == nil {
			f := p.schema.Field(j)
			return &logical.OuterRef{Qualifier: f.Qualifier, Name: f.Name, Type: f.Type, Nullable: f.Nullable}, nil
		}
	}
	return nil, err
}

// subquery plans a subquery with the current scope visible as its outer scope.
func (b *builder) subquery(n ast.ExprNode, ctx *exprCtx) (logical.Plan, error) {
	sq, ok := n.(*ast.SubqueryExpr)
	if !ok {
		return nil, qerr.NotImplementedf("sql: %T as a subquery is not supported", n)
	}
	return b.resultSet(sq.Query, ctx.sc)
}

func (b *builder) aggregate(n *ast.AggregateFuncExpr, ctx *exprCtx) (logical.Expr, error) {
	name := strings.ToLower(n.F)
	if f, ok := functions.Lookup(name); ok && f.Name == "approx_distinct" && len(n.Args) == 1 {
		name, n.Distinct = "count", true // counted exactly
	}
	fn, ok := logical.ParseAggFunc(name)
	if !ok {
		return nil, qerr.Planf("unknown aggregate function %q", name)
	}
	if !ctx.aggOK {
		return nil, qerr.Planf("aggregate functions are not allowed in %s: %s", ctx.clause, name)
	}
	if ctx.inAgg {
		return nil, qerr.Planf("aggregate function calls cannot be nested: %s", name)
	}
	if n.Order != nil {
		return nil, qerr.NotImplementedf("sql: ORDER BY inside %s is not supported", name)
	}
	if len(n.Args) != 1 {
		return nil, qerr.Planf("function %s takes one argument, got %d", name, len(n.Args))
	}
	inner := *ctx
	inner.inAgg = true
	arg, err := b.expr(n.Args[0], &inner)
	if err != nil {
		return nil, err
	}
	// TiDB reads COUNT(*) as COUNT(1); counting any non-NULL constant counts rows.
	if l, ok := arg.(*logical.Literal); ok && fn == logical.AggCount && !l.IsNull() && !n.Distinct {
		return &logical.AggExpr{Func: logical.AggCount}, nil
	}
	return &logical.AggExpr{Func: fn, Args: []logical.Expr{arg}, Distinct: n.Distinct}, nil
}

func (b *builder) call(n *ast.FuncCallExpr, ctx *exprCtx) (logical.Expr, error) {
	name := n.FnName.L
	args := func() ([]logical.Expr, error) {
		out := make([]logical.Expr, len(n.Args))
		for i, a := range n.Args {
			if _, ok := a.(*ast.TrimDirectionExpr); ok {
				out[i] = logical.Lit(nil) // read by trimCall from n.Args
				continue
			}
			var err error
			if out[i], err = b.expr(a, ctx); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	switch name {
	case strings.ToLower(ast.DateLiteral):
		v, ok := n.Args[0].(*test_driver.ValueExpr)
		s, isStr := v.GetValue().(string)
		if !ok || !isStr {
			return nil, qerr.Planf("DATE literal needs a string")
		}
		d, err := logical.ParseDate(s)
		if err != nil {
			return nil, err
		}
		return &logical.Literal{Type: logical.Date, Value: d}, nil
	case strings.ToLower(ast.TimeLiteral), strings.ToLower(ast.TimestampLiteral):
		// The pre-pass turns TIME '...' and TIMESTAMP '...' into casts.
		return nil, qerr.Planf("TIME and TIMESTAMP literals need a string")
	case "date_add", "date_sub", "adddate", "subdate":
		if len(n.Args) != 3 {
			return nil, qerr.Planf("function %s: want a date and an interval", name)
		}
		d, err := b.expr(n.Args[0], ctx)
		if err != nil {
			return nil, err
		}
		iv, err := b.interval(n.Args[1], n.Args[2], ctx)
		if err != nil {
			return nil, err
		}
		op := logical.OpAdd
		if name == "date_sub" || name == "subdate" {
			op = logical.OpSub
		}
		return &logical.Binary{Op: op, Left: d, Right: iv}, nil
	case "extract":
		unit, ok := n.Args[0].(*ast.TimeUnitExpr)
		if !ok || len(n.Args) != 2 {
			return nil, qerr.Planf("EXTRACT needs a unit and a value")
		}
		d, err := b.expr(n.Args[1], ctx)
		if err != nil {
			return nil, err
		}
		return &logical.ScalarFunc{Name: "date_part", Args: []logical.Expr{logical.Lit(strings.ToLower(unit.Unit.String())), d}}, nil
	case fnCast, fnTryCast:
		v, ok := n.Args[1].(*test_driver.ValueExpr)
		if !ok || len(n.Args) != 2 {
			return nil, qerr.Internalf("sql: malformed %s", name)
		}
		t, err := typeFromString(v.GetString(), b.p.zoneText())
		if err != nil {
			return nil, err
		}
		x, err := b.expr(n.Args[0], ctx)
		if err != nil {
			return nil, err
		}
		if name == fnTryCast {
			// The target type rides on a typed NULL (try_cast's result
			// rule is "the type of argument 2").
			return &logical.ScalarFunc{Name: "try_cast", Args: []logical.Expr{x, &logical.Literal{Type: t}}}, nil
		}
		return temporalCast(x, t)
	case fnBool:
		v, _ := n.Args[0].(*test_driver.ValueExpr)
		return logical.Lit(v != nil && v.GetInt64() == 1), nil
	case fnNullsFirst, fnNullsLast:
		return nil, qerr.Planf("NULLS FIRST/LAST is only allowed on an ORDER BY item")
	case fnCollectAgg:
		as, err := args()
		if err != nil {
			return nil, err
		}
		return collectCall(as, ctx)
	}
	if e, ok, err := b.clockCall(name, len(n.Args)); ok {
		return e, err
	}
	as, err := args()
	if err != nil {
		return nil, err
	}
	if name == "timezone" && len(as) == 2 {
		// A TIMESTAMPTZ result is in the session's zone: argument 3 carries
		// that type.
		as = append(as, &logical.Literal{Type: logical.TimestampTZ(b.p.zoneText()), Value: arrow.Timestamp(0)})
	}
	return b.libraryCall(name, n, as, ctx)
}

// interval lowers INTERVAL value unit to a MonthDayNano literal.
func (b *builder) interval(v, u ast.ExprNode, ctx *exprCtx) (logical.Expr, error) {
	unit, ok := u.(*ast.TimeUnitExpr)
	if !ok {
		return nil, qerr.Planf("INTERVAL needs a unit")
	}
	x, err := b.expr(v, ctx)
	if err != nil {
		return nil, err
	}
	l, ok := x.(*logical.Literal)
	if !ok {
		return nil, qerr.NotImplementedf("sql: INTERVAL of a non-constant (%s) is not supported", x)
	}
	var n int64
	switch val := l.Value.(type) {
	case int64:
		n = val
	case string:
		if n, err = strconv.ParseInt(strings.TrimSpace(val), 10, 32); err != nil {
			return nil, qerr.Planf("INTERVAL %q: want a whole number", val)
		}
	default:
		return nil, qerr.Planf("INTERVAL %s: want a whole number", l)
	}
	if n > math.MaxInt32/12 || n < math.MinInt32/12 {
		return nil, qerr.Planf("INTERVAL %d is out of range", n)
	}
	var iv arrow.MonthDayNanoInterval
	switch strings.ToUpper(unit.Unit.String()) {
	case "DAY":
		iv.Days = int32(n)
	case "WEEK":
		iv.Days = int32(7 * n)
	case "MONTH":
		iv.Months = int32(n)
	case "QUARTER":
		iv.Months = int32(3 * n)
	case "YEAR":
		iv.Months = int32(12 * n)
	default:
		x, ok := temporal.ParseInterval(strconv.FormatInt(n, 10) + " " + unit.Unit.String())
		if !ok {
			return nil, qerr.NotImplementedf("sql: INTERVAL unit %s is not supported", unit.Unit.String())
		}
		iv = x
	}
	return &logical.Literal{Type: logical.Interval, Value: iv}, nil
}

// literal lowers a constant: integers are Int64, numbers with a point exact
// decimals DECIMAL(digits, digits after the point), exponents Float64.
func literal(v *test_driver.ValueExpr) (logical.Expr, error) {
	switch x := v.GetValue().(type) {
	case nil:
		return logical.Lit(nil), nil
	case int64:
		return logical.Lit(x), nil
	case uint64:
		if x <= math.MaxInt64 {
			return logical.Lit(int64(x)), nil
		}
		return decimalLiteral(strconv.FormatUint(x, 10))
	case float64:
		return logical.Lit(x), nil
	case string:
		return logical.Lit(x), nil
	case *test_driver.MyDecimal:
		return decimalLiteral(x.String())
	}
	return nil, qerr.NotImplementedf("sql: literal %v (%T) is not supported", v.GetValue(), v.GetValue())
}

func decimalLiteral(s string) (logical.Expr, error) {
	s = strings.TrimPrefix(s, "+")
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	intPart, frac, _ := strings.Cut(s, ".")
	p, sc := len(intPart)+len(frac), len(frac)
	if p > logical.MaxDecimalPrecision {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, qerr.Planf("bad number %q", s)
		}
		if neg {
			f = -f
		}
		return logical.Lit(f), nil
	}
	t := logical.Decimal(int32(p), int32(sc)).(*arrow.Decimal128Type)
	n, err := decimal128.FromString(intPart+"."+frac, t.Precision, t.Scale)
	if err != nil {
		return nil, qerr.Planf("bad decimal %q: %v", s, err)
	}
	if neg {
		n = n.Negate()
	}
	return &logical.Literal{Type: t, Value: n}, nil
}

// negate folds unary minus into a numeric literal.
func negate(l *logical.Literal) (*logical.Literal, bool) {
	switch v := l.Value.(type) {
	case int64:
		if v == math.MinInt64 {
			return nil, false
		}
		return &logical.Literal{Type: l.Type, Value: -v}, true
	case float64:
		return &logical.Literal{Type: l.Type, Value: -v}, true
	case decimal128.Num:
		return &logical.Literal{Type: l.Type, Value: v.Negate()}, true
	}
	return nil, false
}

// collectCall lowers the pre-pass's quiver_agg('name', 'flags', args...,
// keys..., cond) (collectingAgg) to an AggExpr with Order and Filter.
func collectCall(as []logical.Expr, ctx *exprCtx) (logical.Expr, error) {
	str := func(e logical.Expr) (string, bool) {
		l, ok := e.(*logical.Literal)
		if !ok {
			return "", false
		}
		v, ok := l.Value.(string)
		return v, ok
	}
	if len(as) < 3 {
		return nil, qerr.Internalf("sql: malformed %s", fnCollectAgg)
	}
	name, ok1 := str(as[0])
	flags, ok2 := str(as[1])
	parts := strings.Split(flags, "|")
	f, ok3 := functions.Lookup(name)
	if !ok1 || !ok2 || !ok3 || len(parts) != 3 || len(parts[1])%2 != 0 {
		return nil, qerr.Internalf("sql: malformed %s", fnCollectAgg)
	}
	fn, ok := logical.ParseAggFunc(f.Name)
	if !ok {
		return nil, qerr.Internalf("sql: %s is not an aggregate", name)
	}
	a := &logical.AggExpr{Func: fn, Args: as[2:], Distinct: parts[0] == "D", Filter: parts[2] == "F"}
	for k := 0; k < len(parts[1]); k += 2 {
		a.Order = append(a.Order, logical.AggOrder{Desc: parts[1][k] == 'd', NullsFirst: parts[1][k+1] == 'f'})
	}
	if a.NumArgs() < 1 {
		return nil, qerr.Planf("function %s needs an argument", f.Name)
	}
	if err := aggregateAllowed(f, a.Args, ctx); err != nil {
		return nil, err
	}
	return a, nil
}
