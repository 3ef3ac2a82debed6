package eval

import (
	"cmp"
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
)

// cmpNode is a comparison. Operand types are resolved at compile time; a
// constant operand is kept as a scalar (col op literal is the common case).
type cmpNode struct {
	op   physical.BinaryOp
	l, r operand
	expr *physical.Binary
	dict dictTest // a string column against a constant, on file dictionary codes
}

func compileCompare(e *physical.Binary) (node, error) {
	lt, rt, err := commonType(e.Left.DataType(), e.Right.DataType())
	if err != nil {
		return nil, err
	}
	l, err := compileOperand(e.Left, lt)
	if err != nil {
		return nil, err
	}
	r, err := compileOperand(e.Right, rt)
	if err != nil {
		return nil, err
	}
	if l.typ.ID() == arrow.BOOL && r.typ.ID() == arrow.BOOL {
		// Booleans compare as 0/1 integers (FALSE < TRUE).
		if l, err = compileOperand(&physical.Cast{Expr: e.Left, Type: arrow.PrimitiveTypes.Int32}, nil); err != nil {
			return nil, err
		}
		if r, err = compileOperand(&physical.Cast{Expr: e.Right, Type: arrow.PrimitiveTypes.Int32}, nil); err != nil {
			return nil, err
		}
	}
	op := e.Op
	if l.lit != nil && r.lit == nil {
		// literal op col  ==  col flip(op) literal
		l, r = r, l
		op, _ = op.Swapped()
	}
	switch l.typ.ID() {
	case arrow.INT32, arrow.DATE32, arrow.INT64, arrow.FLOAT64, arrow.DECIMAL128, arrow.STRING, arrow.NULL,
		arrow.TIMESTAMP, arrow.TIME64, arrow.INTERVAL_MONTH_DAY_NANO:
	default:
		if r.typ.ID() != arrow.NULL {
			return nil, qerr.NotImplementedf("eval: comparison of %s is not supported", l.typ)
		}
	}
	return &cmpNode{op: op, l: l, r: r, expr: e}, nil
}

var boolType = arrow.FixedWidthTypes.Boolean

func (c *cmpNode) eval(ctx context.Context, mem memory.Allocator, in *input) (arrow.Array, error) {
	n := in.n
	if c.l.isNullConst() || c.r.isNullConst() {
		if err := drain(ctx, mem, in, &c.l, &c.r); err != nil {
			return nil, err
		}
		return array.MakeArrayOfNull(mem, boolType, n), nil
	}
	la, err := c.l.evalOrScalar(ctx, mem, in)
	if err != nil {
		return nil, err
	}
	defer releaseIf(la)
	ra, err := c.r.evalOrScalar(ctx, mem, in)
	if err != nil {
		return nil, err
	}
	defer releaseIf(ra)
	if la == nil && ra == nil {
		// both constant but not folded (cannot happen unless folding failed)
		if la, err = c.l.eval(ctx, mem, in); err != nil {
			return nil, err
		}
		defer la.Release()
	}
	if anyAllNull(la, ra) {
		return array.MakeArrayOfNull(mem, boolType, n), nil
	}
	out := newBitmap(mem, n, false)
	defer out.Release()
	bm := out.Bytes()
	op := c.op
	invert := false
	if op == physical.OpNotEq {
		op, invert = physical.OpEq, true
	}
	switch c.l.typ.ID() {
	case arrow.INT32, arrow.DATE32:
		cmpDispatch(op, values[int32](la), arrOrNil[int32](ra), int32(litI64(c.r.lit)), bm)
	case arrow.INT64, arrow.TIMESTAMP, arrow.TIME64:
		cmpDispatch(op, values[int64](la), arrOrNil[int64](ra), litI64(c.r.lit), bm)
	case arrow.FLOAT64:
		cmpDispatch(op, values[float64](la), arrOrNil[float64](ra), litF64(c.r.lit), bm)
	case arrow.STRING:
		if ra == nil && c.dict.markCmp(la, op, c.r.lit.s, bm) {
			break
		}
		if ra == nil && op == physical.OpEq && strEqScalar(la, c.r.lit.s, bm) {
			break
		}
		var rs []string
		var s string
		if ra != nil {
			rs = stringView(ra)
		} else {
			s = c.r.lit.s
		}
		cmpDispatch(op, stringView(la), rs, s, bm)
	case arrow.DECIMAL128:
		if err := c.cmpDecimal(op, la, ra, bm); err != nil {
			return nil, err
		}
	case arrow.INTERVAL_MONTH_DAY_NANO:
		cmpIntervals(op, la, ra, c.r.lit, bm)
	default:
		return nil, qerr.NotImplementedf("eval: comparison of %s is not supported", c.l.typ)
	}
	if invert {
		for i := range bm {
			bm[i] = ^bm[i]
		}
	}
	valid := andValidity(mem, n, la, ra)
	if valid != nil {
		defer valid.Release()
	}
	return makeArray(boolType, n, valid, out), nil
}

func (c *cmpNode) cmpDecimal(op physical.BinaryOp, la, ra arrow.Array, bm []byte) error {
	ls := c.l.typ.(*arrow.Decimal128Type).Scale
	rs := c.r.typ.(*arrow.Decimal128Type).Scale
	s := max(ls, rs)
	a, err := rescaledDecimals(la, ls, s, c.expr)
	if err != nil {
		return err
	}
	if ra == nil {
		v, ok := rescale(c.r.lit.dec, rs, s)
		if !ok {
			return qerr.Execf("eval: %s: decimal overflow rescaling %s", c.expr, c.r.lit.dec.ToString(rs))
		}
		if !cmpDecAS64(op, a, v, bm) {
			clear(bm)
			cmpDecAS(op, a, v, bm)
		}
		return nil
	}
	b, err := rescaledDecimals(ra, rs, s, c.expr)
	if err != nil {
		return err
	}
	if !cmpDecAA64(op, a, b, bm) {
		clear(bm)
		cmpDecAA(op, a, b, bm)
	}
	return nil
}

// rescaledDecimals returns a's values at scale to (a's own buffer when the
// scale already matches).
func rescaledDecimals(a arrow.Array, from, to int32, e physical.Expr) ([]decimal128.Num, error) {
	v := values[decimal128.Num](a)
	if from == to {
		return v, nil
	}
	out := make([]decimal128.Num, len(v))
	ovf := false
	for i, x := range v {
		y, ok := scaleUp(x, to-from)
		out[i] = y
		ovf = ovf || !ok
	}
	if ovf {
		for i, x := range v {
			if _, ok := scaleUp(x, to-from); !ok && a.IsValid(i) {
				return nil, qerr.Execf("eval: %s: decimal overflow rescaling %s to scale %d", e, x.ToString(from), to)
			}
		}
	}
	return out, nil
}

func releaseIf(a arrow.Array) {
	if a != nil {
		a.Release()
	}
}

func arrOrNil[T arrow.FixedWidthType](a arrow.Array) []T {
	if a == nil {
		return nil
	}
	return values[T](a)
}

func litI64(l *litVal) int64 {
	if l == nil {
		return 0
	}
	return l.i64
}

func litF64(l *litVal) float64 {
	if l == nil {
		return 0
	}
	return l.f64
}

// cmpDispatch compares a with b (when b is non-nil) or with the scalar s,
// writing one bit per row into bm (zeroed). op is never OpNotEq.
func cmpDispatch[T cmp.Ordered](op physical.BinaryOp, a, b []T, s T, bm []byte) {
	if b != nil {
		switch op {
		case physical.OpEq:
			cmpEqAA(a, b, bm)
		case physical.OpLt:
			cmpLtAA(a, b, bm)
		case physical.OpLtEq:
			cmpLeAA(a, b, bm)
		case physical.OpGt:
			cmpLtAA(b, a, bm)
		case physical.OpGtEq:
			cmpLeAA(b, a, bm)
		}
		return
	}
	switch op {
	case physical.OpEq:
		cmpEqAS(a, s, bm)
	case physical.OpLt:
		cmpLtAS(a, s, bm)
	case physical.OpLtEq:
		cmpLeAS(a, s, bm)
	case physical.OpGt:
		cmpGtAS(a, s, bm)
	case physical.OpGtEq:
		cmpGeAS(a, s, bm)
	}
}

// decCmp orders two decimals of the same scale: -1, 0, +1.
func decCmp(a, b decimal128.Num) int {
	ah, bh := a.HighBits(), b.HighBits()
	if ah != bh {
		if ah < bh {
			return -1
		}
		return 1
	}
	al, bl := a.LowBits(), b.LowBits()
	if al != bl {
		if al < bl {
			return -1
		}
		return 1
	}
	return 0
}

func cmpDecAS(op physical.BinaryOp, a []decimal128.Num, s decimal128.Num, bm []byte) {
	switch op {
	case physical.OpEq:
		for i, x := range a {
			bm[i>>3] |= b2u(x == s) << (uint(i) & 7)
		}
	case physical.OpLt:
		for i, x := range a {
			bm[i>>3] |= b2u(decCmp(x, s) < 0) << (uint(i) & 7)
		}
	case physical.OpLtEq:
		for i, x := range a {
			bm[i>>3] |= b2u(decCmp(x, s) <= 0) << (uint(i) & 7)
		}
	case physical.OpGt:
		for i, x := range a {
			bm[i>>3] |= b2u(decCmp(x, s) > 0) << (uint(i) & 7)
		}
	case physical.OpGtEq:
		for i, x := range a {
			bm[i>>3] |= b2u(decCmp(x, s) >= 0) << (uint(i) & 7)
		}
	}
}

func cmpDecAA(op physical.BinaryOp, a, b []decimal128.Num, bm []byte) {
	b = b[:len(a)]
	switch op {
	case physical.OpEq:
		for i, x := range a {
			bm[i>>3] |= b2u(x == b[i]) << (uint(i) & 7)
		}
	case physical.OpLt:
		for i, x := range a {
			bm[i>>3] |= b2u(decCmp(x, b[i]) < 0) << (uint(i) & 7)
		}
	case physical.OpLtEq:
		for i, x := range a {
			bm[i>>3] |= b2u(decCmp(x, b[i]) <= 0) << (uint(i) & 7)
		}
	case physical.OpGt:
		for i, x := range a {
			bm[i>>3] |= b2u(decCmp(x, b[i]) > 0) << (uint(i) & 7)
		}
	case physical.OpGtEq:
		for i, x := range a {
			bm[i>>3] |= b2u(decCmp(x, b[i]) >= 0) << (uint(i) & 7)
		}
	}
}
