package eval

import (
	"context"
	"encoding/binary"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver/physical"
)

// The fast path of CASE: evaluate every WHEN and every (needed) branch
// over the whole batch, pick each row's branch (the first WHEN that is
// TRUE, else ELSE) into a byte per row, and gather the result with one
// typed loop, constants taken as scalars. No sub-batches, no Take, no
// Concatenate.
//
// It evaluates WHENs and branches on rows the CASE's semantics would not
// evaluate them on, which is harmless unless one fails there (a division
// by zero guarded by an earlier WHEN): any error sends the batch down the
// exact path (caseNode.evalExact), which then reports only the errors the
// semantics allow. Errors have no side effects, so this changes no result.

// caseBranch is a THEN or the ELSE as the fast path holds it: a constant
// (lit), or a node evaluated over the batch.
type caseBranch struct {
	n   node
	lit *litVal
}

// caseFastType reports whether the fast path has a gather loop for t.
func caseFastType(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.DATE32, arrow.TIMESTAMP, arrow.TIME64,
		arrow.FLOAT32, arrow.FLOAT64, arrow.DECIMAL128, arrow.STRING:
		return true
	}
	return false
}

// compileFast prepares the fast path, if the result type has one; the
// branches' nodes are those compileCase built (already cast to c.typ).
func (c *caseNode) compileFast(e *physical.Case) {
	if !caseFastType(c.typ) || len(c.conds) >= 255 {
		return
	}
	exprs := make([]physical.Expr, 0, len(e.Whens)+1)
	for _, w := range e.Whens {
		exprs = append(exprs, w.Then)
	}
	exprs = append(exprs, e.Else)
	nodes := append(append([]node(nil), c.thens...), c.els)
	br := make([]caseBranch, len(nodes))
	for i, n := range nodes {
		switch {
		case n == nil || exprs[i] == nil || exprs[i].DataType().ID() == arrow.NULL:
			br[i].lit = &litVal{typ: c.typ, null: true}
		case !hasColumn(exprs[i]):
			if lv, ok := foldConst(n, c.typ); ok {
				br[i].lit = &lv
			} else {
				br[i].n = n
			}
		default:
			br[i].n = n
		}
	}
	c.fast = br
}

// evalFast returns ok == false when the batch must take the exact path.
func (c *caseNode) evalFast(ctx context.Context, mem memory.Allocator, in *input) (out arrow.Array, ok bool) {
	n := in.n
	k := len(c.conds)
	choice := make([]uint8, n)
	for i := range choice {
		choice[i] = uint8(k)
	}
	// Last WHEN first, so the first TRUE one wins.
	for w := k - 1; w >= 0; w-- {
		ca, err := c.conds[w].eval(ctx, mem, in)
		if err != nil {
			return nil, false
		}
		if ca.DataType().ID() == arrow.NULL || ca.NullN() == ca.Len() {
			ca.Release()
			continue
		}
		vals, valid := boolParts(ca)
		markTrue(choice, vals, valid, uint8(w))
		ca.Release()
	}
	var used [256]bool
	for _, ch := range choice {
		used[ch] = true
	}
	arrs := make([]arrow.Array, len(c.fast))
	defer func() {
		for _, a := range arrs {
			if a != nil {
				a.Release()
			}
		}
	}()
	for i, b := range c.fast {
		if b.lit != nil || !used[i] {
			continue
		}
		a, err := b.n.eval(ctx, mem, in)
		if err != nil {
			return nil, false
		}
		arrs[i] = a
		if a.Len() != n || (a.DataType().ID() != arrow.NULL && a.DataType().ID() != c.typ.ID()) {
			return nil, false
		}
		if _, isStr := a.(*array.String); c.typ.ID() == arrow.STRING && a.DataType().ID() != arrow.NULL && !isStr {
			return nil, false
		}
	}
	switch c.typ.ID() {
	case arrow.INT8:
		return gatherCase(mem, c, choice, arrs, func(l *litVal) int8 { return int8(l.i64) }), true
	case arrow.INT16:
		return gatherCase(mem, c, choice, arrs, func(l *litVal) int16 { return int16(l.i64) }), true
	case arrow.INT32, arrow.DATE32:
		return gatherCase(mem, c, choice, arrs, func(l *litVal) int32 { return int32(l.i64) }), true
	case arrow.INT64, arrow.TIMESTAMP, arrow.TIME64:
		return gatherCase(mem, c, choice, arrs, func(l *litVal) int64 { return l.i64 }), true
	case arrow.FLOAT32:
		return gatherCase(mem, c, choice, arrs, func(l *litVal) float32 { return float32(l.f64) }), true
	case arrow.FLOAT64:
		return gatherCase(mem, c, choice, arrs, func(l *litVal) float64 { return l.f64 }), true
	case arrow.DECIMAL128:
		return gatherCase(mem, c, choice, arrs, func(l *litVal) decimal128.Num { return l.dec }), true
	case arrow.STRING:
		return gatherCaseStrings(mem, c, choice, arrs), true
	}
	return nil, false
}

// markTrue sets choice[i] = w where the boolean (vals, valid) is TRUE.
// Within a byte it selects with masks, not branches: conditions such as
// l_returnflag = 'R' are TRUE on scattered rows, which a branch per row
// would mispredict.
func markTrue(choice []uint8, vals, valid []byte, w uint8) {
	n := len(choice)
	for bi, v := range vals {
		if valid != nil {
			v &= valid[bi]
		}
		if v == 0 {
			continue
		}
		base := bi * 8
		if base+8 > n {
			for j := 0; base+j < n; j++ {
				if v&(1<<j) != 0 {
					choice[base+j] = w
				}
			}
			continue
		}
		// All eight rows at once: byteMasks[v] is 0xff in the bytes of the
		// TRUE rows.
		c := choice[base : base+8 : base+8]
		m := byteMasks[v]
		x := binary.LittleEndian.Uint64(c)
		binary.LittleEndian.PutUint64(c, x&^m|uint64(w)*0x0101010101010101&m)
	}
}

// byteMasks[v] has byte j all ones where bit j of v is set.
var byteMasks = func() (t [256]uint64) {
	for v := range t {
		for j := range 8 {
			if v>>j&1 != 0 {
				t[v] |= 0xff << (8 * j)
			}
		}
	}
	return
}()

// caseSrc is one branch's data for a gather loop: row i's value is
// vals[i&mask], where a constant is vals = [v] and mask 0, and a column
// is its values and mask all ones, so that the loop takes no branch on
// the kind of branch (rows pick branches in no predictable order).
type caseSrc[T any] struct {
	null     bool // a NULL constant, or a Null-typed array
	vals     []T
	mask     int
	valid    []byte // nil: no nulls
	validOff int
}

func caseSources[T arrow.FixedWidthType](c *caseNode, arrs []arrow.Array, conv func(*litVal) T) ([]caseSrc[T], bool) {
	srcs := make([]caseSrc[T], len(c.fast))
	mayNull := false
	for i, b := range c.fast {
		s := &srcs[i]
		s.vals = make([]T, 1) // a constant's, or NULL's, one value
		switch {
		case b.lit != nil:
			s.null = b.lit.null
			if !s.null {
				s.vals[0] = conv(b.lit)
			}
		case arrs[i] == nil: // no row takes it
			s.null = true
		case arrs[i].DataType().ID() == arrow.NULL:
			s.null = true
		default:
			s.vals, s.mask = values[T](arrs[i]), -1
			s.valid, s.validOff = validityBits(arrs[i])
		}
		if s.null || s.valid != nil {
			mayNull = true
		}
	}
	return srcs, mayNull
}

// gatherCase builds the fixed-width result: row i from branch choice[i].
func gatherCase[T arrow.FixedWidthType](mem memory.Allocator, c *caseNode, choice []uint8, arrs []arrow.Array, conv func(*litVal) T) arrow.Array {
	n := len(choice)
	srcs, mayNull := caseSources(c, arrs, conv)
	vbuf, out := newFixed[T](mem, n)
	defer vbuf.Release()
	for i, ch := range choice {
		s := &srcs[ch]
		out[i] = s.vals[i&s.mask]
	}
	var valid *memory.Buffer
	if mayNull {
		valid = caseValidity(mem, choice, func(ch uint8) (bool, []byte, int) {
			s := &srcs[ch]
			return s.null, s.valid, s.validOff
		})
		defer valid.Release()
	}
	return makeArray(c.typ, n, valid, vbuf)
}

// caseValidity builds the result's validity: row i is valid when its
// branch is not a NULL constant and is valid at row i.
func caseValidity(mem memory.Allocator, choice []uint8, src func(uint8) (null bool, valid []byte, off int)) *memory.Buffer {
	n := len(choice)
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(int(bitutil.BytesForBits(int64(n))))
	bm := buf.Bytes()
	clear(bm)
	for i, ch := range choice {
		null, valid, off := src(ch)
		ok := !null && (valid == nil || bitutil.BitIsSet(valid, off+i))
		if ok {
			bm[i>>3] |= 1 << (uint(i) & 7)
		}
	}
	return buf
}

// gatherShortConstants builds the result when every branch is a non-NULL
// constant of at most 8 bytes (bands such as '01-10'), or returns nil: each
// row then stores its constant as one 8-byte word that the next row's
// overwrites past the value's end, with no per-row branch or copy call.
func gatherShortConstants[S any](mem memory.Allocator, typ arrow.DataType, choice []uint8, srcs []S, constant func(*S) (string, bool)) arrow.Array {
	var words [256]uint64
	var lens [256]int32
	for i := range srcs {
		v, ok := constant(&srcs[i])
		if !ok || len(v) > 8 {
			return nil
		}
		var buf [8]byte
		copy(buf[:], v)
		words[i], lens[i] = binary.LittleEndian.Uint64(buf[:]), int32(len(v))
	}
	n := len(choice)
	total := 0
	for _, ch := range choice {
		total += int(lens[ch])
	}
	obuf, offs := newFixed[int32](mem, n+1)
	defer obuf.Release()
	dbuf := memory.NewResizableBuffer(mem)
	defer dbuf.Release()
	dbuf.Reserve(total + 8) // slack for the last row's whole word
	dbuf.ResizeNoShrink(total)
	data := dbuf.Buf()
	pos := int32(0)
	offs = offs[:n+1]
	for i, ch := range choice {
		offs[i] = pos
		binary.LittleEndian.PutUint64(data[pos:pos+8], words[ch])
		pos += lens[ch]
	}
	offs[n] = pos
	d := array.NewData(typ, n, []*memory.Buffer{nil, obuf, dbuf}, nil, 0, 0)
	defer d.Release()
	return array.MakeFromData(d)
}

// gatherCaseStrings builds the Utf8 result: row i from branch choice[i].
func gatherCaseStrings(mem memory.Allocator, c *caseNode, choice []uint8, arrs []arrow.Array) arrow.Array {
	n := len(choice)
	type src struct {
		scalar   bool
		null     bool
		s        string
		offs     []int32
		data     []byte
		valid    []byte
		validOff int
	}
	srcs := make([]src, len(c.fast))
	mayNull := false
	for i, b := range c.fast {
		s := &srcs[i]
		switch {
		case b.lit != nil:
			s.scalar, s.null, s.s = true, b.lit.null, b.lit.s
		case arrs[i] == nil || arrs[i].DataType().ID() == arrow.NULL:
			s.scalar, s.null = true, true
		default:
			s.offs, s.data = strParts(arrs[i].(*array.String)) // evalFast checked the type
			s.valid, s.validOff = validityBits(arrs[i])
		}
		if s.null || s.valid != nil {
			mayNull = true
		}
	}
	if out := gatherShortConstants(mem, c.typ, choice, srcs, func(s *src) (string, bool) {
		return s.s, s.scalar && !s.null
	}); out != nil {
		return out
	}
	total := 0
	for i, ch := range choice {
		s := &srcs[ch]
		if s.scalar {
			total += len(s.s)
		} else {
			total += int(s.offs[i+1] - s.offs[i])
		}
	}
	obuf, offs := newFixed[int32](mem, n+1)
	defer obuf.Release()
	dbuf := memory.NewResizableBuffer(mem)
	defer dbuf.Release()
	dbuf.Resize(total)
	data := dbuf.Bytes()
	pos := 0
	for i, ch := range choice {
		offs[i] = int32(pos)
		s := &srcs[ch]
		if s.scalar {
			pos += copy(data[pos:], s.s)
		} else {
			pos += copy(data[pos:], s.data[s.offs[i]:s.offs[i+1]])
		}
	}
	offs[n] = int32(pos)
	var valid *memory.Buffer
	if mayNull {
		valid = caseValidity(mem, choice, func(ch uint8) (bool, []byte, int) {
			s := &srcs[ch]
			return s.null, s.valid, s.validOff
		})
		defer valid.Release()
	}
	nulls := 0
	if valid != nil {
		nulls = array.UnknownNullCount
	}
	d := array.NewData(c.typ, n, []*memory.Buffer{valid, obuf, dbuf}, nil, nulls, 0)
	defer d.Release()
	return array.MakeFromData(d)
}
