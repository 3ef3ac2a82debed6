package eval

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver/physical"
)

// inSet is a precompiled set of constants: a linear scan for short lists,
// a hash set for long ones.
type inSet[T comparable] struct {
	small []T
	m     map[T]struct{}
}

const smallSet = 8

func newInSet[T comparable](vals []T) *inSet[T] {
	s := &inSet[T]{}
	if len(vals) <= smallSet {
		s.small = vals
		return s
	}
	s.m = make(map[T]struct{}, len(vals))
	for _, v := range vals {
		s.m[v] = struct{}{}
	}
	return s
}

func (s *inSet[T]) has(v T) bool {
	if s.m != nil {
		_, ok := s.m[v]
		return ok
	}
	for _, x := range s.small {
		if x == v {
			return true
		}
	}
	return false
}

// inListNode is [NOT] IN over a list of constants.
type inListNode struct {
	probe   operand
	typ     arrow.DataType // the probe's kernel type
	i32     *inSet[int32]
	i64     *inSet[int64]
	f64     *inSet[float64]
	dec     *inSet[decimal128.Num]
	str     *inSet[string]
	hasNull bool // the list holds a NULL: no match gives NULL
	negated bool
	dict    dictTest // a string probe of constants, on file dictionary codes
}

// compileInList builds a set when every item is constant; otherwise it
// rewrites to a chain of Kleene ORs of equalities (NOT for NOT IN).
func compileInList(e *physical.InList) (node, error) {
	pt := normalType(e.Expr.DataType())
	if pt.ID() == arrow.BOOL {
		pt = arrow.PrimitiveTypes.Int32
	}
	consts := true
	for _, it := range e.List {
		if hasColumn(it) {
			consts = false
		}
	}
	var items []litVal
	if consts && pt.ID() != arrow.NULL {
		for _, it := range e.List {
			op, err := compileOperand(it, itemType(it.DataType(), pt))
			if err != nil || op.lit == nil {
				consts = false
				break
			}
			items = append(items, *op.lit)
		}
	}
	// Intervals compare by length (1 day = 24 hours), not by their parts:
	// they take the equality chain.
	if !consts || len(e.List) == 0 || pt.ID() == arrow.NULL || pt.ID() == arrow.INTERVAL_MONTH_DAY_NANO {
		return compileInListOr(e)
	}
	probe, err := compileOperand(e.Expr, pt)
	if err != nil {
		return nil, err
	}
	n := &inListNode{probe: probe, typ: pt, negated: e.Negated}
	ps := int32(0)
	if d, ok := pt.(*arrow.Decimal128Type); ok {
		ps = d.Scale
	}
	var i32 []int32
	var i64 []int64
	var f64 []float64
	var dec []decimal128.Num
	var str []string
	for _, it := range items {
		if it.null {
			n.hasNull = true
			continue
		}
		switch pt.ID() {
		case arrow.INT32, arrow.DATE32:
			i32 = append(i32, int32(it.i64))
		case arrow.INT64, arrow.TIMESTAMP, arrow.TIME64:
			i64 = append(i64, it.i64)
		case arrow.FLOAT64:
			f64 = append(f64, it.f64)
		case arrow.STRING:
			str = append(str, it.s)
		case arrow.DECIMAL128:
			is := it.typ.(*arrow.Decimal128Type).Scale
			if is > ps {
				// an item with more fractional digits than the probe
				// can equal it only if the extra digits are zero
				if v := scaleDown(it.dec, is-ps); decEqualScaled(v, ps, it.dec, is) {
					dec = append(dec, v)
				}
				continue
			}
			if v, ok := rescale(it.dec, is, ps); ok {
				dec = append(dec, v)
			}
		default:
			return compileInListOr(e)
		}
	}
	n.i32, n.i64, n.f64, n.dec, n.str = newInSet(i32), newInSet(i64), newInSet(f64), newInSet(dec), newInSet(str)
	return n, nil
}

// itemType keeps a decimal item's own scale (it is compared exactly) and
// casts anything else to the probe's type.
func itemType(it, probe arrow.DataType) arrow.DataType {
	if probe.ID() == arrow.DECIMAL128 && it.ID() == arrow.DECIMAL128 {
		return it
	}
	if it.ID() == arrow.NULL {
		return nil
	}
	return probe
}

func decEqualScaled(v decimal128.Num, vs int32, orig decimal128.Num, os int32) bool {
	back, ok := rescale(v, vs, os)
	return ok && back == orig
}

func compileInListOr(e *physical.InList) (node, error) {
	if len(e.List) == 0 {
		return compile(&physical.Literal{Type: boolType, Value: e.Negated})
	}
	var acc physical.Expr
	for _, it := range e.List {
		eq := &physical.Binary{Op: physical.OpEq, Left: e.Expr, Right: it, Type: boolType}
		if acc == nil {
			acc = eq
		} else {
			acc = &physical.Binary{Op: physical.OpOr, Left: acc, Right: eq, Type: boolType}
		}
	}
	if e.Negated {
		acc = &physical.Not{Expr: acc}
	}
	return compile(acc)
}

func (g *inListNode) eval(ctx context.Context, mem memory.Allocator, in *input) (arrow.Array, error) {
	n := in.n
	a, err := g.probe.eval(ctx, mem, in)
	if err != nil {
		return nil, err
	}
	defer a.Release()
	if anyAllNull(a) {
		return array.MakeArrayOfNull(mem, boolType, n), nil
	}
	out := newBitmap(mem, n, false)
	defer out.Release()
	bm := out.Bytes()
	switch g.typ.ID() {
	case arrow.INT32, arrow.DATE32:
		probeSet(values[int32](a), g.i32, bm)
	case arrow.INT64, arrow.TIMESTAMP, arrow.TIME64:
		probeSet(values[int64](a), g.i64, bm)
	case arrow.FLOAT64:
		probeSet(values[float64](a), g.f64, bm)
	case arrow.DECIMAL128:
		probeSet(values[decimal128.Num](a), g.dec, bm)
	case arrow.STRING:
		if g.dict.markIn(a, g.str, bm) {
			break
		}
		if !strProbeSet(a, g.str, bm) {
			probeSet(stringView(a), g.str, bm)
		}
	}
	// Validity: a NULL probe is NULL; with a NULL in the list, a row that
	// found no match is NULL too (x IN (1, NULL) is NULL for x = 2).
	valid := andValidity(mem, n, a)
	if g.hasNull {
		if valid == nil {
			valid = newBitmap(mem, n, true)
		}
		vb := valid.Bytes()
		for i := range vb {
			vb[i] &= bm[i]
		}
	}
	if valid != nil {
		defer valid.Release()
	}
	if g.negated {
		for i := range bm {
			bm[i] = ^bm[i]
		}
	}
	return makeArray(boolType, n, valid, out), nil
}

func probeSet[T comparable](v []T, s *inSet[T], bm []byte) {
	if s.m == nil && len(s.small) == 1 {
		x := s.small[0]
		for i, y := range v {
			bm[i>>3] |= b2u(y == x) << (uint(i) & 7)
		}
		return
	}
	for i, y := range v {
		bm[i>>3] |= b2u(s.has(y)) << (uint(i) & 7)
	}
}
