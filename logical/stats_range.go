package logical

import (
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/quiverdb/quiver/catalog"
)

// A range comparison of a column whose table gives its value bounds keeps
// the fraction of those bounds it admits, all of one column's comparisons
// taken together (a BETWEEN of two days over twenty years keeps a few
// thousandths, not the product of two independent guesses); without
// bounds each comparison keeps the fixed third of selectivity.

// span is the closed interval a filter's comparisons admit of one column,
// in the units of its table bounds (a decimal's unscaled value).
type span struct {
	lo, hi float64
	bounds catalog.KeyRange
}

// rangeSelectivity folds the conjuncts of a filter over in (with stats st)
// that compare a bounded column with a literal into one fraction per
// column; it returns their product and the conjuncts it did not use.
func rangeSelectivity(conj []Expr, in Plan) (float64, []Expr) {
	var spans map[int]*span
	var rest []Expr
	for _, c := range conj {
		i, op, v, b, ok := boundedCompare(c, in)
		if !ok {
			rest = append(rest, c)
			continue
		}
		if spans == nil {
			spans = map[int]*span{}
		}
		s := spans[i]
		if s == nil {
			s = &span{lo: float64(b.Lo), hi: float64(b.Hi), bounds: b}
			spans[i] = s
		}
		switch op {
		case OpGt:
			s.lo = math.Max(s.lo, math.Floor(v)+1)
		case OpGtEq:
			s.lo = math.Max(s.lo, math.Ceil(v))
		case OpLt:
			s.hi = math.Min(s.hi, math.Ceil(v)-1)
		case OpLtEq:
			s.hi = math.Min(s.hi, math.Floor(v))
		}
	}
	sel := 1.0
	for _, s := range spans {
		width := float64(s.bounds.Hi) - float64(s.bounds.Lo) + 1
		sel *= math.Max(0, s.hi-s.lo+1) / width
	}
	return sel, rest
}

// boundedCompare recognizes `column op literal` (either way round, op one
// of < <= > >=) over a signed integer, date or decimal column of in whose
// table gives its value bounds, with the literal's value in the bounds'
// units.
func boundedCompare(c Expr, in Plan) (col int, op BinaryOp, v float64, b catalog.KeyRange, ok bool) {
	x, isBin := c.(*Binary)
	if !isBin {
		return 0, 0, 0, b, false
	}
	op = x.Op
	switch op {
	case OpLt, OpLtEq, OpGt, OpGtEq:
	default:
		return 0, 0, 0, b, false
	}
	ce, le := x.Left, x.Right
	if _, isLit := ce.(*Literal); isLit {
		ce, le = le, ce
		op = op.Swap()
	}
	if k, isCast := ce.(*Cast); isCast && (IsInteger(k.Type) || IsDecimal(k.Type)) {
		ce = k.Expr // an integer column's values are the same number widened
	}
	cc, isCol := ce.(*Column)
	lit, isLit := le.(*Literal)
	if !isCol || !isLit || lit.Value == nil {
		return 0, 0, 0, b, false
	}
	col, err := in.Schema().IndexOf(cc.Qualifier, cc.Name)
	if err != nil {
		return 0, 0, 0, b, false
	}
	dt := in.Schema().Fields[col].Type
	if ce != x.Left && ce != x.Right && !IsInteger(dt) {
		return 0, 0, 0, b, false // only an integer keeps its value through a cast
	}
	if v, ok = literalIn(lit, dt); !ok {
		return 0, 0, 0, b, false
	}
	b = columnBounds(in, col)
	if !b.Known || b.Lo > b.Hi {
		return 0, 0, 0, b, false
	}
	return col, op, v, b, true
}

// literalIn is lit's value in the units column type dt's bounds count:
// the number for a signed integer, the day for a date, the unscaled value
// for a decimal.
func literalIn(lit *Literal, dt arrow.DataType) (float64, bool) {
	var v float64
	switch x := lit.Value.(type) {
	case int8:
		v = float64(x)
	case int16:
		v = float64(x)
	case int32:
		v = float64(x)
	case int64:
		v = float64(x)
	case float64:
		v = x
	case decimal128.Num:
		d, ok := lit.Type.(*arrow.Decimal128Type)
		if !ok {
			return 0, false
		}
		v = x.ToFloat64(d.Scale)
	case arrow.Date32:
		if dt.ID() != arrow.DATE32 {
			return 0, false
		}
		return float64(x), true
	default:
		return 0, false
	}
	switch dt.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64:
		return v, true
	case arrow.DECIMAL128:
		return v * math.Pow10(int(dt.(*arrow.Decimal128Type).Scale)), true
	}
	return 0, false
}

// columnBounds is the value range of output column i of p as its table's
// file statistics give it, through the operators that pass the column on
// (a filter's own comparisons only narrow it); unknown otherwise.
func columnBounds(p Plan, i int) catalog.KeyRange {
	switch n := p.(type) {
	case *Scan:
		c := i
		if n.Projection != nil {
			c = n.Projection[i]
		}
		if len(n.Table.Bounds) == n.Table.Schema.NumFields() && c >= 0 && c < len(n.Table.Bounds) {
			return n.Table.Bounds[c]
		}
	case *Filter:
		return columnBounds(n.Input, i)
	case *Sort:
		return columnBounds(n.Input, i)
	case *Limit:
		return columnBounds(n.Input, i)
	case *SubqueryAlias:
		return columnBounds(n.Input, i)
	case *Cache:
		return columnBounds(n.Input, i)
	case *CTERef:
		return columnBounds(n.Input, i)
	case *Projection:
		e := n.List[i]
		if a, ok := e.(*Alias); ok {
			e = a.Expr
		}
		if j, ok := indexOfCol(e, n.Input.Schema()); ok {
			return columnBounds(n.Input, j)
		}
	case *Join:
		if nl := n.Left.Schema().Len(); i < nl {
			return columnBounds(n.Left, i)
		} else if n.Type != SemiJoin && n.Type != AntiJoin && n.Type != MarkJoin {
			return columnBounds(n.Right, i-nl)
		}
	}
	return catalog.KeyRange{}
}
