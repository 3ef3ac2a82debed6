package physical

import (
	"math"

	"github.com/apache/arrow-go/v18/arrow"
)

// Swapped is the comparison that gives the same answer with its operands
// exchanged (a < b is b > a); ok is false for an operator that compares
// nothing.
func (o BinaryOp) Swapped() (op BinaryOp, ok bool) {
	switch o {
	case OpEq, OpNotEq:
		return o, true
	case OpLt:
		return OpGt, true
	case OpLtEq:
		return OpGtEq, true
	case OpGt:
		return OpLt, true
	case OpGtEq:
		return OpLtEq, true
	}
	return o, false
}

// ColumnVsLiteral returns b as `column op literal`, swapping the operands
// of `literal op column`; ok is false for any other shape and for an
// operator other than =, <, <=, > and >= (the ones a value range decides).
func ColumnVsLiteral(b *Binary) (col *Column, op BinaryOp, lit *Literal, ok bool) {
	if b.Op == OpNotEq {
		return nil, 0, nil, false
	}
	op, ok = b.Op.Swapped()
	if !ok {
		return nil, 0, nil, false
	}
	if c, cok := b.Left.(*Column); cok {
		if l, lok := b.Right.(*Literal); lok {
			return c, b.Op, l, true
		}
	}
	if c, cok := b.Right.(*Column); cok {
		if l, lok := b.Left.(*Literal); lok {
			return c, op, l, true
		}
	}
	return nil, 0, nil, false
}

// Int64 is the literal's value as an int64 when it is a non-NULL integer,
// date, timestamp or time (the values statistics bound as int64).
func (l *Literal) Int64() (int64, bool) {
	switch x := l.Value.(type) {
	case int8:
		return int64(x), true
	case int16:
		return int64(x), true
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case uint8:
		return int64(x), true
	case uint16:
		return int64(x), true
	case uint32:
		return int64(x), true
	case uint64:
		return int64(x), x <= math.MaxInt64
	case arrow.Date32:
		return int64(x), true
	case arrow.Date64:
		return int64(x), true
	case arrow.Timestamp:
		return int64(x), true
	case arrow.Time32:
		return int64(x), true
	case arrow.Time64:
		return int64(x), true
	}
	return 0, false
}
