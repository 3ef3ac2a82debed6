package eval

import (
	"context"
	"math"
	"math/rand/v2"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
)

func f64Body(body func(a []rowArg, i int) (float64, bool, error), types ...arrow.DataType) func(*physical.ScalarFunc) (node, error) {
	return func(f *physical.ScalarFunc) (node, error) {
		r, err := newRowFunc(f, tFloat64, types...)
		if err != nil {
			return nil, err
		}
		r.f64 = body
		return r.finish(f)
	}
}

// unary is a float function of one argument; domain, when set, rejects an
// argument with the error it returns.
func unary(fn func(float64) float64, domain func(x float64) error) func(*physical.ScalarFunc) (node, error) {
	return f64Body(func(a []rowArg, i int) (float64, bool, error) {
		x := a[0].float(i)
		if domain != nil {
			if err := domain(x); err != nil {
				return 0, false, err
			}
		}
		return fn(x), true, nil
	}, tFloat64)
}

func positive(name string) func(float64) error {
	return func(x float64) error {
		switch {
		case x == 0:
			return qerr.Execf("%s: cannot take the logarithm of zero", name)
		case x < 0:
			return qerr.Execf("%s: cannot take the logarithm of a negative number", name)
		}
		return nil
	}
}

func unitRange(name string) func(float64) error {
	return func(x float64) error {
		if x < -1 || x > 1 {
			return qerr.Execf("%s: input %g is out of range [-1, 1]", name, x)
		}
		return nil
	}
}

var mathKernels = kernelMap{
	"sqrt": unary(math.Sqrt, func(x float64) error {
		if x < 0 {
			return qerr.Execf("sqrt: cannot take the square root of a negative number")
		}
		return nil
	}),
	"cbrt":  unary(math.Cbrt, nil),
	"exp":   unary(math.Exp, nil),
	"ln":    unary(math.Log, positive("ln")),
	"log10": unary(math.Log10, positive("log10")),
	"log2":  unary(math.Log2, positive("log2")),
	"log": f64Body(func(a []rowArg, i int) (float64, bool, error) {
		if len(a) == 1 {
			x := a[0].float(i)
			if err := positive("log")(x); err != nil {
				return 0, false, err
			}
			return math.Log10(x), true, nil
		}
		b, x := a[0].float(i), a[1].float(i)
		if err := positive("log")(b); err != nil {
			return 0, false, err
		}
		if err := positive("log")(x); err != nil {
			return 0, false, err
		}
		if b == 1 {
			return 0, false, qerr.Execf("log: base 1 has no logarithm")
		}
		return math.Log(x) / math.Log(b), true, nil
	}, tFloat64),
	"power": f64Body(func(a []rowArg, i int) (float64, bool, error) {
		x, y := a[0].float(i), a[1].float(i)
		if x == 0 && y < 0 {
			return 0, false, qerr.Execf("power: zero raised to a negative power is undefined")
		}
		if x < 0 && y != math.Trunc(y) {
			return 0, false, qerr.Execf("power: a negative number raised to a non-integer power is not a real number")
		}
		return math.Pow(x, y), true, nil
	}, tFloat64),
	"sign": i64Body(tInt64, func(a []rowArg, i int) (int64, bool, error) {
		x := a[0].float(i)
		switch {
		case x > 0:
			return 1, true, nil
		case x < 0:
			return -1, true, nil
		}
		return 0, true, nil
	}, tFloat64),
	"degrees": unary(func(x float64) float64 { return x * 180 / math.Pi }, nil),
	"radians": unary(func(x float64) float64 { return x * math.Pi / 180 }, nil),
	"sin":     unary(math.Sin, nil),
	"cos":     unary(math.Cos, nil),
	"tan":     unary(math.Tan, nil),
	"cot":     unary(func(x float64) float64 { return 1 / math.Tan(x) }, nil),
	"asin":    unary(math.Asin, unitRange("asin")),
	"acos":    unary(math.Acos, unitRange("acos")),
	"atan":    unary(math.Atan, nil),
	"atan2": f64Body(func(a []rowArg, i int) (float64, bool, error) {
		return math.Atan2(a[0].float(i), a[1].float(i)), true, nil
	}, tFloat64),
	"pi": func(f *physical.ScalarFunc) (node, error) {
		return compileTo(&physical.Literal{Type: tFloat64, Value: math.Pi}, f.Type)
	},
	"random":   func(f *physical.ScalarFunc) (node, error) { return castResult(randomNode{}, tFloat64, f.Type) },
	"ceil":     compileIntegral,
	"floor":    compileIntegral,
	"trunc":    compileIntegral,
	"greatest": compileExtreme,
	"least":    compileExtreme,
}

// randomNode fills each row with its own uniform number in [0, 1).
type randomNode struct{}

func (randomNode) eval(_ context.Context, mem memory.Allocator, in *input) (arrow.Array, error) {
	buf, out := newFixed[float64](mem, in.n)
	defer buf.Release()
	for i := range out {
		out[i] = rand.Float64()
	}
	return makeArray(tFloat64, in.n, nil, buf), nil
}

// integralNode is ceil, floor and trunc: integers pass through, floats use
// math's, decimals divide exactly by 10^scale into the result's scale 0.
type integralNode struct {
	fn  string
	arg operand
	typ arrow.DataType // the argument's
	out arrow.DataType
}

func compileIntegral(f *physical.ScalarFunc) (node, error) {
	t := normalType(f.Args[0].DataType())
	switch t.ID() {
	case arrow.INT32, arrow.INT64, arrow.UINT64:
		return compileTo(f.Args[0], f.Type)
	case arrow.FLOAT64, arrow.DECIMAL128, arrow.NULL:
	default:
		return nil, qerr.NotImplementedf("eval: %s of %s is not supported", f.Name, t)
	}
	a, err := compileOperand(f.Args[0], t)
	if err != nil {
		return nil, err
	}
	g := &integralNode{fn: f.Name, arg: a, typ: t, out: t}
	if t.ID() == arrow.DECIMAL128 {
		if _, ok := f.Type.(*arrow.Decimal128Type); ok {
			g.out = f.Type
			return g, nil
		}
		g.out = &arrow.Decimal128Type{Precision: 38, Scale: 0}
	}
	return castResult(g, g.out, f.Type)
}

func (g *integralNode) eval(ctx context.Context, mem memory.Allocator, in *input) (arrow.Array, error) {
	n := in.n
	if g.arg.isNullConst() {
		return array.MakeArrayOfNull(mem, g.out, n), nil
	}
	a, err := g.arg.eval(ctx, mem, in)
	if err != nil {
		return nil, err
	}
	defer a.Release()
	if anyAllNull(a) {
		return array.MakeArrayOfNull(mem, g.out, n), nil
	}
	valid := andValidity(mem, n, a)
	if valid != nil {
		defer valid.Release()
	}
	if g.typ.ID() == arrow.FLOAT64 {
		f := math.Trunc
		switch g.fn {
		case "ceil":
			f = math.Ceil
		case "floor":
			f = math.Floor
		}
		buf, out := newFixed[float64](mem, n)
		defer buf.Release()
		for i, x := range values[float64](a) {
			out[i] = f(x)
		}
		return makeArray(g.out, n, valid, buf), nil
	}
	sc := g.typ.(*arrow.Decimal128Type).Scale
	buf, out := newFixed[decimal128.Num](mem, n)
	defer buf.Release()
	for i, x := range values[decimal128.Num](a) {
		q, exact := truncScale(x, sc)
		if !exact {
			switch {
			case g.fn == "ceil" && x.Sign() > 0:
				q = q.Add(decimal128.FromU64(1))
			case g.fn == "floor" && x.Sign() < 0:
				q = q.Sub(decimal128.FromU64(1))
			}
		}
		out[i] = q
	}
	return makeArray(g.out, n, valid, buf), nil
}

// truncScale divides by 10^k toward zero; exact reports a zero remainder.
func truncScale(n decimal128.Num, k int32) (decimal128.Num, bool) {
	if k <= 0 {
		return n, true
	}
	if k > 38 {
		return decimal128.Num{}, n.Sign() == 0
	}
	neg, m := mag(n)
	var rem bool
	if k <= 19 {
		q, r := divU64(m, pow10u[k])
		m, rem = q, r != 0
	} else {
		q1, r1 := divU64(m, pow10u[19])
		q2, r2 := divU64(q1, pow10u[k-19])
		m, rem = q2, r1 != 0 || r2 != 0
	}
	out, _ := fromMag(neg, m)
	return out, !rem
}

// extremeNode is greatest and least: per row the largest (smallest)
// non-NULL argument, NULL only when all are NULL (as PostgreSQL). The
// arguments share one type (the planner's coercion); they are compared by
// the comparison kernels' rules.
type extremeNode struct {
	least bool
	args  []node
	typ   arrow.DataType
}

func compileExtreme(f *physical.ScalarFunc) (node, error) {
	t := normalType(f.Type)
	switch t.ID() {
	case arrow.INT32, arrow.INT64, arrow.FLOAT64, arrow.DATE32, arrow.STRING, arrow.DECIMAL128, arrow.BOOL, arrow.NULL,
		arrow.TIMESTAMP, arrow.TIME64:
	default:
		return nil, qerr.NotImplementedf("eval: %s of %s is not supported", f.Name, f.Type)
	}
	g := &extremeNode{least: f.Name == "least", typ: t}
	for _, a := range f.Args {
		n, err := compileTo(a, t)
		if err != nil {
			return nil, err
		}
		g.args = append(g.args, n)
	}
	return castResult(g, t, f.Type)
}

func (g *extremeNode) eval(ctx context.Context, mem memory.Allocator, in *input) (arrow.Array, error) {
	n := in.n
	arrs := make([]arrow.Array, 0, len(g.args))
	defer func() {
		for _, a := range arrs {
			a.Release()
		}
	}()
	for _, a := range g.args {
		x, err := a.eval(ctx, mem, in)
		if err != nil {
			return nil, err
		}
		if x.DataType().ID() == arrow.NULL || x.NullN() == x.Len() {
			x.Release()
			continue
		}
		arrs = append(arrs, x)
	}
	if len(arrs) == 0 || g.typ.ID() == arrow.NULL {
		return array.MakeArrayOfNull(mem, g.typ, n), nil
	}
	// best[i] is the index of the argument holding row i's answer so far
	// (-1: none yet); the winners are then gathered by position.
	best := make([]int32, n)
	for i := range best {
		best[i] = -1
	}
	for k, a := range arrs {
		var better func(i int, j int32) bool // row i of a beats row i of arrs[j]
		switch x := a.(type) {
		case *array.Int64:
			better = cmpFixed(x.Int64Values(), arrs, g.least)
		case *array.Int32:
			better = cmpFixed(x.Int32Values(), arrs, g.least)
		case *array.Float64:
			better = cmpFixed(x.Float64Values(), arrs, g.least)
		case *array.Date32:
			better = cmpFixed(values[int32](x), arrs, g.least)
		case *array.Timestamp, *array.Time64: // microseconds
			better = cmpFixed(values[int64](x), arrs, g.least)
		case *array.String:
			better = func(i int, j int32) bool {
				o := arrs[j].(*array.String)
				c := compareStrings(x.Value(i), o.Value(i))
				return (c > 0) != g.least && c != 0
			}
		case *array.Decimal128:
			better = func(i int, j int32) bool {
				o := arrs[j].(*array.Decimal128)
				c := x.Value(i).Cmp(o.Value(i))
				return (c > 0) != g.least && c != 0
			}
		case *array.Boolean:
			better = func(i int, j int32) bool {
				o := arrs[j].(*array.Boolean)
				v, w := x.Value(i), o.Value(i)
				return v != w && v != g.least
			}
		default:
			return nil, qerr.Internalf("eval: greatest/least of %s", a.DataType())
		}
		for i := 0; i < n; i++ {
			if a.IsNull(i) {
				continue
			}
			if best[i] < 0 || better(i, best[i]) {
				best[i] = int32(k)
			}
		}
	}
	// Positions into the concatenation of the arguments (nulls: none won).
	nulls := array.MakeArrayOfNull(mem, g.typ, 1)
	defer nulls.Release()
	pieces := append(append([]arrow.Array(nil), arrs...), nulls)
	pos := make([]int32, n)
	for i, b := range best {
		if b < 0 {
			pos[i] = int32(len(arrs) * n)
			continue
		}
		pos[i] = b*int32(n) + int32(i)
	}
	return assemble(ctx, mem, g.typ, pieces, pos)
}

func cmpFixed[T int32 | int64 | float64](v []T, arrs []arrow.Array, least bool) func(i int, j int32) bool {
	return func(i int, j int32) bool {
		o := values[T](arrs[j])
		if least {
			return v[i] < o[i]
		}
		return v[i] > o[i]
	}
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
