package eval

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
)

// rowFunc is the kernel shape of most library functions: every argument is
// evaluated once per batch to Utf8, Int64, Float64 or Date32 (or stays a
// constant), NULL in any argument gives NULL, and a typed body computes each
// remaining row from the arguments read in place. The body is a plain Go
// function of the row index: no boxing and no allocation per row (string
// results are appended into the builder's one growing buffer).
type rowFunc struct {
	name string
	args []operand
	out  arrow.DataType // Utf8, Int64, Float64, Boolean, Interval, or Date32, Timestamp, Time (from the i64 body)
	str  func(a []rowArg, i int, dst []byte) ([]byte, bool, error)
	i64  func(a []rowArg, i int) (int64, bool, error)
	f64  func(a []rowArg, i int) (float64, bool, error)
	iv   func(a []rowArg, i int) (arrow.MonthDayNanoInterval, bool, error)
	b    func(a []rowArg, i int) (bool, bool, error)
	// keepNull: the body sees NULL rows too (rowArg.null tells them) and
	// decides itself (concat_ws skips NULL arguments).
	keepNull bool
	// makeStr and makeB, when set, make the body afresh for each eval
	// call: a body with scratch state (the regexp kernels' cache of the
	// last pattern) keeps it in the call, as the Evaluator may run in many
	// partitions at once.
	makeStr func() func(a []rowArg, i int, dst []byte) ([]byte, bool, error)
	makeB   func() func(a []rowArg, i int) (bool, bool, error)
	makeI64 func() func(a []rowArg, i int) (int64, bool, error)
}

// rowArg is one argument of a rowFunc for one batch: a column's values, or a
// constant's, read through mask m (-1 for a column, 0 for a constant, whose
// one value every row reads).
type rowArg struct {
	m     int
	offs  []int32 // Utf8
	data  []byte
	i64   []int64 // Int64, Timestamp and Time64 (microseconds)
	f64   []float64
	i32   []int32 // Date32
	valid []byte  // nil: no NULLs
	voff  int
	cnull bool // a NULL constant
}

func (a *rowArg) str(i int) []byte {
	j := i & a.m
	return a.data[a.offs[j]:a.offs[j+1]]
}
func (a *rowArg) int(i int) int64     { return a.i64[i&a.m] }
func (a *rowArg) float(i int) float64 { return a.f64[i&a.m] }
func (a *rowArg) date(i int) int32    { return a.i32[i&a.m] }
func (a *rowArg) null(i int) bool {
	return a.cnull || (a.valid != nil && !bitutil.BitIsSet(a.valid, a.voff+i))
}

// argTypes are the argument types a rowFunc reads.
var (
	tUtf8    = arrow.BinaryTypes.String
	tInt64   = arrow.PrimitiveTypes.Int64
	tFloat64 = arrow.PrimitiveTypes.Float64
	tDate32  = arrow.FixedWidthTypes.Date32
)

// newRowFunc compiles f's arguments to the given types (one per argument;
// the last repeats for variadic functions).
func newRowFunc(f *physical.ScalarFunc, out arrow.DataType, types ...arrow.DataType) (*rowFunc, error) {
	r := &rowFunc{name: f.Name, out: out}
	for i, a := range f.Args {
		t := types[min(i, len(types)-1)]
		want := t
		if a.DataType().ID() == arrow.NULL {
			want = nil
		}
		op, err := compileOperand(a, want)
		if err != nil {
			return nil, err
		}
		r.args = append(r.args, op)
	}
	return r, nil
}

// finish adapts the kernel's natural type to the node's declared one.
func (r *rowFunc) finish(f *physical.ScalarFunc) (node, error) {
	return castResult(r, r.out, f.Type)
}

func (r *rowFunc) eval(ctx context.Context, mem memory.Allocator, in *input) (arrow.Array, error) {
	n := in.n
	ops := make([]*operand, len(r.args))
	for k := range r.args {
		ops[k] = &r.args[k]
	}
	if !r.keepNull {
		for k := range r.args {
			if r.args[k].isNullConst() {
				if err := drain(ctx, mem, in, ops...); err != nil {
					return nil, err
				}
				return array.MakeArrayOfNull(mem, r.out, n), nil
			}
		}
	}
	args := make([]rowArg, len(r.args))
	arrs := make([]arrow.Array, 0, len(r.args))
	defer func() {
		for _, a := range arrs {
			a.Release()
		}
	}()
	for k := range r.args {
		o := &r.args[k]
		ra := &args[k]
		if o.isNullConst() {
			ra.cnull = true
			ra.offs = []int32{0, 0}
			ra.i64, ra.f64, ra.i32 = []int64{0}, []float64{0}, []int32{0}
			continue
		}
		if o.lit != nil {
			ra.m = 0
			switch o.typ.ID() {
			case arrow.STRING:
				ra.offs, ra.data = []int32{0, int32(len(o.lit.s))}, []byte(o.lit.s)
			case arrow.INT64, arrow.TIMESTAMP, arrow.TIME64:
				ra.i64 = []int64{o.lit.i64}
			case arrow.FLOAT64:
				ra.f64 = []float64{o.lit.f64}
			case arrow.DATE32:
				ra.i32 = []int32{int32(o.lit.i64)}
			default:
				return nil, qerr.Internalf("eval: %s: constant argument of type %s", r.name, o.typ)
			}
			continue
		}
		a, err := o.n.eval(ctx, mem, in)
		if err != nil {
			return nil, err
		}
		arrs = append(arrs, a)
		ra.m = -1
		switch a := a.(type) {
		case *array.String:
			ra.offs, ra.data = strParts(a)
		case *array.Int64:
			ra.i64 = a.Int64Values()
		case *array.Timestamp, *array.Time64: // microseconds
			ra.i64 = values[int64](a)
		case *array.Float64:
			ra.f64 = a.Float64Values()
		case *array.Date32:
			ra.i32 = values[int32](a)
		case *array.Null:
			ra.cnull = true
			ra.m = 0
			ra.offs = []int32{0, 0}
			ra.i64, ra.f64, ra.i32 = []int64{0}, []float64{0}, []int32{0}
			continue
		default:
			return nil, qerr.Internalf("eval: %s: argument of type %s", r.name, a.DataType())
		}
		ra.valid, ra.voff = validityBits(a)
	}
	var inValid []byte
	if !r.keepNull {
		for _, a := range arrs {
			if a.DataType().ID() == arrow.NULL || (a.Len() > 0 && a.NullN() == a.Len()) {
				return array.MakeArrayOfNull(mem, r.out, n), nil
			}
		}
		if v := andValidity(mem, n, arrs...); v != nil {
			defer v.Release()
			inValid = v.Bytes()
		}
	}
	skip := func(i int) bool { return inValid != nil && !bitutil.BitIsSet(inValid, i) }
	strFn, bFn := r.str, r.b
	if r.makeStr != nil {
		strFn = r.makeStr()
	}
	if r.makeB != nil {
		bFn = r.makeB()
	}
	if strFn != nil {
		b := array.NewStringBuilder(mem)
		defer b.Release()
		b.Reserve(n)
		var scratch []byte
		for i := 0; i < n; i++ {
			if skip(i) {
				b.AppendNull()
				continue
			}
			v, ok, err := strFn(args, i, scratch[:0])
			if err != nil {
				return nil, err
			}
			if !ok {
				b.AppendNull()
				continue
			}
			b.BinaryBuilder.Append(v)
			scratch = v
		}
		return b.NewArray(), nil
	}
	valid := newBitmap(mem, n, true)
	defer valid.Release()
	vb := valid.Bytes()
	nulls := 0
	mark := func(i int) { bitutil.ClearBit(vb, i); nulls++ }
	var buf *memory.Buffer
	var err error
	i64Fn := r.i64
	if r.makeI64 != nil {
		i64Fn = r.makeI64()
	}
	switch {
	case i64Fn != nil && r.out.ID() == arrow.DATE32:
		var out []int32
		buf, out = newFixed[int32](mem, n)
		err = fillRows(out, skip, mark, func(i int) (int64, bool, error) { return i64Fn(args, i) }, func(v int64) int32 { return int32(v) })
	case i64Fn != nil:
		var out []int64
		buf, out = newFixed[int64](mem, n)
		err = fillRows(out, skip, mark, func(i int) (int64, bool, error) { return i64Fn(args, i) }, func(v int64) int64 { return v })
	case r.iv != nil:
		var out []arrow.MonthDayNanoInterval
		buf, out = newFixed[arrow.MonthDayNanoInterval](mem, n)
		err = fillRows(out, skip, mark, func(i int) (arrow.MonthDayNanoInterval, bool, error) { return r.iv(args, i) }, func(v arrow.MonthDayNanoInterval) arrow.MonthDayNanoInterval { return v })
	case r.f64 != nil:
		var out []float64
		buf, out = newFixed[float64](mem, n)
		err = fillRows(out, skip, mark, func(i int) (float64, bool, error) { return r.f64(args, i) }, func(v float64) float64 { return v })
	case bFn != nil:
		buf = newBitmap(mem, n, false)
		ob := buf.Bytes()
		for i := 0; i < n; i++ {
			if skip(i) {
				mark(i)
				continue
			}
			v, ok, ferr := bFn(args, i)
			if ferr != nil {
				err = ferr
				break
			}
			if !ok {
				mark(i)
			}
			if v {
				bitutil.SetBit(ob, i)
			}
		}
	default:
		return nil, qerr.Internalf("eval: %s has no body", r.name)
	}
	defer buf.Release()
	if err != nil {
		return nil, err
	}
	if nulls == 0 {
		return makeArray(r.out, n, nil, buf), nil
	}
	return makeArray(r.out, n, valid, buf), nil
}

// fillRows sets out[i] to conv of fn(i) for every row i not skipped, and
// marks NULL the rows skipped or for which fn has no value.
func fillRows[V, T any](out []T, skip func(int) bool, mark func(int), fn func(int) (V, bool, error), conv func(V) T) error {
	for i := range out {
		if skip(i) {
			mark(i)
			continue
		}
		v, ok, err := fn(i)
		if err != nil {
			return err
		}
		if !ok {
			mark(i)
		}
		out[i] = conv(v)
	}
	return nil
}
