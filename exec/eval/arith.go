package eval

import (
	"context"
	"math"
	"math/big"
	"math/bits"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
	"github.com/quiverdb/quiver/temporal"
)

// arithKind selects the kernel family of an arithmetic node.
type arithKind int

const (
	arInt32 arithKind = iota
	arInt64
	arFloat
	arDecimal
	arDecDiv   // decimal / decimal with a decimal result (exact, slow path)
	arDateDays // date ± integer days
	arDateIvl  // date ± interval → timestamp
	arDateDiff // date - date → days
	arAllNull  // an operand is the NULL type
)

// arithNode is + - * / % over two operands; constants stay scalars.
type arithNode struct {
	op   physical.BinaryOp
	kind arithKind
	l, r operand
	typ  arrow.DataType
	expr *physical.Binary
}

func compileArith(e *physical.Binary) (node, error) {
	lt, rt, out := e.Left.DataType(), e.Right.DataType(), e.Type
	an := &arithNode{op: e.Op, typ: out, expr: e}
	var err error
	operands := func(lw, rw arrow.DataType) error {
		if an.l, err = compileOperand(e.Left, lw); err != nil {
			return err
		}
		an.r, err = compileOperand(e.Right, rw)
		return err
	}
	i64 := arrow.PrimitiveTypes.Int64
	if lt.ID() != arrow.NULL && rt.ID() != arrow.NULL && out.ID() != arrow.NULL {
		if ok, err := compileTemporalArith(an, e, operands); ok {
			if err != nil {
				return nil, err
			}
			return an, nil
		}
	}
	switch {
	case lt.ID() == arrow.NULL || rt.ID() == arrow.NULL || out.ID() == arrow.NULL:
		an.kind = arAllNull
		return an, operands(nil, nil)
	case (lt.ID() == arrow.DATE32 && rt.ID() == arrow.INTERVAL_MONTH_DAY_NANO || lt.ID() == arrow.INTERVAL_MONTH_DAY_NANO && rt.ID() == arrow.DATE32) && out.ID() != arrow.TIMESTAMP:
		return nil, qerr.Internalf("eval: %s: date %s interval must be typed timestamp, not %s", e, e.Op, out)
	case lt.ID() == arrow.INTERVAL_MONTH_DAY_NANO && rt.ID() == arrow.DATE32 && e.Op == physical.OpAdd:
		// interval + date == date + interval
		an.kind = arDateIvl
		if err := operands(nil, nil); err != nil {
			return nil, err
		}
		an.l, an.r = an.r, an.l
		return an, nil
	case lt.ID() == arrow.DATE32:
		if e.Op != physical.OpAdd && e.Op != physical.OpSub {
			return nil, qerr.Internalf("eval: %s: cannot apply %s to a date", e, e.Op)
		}
		switch {
		case rt.ID() == arrow.INTERVAL_MONTH_DAY_NANO:
			an.kind = arDateIvl
			return an, operands(nil, nil)
		case rt.ID() == arrow.DATE32 && e.Op == physical.OpSub:
			an.kind = arDateDiff
			return an, operands(nil, nil)
		case numClass(rt) == 1:
			an.kind = arDateDays
			return an, operands(nil, i64)
		}
		return nil, qerr.Internalf("eval: %s: cannot apply %s to Date32 and %s", e, e.Op, rt)
	}
	switch out.ID() {
	case arrow.INT32:
		an.kind = arInt32
		return an, operands(out, out)
	case arrow.INT8, arrow.INT16, arrow.INT64:
		an.kind = arInt64
		if err := operands(i64, i64); err != nil {
			return nil, err
		}
		if out.ID() != arrow.INT64 {
			// compute in Int64 and narrow with an overflow check
			an.typ = i64
			return newCast(an, i64, out)
		}
		return an, nil
	case arrow.FLOAT64, arrow.FLOAT32:
		f := arrow.PrimitiveTypes.Float64
		// decimal / decimal → Float64 converts both sides to float64 (the cast does that)
		an.kind = arFloat
		if err := operands(f, f); err != nil {
			return nil, err
		}
		if out.ID() == arrow.FLOAT32 {
			an.typ = f
			return newCast(an, f, out)
		}
		return an, nil
	case arrow.DECIMAL128:
		an.kind = arDecimal
		if e.Op == physical.OpDiv {
			an.kind = arDecDiv
		}
		lw, rw := lt, rt
		if numClass(lt) != 2 {
			lw = decimalOf(lt)
		}
		if numClass(rt) != 2 {
			rw = decimalOf(rt)
		}
		return an, operands(lw, rw)
	}
	return nil, qerr.NotImplementedf("eval: %s: arithmetic producing %s is not supported", e, out)
}

func (a *arithNode) eval(ctx context.Context, mem memory.Allocator, in *input) (arrow.Array, error) {
	n := in.n
	if a.kind == arAllNull || a.l.isNullConst() || a.r.isNullConst() {
		if err := drain(ctx, mem, in, &a.l, &a.r); err != nil {
			return nil, err
		}
		return array.MakeArrayOfNull(mem, a.typ, n), nil
	}
	// The left side is materialised when it is an array, or when both sides
	// are constants that could not be folded; otherwise it stays a scalar.
	var la arrow.Array
	var err error
	if a.l.lit == nil || a.r.lit != nil {
		if la, err = a.l.eval(ctx, mem, in); err != nil {
			return nil, err
		}
	}
	defer releaseIf(la)
	ra, err := a.r.evalOrScalar(ctx, mem, in)
	if err != nil {
		return nil, err
	}
	defer releaseIf(ra)
	if anyAllNull(la, ra) {
		return array.MakeArrayOfNull(mem, a.typ, n), nil
	}
	valid := andValidity(mem, n, la, ra)
	if valid != nil {
		defer valid.Release()
	}
	var vb []byte
	if valid != nil {
		vb = valid.Bytes()
	}
	switch a.kind {
	case arInt32:
		return arithIntArr[int32](mem, a, la, ra, n, valid, vb)
	case arInt64:
		return arithIntArr[int64](mem, a, la, ra, n, valid, vb)
	case arFloat:
		return a.floatArr(mem, floatVals(la), floatVals(ra), n, valid, vb, litOrNil(a.l, la), litOrNil(a.r, ra))
	case arDecimal:
		return a.decimalArr(mem, la, ra, n, valid, vb)
	case arDecDiv:
		return a.decimalDivArr(mem, la, ra, n, valid, vb)
	case arDateDays:
		return a.dateDays(mem, la, ra, n, valid)
	case arDateIvl:
		return a.dateInterval(mem, la, ra, n, valid)
	case arDateDiff:
		return a.dateDiff(mem, la, ra, n, valid)
	case arTsIvl, arTsDiff, arTimeIvl, arTimeDiff, arDateTime, arIvlIvl, arIvlMul, arIvlDiv:
		return a.temporalArith(mem, la, ra, n, valid)
	}
	return nil, qerr.Internalf("eval: %s: unknown arithmetic kernel", a.expr)
}

// litOrNil returns the operand's scalar when it was not materialised.
func litOrNil(o operand, arr arrow.Array) *litVal {
	if arr == nil {
		return o.lit
	}
	return nil
}

func floatVals(arr arrow.Array) []float64 {
	if arr == nil {
		return nil
	}
	return values[float64](arr)
}

// maskOf returns the index mask for an operand: all ones for an array,
// zero for a one-element scalar slice, so kernels index x[i&m].
func maskOf(isScalar bool) int {
	if isScalar {
		return 0
	}
	return -1
}

func scalarInt[T int32 | int64](lv *litVal) []T { return []T{T(lv.i64)} }

func arithIntArr[T int32 | int64](mem memory.Allocator, a *arithNode, la, ra arrow.Array, n int, valid *memory.Buffer, vb []byte) (arrow.Array, error) {
	var x, y []T
	if la == nil {
		x = scalarInt[T](a.l.lit)
	} else {
		x = values[T](la)
	}
	if ra == nil {
		y = scalarInt[T](a.r.lit)
	} else {
		y = values[T](ra)
	}
	xm, ym := maskOf(la == nil), maskOf(ra == nil)
	buf, out := newFixedDirty[T](mem, n)
	defer buf.Release()
	if flag := intKernel(a.op, x, y, xm, ym, out); flag {
		// Slow path, only for batches where something overflowed or a
		// divisor was zero: find the first valid offending row.
		for i := 0; i < n; i++ {
			if vb != nil && !bitutil.BitIsSet(vb, i) {
				continue
			}
			if err := intRowCheck(a, x[i&xm], y[i&ym]); err != nil {
				return nil, err
			}
		}
	}
	return makeArray(a.typ, n, valid, buf), nil
}

// intKernel computes out = x op y; it returns true when some row overflowed
// or divided by zero (rows that may be NULL: the caller re-checks).
func intKernel[T int32 | int64](op physical.BinaryOp, x, y []T, xm, ym int, out []T) bool {
	var acc T
	flag := false
	switch op {
	case physical.OpAdd:
		for i := range out {
			p, q := x[i&xm], y[i&ym]
			r := p + q
			acc |= (p ^ r) & (q ^ r)
			out[i] = r
		}
		flag = acc < 0
	case physical.OpSub:
		for i := range out {
			p, q := x[i&xm], y[i&ym]
			r := p - q
			acc |= (p ^ q) & (p ^ r)
			out[i] = r
		}
		flag = acc < 0
	case physical.OpMul:
		switch xs := any(x).(type) {
		case []int32:
			ys, os := any(y).([]int32), any(out).([]int32)
			for i := range os {
				r := int64(xs[i&xm]) * int64(ys[i&ym])
				os[i] = int32(r)
				flag = flag || r != int64(int32(r))
			}
		case []int64:
			ys, os := any(y).([]int64), any(out).([]int64)
			var bad int64
			for i := range os {
				p, q := xs[i&xm], ys[i&ym]
				hi, lo := bits.Mul64(uint64(p), uint64(q))
				shi := int64(hi) - (p>>63)&q - (q>>63)&p
				bad |= shi ^ (int64(lo) >> 63)
				os[i] = int64(lo)
			}
			flag = bad != 0
		}
	case physical.OpDiv:
		for i := range out {
			q := y[i&ym]
			if q == 0 {
				flag = true
				out[i] = 0
				continue
			}
			if q == -1 {
				out[i] = -x[i&xm] // MinInt / -1 wraps; intRowCheck reports it
				flag = flag || x[i&xm] == minOf[T]()
				continue
			}
			out[i] = x[i&xm] / q
		}
	case physical.OpMod:
		for i := range out {
			q := y[i&ym]
			if q == 0 || q == -1 {
				flag = flag || q == 0
				out[i] = 0
				continue
			}
			out[i] = x[i&xm] % q
		}
	}
	return flag
}

func minOf[T int32 | int64]() T {
	var z T
	switch any(z).(type) {
	case int32:
		return T(math.MinInt32)
	}
	m := int64(math.MinInt64)
	return T(m)
}

// intRowCheck reports the error, if any, of one row of an integer operation.
func intRowCheck[T int32 | int64](a *arithNode, p, q T) error {
	switch a.op {
	case physical.OpDiv, physical.OpMod:
		if q == 0 {
			return qerr.Execf("division by zero")
		}
		if a.op == physical.OpDiv && q == -1 && p == minOf[T]() {
			return qerr.Execf("eval: integer overflow in %s (%d / -1)", a.expr, p)
		}
	case physical.OpAdd:
		r := p + q
		if (p^r)&(q^r) < 0 {
			return qerr.Execf("eval: integer overflow in %s (%d + %d)", a.expr, p, q)
		}
	case physical.OpSub:
		r := p - q
		if (p^q)&(p^r) < 0 {
			return qerr.Execf("eval: integer overflow in %s (%d - %d)", a.expr, p, q)
		}
	case physical.OpMul:
		r := p * q
		if p != 0 && (r/p != q || (p == -1 && q == minOf[T]())) {
			return qerr.Execf("eval: integer overflow in %s (%d * %d)", a.expr, p, q)
		}
	}
	return nil
}

// floatArr computes x op y over Float64 values; a nil slice means the
// operand is the scalar lx / ly.
func (a *arithNode) floatArr(mem memory.Allocator, x, y []float64, n int, valid *memory.Buffer, vb []byte, lx, ly *litVal) (arrow.Array, error) {
	xm, ym := -1, -1
	if x == nil {
		x, xm = []float64{litF64(lx)}, 0
	}
	if y == nil {
		y, ym = []float64{litF64(ly)}, 0
	}
	buf, out := newFixedDirty[float64](mem, n)
	defer buf.Release()
	zero := false
	switch a.op {
	case physical.OpAdd:
		for i := range out {
			out[i] = x[i&xm] + y[i&ym]
		}
	case physical.OpSub:
		for i := range out {
			out[i] = x[i&xm] - y[i&ym]
		}
	case physical.OpMul:
		for i := range out {
			out[i] = x[i&xm] * y[i&ym]
		}
	case physical.OpDiv:
		for i := range out {
			q := y[i&ym]
			zero = zero || q == 0
			out[i] = x[i&xm] / q
		}
	case physical.OpMod:
		for i := range out {
			q := y[i&ym]
			zero = zero || q == 0
			out[i] = math.Mod(x[i&xm], q)
		}
	}
	if zero {
		for i := 0; i < n; i++ {
			if y[i&ym] == 0 && (vb == nil || bitutil.BitIsSet(vb, i)) {
				return nil, qerr.Execf("division by zero")
			}
		}
	}
	return makeArray(a.typ, n, valid, buf), nil
}

// decVals returns an operand's unscaled values at scale to, with the mask.
func decVals(arr arrow.Array, o operand, to int32, e physical.Expr) ([]decimal128.Num, int, error) {
	from := o.typ.(*arrow.Decimal128Type).Scale
	if arr == nil {
		v, ok := rescale(o.lit.dec, from, to)
		if !ok {
			return nil, 0, qerr.Execf("eval: %s: decimal overflow rescaling %s", e, o.lit.dec.ToString(from))
		}
		return []decimal128.Num{v}, 0, nil
	}
	v, err := rescaledDecimals(arr, from, to, e)
	return v, -1, err
}

func (a *arithNode) decimalArr(mem memory.Allocator, la, ra arrow.Array, n int, valid *memory.Buffer, vb []byte) (arrow.Array, error) {
	rt := a.typ.(*arrow.Decimal128Type)
	ls := a.l.typ.(*arrow.Decimal128Type).Scale
	rs := a.r.typ.(*arrow.Decimal128Type).Scale
	xs, ys, natural := rt.Scale, rt.Scale, rt.Scale
	if a.op == physical.OpMul {
		xs, ys, natural = ls, rs, ls+rs
	}
	if a.op == physical.OpMod {
		natural = max(ls, rs)
		xs, ys = natural, natural
	}
	x, xm, err := decVals(la, a.l, xs, a.expr)
	if err != nil {
		return nil, err
	}
	y, ym, err := decVals(ra, a.r, ys, a.expr)
	if err != nil {
		return nil, err
	}
	buf, out := newFixedDirty[decimal128.Num](mem, n)
	defer buf.Release()
	bad := false
	fast := a.op != physical.OpMod && decArith64(a.op, x, y, xm, ym, out)
	switch {
	case fast:
		// every operand fit an int64: out is exact and nothing overflowed
	case a.op == physical.OpAdd:
		for i := range out {
			r, ok := addDec(x[i&xm], y[i&ym])
			out[i] = r
			bad = bad || !ok
		}
	case a.op == physical.OpSub:
		for i := range out {
			r, ok := subDec(x[i&xm], y[i&ym])
			out[i] = r
			bad = bad || !ok
		}
	case a.op == physical.OpMul:
		for i := range out {
			r, ok := mulDec(x[i&xm], y[i&ym])
			out[i] = r
			bad = bad || !ok
		}
	case a.op == physical.OpMod:
		zero := decimal128.Num{}
		for i := range out {
			q := y[i&ym]
			if q == zero {
				bad = true
				out[i] = zero
				continue
			}
			out[i] = remDec(x[i&xm], q)
		}
	}
	if bad {
		for i := 0; i < n; i++ {
			if vb != nil && !bitutil.BitIsSet(vb, i) {
				continue
			}
			p, q := x[i&xm], y[i&ym]
			var ok bool
			switch a.op {
			case physical.OpAdd:
				_, ok = addDec(p, q)
			case physical.OpSub:
				_, ok = subDec(p, q)
			case physical.OpMul:
				_, ok = mulDec(p, q)
			case physical.OpMod:
				if q == (decimal128.Num{}) {
					return nil, qerr.Execf("division by zero")
				}
				ok = true
			}
			if !ok {
				return nil, qerr.Execf("eval: decimal overflow in %s (%s %s %s)", a.expr, p.ToString(xs), a.op, q.ToString(ys))
			}
		}
	}
	if natural != rt.Scale {
		for i := range out {
			r, ok := rescale(out[i], natural, rt.Scale)
			if !ok && (vb == nil || bitutil.BitIsSet(vb, i)) {
				return nil, qerr.Execf("eval: decimal overflow in %s", a.expr)
			}
			out[i] = r
		}
	}
	return makeArray(a.typ, n, valid, buf), nil
}

// decimalDivArr is decimal / decimal with a decimal result: exact through
// math/big (a planner that follows logical/types.go never asks for it).
func (a *arithNode) decimalDivArr(mem memory.Allocator, la, ra arrow.Array, n int, valid *memory.Buffer, vb []byte) (arrow.Array, error) {
	rt := a.typ.(*arrow.Decimal128Type)
	ls := a.l.typ.(*arrow.Decimal128Type).Scale
	rs := a.r.typ.(*arrow.Decimal128Type).Scale
	x, xm, err := decVals(la, a.l, ls, a.expr)
	if err != nil {
		return nil, err
	}
	y, ym, err := decVals(ra, a.r, rs, a.expr)
	if err != nil {
		return nil, err
	}
	buf, out := newFixed[decimal128.Num](mem, n)
	defer buf.Release()
	for i := range out {
		if vb != nil && !bitutil.BitIsSet(vb, i) {
			continue
		}
		q := y[i&ym]
		if q == (decimal128.Num{}) {
			return nil, qerr.Execf("division by zero")
		}
		// x / y at scale rt.Scale == x * 10^(rt.Scale - ls + rs) / y, rounded
		r, ok := divRound(x[i&xm], q, rt.Scale-ls+rs)
		if !ok || !fitsPrecision(r, rt.Precision) {
			return nil, qerr.Execf("eval: decimal overflow in %s", a.expr)
		}
		out[i] = r
	}
	return makeArray(a.typ, n, valid, buf), nil
}

func (a *arithNode) dateDays(mem memory.Allocator, la, ra arrow.Array, n int, valid *memory.Buffer) (arrow.Array, error) {
	x, xm := dateVals(la, a.l)
	var y []int64
	ym := -1
	if ra == nil {
		y, ym = []int64{a.r.lit.i64}, 0
	} else {
		y = values[int64](ra)
	}
	buf, out := newFixed[int32](mem, n)
	defer buf.Release()
	if a.op == physical.OpSub {
		for i := range out {
			out[i] = int32(int64(x[i&xm]) - y[i&ym])
		}
	} else {
		for i := range out {
			out[i] = int32(int64(x[i&xm]) + y[i&ym])
		}
	}
	return makeArray(a.typ, n, valid, buf), nil
}

func (a *arithNode) dateDiff(mem memory.Allocator, la, ra arrow.Array, n int, valid *memory.Buffer) (arrow.Array, error) {
	x, xm := dateVals(la, a.l)
	y, ym := dateVals(ra, a.r)
	buf, out := newFixed[int64](mem, n)
	defer buf.Release()
	for i := range out {
		out[i] = int64(x[i&xm]) - int64(y[i&ym])
	}
	return makeArray(a.typ, n, valid, buf), nil
}

func dateVals(arr arrow.Array, o operand) ([]int32, int) {
	if arr == nil {
		return []int32{int32(o.lit.i64)}, 0
	}
	return values[int32](arr), -1
}

// dateInterval is date ± interval as a timestamp: the date's midnight
// with the months added first (clamped to the month's end), then the days
// and the time.
func (a *arithNode) dateInterval(mem memory.Allocator, la, ra arrow.Array, n int, valid *memory.Buffer) (arrow.Array, error) {
	x, xm := dateVals(la, a.l)
	var y []arrow.MonthDayNanoInterval
	ym := -1
	if ra == nil {
		y, ym = []arrow.MonthDayNanoInterval{a.r.lit.iv}, 0
	} else {
		y = values[arrow.MonthDayNanoInterval](ra)
	}
	sign := int64(1)
	if a.op == physical.OpSub {
		sign = -1
	}
	buf, out := newFixed[int64](mem, n)
	defer buf.Release()
	if ym == 0 && y[0].Months == 0 {
		step := sign * (int64(y[0].Days)*temporal.MicrosPerDay + y[0].Nanoseconds/temporal.NanosPerMicro)
		for i := range out {
			out[i] = int64(x[i&xm])*temporal.MicrosPerDay + step
		}
	} else {
		for i := range out {
			iv := y[i&ym]
			d := int64(temporal.AddMonths(x[i&xm], int(sign)*int(iv.Months)))
			out[i] = d*temporal.MicrosPerDay + sign*(int64(iv.Days)*temporal.MicrosPerDay+iv.Nanoseconds/temporal.NanosPerMicro)
		}
	}
	return makeArray(a.typ, n, valid, buf), nil
}

// negNode is arithmetic negation.
type negNode struct {
	child operand
	typ   arrow.DataType
	expr  *physical.Negative
}

func compileNegative(e *physical.Negative) (node, error) {
	t := e.Expr.DataType()
	switch t.ID() {
	case arrow.INT32, arrow.INT64, arrow.FLOAT64, arrow.DECIMAL128, arrow.NULL, arrow.INTERVAL_MONTH_DAY_NANO:
		c, err := compileOperand(e.Expr, nil)
		if err != nil {
			return nil, err
		}
		return &negNode{child: c, typ: t, expr: e}, nil
	case arrow.INT8, arrow.INT16, arrow.FLOAT32:
		w := normalType(t)
		c, err := compileOperand(e.Expr, w)
		if err != nil {
			return nil, err
		}
		return newCast(&negNode{child: c, typ: w, expr: e}, w, t)
	}
	return nil, qerr.NotImplementedf("eval: negation of %s is not supported", t)
}

func (g *negNode) eval(ctx context.Context, mem memory.Allocator, in *input) (arrow.Array, error) {
	arr, err := g.child.eval(ctx, mem, in)
	if err != nil {
		return nil, err
	}
	defer arr.Release()
	n := in.n
	if anyAllNull(arr) {
		return array.MakeArrayOfNull(mem, g.typ, n), nil
	}
	valid := andValidity(mem, n, arr)
	if valid != nil {
		defer valid.Release()
	}
	switch g.typ.ID() {
	case arrow.INT32:
		return negInt[int32](mem, g, arr, n, valid)
	case arrow.INT64:
		return negInt[int64](mem, g, arr, n, valid)
	case arrow.FLOAT64:
		buf, out := newFixed[float64](mem, n)
		defer buf.Release()
		for i, x := range values[float64](arr) {
			out[i] = -x
		}
		return makeArray(g.typ, n, valid, buf), nil
	case arrow.DECIMAL128:
		buf, out := newFixed[decimal128.Num](mem, n)
		defer buf.Release()
		for i, x := range values[decimal128.Num](arr) {
			out[i] = x.Negate()
		}
		return makeArray(g.typ, n, valid, buf), nil
	case arrow.INTERVAL_MONTH_DAY_NANO:
		return negInterval(mem, arr, g.typ, n, valid), nil
	}
	return nil, qerr.Internalf("eval: negation of %s", g.typ)
}

func negInt[T int32 | int64](mem memory.Allocator, g *negNode, arr arrow.Array, n int, valid *memory.Buffer) (arrow.Array, error) {
	buf, out := newFixed[T](mem, n)
	defer buf.Release()
	m := minOf[T]()
	ovf := false
	for i, x := range values[T](arr) {
		out[i] = -x
		ovf = ovf || x == m
	}
	if ovf {
		for i, x := range values[T](arr) {
			if x == m && arr.IsValid(i) {
				return nil, qerr.Execf("eval: integer overflow in %s (-(%d))", g.expr, x)
			}
		}
	}
	return makeArray(g.typ, n, valid, buf), nil
}

// divRound computes x * 10^k / y rounded half away from zero (k may be negative).
func divRound(x, y decimal128.Num, k int32) (decimal128.Num, bool) {
	num := x.BigInt()
	den := y.BigInt()
	if k >= 0 {
		num.Mul(num, pow10[min(k, 38)].BigInt())
	} else {
		den.Mul(den, pow10[min(-k, 38)].BigInt())
	}
	neg := num.Sign()*den.Sign() < 0
	num.Abs(num)
	den.Abs(den)
	q, r := num.QuoRem(num, den, new(big.Int))
	r.Lsh(r, 1)
	if r.Cmp(den) >= 0 {
		q.Add(q, big.NewInt(1))
	}
	if neg {
		q.Neg(q)
	}
	if q.BitLen() > 127 {
		return decimal128.Num{}, false
	}
	return decimal128.FromBigInt(q), true
}
