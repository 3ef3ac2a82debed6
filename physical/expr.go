package physical

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/quiverdb/quiver/temporal"
)

// Expr is a physical expression evaluated over one input batch. The set is
// closed. Every expression knows its result type.
type Expr interface {
	isExpr()
	DataType() arrow.DataType
	Children() []Expr
	String() string
}

// ColumnsOf records in used the input column indices e references.
func ColumnsOf(e Expr, used map[int]bool) {
	if c, ok := e.(*Column); ok {
		used[c.Index] = true
		return
	}
	for _, ch := range e.Children() {
		ColumnsOf(ch, used)
	}
}

// Column is the input column at Index.
type Column struct {
	Index int
	Name  string
	Type  arrow.DataType
}

// Literal is a constant; Value follows logical.Literal's convention: nil for
// NULL, else bool, int32, int64, float64, string, decimal128.Num (unscaled),
// arrow.Date32, arrow.Timestamp, arrow.Time64 or arrow.MonthDayNanoInterval by Type.
type Literal struct {
	Type  arrow.DataType
	Value any
}

// BinaryOp mirrors logical.BinaryOp (same order, same meaning).
type BinaryOp int

// Binary operators.
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
	OpConcat
)

var opNames = [...]string{"=", "<>", "<", "<=", ">", ">=", "AND", "OR", "+", "-", "*", "/", "%", "||"}

func (o BinaryOp) String() string { return opNames[o] }

// Binary is Left Op Right with result Type.
//
// Operand rules (guaranteed by the planner): comparisons have operands of the
// same type, except decimals, which may differ in precision and scale;
// arithmetic operands are both Int32, both Int64, both Float64, or both
// decimals (any scales), or Date32 ± Interval/Int64, or Date32 - Date32.
// AND/OR are Kleene three-valued. Division or modulo by zero is an execution error.
type Binary struct {
	Op          BinaryOp
	Left, Right Expr
	Type        arrow.DataType
}

// Not is boolean negation.
type Not struct{ Expr Expr }

// Negative is arithmetic negation.
type Negative struct{ Expr Expr }

// IsNull is IS [NOT] NULL.
type IsNull struct {
	Expr    Expr
	Negated bool
}

// Cast converts to Type; an unconvertible value is an execution error.
type Cast struct {
	Expr Expr
	Type arrow.DataType
}

// When is one arm of a Case.
type When struct{ Cond, Then Expr }

// Case is CASE [Operand] WHEN..THEN.. [ELSE] END; Thens and Else have Type.
type Case struct {
	Operand Expr
	Whens   []When
	Else    Expr
	Type    arrow.DataType
}

// Like is [NOT] LIKE / ILIKE with % and _ wildcards and backslash escape.
type Like struct {
	Expr, Pattern   Expr
	Negated         bool
	CaseInsensitive bool
}

// InList is [NOT] IN (list) with SQL NULL semantics; list items have Expr's type.
type InList struct {
	Expr    Expr
	List    []Expr
	Negated bool
}

// ScalarFunc is a built-in function (see logical.FuncType for the list).
type ScalarFunc struct {
	Name string
	Args []Expr
	Type arrow.DataType
}

func (*Column) isExpr()     {}
func (*Literal) isExpr()    {}
func (*Binary) isExpr()     {}
func (*Not) isExpr()        {}
func (*Negative) isExpr()   {}
func (*IsNull) isExpr()     {}
func (*Cast) isExpr()       {}
func (*Case) isExpr()       {}
func (*Like) isExpr()       {}
func (*InList) isExpr()     {}
func (*ScalarFunc) isExpr() {}

func (c *Column) DataType() arrow.DataType     { return c.Type }
func (l *Literal) DataType() arrow.DataType    { return l.Type }
func (b *Binary) DataType() arrow.DataType     { return b.Type }
func (*Not) DataType() arrow.DataType          { return arrow.FixedWidthTypes.Boolean }
func (n *Negative) DataType() arrow.DataType   { return n.Expr.DataType() }
func (*IsNull) DataType() arrow.DataType       { return arrow.FixedWidthTypes.Boolean }
func (c *Cast) DataType() arrow.DataType       { return c.Type }
func (c *Case) DataType() arrow.DataType       { return c.Type }
func (*Like) DataType() arrow.DataType         { return arrow.FixedWidthTypes.Boolean }
func (*InList) DataType() arrow.DataType       { return arrow.FixedWidthTypes.Boolean }
func (f *ScalarFunc) DataType() arrow.DataType { return f.Type }

func (*Column) Children() []Expr     { return nil }
func (*Literal) Children() []Expr    { return nil }
func (b *Binary) Children() []Expr   { return []Expr{b.Left, b.Right} }
func (n *Not) Children() []Expr      { return []Expr{n.Expr} }
func (n *Negative) Children() []Expr { return []Expr{n.Expr} }
func (n *IsNull) Children() []Expr   { return []Expr{n.Expr} }
func (c *Cast) Children() []Expr     { return []Expr{c.Expr} }
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
func (l *Like) Children() []Expr       { return []Expr{l.Expr, l.Pattern} }
func (i *InList) Children() []Expr     { return append([]Expr{i.Expr}, i.List...) }
func (f *ScalarFunc) Children() []Expr { return f.Args }

func (c *Column) String() string { return fmt.Sprintf("%s@%d", c.Name, c.Index) }
func (l *Literal) String() string {
	switch v := l.Value.(type) {
	case nil:
		return "NULL"
	case string:
		return "'" + v + "'"
	case decimal128.Num:
		return v.ToString(l.Type.(*arrow.Decimal128Type).Scale)
	case arrow.Date32:
		return v.FormattedString()
	case arrow.Timestamp:
		return "TIMESTAMP '" + temporal.FormatTimestamp(int64(v)) + "'"
	case arrow.Time64:
		return "TIME '" + temporal.FormatTime(int64(v)) + "'"
	case arrow.MonthDayNanoInterval:
		return "INTERVAL '" + temporal.FormatInterval(v) + "'"
	}
	return fmt.Sprint(l.Value)
}
func (b *Binary) String() string     { return display(b) }
func (n *Not) String() string        { return display(n) }
func (n *Negative) String() string   { return display(n) }
func (n *IsNull) String() string     { return display(n) }
func (c *Cast) String() string       { return display(c) }
func (c *Case) String() string       { return display(c) }
func (l *Like) String() string       { return display(l) }
func (i *InList) String() string     { return display(i) }
func (f *ScalarFunc) String() string { return display(f) }

// display renders e in one pass over the tree: composite expressions used to
// concatenate their children's strings, rebuilding each subtree's text once
// per ancestor (quadratic in a chain such as a + a + ... + a).
func display(e Expr) string {
	var b strings.Builder
	writeExpr(&b, e)
	return b.String()
}

// writeExpr appends e's text to b; leaves use their own String.
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
		fmt.Fprintf(b, " AS %s)", e.Type)
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
		b.WriteString(e.Name)
		b.WriteByte('(')
		writeList(b, e.Args)
		b.WriteByte(')')
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

func exprList(es []Expr) string {
	var b strings.Builder
	writeList(&b, es)
	return b.String()
}
