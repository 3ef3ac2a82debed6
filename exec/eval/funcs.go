package eval

import (
	"context"
	"math"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver/functions"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
	"github.com/quiverdb/quiver/temporal"
)

func toLowerRune(r rune) rune { return unicode.ToLower(r) }

var (
	utf8Type  = arrow.BinaryTypes.String
	int64Type = arrow.PrimitiveTypes.Int64
)

// compileFunc resolves a built-in scalar function to its kernel once: the
// functions registry gives the canonical name, kernels the compiler.
func compileFunc(f *physical.ScalarFunc) (node, error) {
	if f.Name == physical.PairFunc {
		return compilePair(f)
	}
	if f.Name == physical.IntervalKeyFunc {
		return compileIntervalKey(f)
	}
	fn, ok := functions.Lookup(strings.ToLower(f.Name))
	if !ok || fn.Kind != functions.Scalar {
		return nil, qerr.NotImplementedf("eval: unknown function %s", f.Name)
	}
	if _, err := fn.Match(len(f.Args)); err != nil {
		return nil, qerr.Internalf("eval: %v", err)
	}
	k, ok := kernels[fn.Name]
	if !ok {
		return nil, qerr.NotImplementedf("eval: function %s has no kernel", fn.Name)
	}
	return k(f)
}

// kernels maps each scalar function of the registry (but those the SQL
// front end lowers into other expressions) to its compiler; a test checks
// the two lists agree.
var kernels map[string]func(*physical.ScalarFunc) (node, error)

func init() {
	kernels = map[string]func(*physical.ScalarFunc) (node, error){
		"upper": compileStrMap, "lower": compileStrMap, "trim": compileStrMap,
		"btrim": compileTrim, "ltrim": compileTrim, "rtrim": compileTrim,
		"length":    compileLength,
		"concat":    func(f *physical.ScalarFunc) (node, error) { return castConcat(compileConcat(f.Args, false))(f) },
		"substring": compileSubstring,
		"coalesce":  compileCoalesce,
		"ifnull":    compileCoalesce,
		"nullif":    compileNullif,
		"abs":       compileAbs,
		"round":     compileRound,
		"date_part": compileDatePart,
		"try_cast":  compileTryCast,
	}
	for name, k := range moreKernels {
		kernels[name] = k
	}
}

func castConcat(n node, err error) func(f *physical.ScalarFunc) (node, error) {
	return func(f *physical.ScalarFunc) (node, error) {
		if err != nil {
			return nil, err
		}
		return castResult(n, utf8Type, f.Type)
	}
}

func compileStrMap(f *physical.ScalarFunc) (node, error) {
	a, err := compileOperand(f.Args[0], stringTarget(f.Args[0].DataType()))
	if err != nil {
		return nil, err
	}
	return castResult(&strMapNode{fn: strings.ToLower(f.Name), arg: a}, utf8Type, f.Type)
}

func compileLength(f *physical.ScalarFunc) (node, error) {
	a, err := compileOperand(f.Args[0], stringTarget(f.Args[0].DataType()))
	if err != nil {
		return nil, err
	}
	return castResult(&lengthNode{arg: a}, int64Type, f.Type)
}

func compileSubstring(f *physical.ScalarFunc) (node, error) {
	s := &substrNode{}
	var err error
	if s.str, err = compileOperand(f.Args[0], stringTarget(f.Args[0].DataType())); err != nil {
		return nil, err
	}
	if s.start, err = compileOperand(f.Args[1], intTarget(f.Args[1].DataType())); err != nil {
		return nil, err
	}
	if len(f.Args) == 3 {
		s.hasLen = true
		if s.length, err = compileOperand(f.Args[2], intTarget(f.Args[2].DataType())); err != nil {
			return nil, err
		}
	}
	return castResult(s, utf8Type, f.Type)
}

func compileCoalesce(f *physical.ScalarFunc) (node, error) {
	c := &coalesceNode{typ: f.Type}
	used := map[int]bool{}
	physical.ColumnsOf(f, used)
	for k := range used {
		c.used = append(c.used, k)
	}
	for _, a := range f.Args {
		n, err := compileTo(a, f.Type)
		if err != nil {
			return nil, err
		}
		c.args = append(c.args, n)
	}
	return c, nil
}

func compileNullif(f *physical.ScalarFunc) (node, error) {
	v, err := compileTo(f.Args[0], f.Type)
	if err != nil {
		return nil, err
	}
	eq, err := compile(&physical.Binary{Op: physical.OpEq, Left: f.Args[0], Right: f.Args[1], Type: boolType})
	if err != nil {
		return nil, err
	}
	return &nullifNode{val: v, eq: eq, typ: f.Type}, nil
}

func compileDatePart(f *physical.ScalarFunc) (node, error) {
	unit, err := compileOperand(f.Args[0], nil)
	if err != nil {
		return nil, err
	}
	if unit.lit == nil || unit.lit.null || unit.typ.ID() != arrow.STRING {
		return nil, qerr.NotImplementedf("eval: date_part needs a constant unit, got %s", f.Args[0])
	}
	switch f.Args[1].DataType().ID() {
	case arrow.TIMESTAMP, arrow.TIME64, arrow.INTERVAL_MONTH_DAY_NANO:
		return compileTemporalPart(f, unit.lit.s)
	}
	u, ok := datePartUnit(unit.lit.s)
	if !ok {
		return nil, qerr.Execf("date_part: unit '%s' is not a field of a date (year, month, day, quarter, week, dow, isodow, doy, isoyear, decade, century, millennium, epoch, hour, minute, second)", unit.lit.s)
	}
	if t := f.Args[1].DataType().ID(); t != arrow.DATE32 && t != arrow.NULL && t != arrow.STRING {
		return nil, qerr.NotImplementedf("eval: date_part of %s is not supported", f.Args[1].DataType())
	}
	var want arrow.DataType
	if f.Args[1].DataType().ID() == arrow.STRING {
		want = arrow.FixedWidthTypes.Date32
	}
	d, err := compileOperand(f.Args[1], want)
	if err != nil {
		return nil, err
	}
	return castResult(&datePartNode{unit: u, date: d}, int64Type, f.Type)
}

func intTarget(t arrow.DataType) arrow.DataType {
	if t.ID() == arrow.NULL {
		return nil
	}
	return int64Type
}

// compileTo compiles e with a cast to t when its type differs (not for NULL).
func compileTo(e physical.Expr, t arrow.DataType) (node, error) {
	n, err := compile(e)
	if err != nil {
		return nil, err
	}
	if et := e.DataType(); et.ID() != arrow.NULL && !arrow.TypeEqual(et, t) {
		return newCast(n, et, t)
	}
	return n, nil
}

// castResult adapts a kernel's natural result type to the node's declared one.
func castResult(n node, natural, declared arrow.DataType) (node, error) {
	if declared == nil || arrow.TypeEqual(natural, declared) {
		return n, nil
	}
	return newCast(n, natural, declared)
}

// strMapNode is upper/lower/trim/ltrim/rtrim.
type strMapNode struct {
	fn  string
	arg operand
}

func (g *strMapNode) eval(ctx context.Context, mem memory.Allocator, in *input) (arrow.Array, error) {
	a, err := g.arg.eval(ctx, mem, in)
	if err != nil {
		return nil, err
	}
	defer a.Release()
	n := in.n
	if anyAllNull(a) {
		return array.MakeArrayOfNull(mem, utf8Type, n), nil
	}
	s := a.(*array.String)
	offs, data := strParts(s)
	b := array.NewStringBuilder(mem)
	defer b.Release()
	b.Reserve(n)
	b.ReserveData(len(data))
	var scratch []byte
	for i := 0; i < n; i++ {
		if s.IsNull(i) {
			b.AppendNull()
			continue
		}
		v := data[offs[i]:offs[i+1]]
		switch g.fn {
		case "upper":
			scratch = appendUpper(scratch[:0], v)
			v = scratch
		case "lower":
			scratch = appendLower(scratch[:0], v)
			v = scratch
		case "trim", "btrim":
			v = trimBytes(v, true, true)
		case "ltrim":
			v = trimBytes(v, true, false)
		case "rtrim":
			v = trimBytes(v, false, true)
		}
		b.BinaryBuilder.Append(v)
	}
	return b.NewArray(), nil
}

func appendUpper(dst, s []byte) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if 'a' <= c && c <= 'z' {
				c -= 'a' - 'A'
			}
			dst = append(dst, c)
			i++
			continue
		}
		r, w := utf8.DecodeRune(s[i:])
		dst = utf8.AppendRune(dst, unicode.ToUpper(r))
		i += w
	}
	return dst
}

// trimBytes removes spaces (as PostgreSQL's trim without characters).
func trimBytes(v []byte, left, right bool) []byte {
	if left {
		for len(v) > 0 && v[0] == ' ' {
			v = v[1:]
		}
	}
	if right {
		for len(v) > 0 && v[len(v)-1] == ' ' {
			v = v[:len(v)-1]
		}
	}
	return v
}

// lengthNode counts characters (not bytes).
type lengthNode struct{ arg operand }

func (g *lengthNode) eval(ctx context.Context, mem memory.Allocator, in *input) (arrow.Array, error) {
	a, err := g.arg.eval(ctx, mem, in)
	if err != nil {
		return nil, err
	}
	defer a.Release()
	n := in.n
	if anyAllNull(a) {
		return array.MakeArrayOfNull(mem, int64Type, n), nil
	}
	s := a.(*array.String)
	offs, data := strParts(s)
	buf, out := newFixed[int64](mem, n)
	defer buf.Release()
	for i := range out {
		out[i] = int64(utf8.RuneCount(data[offs[i]:offs[i+1]]))
	}
	valid := andValidity(mem, n, a)
	if valid != nil {
		defer valid.Release()
	}
	return makeArray(int64Type, n, valid, buf), nil
}

// concatNode is concat(...) (NULL arguments skipped) or || (NULL in, NULL out).
type concatNode struct {
	args      []operand
	propagate bool
}

func compileConcat(args []physical.Expr, propagate bool) (node, error) {
	c := &concatNode{propagate: propagate}
	for _, a := range args {
		op, err := compileOperand(a, stringTarget(a.DataType()))
		if err != nil {
			return nil, err
		}
		c.args = append(c.args, op)
	}
	return c, nil
}

func (g *concatNode) eval(ctx context.Context, mem memory.Allocator, in *input) (arrow.Array, error) {
	n := in.n
	arrs := make([]*array.String, len(g.args))
	defer func() {
		for _, a := range arrs {
			if a != nil {
				a.Release()
			}
		}
	}()
	total := 0
	for k := range g.args {
		if g.args[k].isNullConst() {
			if g.propagate {
				ops := make([]*operand, len(g.args))
				for j := range g.args {
					ops[j] = &g.args[j]
				}
				if err := drain(ctx, mem, in, ops...); err != nil {
					return nil, err
				}
				return array.MakeArrayOfNull(mem, utf8Type, n), nil
			}
			continue
		}
		a, err := g.args[k].eval(ctx, mem, in)
		if err != nil {
			return nil, err
		}
		arrs[k] = a.(*array.String)
		total += len(arrs[k].ValueBytes())
	}
	b := array.NewStringBuilder(mem)
	defer b.Release()
	b.Reserve(n)
	b.ReserveData(total)
	var scratch []byte
	for i := 0; i < n; i++ {
		scratch = scratch[:0]
		null := false
		for _, a := range arrs {
			if a == nil {
				continue
			}
			if a.IsNull(i) {
				if g.propagate {
					null = true
					break
				}
				continue
			}
			offs, data := strParts(a)
			scratch = append(scratch, data[offs[i]:offs[i+1]]...)
		}
		if null {
			b.AppendNull()
		} else {
			b.BinaryBuilder.Append(scratch)
		}
	}
	return b.NewArray(), nil
}

// substrNode is substring(s, start [, len]) in characters, 1-based, with
// PostgreSQL's rules: positions before 1 count toward the length; a
// negative length is an error.
type substrNode struct {
	str, start, length operand
	hasLen             bool
}

func (g *substrNode) eval(ctx context.Context, mem memory.Allocator, in *input) (arrow.Array, error) {
	n := in.n
	if g.str.isNullConst() || g.start.isNullConst() || (g.hasLen && g.length.isNullConst()) {
		if err := drain(ctx, mem, in, &g.str, &g.start, &g.length); err != nil {
			return nil, err
		}
		return array.MakeArrayOfNull(mem, utf8Type, n), nil
	}
	sa, err := g.str.eval(ctx, mem, in)
	if err != nil {
		return nil, err
	}
	defer sa.Release()
	st, stm, stA, err := int64Operand(ctx, mem, in, &g.start)
	if err != nil {
		return nil, err
	}
	defer releaseIf(stA)
	ln, lnm := []int64{0}, 0
	var lnA arrow.Array
	if g.hasLen {
		if ln, lnm, lnA, err = int64Operand(ctx, mem, in, &g.length); err != nil {
			return nil, err
		}
		defer releaseIf(lnA)
	}
	if anyAllNull(sa, stA, lnA) {
		return array.MakeArrayOfNull(mem, utf8Type, n), nil
	}
	valid := andValidity(mem, n, sa, stA, lnA)
	if valid != nil {
		defer valid.Release()
	}
	var vb []byte
	if valid != nil {
		vb = valid.Bytes()
	}
	s := sa.(*array.String)
	offs, data := strParts(s)
	b := array.NewStringBuilder(mem)
	defer b.Release()
	b.Reserve(n)
	for i := 0; i < n; i++ {
		if vb != nil && !bitutil.BitIsSet(vb, i) {
			b.AppendNull()
			continue
		}
		v := data[offs[i]:offs[i+1]]
		from := st[i&stm] // 1-based, in characters
		to := int64(math.MaxInt64)
		if g.hasLen {
			l := ln[i&lnm]
			if l < 0 {
				return nil, qerr.Execf("eval: substring: negative substring length %d not allowed", l)
			}
			if from > math.MaxInt64-l {
				to = math.MaxInt64
			} else {
				to = from + l // exclusive
			}
		}
		if from < 1 {
			from = 1
		}
		if to <= from {
			b.BinaryBuilder.Append(nil)
			continue
		}
		b.BinaryBuilder.Append(runeSlice(v, from-1, to-1))
	}
	return b.NewArray(), nil
}

// runeSlice returns characters [lo, hi) of v (0-based, clamped).
func runeSlice(v []byte, lo, hi int64) []byte {
	start, pos := len(v), int64(0)
	i := 0
	for i < len(v) && pos < lo {
		_, w := utf8.DecodeRune(v[i:])
		i += w
		pos++
	}
	start = i
	for i < len(v) && pos < hi {
		if v[i] < utf8.RuneSelf {
			i++
		} else {
			_, w := utf8.DecodeRune(v[i:])
			i += w
		}
		pos++
	}
	return v[start:i]
}

// int64Operand evaluates an Int64 operand to values and mask (a one-element
// slice and mask 0 for a constant); arr is the array to release, or nil.
func int64Operand(ctx context.Context, mem memory.Allocator, in *input, o *operand) ([]int64, int, arrow.Array, error) {
	if o.lit != nil {
		return []int64{o.lit.i64}, 0, nil, nil
	}
	a, err := o.n.eval(ctx, mem, in)
	if err != nil {
		return nil, 0, nil, err
	}
	if a.DataType().ID() == arrow.NULL {
		return make([]int64, a.Len()), -1, a, nil
	}
	return values[int64](a), -1, a, nil
}

// coalesceNode returns, per row, the first non-NULL argument. Like
// PostgreSQL it is lazy: argument k runs only on the rows where arguments
// 0..k-1 were all NULL, so a later argument cannot fail on rows it does not
// decide. The winners are merged by position.
type coalesceNode struct {
	args []node
	typ  arrow.DataType
	used []int
}

func (g *coalesceNode) eval(ctx context.Context, mem memory.Allocator, in *input) (arrow.Array, error) {
	n := in.n
	var pieces []arrow.Array
	defer func() {
		for _, p := range pieces {
			p.Release()
		}
	}()
	pos := make([]int32, n)
	base := int32(0)
	cur, owned := in, false
	var rows []int32 // cur's rows in the original batch; nil means identity
	defer func() {
		if owned {
			releaseInput(cur)
		}
	}()
	var rest []int32
	for k, a := range g.args {
		arr, err := a.eval(ctx, mem, cur)
		if err != nil {
			return nil, err
		}
		if k == 0 && (arr.NullN() == 0 || len(g.args) == 1) && arrow.TypeEqual(arr.DataType(), g.typ) {
			return arr, nil // the first argument decides every row
		}
		pieces = append(pieces, arr)
		rest = rest[:0]
		nullType := arr.DataType().ID() == arrow.NULL
		last := k == len(g.args)-1
		for i := 0; i < cur.n; i++ {
			o := int32(i)
			if rows != nil {
				o = rows[i]
			}
			if !last && (nullType || arr.IsNull(i)) {
				rest = append(rest, int32(i))
				continue
			}
			pos[o] = base + int32(i)
		}
		base += int32(arr.Len())
		if len(rest) == 0 || last {
			break
		}
		nxt, err := subInput(ctx, mem, cur, g.used, rest)
		if err != nil {
			return nil, err
		}
		newRows := make([]int32, len(rest))
		for i, r := range rest {
			if rows != nil {
				r = rows[r]
			}
			newRows[i] = r
		}
		if owned {
			releaseInput(cur)
		}
		cur, rows, owned = nxt, newRows, true
	}
	return assemble(ctx, mem, g.typ, pieces, pos)
}

// nullifNode is nullif(a, b): a, except NULL where a = b.
type nullifNode struct {
	val, eq node
	typ     arrow.DataType
}

func (g *nullifNode) eval(ctx context.Context, mem memory.Allocator, in *input) (arrow.Array, error) {
	v, err := g.val.eval(ctx, mem, in)
	if err != nil {
		return nil, err
	}
	defer v.Release()
	eq, err := g.eq.eval(ctx, mem, in)
	if err != nil {
		return nil, err
	}
	defer eq.Release()
	sel := appendTrue(nil, eq)
	if len(sel) == 0 {
		v.Retain()
		return v, nil
	}
	nulls := array.MakeArrayOfNull(mem, g.typ, 1)
	defer nulls.Release()
	pos := make([]int32, in.n)
	for i := range pos {
		pos[i] = int32(i)
	}
	for _, i := range sel {
		pos[i] = int32(in.n)
	}
	return assemble(ctx, mem, g.typ, []arrow.Array{v, nulls}, pos)
}

// absNode is abs over Int32/Int64/Float64/Decimal.
type absNode struct {
	arg  operand
	typ  arrow.DataType
	expr physical.Expr
}

func compileAbs(f *physical.ScalarFunc) (node, error) {
	t := f.Args[0].DataType()
	w := normalType(t)
	switch w.ID() {
	case arrow.INT32, arrow.INT64, arrow.FLOAT64, arrow.DECIMAL128, arrow.NULL:
	default:
		return nil, qerr.NotImplementedf("eval: abs of %s is not supported", t)
	}
	a, err := compileOperand(f.Args[0], w)
	if err != nil {
		return nil, err
	}
	return castResult(&absNode{arg: a, typ: w, expr: f}, w, f.Type)
}

func (g *absNode) eval(ctx context.Context, mem memory.Allocator, in *input) (arrow.Array, error) {
	a, err := g.arg.eval(ctx, mem, in)
	if err != nil {
		return nil, err
	}
	defer a.Release()
	n := in.n
	if anyAllNull(a) {
		return array.MakeArrayOfNull(mem, g.typ, n), nil
	}
	valid := andValidity(mem, n, a)
	if valid != nil {
		defer valid.Release()
	}
	switch g.typ.ID() {
	case arrow.INT32:
		return absInt[int32](mem, a, g, valid)
	case arrow.INT64:
		return absInt[int64](mem, a, g, valid)
	case arrow.FLOAT64:
		buf, out := newFixed[float64](mem, n)
		defer buf.Release()
		for i, x := range values[float64](a) {
			out[i] = math.Abs(x)
		}
		return makeArray(g.typ, n, valid, buf), nil
	case arrow.DECIMAL128:
		buf, out := newFixed[decimal128.Num](mem, n)
		defer buf.Release()
		for i, x := range values[decimal128.Num](a) {
			out[i] = x.Abs()
		}
		return makeArray(g.typ, n, valid, buf), nil
	}
	return nil, qerr.Internalf("eval: abs of %s", g.typ)
}

func absInt[T int32 | int64](mem memory.Allocator, a arrow.Array, g *absNode, valid *memory.Buffer) (arrow.Array, error) {
	buf, out := newFixed[T](mem, a.Len())
	defer buf.Release()
	m := minOf[T]()
	for i, x := range values[T](a) {
		if x < 0 {
			if x == m && a.IsValid(i) {
				return nil, qerr.Execf("eval: integer overflow in %s (abs(%d))", g.expr, x)
			}
			x = -x
		}
		out[i] = x
	}
	return makeArray(g.typ, a.Len(), valid, buf), nil
}

// roundNode is round(x [, digits]): decimals keep their type and scale and
// round half away from zero; floats round like math.Round; integers round
// only for negative digits.
type roundNode struct {
	arg    operand
	digits operand
	hasD   bool
	typ    arrow.DataType // of the argument; of the result too unless a decimal
	out    arrow.DataType // of the result
	expr   physical.Expr
}

func compileRound(f *physical.ScalarFunc) (node, error) {
	t := f.Args[0].DataType()
	w := normalType(t)
	switch w.ID() {
	case arrow.INT32, arrow.INT64, arrow.FLOAT64, arrow.DECIMAL128, arrow.NULL:
	default:
		return nil, qerr.NotImplementedf("eval: round of %s is not supported", t)
	}
	r := &roundNode{typ: w, out: w, expr: f}
	var err error
	if r.arg, err = compileOperand(f.Args[0], w); err != nil {
		return nil, err
	}
	if len(f.Args) == 2 {
		r.hasD = true
		if r.digits, err = compileOperand(f.Args[1], intTarget(f.Args[1].DataType())); err != nil {
			return nil, err
		}
	}
	// A decimal result has its own scale (the digits rounded to, see
	// logical's round type rule): the kernel writes it directly.
	if _, ok := w.(*arrow.Decimal128Type); ok {
		if _, ok := f.Type.(*arrow.Decimal128Type); ok {
			r.out = f.Type
			return r, nil
		}
	}
	return castResult(r, w, f.Type)
}

func (g *roundNode) eval(ctx context.Context, mem memory.Allocator, in *input) (arrow.Array, error) {
	n := in.n
	if g.arg.isNullConst() || (g.hasD && g.digits.isNullConst()) {
		if err := drain(ctx, mem, in, &g.arg, &g.digits); err != nil {
			return nil, err
		}
		return array.MakeArrayOfNull(mem, g.out, n), nil
	}
	a, err := g.arg.eval(ctx, mem, in)
	if err != nil {
		return nil, err
	}
	defer a.Release()
	d, dm := []int64{0}, 0
	var dA arrow.Array
	if g.hasD {
		if d, dm, dA, err = int64Operand(ctx, mem, in, &g.digits); err != nil {
			return nil, err
		}
		defer releaseIf(dA)
	}
	if anyAllNull(a, dA) {
		return array.MakeArrayOfNull(mem, g.out, n), nil
	}
	valid := andValidity(mem, n, a, dA)
	if valid != nil {
		defer valid.Release()
	}
	switch g.typ.ID() {
	case arrow.FLOAT64:
		buf, out := newFixed[float64](mem, n)
		defer buf.Release()
		for i, x := range values[float64](a) {
			k := d[i&dm]
			if k == 0 {
				out[i] = math.Round(x)
				continue
			}
			p := math.Pow10(int(k))
			out[i] = math.Round(x*p) / p
		}
		return makeArray(g.typ, n, valid, buf), nil
	case arrow.DECIMAL128:
		sc := g.typ.(*arrow.Decimal128Type).Scale
		ot := g.out.(*arrow.Decimal128Type)
		buf, out := newFixed[decimal128.Num](mem, n)
		defer buf.Release()
		for i, x := range values[decimal128.Num](a) {
			// r is x rounded to k digits, held at scale rs, then moved
			// to the result's scale (which is at least k).
			k := d[i&dm]
			r, rs := x, sc
			switch drop := int64(sc) - k; {
			case drop > 38:
				r, rs = decimal128.Num{}, ot.Scale
			case drop > 0:
				r, rs = scaleDown(x, int32(drop)), int32(k)
			}
			r, ok := rescale(r, rs, ot.Scale)
			if (!ok || !fitsPrecision(r, ot.Precision)) && a.IsValid(i) {
				return nil, qerr.Execf("eval: decimal overflow in %s", g.expr)
			}
			out[i] = r
		}
		return makeArray(g.out, n, valid, buf), nil
	case arrow.INT32:
		return roundInt[int32](mem, a, d, dm, g, valid)
	case arrow.INT64:
		return roundInt[int64](mem, a, d, dm, g, valid)
	}
	return nil, qerr.Internalf("eval: round of %s", g.typ)
}

func roundInt[T int32 | int64](mem memory.Allocator, a arrow.Array, d []int64, dm int, g *roundNode, valid *memory.Buffer) (arrow.Array, error) {
	buf, out := newFixed[T](mem, a.Len())
	defer buf.Release()
	for i, x := range values[T](a) {
		k := d[i&dm]
		if k >= 0 {
			out[i] = x
			continue
		}
		if k < -18 {
			out[i] = 0
			continue
		}
		p := int64(pow10u[-k])
		v := int64(x)
		q, r := v/p, v%p
		if r >= (p+1)/2 {
			q++
		} else if -r >= (p+1)/2 {
			q--
		}
		res := q * p
		if int64(T(res)) != res && a.IsValid(i) {
			return nil, qerr.Execf("eval: integer overflow in %s", g.expr)
		}
		out[i] = T(res)
	}
	return makeArray(g.typ, a.Len(), valid, buf), nil
}

// datePartNode extracts a field of a date as Int64.
type datePartNode struct {
	unit string
	date operand
}

func (g *datePartNode) eval(ctx context.Context, mem memory.Allocator, in *input) (arrow.Array, error) {
	n := in.n
	a, err := g.date.eval(ctx, mem, in)
	if err != nil {
		return nil, err
	}
	defer a.Release()
	if anyAllNull(a) {
		return array.MakeArrayOfNull(mem, int64Type, n), nil
	}
	buf, out := newFixed[int64](mem, n)
	defer buf.Release()
	v := values[int32](a)
	switch g.unit {
	case "year":
		for i, x := range v {
			y, _, _ := temporal.Civil(x)
			out[i] = int64(y)
		}
	case "zero":
	default:
		for i, x := range v {
			out[i] = datePartOf(g.unit, x)
		}
	}
	valid := andValidity(mem, n, a)
	if valid != nil {
		defer valid.Release()
	}
	return makeArray(int64Type, n, valid, buf), nil
}

// isoWeek is the ISO 8601 week number.
func isoWeek(days int32) int64 {
	wd := (int64(days)+3)%7 + 1 // Monday=1 .. Sunday=7
	if wd <= 0 {
		wd += 7
	}
	thursday := int64(days) - wd + 4
	y, _, _ := temporal.Civil(int32(thursday))
	return (thursday-temporal.DaysFromCivil(y, 1, 1))/7 + 1
}
