package eval

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
)

// operand is one input of a kernel: either a compiled node evaluated per
// batch, or a constant folded at compile time (a literal, or a column-free
// subexpression such as DATE '1998-12-01' - INTERVAL '90' DAY) that kernels
// take as a scalar without materialising it.
type operand struct {
	n   node    // nil when lit is set
	lit *litVal // the constant, when the operand is constant
	typ arrow.DataType
}

// compileOperand compiles e as an operand of type want (nil: keep e's type),
// inserting a cast when the types differ and folding constants.
func compileOperand(e physical.Expr, want arrow.DataType) (operand, error) {
	n, err := compile(e)
	if err != nil {
		return operand{}, err
	}
	typ := e.DataType()
	if want != nil && !arrow.TypeEqual(typ, want) && typ.ID() != arrow.NULL {
		if n, err = newCast(n, typ, want); err != nil {
			return operand{}, err
		}
		typ = want
	}
	op := operand{n: n, typ: typ}
	if !hasColumn(e) {
		if lv, ok := foldConst(n, typ); ok {
			op.lit = &lv
			op.n = nil
		}
	}
	return op, nil
}

// foldConst evaluates a column-free node once; ok is false if that fails
// (the error is then left to surface at run time, per row).
func foldConst(n node, typ arrow.DataType) (lv litVal, ok bool) {
	if ln, isLit := n.(*literalNode); isLit {
		return ln.v, true
	}
	defer func() {
		if r := recover(); r != nil {
			ok = false
		}
	}()
	mem := memory.DefaultAllocator
	a, err := n.eval(context.Background(), mem, &input{n: 1})
	if err != nil {
		return litVal{}, false
	}
	defer a.Release()
	return litFromArray(a, 0, typ)
}

// litFromArray extracts row i of a as a scalar.
func litFromArray(a arrow.Array, i int, typ arrow.DataType) (litVal, bool) {
	v := litVal{typ: typ}
	if a.IsNull(i) || a.DataType().ID() == arrow.NULL {
		v.null = true
		return v, true
	}
	switch a := a.(type) {
	case *array.Boolean:
		v.b = a.Value(i)
	case *array.Int8:
		v.i64 = int64(a.Value(i))
	case *array.Int16:
		v.i64 = int64(a.Value(i))
	case *array.Int32:
		v.i64 = int64(a.Value(i))
	case *array.Int64:
		v.i64 = a.Value(i)
	case *array.Date32:
		v.i64 = int64(a.Value(i))
	case *array.Float32:
		v.f64 = float64(a.Value(i))
	case *array.Float64:
		v.f64 = a.Value(i)
	case *array.Decimal128:
		v.dec = a.Value(i)
	case *array.String:
		v.s = a.Value(i)
	case *array.LargeString:
		v.s = a.Value(i)
	case *array.Timestamp:
		v.i64 = int64(a.Value(i))
	case *array.Time64:
		v.i64 = int64(a.Value(i))
	case *array.MonthDayNanoInterval:
		v.iv = a.Value(i)
	default:
		return v, false
	}
	return v, true
}

// eval materialises the operand as an array of in.n rows.
func (o *operand) eval(ctx context.Context, mem memory.Allocator, in *input) (arrow.Array, error) {
	if o.lit != nil {
		return broadcast(mem, o.lit, in.n)
	}
	return o.n.eval(ctx, mem, in)
}

// evalOrScalar evaluates a non-constant operand; for a constant it returns nil.
func (o *operand) evalOrScalar(ctx context.Context, mem memory.Allocator, in *input) (arrow.Array, error) {
	if o.lit != nil {
		return nil, nil
	}
	return o.n.eval(ctx, mem, in)
}

// isNullConst reports a constant NULL operand.
func (o *operand) isNullConst() bool {
	return o.typ.ID() == arrow.NULL || (o.lit != nil && o.lit.null)
}

// normalType is the type an input of type t is widened to before a kernel
// runs: the kernels handle Int32, Int64, Float64, Decimal128, Utf8, Date32
// and Boolean; narrower types are cast up.
func normalType(t arrow.DataType) arrow.DataType {
	switch t.ID() {
	case arrow.INT8, arrow.INT16, arrow.UINT8, arrow.UINT16, arrow.UINT32:
		return arrow.PrimitiveTypes.Int64
	case arrow.FLOAT32:
		return arrow.PrimitiveTypes.Float64
	case arrow.LARGE_STRING:
		return arrow.BinaryTypes.String
	}
	return t
}

// numClass orders numeric types by widening: int < decimal < float.
func numClass(t arrow.DataType) int {
	switch t.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64:
		return 1
	case arrow.DECIMAL128:
		return 2
	case arrow.FLOAT32, arrow.FLOAT64:
		return 3
	}
	return 0
}

// decimalOf is the decimal an integer type widens to without loss.
func decimalOf(t arrow.DataType) *arrow.Decimal128Type {
	switch t.ID() {
	case arrow.DECIMAL128:
		return t.(*arrow.Decimal128Type)
	case arrow.INT8:
		return &arrow.Decimal128Type{Precision: 3}
	case arrow.INT16:
		return &arrow.Decimal128Type{Precision: 5}
	case arrow.INT32:
		return &arrow.Decimal128Type{Precision: 10}
	}
	return &arrow.Decimal128Type{Precision: 20}
}

// commonType returns the types l and r are each cast to before a comparison
// (the planner normally guarantees equal types; this keeps the evaluator
// correct when it does not). Decimals keep their own scales.
func commonType(l, r arrow.DataType) (arrow.DataType, arrow.DataType, error) {
	l, r = normalType(l), normalType(r)
	if l.ID() == arrow.NULL || r.ID() == arrow.NULL {
		return l, r, nil
	}
	if arrow.TypeEqual(l, r) {
		return l, r, nil
	}
	cl, cr := numClass(l), numClass(r)
	if cl > 0 && cr > 0 {
		switch max(cl, cr) {
		case 3:
			return arrow.PrimitiveTypes.Float64, arrow.PrimitiveTypes.Float64, nil
		case 2:
			return decimalOf(l), decimalOf(r), nil
		default:
			return arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Int64, nil
		}
	}
	switch {
	case l.ID() == arrow.DATE32 && r.ID() == arrow.STRING:
		return l, l, nil
	case l.ID() == arrow.STRING && r.ID() == arrow.DATE32:
		return r, r, nil
	case l.ID() == arrow.STRING:
		return l, l, nil
	case r.ID() == arrow.STRING:
		return r, r, nil
	}
	return nil, nil, qerr.Internalf("eval: cannot compare %s with %s", l, r)
}

// drain evaluates the non-constant operands for their errors only: when a
// constant NULL makes the result NULL, the other side still runs so that a
// failing row (division by zero) fails the same way it would without the
// shortcut.
func drain(ctx context.Context, mem memory.Allocator, in *input, ops ...*operand) error {
	for _, o := range ops {
		if o == nil || o.lit != nil || o.n == nil {
			continue
		}
		a, err := o.n.eval(ctx, mem, in)
		if err != nil {
			return err
		}
		a.Release()
	}
	return nil
}
