package logical

import (
	"fmt"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/quiverdb/quiver/functions"
	"github.com/quiverdb/quiver/temporal"
)

// Expr is a logical expression. The set of expressions is closed (sealed by
// an unexported method). Expressions are immutable.
//
// String is the expression's stable display name: it names the output column
// a projection of the expression produces, unless aliased, so rewrites that
// change an expression must alias it back to its old name.
type Expr interface {
	isExpr()
	String() string
	// Children returns the direct sub-expressions (not subquery plans).
	Children() []Expr
	// WithChildren returns a copy with the sub-expressions replaced; len must match Children.
	WithChildren(children []Expr) Expr
	// DataType resolves the expression's type and nullability against the input schema.
	DataType(s *Schema) (arrow.DataType, bool, error)
}

// Column references an input column by (optional qualifier, name).
type Column struct {
	Qualifier string
	Name      string
}

// Col returns an unqualified column reference, or a qualified one for "q.name".
func Col(name string) *Column {
	if i := strings.LastIndexByte(name, '.'); i > 0 {
		return &Column{Qualifier: name[:i], Name: name[i+1:]}
	}
	return &Column{Name: name}
}

func (*Column) isExpr()                    {}
func (c *Column) String() string           { return qualify(c.Qualifier, c.Name) }
func (c *Column) Children() []Expr         { return nil }
func (c *Column) WithChildren([]Expr) Expr { return c }
func (c *Column) DataType(s *Schema) (arrow.DataType, bool, error) {
	i, err := s.IndexOf(c.Qualifier, c.Name)
	if err != nil {
		return nil, false, err
	}
	f := s.Field(i)
	return f.Type, f.Nullable, nil
}

// OuterRef references a column of an enclosing query from inside a correlated
// subquery. Decorrelation replaces it; a plan that still has one cannot run.
type OuterRef struct {
	Qualifier string
	Name      string
	Type      arrow.DataType
	Nullable  bool
}

func (*OuterRef) isExpr()                    {}
func (o *OuterRef) String() string           { return "outer_ref(" + qualify(o.Qualifier, o.Name) + ")" }
func (o *OuterRef) Children() []Expr         { return nil }
func (o *OuterRef) WithChildren([]Expr) Expr { return o }
func (o *OuterRef) DataType(*Schema) (arrow.DataType, bool, error) {
	return o.Type, o.Nullable, nil
}

// Literal is a constant. Value is nil for NULL, else by Type: bool (Boolean),
// int32 (Int32), int64 (Int64), float64 (Float64), string (Utf8),
// decimal128.Num (Decimal128, unscaled), arrow.Date32 (Date32),
// arrow.Timestamp (Timestamp, microseconds), arrow.Time64 (Time,
// microseconds), arrow.MonthDayNanoInterval (Interval).
type Literal struct {
	Type  arrow.DataType
	Value any
}

// Lit returns a literal of a Go value: bool, int, int32, int64, float64 or string.
func Lit(v any) *Literal {
	switch v := v.(type) {
	case nil:
		return &Literal{Type: Null}
	case bool:
		return &Literal{Type: Bool, Value: v}
	case int:
		return &Literal{Type: Int64, Value: int64(v)}
	case int32:
		return &Literal{Type: Int32, Value: v}
	case int64:
		return &Literal{Type: Int64, Value: v}
	case float64:
		return &Literal{Type: Float64, Value: v}
	case string:
		return &Literal{Type: String, Value: v}
	case arrow.Date32:
		return &Literal{Type: Date, Value: v}
	}
	panic(fmt.Sprintf("logical.Lit: unsupported Go type %T", v))
}

func (*Literal) isExpr()                    {}
func (l *Literal) Children() []Expr         { return nil }
func (l *Literal) WithChildren([]Expr) Expr { return l }
func (l *Literal) DataType(*Schema) (arrow.DataType, bool, error) {
	return l.Type, l.Value == nil, nil
}

// IsNull reports whether the literal is NULL.
func (l *Literal) IsNull() bool { return l.Value == nil }

func (l *Literal) String() string {
	if l.Value == nil {
		return "NULL"
	}
	switch v := l.Value.(type) {
	case string:
		return "'" + strings.ReplaceAll(v, "'", "''") + "'"
	case decimal128.Num:
		return v.ToString(l.Type.(*arrow.Decimal128Type).Scale)
	case arrow.Date32:
		return "DATE '" + v.FormattedString() + "'"
	case arrow.Timestamp:
		if IsTimestampTZ(l.Type) {
			// The instant with its UTC offset, so the text reads back as it.
			return "TIMESTAMPTZ '" + temporal.FormatTimestampTZ(int64(v), time.UTC) + "'"
		}
		s, _ := TemporalLiteralString(v)
		return s
	case arrow.MonthDayNanoInterval, arrow.Time64:
		s, _ := TemporalLiteralString(v)
		return s
	case float64:
		return fmt.Sprint(v)
	}
	return fmt.Sprint(l.Value)
}

// Alias names an expression's output column.
type Alias struct {
	Expr Expr
	Name string
}

func (*Alias) isExpr()                      {}
func (a *Alias) String() string             { return a.Name }
func (a *Alias) Children() []Expr           { return []Expr{a.Expr} }
func (a *Alias) WithChildren(c []Expr) Expr { return &Alias{Expr: c[0], Name: a.Name} }
func (a *Alias) DataType(s *Schema) (arrow.DataType, bool, error) {
	return a.Expr.DataType(s)
}

// BinaryOp is a binary operator.
type BinaryOp int

// Binary operators. Comparison and arithmetic operands must be coerced first
// (see CommonNumeric); AND and OR follow SQL's three-valued logic.
const (
	OpEq BinaryOp = iota
	OpNotEq
	OpLt
	OpLtEq
	OpGt
	OpGtEq
	OpAnd
	OpOr
	OpAdd
	OpSub
	OpMul
	OpDiv
	OpMod
	OpConcat // ||: string concatenation, NULL if either side is NULL
)

var opNames = [...]string{"=", "<>", "<", "<=", ">", ">=", "AND", "OR", "+", "-", "*", "/", "%", "||"}

func (o BinaryOp) String() string { return opNames[o] }

// IsComparison reports whether o is = <> < <= > >=.
func (o BinaryOp) IsComparison() bool { return o <= OpGtEq }

// IsArithmetic reports whether o is + - * / %.
func (o BinaryOp) IsArithmetic() bool { return o >= OpAdd && o <= OpMod }

// Swap returns the comparison with its operands exchanged (a < b ⇔ b > a).
func (o BinaryOp) Swap() BinaryOp {
	switch o {
	case OpLt:
		return OpGt
	case OpLtEq:
		return OpGtEq
	case OpGt:
		return OpLt
	case OpGtEq:
		return OpLtEq
	}
	return o
}

// Binary is Left Op Right.
type Binary struct {
	Op          BinaryOp
	Left, Right Expr
}

func (*Binary) isExpr()          {}
func (b *Binary) String() string { return display(b) }

// display renders e's display name in one pass over the tree. Each
// composite expression's String used to concatenate its children's
// strings, which rebuilt every subtree's text once per ancestor: quadratic
// in a chain like 1+1+...+1 (a 10,000-term one never finished planning).
func display(e Expr) string {
	var b strings.Builder
	writeExpr(&b, e)
	return b.String()
}

// writeExpr appends e's display name to b; composite expressions recurse
// through writeExpr so their children are written in place, leaves use
// their own String.
func writeExpr(b *strings.Builder, e Expr) {
	switch e := e.(type) {
	case *Binary:
		writeParen(b, e.Left)
		b.WriteByte(' ')
		b.WriteString(e.Op.String())
		b.WriteByte(' ')
		writeParen(b, e.Right)
	case *Not:
		b.WriteString("NOT ")
		writeParen(b, e.Expr)
	case *Negative:
		b.WriteString("(- ")
		writeExpr(b, e.Expr)
		b.WriteByte(')')
	case *IsNull:
		writeParen(b, e.Expr)
		if e.Negated {
			b.WriteString(" IS NOT NULL")
		} else {
			b.WriteString(" IS NULL")
		}
	case *Cast:
		b.WriteString("CAST(")
		writeExpr(b, e.Expr)
		b.WriteString(" AS ")
		b.WriteString(TypeString(e.Type))
		b.WriteByte(')')
	case *Case:
		b.WriteString("CASE")
		if e.Operand != nil {
			b.WriteByte(' ')
			writeExpr(b, e.Operand)
		}
		for _, w := range e.Whens {
			b.WriteString(" WHEN ")
			writeExpr(b, w.Cond)
			b.WriteString(" THEN ")
			writeExpr(b, w.Then)
		}
		if e.Else != nil {
			b.WriteString(" ELSE ")
			writeExpr(b, e.Else)
		}
		b.WriteString(" END")
	case *Like:
		writeParen(b, e.Expr)
		b.WriteByte(' ')
		if e.Negated {
			b.WriteString("NOT ")
		}
		if e.CaseInsensitive {
			b.WriteString("ILIKE ")
		} else {
			b.WriteString("LIKE ")
		}
		writeParen(b, e.Pattern)
	case *InList:
		writeParen(b, e.Expr)
		if e.Negated {
			b.WriteString(" NOT IN (")
		} else {
			b.WriteString(" IN (")
		}
		writeList(b, e.List)
		b.WriteByte(')')
	case *ScalarFunc:
		if l, ok := tryCastType(e); ok {
			// try_cast(x, NULL of T) is TRY_CAST(x AS T).
			b.WriteString("TRY_CAST(")
			writeExpr(b, e.Args[0])
			b.WriteString(" AS ")
			b.WriteString(TypeString(l.Type))
			b.WriteByte(')')
			return
		}
		b.WriteString(e.Name)
		b.WriteByte('(')
		writeList(b, e.Args)
		b.WriteByte(')')
	case *AggExpr:
		b.WriteString(e.Func.String())
		if len(e.Args) == 0 {
			b.WriteString("(*)")
			return
		}
		b.WriteByte('(')
		if e.Distinct {
			b.WriteString("DISTINCT ")
		}
		writeList(b, e.Args[:e.NumArgs()])
		for i, o := range e.Order {
			if i == 0 {
				b.WriteString(" ORDER BY ")
			} else {
				b.WriteString(", ")
			}
			writeExpr(b, e.Args[e.NumArgs()+i])
			if o.Desc {
				b.WriteString(" DESC")
			}
			if o.NullsFirst != o.Desc { // PostgreSQL's default is NULLS FIRST for DESC only
				if o.NullsFirst {
					b.WriteString(" NULLS FIRST")
				} else {
					b.WriteString(" NULLS LAST")
				}
			}
		}
		b.WriteByte(')')
		if e.Filter {
			b.WriteString(" FILTER (WHERE ")
			writeExpr(b, e.Args[len(e.Args)-1])
			b.WriteByte(')')
		}
	case *InSubquery:
		writeParen(b, e.Expr)
		if e.Negated {
			b.WriteString(" NOT IN (<subquery>)")
		} else {
			b.WriteString(" IN (<subquery>)")
		}
	default:
		b.WriteString(e.String())
	}
}

// writeParen writes e, parenthesized when it is a Binary.
func writeParen(b *strings.Builder, e Expr) {
	if _, ok := e.(*Binary); ok {
		b.WriteByte('(')
		writeExpr(b, e)
		b.WriteByte(')')
		return
	}
	writeExpr(b, e)
}

func writeList(b *strings.Builder, es []Expr) {
	for i, e := range es {
		if i > 0 {
			b.WriteString(", ")
		}
		writeExpr(b, e)
	}
}
func (b *Binary) Children() []Expr { return []Expr{b.Left, b.Right} }
func (b *Binary) WithChildren(c []Expr) Expr {
	return &Binary{Op: b.Op, Left: c[0], Right: c[1]}
}
func (b *Binary) DataType(s *Schema) (arrow.DataType, bool, error) {
	lt, ln, err := b.Left.DataType(s)
	if err != nil {
		return nil, false, err
	}
	rt, rn, err := b.Right.DataType(s)
	if err != nil {
		return nil, false, err
	}
	switch {
	case b.Op.IsComparison(), b.Op == OpAnd, b.Op == OpOr:
		return Bool, ln || rn, nil
	case b.Op == OpConcat:
		return String, ln || rn, nil
	}
	t, err := ArithmeticType(b.Op, lt, rt)
	if err != nil {
		return nil, false, err
	}
	// Division and modulo by zero are errors, not NULLs, so nullability follows the operands.
	return t, ln || rn, nil
}

// And folds exprs with AND; nil for none.
func And(exprs ...Expr) Expr {
	var out Expr
	for _, e := range exprs {
		if e == nil {
			continue
		}
		if out == nil {
			out = e
		} else {
			out = &Binary{Op: OpAnd, Left: out, Right: e}
		}
	}
	return out
}

// SplitAnd flattens a conjunction into its conjuncts.
func SplitAnd(e Expr) []Expr {
	if e == nil {
		return nil
	}
	if b, ok := e.(*Binary); ok && b.Op == OpAnd {
		return append(SplitAnd(b.Left), SplitAnd(b.Right)...)
	}
	return []Expr{e}
}

// Not is logical negation (NOT NULL is NULL).
type Not struct{ Expr Expr }

func (*Not) isExpr()                      {}
func (n *Not) String() string             { return display(n) }
func (n *Not) Children() []Expr           { return []Expr{n.Expr} }
func (n *Not) WithChildren(c []Expr) Expr { return &Not{Expr: c[0]} }
func (n *Not) DataType(s *Schema) (arrow.DataType, bool, error) {
	_, nl, err := n.Expr.DataType(s)
	return Bool, nl, err
}

// Negative is arithmetic negation.
type Negative struct{ Expr Expr }

func (*Negative) isExpr()                      {}
func (n *Negative) String() string             { return display(n) }
func (n *Negative) Children() []Expr           { return []Expr{n.Expr} }
func (n *Negative) WithChildren(c []Expr) Expr { return &Negative{Expr: c[0]} }
func (n *Negative) DataType(s *Schema) (arrow.DataType, bool, error) {
	return n.Expr.DataType(s)
}

// IsNull is "Expr IS NULL", or "IS NOT NULL" when Negated. It is never NULL.
type IsNull struct {
	Expr    Expr
	Negated bool
}

func (*IsNull) isExpr()                      {}
func (n *IsNull) String() string             { return display(n) }
func (n *IsNull) Children() []Expr           { return []Expr{n.Expr} }
func (n *IsNull) WithChildren(c []Expr) Expr { return &IsNull{Expr: c[0], Negated: n.Negated} }
func (n *IsNull) DataType(s *Schema) (arrow.DataType, bool, error) {
	_, _, err := n.Expr.DataType(s)
	return Bool, false, err
}

// Cast converts Expr to Type; a value that does not convert is an execution error.
type Cast struct {
	Expr Expr
	Type arrow.DataType
}

func (*Cast) isExpr()                      {}
func (c *Cast) String() string             { return display(c) }
func (c *Cast) Children() []Expr           { return []Expr{c.Expr} }
func (c *Cast) WithChildren(e []Expr) Expr { return &Cast{Expr: e[0], Type: c.Type} }
func (c *Cast) DataType(s *Schema) (arrow.DataType, bool, error) {
	_, n, err := c.Expr.DataType(s)
	return c.Type, n, err
}

// When is one WHEN ... THEN ... arm of a Case.
type When struct{ Cond, Then Expr }

// Case is CASE [Operand] WHEN ... THEN ... [ELSE ...] END. With an Operand,
// each Cond is compared for equality with it. All Thens and Else have one
// type (the builder casts them); a missing Else is NULL.
type Case struct {
	Operand Expr // may be nil
	Whens   []When
	Else    Expr // may be nil
}

func (*Case) isExpr()          {}
func (c *Case) String() string { return display(c) }
func (c *Case) Children() []Expr {
	var out []Expr
	if c.Operand != nil {
		out = append(out, c.Operand)
	}
	for _, w := range c.Whens {
		out = append(out, w.Cond, w.Then)
	}
	if c.Else != nil {
		out = append(out, c.Else)
	}
	return out
}
func (c *Case) WithChildren(ch []Expr) Expr {
	n := &Case{}
	if c.Operand != nil {
		n.Operand, ch = ch[0], ch[1:]
	}
	n.Whens = make([]When, len(c.Whens))
	for i := range c.Whens {
		n.Whens[i] = When{Cond: ch[0], Then: ch[1]}
		ch = ch[2:]
	}
	if c.Else != nil {
		n.Else = ch[0]
	}
	return n
}
func (c *Case) DataType(s *Schema) (arrow.DataType, bool, error) {
	var t arrow.DataType
	nullable := c.Else == nil
	for _, w := range c.Whens {
		if _, _, err := w.Cond.DataType(s); err != nil {
			return nil, false, err
		}
		wt, wn, err := w.Then.DataType(s)
		if err != nil {
			return nil, false, err
		}
		nullable = nullable || wn
		if t == nil || t.ID() == arrow.NULL {
			t = wt
		}
	}
	if c.Else != nil {
		et, en, err := c.Else.DataType(s)
		if err != nil {
			return nil, false, err
		}
		nullable = nullable || en
		if t == nil || t.ID() == arrow.NULL {
			t = et
		}
	}
	return t, nullable, nil
}

// Like is "Expr [NOT] LIKE Pattern" with % and _ wildcards and backslash escape.
type Like struct {
	Expr, Pattern   Expr
	Negated         bool
	CaseInsensitive bool // ILIKE
}

func (*Like) isExpr()            {}
func (l *Like) String() string   { return display(l) }
func (l *Like) Children() []Expr { return []Expr{l.Expr, l.Pattern} }
func (l *Like) WithChildren(c []Expr) Expr {
	return &Like{Expr: c[0], Pattern: c[1], Negated: l.Negated, CaseInsensitive: l.CaseInsensitive}
}
func (l *Like) DataType(s *Schema) (arrow.DataType, bool, error) {
	_, n1, err := l.Expr.DataType(s)
	if err != nil {
		return nil, false, err
	}
	_, n2, err := l.Pattern.DataType(s)
	return Bool, n1 || n2, err
}

// InList is "Expr [NOT] IN (List...)" with SQL semantics: NULL when no element
// matches and Expr or an element is NULL. List elements have Expr's type.
type InList struct {
	Expr    Expr
	List    []Expr
	Negated bool
}

func (*InList) isExpr()             {}
func (in *InList) String() string   { return display(in) }
func (in *InList) Children() []Expr { return append([]Expr{in.Expr}, in.List...) }
func (in *InList) WithChildren(c []Expr) Expr {
	return &InList{Expr: c[0], List: append([]Expr(nil), c[1:]...), Negated: in.Negated}
}
func (in *InList) DataType(s *Schema) (arrow.DataType, bool, error) {
	_, n, err := in.Expr.DataType(s)
	if err != nil {
		return nil, false, err
	}
	for _, e := range in.List {
		_, en, err := e.DataType(s)
		if err != nil {
			return nil, false, err
		}
		n = n || en
	}
	return Bool, n, nil
}

// ScalarFunc calls a built-in scalar function by its canonical lower-case
// name in the functions registry (see FuncType).
type ScalarFunc struct {
	Name string
	Args []Expr
}

func (*ScalarFunc) isExpr()            {}
func (f *ScalarFunc) String() string   { return display(f) }
func (f *ScalarFunc) Children() []Expr { return f.Args }
func (f *ScalarFunc) WithChildren(c []Expr) Expr {
	return &ScalarFunc{Name: f.Name, Args: append([]Expr(nil), c...)}
}
func (f *ScalarFunc) DataType(s *Schema) (arrow.DataType, bool, error) {
	ts := make([]arrow.DataType, len(f.Args))
	nullable := false
	for i, a := range f.Args {
		t, n, err := a.DataType(s)
		if err != nil {
			return nil, false, err
		}
		ts[i], nullable = t, nullable || n
	}
	t, err := FuncType(f.Name, ts)
	if err == nil && f.Name == "round" {
		t = roundType(t, f.Args)
	}
	if err != nil {
		return nil, false, err
	}
	return t, funcNullable(f, s, nullable), nil
}

// roundType is the type of round(x [, d]) for decimal x, as in PostgreSQL:
// the scale is the digits rounded to (0 without d, 0 for negative d, and d
// above x's scale pads with zeros), and one more integer digit holds a carry
// (round(9.99, 1) = 10.0). Digits that are not a constant keep x's type: the
// scale would differ row by row.
func roundType(t arrow.DataType, args []Expr) arrow.DataType {
	dt, ok := t.(*arrow.Decimal128Type)
	if !ok {
		return t
	}
	d := int64(0)
	if len(args) == 2 {
		if d, ok = IntConst(args[1]); !ok {
			return t
		}
	}
	intDigits := int64(dt.Precision - dt.Scale)
	if d < int64(dt.Scale) {
		intDigits++ // rounding may carry into a new digit
	}
	scale := max(d, 0)
	scale = min(scale, MaxDecimalPrecision-min(intDigits, MaxDecimalPrecision)) // padding past 38 digits is not representable
	scale = max(scale, min(d, int64(dt.Scale)))                                 // never below what the rounding keeps
	return Decimal(int32(min(intDigits+scale, MaxDecimalPrecision)), int32(scale))
}

// IntConst is the value of an integer literal, possibly under casts.
func IntConst(e Expr) (int64, bool) {
	for {
		c, ok := e.(*Cast)
		if !ok {
			break
		}
		e = c.Expr
	}
	l, ok := e.(*Literal)
	if !ok {
		return 0, false
	}
	switch v := l.Value.(type) {
	case int64:
		return v, true
	case int32:
		return int64(v), true
	case int16:
		return int64(v), true
	case int8:
		return int64(v), true
	case int:
		return int64(v), true
	}
	return 0, false
}

// AggFunc is an aggregate function.
type AggFunc int

// Aggregate functions.
const (
	AggCount AggFunc = iota
	AggSum
	AggAvg
	AggMin
	AggMax
	AggVarSamp
	AggVarPop
	AggStddevSamp
	AggStddevPop
	AggBoolAnd
	AggBoolOr
	AggBitAnd
	AggBitOr
	AggBitXor
	AggAnyValue
	AggCovarPop
	AggCovarSamp
	AggCorr
	AggStringAgg
	AggPercentileCont
	AggPercentileDisc
	AggArrayAgg
)

// AggLast is the last aggregate function (the codecs check the range).
const AggLast = AggArrayAgg

var aggNames = [...]string{"count", "sum", "avg", "min", "max", "var_samp", "var_pop", "stddev_samp", "stddev_pop",
	"bool_and", "bool_or", "bit_and", "bit_or", "bit_xor", "any_value", "covar_pop", "covar_samp", "corr", "string_agg", "percentile_cont", "percentile_disc", "array_agg"}

func (a AggFunc) String() string { return aggNames[a] }

// Pairwise reports an aggregate of (y, x) pairs: covar_pop, covar_samp, corr.
func (a AggFunc) Pairwise() bool { return a == AggCovarPop || a == AggCovarSamp || a == AggCorr }

// TwoArgs reports an aggregate of two arguments: the pairwise ones and
// string_agg(value, separator).
func (a AggFunc) TwoArgs() bool { return a.Pairwise() || a == AggStringAgg || a.Percentile() }

// Percentile reports percentile_cont and percentile_disc, whose arguments
// are (value, fraction): WITHIN GROUP (ORDER BY value) as the SQL pre-pass
// writes them.
func (a AggFunc) Percentile() bool { return a == AggPercentileCont || a == AggPercentileDisc }

// ParseAggFunc maps a lower-case function name or alias (from the functions
// registry) to an aggregate.
func ParseAggFunc(name string) (AggFunc, bool) {
	f, ok := functions.Lookup(name)
	if !ok || f.Kind != functions.Aggregate {
		return 0, false
	}
	for i, n := range aggNames {
		if n == f.Name {
			return AggFunc(i), true
		}
	}
	return 0, false
}

// AggExpr is an aggregate call; it may appear only in an Aggregate plan's
// aggregate list. COUNT(*) has no Args; covar_pop, covar_samp and corr have
// two (y, x), string_agg two (value, separator), percentile_cont and
// percentile_disc two (value, constant fraction), every other aggregate one.
// After the aggregate's own arguments come the keys of Order, then the
// condition when Filter is set: they are children like the arguments, so
// rewrites that map columns see them.
type AggExpr struct {
	Func     AggFunc
	Args     []Expr
	Distinct bool
	// Order is ORDER BY inside the call (array_agg and string_agg only), one
	// entry per key.
	Order []AggOrder
	// Filter reports that the last of Args is FILTER (WHERE ...)'s condition
	// (array_agg and string_agg only: the others take FILTER as a CASE).
	Filter bool
}

// AggOrder is the direction of one ORDER BY key inside an aggregate call.
type AggOrder struct {
	Desc       bool
	NullsFirst bool
}

// NumArgs is the number of the aggregate's own arguments (Args without
// the ORDER BY keys and the FILTER condition).
func (a *AggExpr) NumArgs() int {
	n := len(a.Args) - len(a.Order)
	if a.Filter {
		n--
	}
	return n
}

// Collects reports an aggregate that keeps every value of its group until
// the end: array_agg, and string_agg when ordered, DISTINCT or filtered.
// Its partial state is the group's rows, so it merges across partitions.
func (a *AggExpr) Collects() bool {
	return a.Func == AggArrayAgg || (a.Func == AggStringAgg && (len(a.Order) > 0 || a.Distinct || a.Filter))
}

func (*AggExpr) isExpr()            {}
func (a *AggExpr) String() string   { return display(a) }
func (a *AggExpr) Children() []Expr { return a.Args }
func (a *AggExpr) WithChildren(c []Expr) Expr {
	return &AggExpr{Func: a.Func, Args: append([]Expr(nil), c...), Distinct: a.Distinct, Order: a.Order, Filter: a.Filter}
}
func (a *AggExpr) DataType(s *Schema) (arrow.DataType, bool, error) {
	if len(a.Args) == 0 {
		return Int64, false, nil
	}
	t, _, err := a.Args[0].DataType(s)
	if err != nil {
		return nil, false, err
	}
	rt, err := AggregateType(a.Func, t)
	return rt, a.Func != AggCount, err
}

// ScalarSubquery is a subquery that yields one column and at most one row
// (NULL for none; more than one row is an execution error).
type ScalarSubquery struct{ Plan Plan }

func (*ScalarSubquery) isExpr()                    {}
func (q *ScalarSubquery) String() string           { return "(<subquery>)" }
func (q *ScalarSubquery) Children() []Expr         { return nil }
func (q *ScalarSubquery) WithChildren([]Expr) Expr { return q }
func (q *ScalarSubquery) DataType(*Schema) (arrow.DataType, bool, error) {
	f := q.Plan.Schema().Field(0)
	return f.Type, true, nil
}

// Exists is "[NOT] EXISTS (subquery)".
type Exists struct {
	Plan    Plan
	Negated bool
}

func (*Exists) isExpr() {}
func (e *Exists) String() string {
	if e.Negated {
		return "NOT EXISTS (<subquery>)"
	}
	return "EXISTS (<subquery>)"
}
func (e *Exists) Children() []Expr         { return nil }
func (e *Exists) WithChildren([]Expr) Expr { return e }
func (e *Exists) DataType(*Schema) (arrow.DataType, bool, error) {
	return Bool, false, nil
}

// InSubquery is "Expr [NOT] IN (subquery)" with SQL's NULL semantics.
type InSubquery struct {
	Expr    Expr
	Plan    Plan
	Negated bool
}

func (*InSubquery) isExpr()             {}
func (in *InSubquery) String() string   { return display(in) }
func (in *InSubquery) Children() []Expr { return []Expr{in.Expr} }
func (in *InSubquery) WithChildren(c []Expr) Expr {
	return &InSubquery{Expr: c[0], Plan: in.Plan, Negated: in.Negated}
}
func (in *InSubquery) DataType(s *Schema) (arrow.DataType, bool, error) {
	_, n, err := in.Expr.DataType(s)
	return Bool, n || in.Plan.Schema().Field(0).Nullable, err
}

// FieldOf returns the output field an expression produces over s: its display
// name (or alias) unqualified, or the column's own qualifier for a plain column.
func FieldOf(e Expr, s *Schema) (Field, error) {
	t, n, err := e.DataType(s)
	if err != nil {
		return Field{}, err
	}
	if c, ok := e.(*Column); ok {
		i, err := s.IndexOf(c.Qualifier, c.Name)
		if err != nil {
			return Field{}, err
		}
		f := s.Field(i)
		return f, nil
	}
	return Field{Name: e.String(), Type: t, Nullable: n}, nil
}

// tryCastType is the target of a try_cast(x, NULL of T) call.
func tryCastType(f *ScalarFunc) (*Literal, bool) {
	if f.Name != "try_cast" || len(f.Args) != 2 {
		return nil, false
	}
	l, ok := f.Args[1].(*Literal)
	return l, ok
}
