package logical

import (
	"math"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/quiverdb/quiver/qerr"
)

// Coerce type-checks e over s bottom-up and inserts Casts so that every node
// satisfies the operand rules of physical.Binary and of this package's type
// rules (ArithmeticType, AggregateType, FuncType):
//
//   - comparisons get operands of one type (decimals may keep different
//     precision and scale; an integer against a decimal becomes DecimalOf the
//     integer; anything against a float becomes Float64; a string literal
//     against a date becomes a date literal; NULL adopts the other side's type);
//   - arithmetic widens numerics the same way and allows date ± interval,
//     date ± integer and date - date;
//   - AND/OR/NOT take booleans, LIKE strings, IN lists and CASE branches and
//     coalesce/nullif arguments one common type (SuperType).
//
// Casts of literals are folded into literals where that is exact. Subquery
// plans are left alone; InSubquery's probe is coerced against the subquery's
// column type (the subquery gets a casting projection when it must widen).
// Mismatches are planning errors naming the operator and the types.
func Coerce(e Expr, s *Schema) (Expr, error) {
	c := coercer{s: s, types: map[Expr]typedExpr{}}
	return c.expr(e)
}

// coercer remembers the type of every node it has typed: DataType recurses
// into the whole subtree, and asking it at every node of a chain such as
// 1+1+...+1 was quadratic (25 s for 10,000 terms).
type coercer struct {
	s     *Schema
	types map[Expr]typedExpr
}

func (c *coercer) typeOf(e Expr) (arrow.DataType, error) {
	t, err := c.typed(e)
	return t.t, err
}

// typed returns e's type and nullability: e's own DataType over children
// that stand for their remembered types.
func (c *coercer) typed(e Expr) (typedExpr, error) {
	if t, ok := c.types[e]; ok {
		return t, nil
	}
	var (
		t   typedExpr
		err error
	)
	if ch := e.Children(); len(ch) == 0 {
		t.t, t.n, err = e.DataType(c.s)
	} else {
		stand := make([]Expr, len(ch))
		for i, x := range ch {
			xt, err := c.typed(x)
			if err != nil {
				return typedExpr{}, err
			}
			stand[i] = &xt
		}
		t.t, t.n, err = e.WithChildren(stand).DataType(c.s)
		if err != nil {
			// The error may describe the children: take it from the
			// real expression (a failure ends planning, so this is rare).
			_, _, err = e.DataType(c.s)
			if err == nil {
				err = qerr.Internalf("type of %s depends on its children's expressions, not only their types", e)
			}
		}
	}
	if err != nil {
		return typedExpr{}, err
	}
	c.types[e] = t
	return t, nil
}

// typedExpr stands for a child whose type is known, inside coercer.typed;
// it never leaves it.
type typedExpr struct {
	t arrow.DataType
	n bool
}

func (*typedExpr) isExpr()                    {}
func (*typedExpr) String() string             { return "<typed>" }
func (*typedExpr) Children() []Expr           { return nil }
func (x *typedExpr) WithChildren([]Expr) Expr { return x }
func (x *typedExpr) DataType(*Schema) (arrow.DataType, bool, error) {
	return x.t, x.n, nil
}

func (c *coercer) exprs(es []Expr) ([]Expr, []arrow.DataType, error) {
	out := make([]Expr, len(es))
	ts := make([]arrow.DataType, len(es))
	for i, e := range es {
		n, err := c.expr(e)
		if err != nil {
			return nil, nil, err
		}
		t, err := c.typeOf(n)
		if err != nil {
			return nil, nil, err
		}
		out[i], ts[i] = n, t
	}
	return out, ts, nil
}

func (c *coercer) expr(e Expr) (Expr, error) {
	switch e := e.(type) {
	case *Column, *OuterRef, *Literal, *ScalarSubquery, *Exists:
		if _, err := c.typeOf(e); err != nil {
			return nil, err
		}
		return e, nil
	case *Alias:
		in, err := c.expr(e.Expr)
		if err != nil {
			return nil, err
		}
		return &Alias{Expr: in, Name: e.Name}, nil
	case *Binary:
		return c.binary(e)
	case *Not:
		in, err := c.boolOperand("NOT", e.Expr)
		if err != nil {
			return nil, err
		}
		return &Not{Expr: in}, nil
	case *Negative:
		in, err := c.expr(e.Expr)
		if err != nil {
			return nil, err
		}
		t, err := c.typeOf(in)
		if err != nil {
			return nil, err
		}
		if t.ID() == arrow.NULL {
			in = CastTo(in, Int64)
		} else if !IsNumeric(t) && t.ID() != arrow.INTERVAL_MONTH_DAY_NANO {
			return nil, qerr.Planf("cannot apply unary - to %s", TypeString(t))
		}
		return &Negative{Expr: in}, nil
	case *IsNull:
		in, err := c.expr(e.Expr)
		if err != nil {
			return nil, err
		}
		return &IsNull{Expr: in, Negated: e.Negated}, nil
	case *Cast:
		in, err := c.expr(e.Expr)
		if err != nil {
			return nil, err
		}
		t, err := c.typeOf(in)
		if err != nil {
			return nil, err
		}
		if !CanCast(t, e.Type) {
			return nil, qerr.Planf("cannot cast %s to %s", TypeString(t), TypeString(e.Type))
		}
		if arrow.TypeEqual(t, e.Type) {
			return in, nil
		}
		if l, ok := in.(*Literal); ok {
			if f, ok := foldLiteral(l, e.Type); ok {
				return f, nil
			}
		}
		return &Cast{Expr: in, Type: e.Type}, nil
	case *Case:
		return c.caseExpr(e)
	case *Like:
		in, err := c.stringOperand("LIKE", e.Expr)
		if err != nil {
			return nil, err
		}
		pat, err := c.stringOperand("LIKE", e.Pattern)
		if err != nil {
			return nil, err
		}
		return &Like{Expr: in, Pattern: pat, Negated: e.Negated, CaseInsensitive: e.CaseInsensitive}, nil
	case *InList:
		all, ts, err := c.exprs(append([]Expr{e.Expr}, e.List...))
		if err != nil {
			return nil, err
		}
		all, err = unifyAll("IN", all, ts, true)
		if err != nil {
			return nil, err
		}
		return &InList{Expr: all[0], List: all[1:], Negated: e.Negated}, nil
	case *ScalarFunc:
		return c.function(e)
	case *AggExpr:
		args, ts, err := c.exprs(e.Args)
		if err != nil {
			return nil, err
		}
		if e.Collects() {
			return collecting(e, args, ts)
		}
		if e.Func == AggStringAgg {
			if len(args) != 2 {
				return nil, qerr.Planf("function %s takes two arguments, got %d", e.Func, len(args))
			}
			if !IsString(ts[1]) && ts[1].ID() != arrow.NULL {
				return nil, qerr.Planf("function %s needs a text separator, not %s", e.Func, TypeString(ts[1]))
			}
			if e.Distinct {
				return nil, qerr.NotImplementedf("%s(DISTINCT ...) is not supported", e.Func)
			}
			return &AggExpr{Func: e.Func, Args: []Expr{toString(args[0], ts[0]), CastTo(args[1], String)}}, nil
		}
		if e.Func.Percentile() {
			if len(args) != 2 {
				return nil, qerr.Planf("function %s takes a fraction and WITHIN GROUP (ORDER BY value)", e.Func)
			}
			if !IsNumeric(ts[0]) && ts[0].ID() != arrow.NULL {
				return nil, qerr.Planf("function %s needs a numeric value to order by, not %s", e.Func, TypeString(ts[0]))
			}
			f, ok := constFloat(args[1])
			frac := Lit(f)
			if !ok || f < 0 || f > 1 {
				return nil, qerr.Planf("function %s needs a constant fraction between 0 and 1, not %s", e.Func, args[1])
			}
			if e.Distinct {
				return nil, qerr.NotImplementedf("%s(DISTINCT ...) is not supported", e.Func)
			}
			return &AggExpr{Func: e.Func, Args: []Expr{CastTo(args[0], Float64), frac}}, nil
		}
		if e.Func.Pairwise() {
			if len(args) != 2 {
				return nil, qerr.Planf("function %s takes two arguments, got %d", e.Func, len(args))
			}
			if e.Distinct {
				return nil, qerr.NotImplementedf("%s(DISTINCT ...) is not supported", e.Func)
			}
			for i, t := range ts {
				if !IsNumeric(t) && t.ID() != arrow.NULL {
					return nil, qerr.Planf("function %s needs numeric arguments, not %s", e.Func, TypeString(t))
				}
				args[i] = CastTo(args[i], Float64)
			}
			return &AggExpr{Func: e.Func, Args: args, Distinct: e.Distinct}, nil
		}
		if len(args) > 1 {
			return nil, qerr.Planf("function %s takes one argument, got %d", e.Func, len(args))
		}
		if len(args) == 1 {
			switch e.Func {
			case AggCount, AggMin, AggMax, AggAnyValue:
			case AggBoolAnd, AggBoolOr:
				if ts[0].ID() != arrow.BOOL && ts[0].ID() != arrow.NULL {
					return nil, qerr.Planf("function %s needs a boolean argument, not %s", e.Func, TypeString(ts[0]))
				}
			case AggBitAnd, AggBitOr, AggBitXor:
				if !IsInteger(ts[0]) && ts[0].ID() != arrow.NULL {
					return nil, qerr.Planf("function %s needs an integer argument, not %s", e.Func, TypeString(ts[0]))
				}
			default:
				if !IsNumeric(ts[0]) && ts[0].ID() != arrow.NULL {
					return nil, qerr.Planf("function %s needs a numeric argument, not %s", e.Func, TypeString(ts[0]))
				}
			}
			if ts[0].ID() == arrow.NULL && e.Func != AggCount {
				args[0] = CastTo(args[0], Int64)
				if e.Func == AggBoolAnd || e.Func == AggBoolOr {
					args[0] = CastTo(args[0], Bool)
				}
			}
			if _, err := AggregateType(e.Func, ts[0]); err != nil {
				return nil, err
			}
		}
		return &AggExpr{Func: e.Func, Args: args, Distinct: e.Distinct}, nil
	case *InSubquery:
		return c.inSubquery(e)
	case *WindowExpr:
		return c.window(e)
	}
	return nil, qerr.Internalf("coerce: unknown expression %T", e)
}

func (c *coercer) boolOperand(op string, e Expr) (Expr, error) {
	n, err := c.expr(e)
	if err != nil {
		return nil, err
	}
	t, err := c.typeOf(n)
	if err != nil {
		return nil, err
	}
	switch t.ID() {
	case arrow.BOOL:
		return n, nil
	case arrow.NULL:
		return CastTo(n, Bool), nil
	}
	return nil, qerr.Planf("%s operand %s must be Boolean, not %s", op, n, TypeString(t))
}

func (c *coercer) stringOperand(op string, e Expr) (Expr, error) {
	n, err := c.expr(e)
	if err != nil {
		return nil, err
	}
	t, err := c.typeOf(n)
	if err != nil {
		return nil, err
	}
	switch {
	case t.ID() == arrow.STRING:
		return n, nil
	case t.ID() == arrow.NULL || t.ID() == arrow.LARGE_STRING:
		return CastTo(n, String), nil
	}
	return nil, qerr.Planf("%s operand %s must be Utf8, not %s", op, n, TypeString(t))
}

func (c *coercer) binary(b *Binary) (Expr, error) {
	if b.Op == OpAnd || b.Op == OpOr {
		l, err := c.boolOperand(b.Op.String(), b.Left)
		if err != nil {
			return nil, err
		}
		r, err := c.boolOperand(b.Op.String(), b.Right)
		if err != nil {
			return nil, err
		}
		return &Binary{Op: b.Op, Left: l, Right: r}, nil
	}
	all, ts, err := c.exprs([]Expr{b.Left, b.Right})
	if err != nil {
		return nil, err
	}
	l, r := all[0], all[1]
	lt, rt := ts[0], ts[1]
	switch {
	case b.Op == OpConcat:
		return &Binary{Op: OpConcat, Left: toString(l, lt), Right: toString(r, rt)}, nil
	case b.Op.IsComparison():
		l, r, err = unifyPair(b.Op.String(), l, r, lt, rt)
		if err != nil {
			return nil, err
		}
		return &Binary{Op: b.Op, Left: l, Right: r}, nil
	}
	// Arithmetic.
	lid, rid := lt.ID(), rt.ID()
	switch {
	case temporalOperands(lt, rt):
		l, r = coerceTemporalArith(b.Op, l, r, lt, rt)
	case lid == arrow.DATE32 || rid == arrow.DATE32 || lid == arrow.INTERVAL_MONTH_DAY_NANO || rid == arrow.INTERVAL_MONTH_DAY_NANO:
		// Date arithmetic: integers are day counts (Int64), NULL adopts the
		// type that makes the expression valid.
		if lid == arrow.DATE32 && (IsInteger(rt) || rid == arrow.NULL) {
			r = castIf(r, rt, Int64)
		}
		if lid == arrow.DATE32 && IsString(rt) {
			if lit, ok := r.(*Literal); ok && b.Op == OpSub {
				if f, ok := foldLiteral(lit, Date); ok {
					r = f
				}
			}
		}
		if lid == arrow.NULL && rid == arrow.DATE32 {
			l = CastTo(l, Date)
		}
		if rid == arrow.INTERVAL_MONTH_DAY_NANO && IsString(lt) {
			if lit, ok := l.(*Literal); ok {
				if f, ok := foldLiteral(lit, Date); ok {
					l = f
				}
			}
		}
	case lid == arrow.NULL && rid == arrow.NULL:
		l, r = CastTo(l, Int64), CastTo(r, Int64)
	case lid == arrow.NULL && IsNumeric(rt):
		l = CastTo(l, rt)
	case rid == arrow.NULL && IsNumeric(lt):
		r = CastTo(r, lt)
	case IsNumeric(lt) && IsNumeric(rt):
		l, r, err = unifyPair(b.Op.String(), l, r, lt, rt)
		if err != nil {
			return nil, err
		}
	default:
		return nil, qerr.Planf("cannot apply %s to %s and %s", b.Op, TypeString(lt), TypeString(rt))
	}
	nl, err := c.typeOf(l)
	if err != nil {
		return nil, err
	}
	nr, err := c.typeOf(r)
	if err != nil {
		return nil, err
	}
	if _, err := ArithmeticType(b.Op, nl, nr); err != nil {
		return nil, err
	}
	return &Binary{Op: b.Op, Left: l, Right: r}, nil
}

func toString(e Expr, t arrow.DataType) Expr {
	if t.ID() == arrow.STRING {
		return e
	}
	return CastTo(e, String)
}

func (c *coercer) caseExpr(e *Case) (Expr, error) {
	out := &Case{Whens: make([]When, len(e.Whens))}
	if e.Operand != nil {
		// The operand and every WHEN value are compared for equality: give them one type.
		vals := []Expr{e.Operand}
		for _, w := range e.Whens {
			vals = append(vals, w.Cond)
		}
		vs, ts, err := c.exprs(vals)
		if err != nil {
			return nil, err
		}
		vs, err = unifyAll("CASE", vs, ts, false)
		if err != nil {
			return nil, err
		}
		out.Operand = vs[0]
		for i := range e.Whens {
			out.Whens[i].Cond = vs[i+1]
		}
	} else {
		for i, w := range e.Whens {
			cond, err := c.boolOperand("CASE WHEN", w.Cond)
			if err != nil {
				return nil, err
			}
			out.Whens[i].Cond = cond
		}
	}
	results := make([]Expr, 0, len(e.Whens)+1)
	for _, w := range e.Whens {
		results = append(results, w.Then)
	}
	if e.Else != nil {
		results = append(results, e.Else)
	}
	rs, ts, err := c.exprs(results)
	if err != nil {
		return nil, err
	}
	rs, err = unifyAll("CASE", rs, ts, false)
	if err != nil {
		return nil, err
	}
	for i := range e.Whens {
		out.Whens[i].Then = rs[i]
	}
	if e.Else != nil {
		out.Else = rs[len(rs)-1]
	}
	return out, nil
}

func (c *coercer) inSubquery(e *InSubquery) (Expr, error) {
	probe, err := c.expr(e.Expr)
	if err != nil {
		return nil, err
	}
	pt, err := c.typeOf(probe)
	if err != nil {
		return nil, err
	}
	ss := e.Plan.Schema()
	if ss.Len() != 1 {
		return nil, qerr.Planf("IN subquery must return one column, not %d", ss.Len())
	}
	st := ss.Field(0).Type
	plan := e.Plan
	if !comparableAsIs(pt, st) {
		common, ok := SuperType(pt, st)
		if !ok {
			return nil, qerr.Planf("cannot compare %s IN (subquery of %s)", TypeString(pt), TypeString(st))
		}
		probe = castIf(probe, pt, common)
		if !arrow.TypeEqual(st, common) {
			f := ss.Field(0)
			col := &Column{Qualifier: f.Qualifier, Name: f.Name}
			p, err := NewProjection(plan, []Expr{&Alias{Expr: &Cast{Expr: col, Type: common}, Name: f.Name}})
			if err != nil {
				return nil, err
			}
			plan = p
		}
	}
	return &InSubquery{Expr: probe, Plan: plan, Negated: e.Negated}, nil
}

// comparableAsIs reports whether a comparison may take operands of these
// types without casts: equal types, or two decimals.
func comparableAsIs(a, b arrow.DataType) bool {
	return arrow.TypeEqual(a, b) || (IsDecimal(a) && IsDecimal(b))
}

// unifyPair makes l and r comparable (or valid arithmetic operands): equal
// types, two decimals of any scale, or after widening.
func unifyPair(op string, l, r Expr, lt, rt arrow.DataType) (Expr, Expr, error) {
	if comparableAsIs(lt, rt) {
		return l, r, nil
	}
	switch {
	case lt.ID() == arrow.NULL:
		return CastTo(l, rt), r, nil
	case rt.ID() == arrow.NULL:
		return l, CastTo(r, lt), nil
	}
	// An integer literal against an Int32 keeps the column's type when it fits,
	// so that "p_size = 15" does not widen the column.
	if lt.ID() == arrow.INT32 && rt.ID() == arrow.INT64 {
		if n, ok := narrowIntLiteral(r); ok {
			return l, n, nil
		}
	}
	if rt.ID() == arrow.INT32 && lt.ID() == arrow.INT64 {
		if n, ok := narrowIntLiteral(l); ok {
			return n, r, nil
		}
	}
	if IsNumeric(lt) && IsNumeric(rt) {
		common, _ := CommonNumeric(lt, rt)
		if common == nil { // decimal with integer: the integer becomes a decimal
			if IsInteger(lt) {
				l = CastTo(l, DecimalOf(lt))
			}
			if IsInteger(rt) {
				r = CastTo(r, DecimalOf(rt))
			}
			return l, r, nil
		}
		return castIf(l, lt, common), castIf(r, rt, common), nil
	}
	common, ok := SuperType(lt, rt)
	if !ok {
		return nil, nil, qerr.Planf("cannot apply %s to %s and %s", op, TypeString(lt), TypeString(rt))
	}
	return castIf(l, lt, common), castIf(r, rt, common), nil
}

// castIf casts e (of type from) to type to unless it already has that type.
func castIf(e Expr, from, to arrow.DataType) Expr {
	if arrow.TypeEqual(from, to) {
		return e
	}
	return CastTo(e, to)
}

// unifyAll casts es to one common type (SuperType over all). When every
// literal converts exactly to the common type of the non-literal items, that
// type wins, so "p_size IN (1, 2)" or "CASE ... THEN d ELSE 0 END" keep the
// column's type instead of widening it. anchored is kept for call sites that
// treat es[0] as a probe; the rule is the same.
func unifyAll(op string, es []Expr, ts []arrow.DataType, anchored bool) ([]Expr, error) {
	_ = anchored
	var common, cols arrow.DataType = Null, Null
	for i, t := range ts {
		n, ok := SuperType(common, t)
		if !ok {
			return nil, qerr.Planf("%s: cannot find a common type for %s and %s", op, TypeString(common), TypeString(t))
		}
		common = n
		if _, lit := es[i].(*Literal); !lit {
			cols, _ = SuperType(cols, t)
		}
	}
	if cols != nil && cols.ID() != arrow.NULL && !arrow.TypeEqual(cols, common) {
		exact := true
		for i, e := range es {
			if l, ok := e.(*Literal); ok && !arrow.TypeEqual(ts[i], cols) {
				if _, ok := foldLiteral(l, cols); !ok || !keepsTime(l, cols) {
					exact = false
					break
				}
			}
		}
		if exact {
			common = cols
		}
	}
	out := make([]Expr, len(es))
	for i, e := range es {
		out[i] = castIf(e, ts[i], common)
	}
	return out, nil
}

func narrowIntLiteral(e Expr) (Expr, bool) {
	l, ok := e.(*Literal)
	if !ok || l.Value == nil {
		return nil, false
	}
	v, ok := l.Value.(int64)
	if !ok || v < math.MinInt32 || v > math.MaxInt32 {
		return nil, false
	}
	return &Literal{Type: Int32, Value: int32(v)}, true
}

// SuperType returns the type two values of types a and b are both cast to
// when they must share one type (CASE branches, IN lists, coalesce, UNION
// columns, VALUES rows): NULL adopts the other type; integers widen to Int64
// (Int32 with Int32 stays Int32); integers with decimals and decimals with
// each other widen to a decimal holding both (max integer digits, max
// scale, capped at 38); anything numeric with a float is Float64; a string
// with a date is a date.
func SuperType(a, b arrow.DataType) (arrow.DataType, bool) {
	switch {
	case arrow.TypeEqual(a, b):
		return a, true
	case a.ID() == arrow.NULL:
		return b, true
	case b.ID() == arrow.NULL:
		return a, true
	case IsString(a) && IsString(b):
		return String, true
	case IsString(a) && b.ID() == arrow.DATE32, a.ID() == arrow.DATE32 && IsString(b):
		return Date, true
	}
	if t, ok := temporalSuperType(a, b); ok {
		return t, true
	}
	ca, cb := classOf(a), classOf(b)
	if ca == notNumeric || cb == notNumeric {
		return nil, false
	}
	if ca == classDecimal || cb == classDecimal {
		if ca == classFloat || cb == classFloat {
			return Float64, true
		}
		da, db := DecimalOf(a), DecimalOf(b)
		s := max(da.Scale, db.Scale)
		return Decimal(max(da.Precision-da.Scale, db.Precision-db.Scale)+s, s), true
	}
	return CommonNumeric(a, b)
}

// CanCast reports whether a value of type from may be cast to type to.
func CanCast(from, to arrow.DataType) bool {
	if arrow.TypeEqual(from, to) || from.ID() == arrow.NULL || IsString(from) || IsString(to) {
		return true
	}
	num := func(t arrow.DataType) bool { return IsNumeric(t) || t.ID() == arrow.BOOL }
	if num(from) && num(to) {
		return true
	}
	return from.ID() == to.ID() || canCastTemporal(from, to)
}

// CastTo returns e converted to t: e itself if it already has type t, a
// literal when e is a literal that converts exactly (a typed NULL, an integer
// as a narrower integer, decimal or float, a decimal at a larger scale, a
// string as a date), else a Cast.
func CastTo(e Expr, t arrow.DataType) Expr {
	if l, ok := e.(*Literal); ok {
		if arrow.TypeEqual(l.Type, t) {
			return l
		}
		if f, ok := foldLiteral(l, t); ok {
			return f
		}
	}
	if c, ok := e.(*Cast); ok && arrow.TypeEqual(c.Type, t) {
		return c
	}
	return &Cast{Expr: e, Type: t}
}

// foldLiteral converts l to type t exactly, or reports false.
func foldLiteral(l *Literal, t arrow.DataType) (*Literal, bool) {
	if arrow.TypeEqual(l.Type, t) {
		return l, true
	}
	if l.Value == nil {
		return &Literal{Type: t}, true
	}
	if f, ok := foldTemporal(l, t); ok {
		return f, true
	}
	switch v := l.Value.(type) {
	case int64:
		switch t.ID() {
		case arrow.INT32:
			if v >= math.MinInt32 && v <= math.MaxInt32 {
				return &Literal{Type: t, Value: int32(v)}, true
			}
		case arrow.FLOAT64:
			if v > -(1<<53) && v < 1<<53 {
				return &Literal{Type: t, Value: float64(v)}, true
			}
		case arrow.DECIMAL128:
			return decimalLiteral(decimal128.FromI64(v), 0, t.(*arrow.Decimal128Type))
		}
	case int32:
		switch t.ID() {
		case arrow.INT64:
			return &Literal{Type: t, Value: int64(v)}, true
		case arrow.FLOAT64:
			return &Literal{Type: t, Value: float64(v)}, true
		case arrow.DECIMAL128:
			return decimalLiteral(decimal128.FromI64(int64(v)), 0, t.(*arrow.Decimal128Type))
		}
	case decimal128.Num:
		if t.ID() == arrow.DECIMAL128 {
			return decimalLiteral(v, l.Type.(*arrow.Decimal128Type).Scale, t.(*arrow.Decimal128Type))
		}
	case string:
		if t.ID() == arrow.DATE32 {
			d, err := ParseDate(v)
			if err != nil {
				return nil, false
			}
			return &Literal{Type: Date, Value: d}, true
		}
	}
	return nil, false
}

func decimalLiteral(v decimal128.Num, scale int32, t *arrow.Decimal128Type) (*Literal, bool) {
	if t.Scale < scale {
		return nil, false
	}
	n := v.IncreaseScaleBy(t.Scale - scale)
	if !n.FitsInPrecision(t.Precision) {
		return nil, false
	}
	return &Literal{Type: t, Value: n}, true
}

// ParseDate parses 'YYYY-MM-DD' into a Date32, rejecting invalid dates.
func ParseDate(s string) (arrow.Date32, error) {
	tm, err := time.Parse("2006-01-02", s)
	if err != nil {
		return 0, qerr.Planf("invalid date %q: want YYYY-MM-DD", s)
	}
	return arrow.Date32FromTime(tm), nil
}

// constFloat is the value of a numeric literal (possibly under a cast), or
// of 1 - (literal), which is how the SQL pre-pass writes a percentile
// WITHIN GROUP (ORDER BY ... DESC).
func constFloat(e Expr) (float64, bool) {
	if c, ok := e.(*Cast); ok {
		e = c.Expr
	}
	if b, ok := e.(*Binary); ok && b.Op == OpSub {
		l, ok1 := constFloat(b.Left)
		r, ok2 := constFloat(b.Right)
		return l - r, ok1 && ok2
	}
	l, ok := e.(*Literal)
	if !ok {
		return 0, false
	}
	switch v := l.Value.(type) {
	case int64:
		return float64(v), true
	case int32:
		return float64(v), true
	case float64:
		return v, true
	case decimal128.Num:
		if d, ok := l.Type.(*arrow.Decimal128Type); ok {
			return v.ToFloat64(d.Scale), true
		}
	}
	return 0, false
}

// collecting coerces an aggregate that keeps its group's values
// (AggExpr.Collects): string_agg's value and separator to text, a NULL
// array_agg value to Int64, the FILTER condition to a boolean. With
// DISTINCT, as in PostgreSQL, every ORDER BY key must be the argument.
func collecting(e *AggExpr, args []Expr, ts []arrow.DataType) (Expr, error) {
	n := e.NumArgs()
	want := 1
	if e.Func == AggStringAgg {
		want = 2
	}
	if n != want {
		return nil, qerr.Planf("function %s takes %d argument(s), got %d", e.Func, want, n)
	}
	out := &AggExpr{Func: e.Func, Args: args, Distinct: e.Distinct, Order: e.Order, Filter: e.Filter}
	arg := args[0].String()
	switch e.Func {
	case AggStringAgg:
		if !IsString(ts[1]) && ts[1].ID() != arrow.NULL {
			return nil, qerr.Planf("function %s needs a text separator, not %s", e.Func, TypeString(ts[1]))
		}
		args[0], args[1] = toString(args[0], ts[0]), CastTo(args[1], String)
	case AggArrayAgg:
		if ts[0].ID() == arrow.NULL {
			args[0] = CastTo(args[0], Int64)
		}
	}
	for i := range e.Order {
		t := ts[n+i]
		switch t.ID() {
		case arrow.LIST, arrow.STRUCT, arrow.MAP:
			return nil, qerr.Planf("function %s cannot order by %s", e.Func, TypeString(t))
		}
		if e.Distinct && args[n+i].String() != arg {
			return nil, qerr.Planf("in an aggregate with DISTINCT, ORDER BY expressions must appear in the argument list: %s", args[n+i])
		}
	}
	if e.Filter {
		c := len(args) - 1
		switch ts[c].ID() {
		case arrow.BOOL:
		case arrow.NULL:
			args[c] = CastTo(args[c], Bool)
		default:
			return nil, qerr.Planf("FILTER (WHERE ...) needs a boolean condition, not %s", TypeString(ts[c]))
		}
	}
	return out, nil
}
