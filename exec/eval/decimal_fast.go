package eval

import (
	"math/bits"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/quiverdb/quiver/physical"
)

// Decimal fast paths. Most decimal data (every TPC-H money column and the
// products of two of them) has unscaled values that fit an int64. For two
// int64 operands the exact sum, difference and product always fit 128 bits,
// so these kernels compute the 128-bit result from the low words alone, with
// no sign/magnitude split and no overflow branch. Whether every value fits
// is learnt in the same pass (an OR over hi ^ signext(lo)); when one does not
// the caller discards the output and runs the general 128-bit kernel, so
// results are identical to it, including its overflow errors.

// fit64Bad returns a value that is zero iff n fits an int64 (its high word
// is the sign extension of its low word).
func fit64Bad(n decimal128.Num) int64 {
	return n.HighBits() ^ int64(n.LowBits())>>63
}

// add64 returns p + q as an exact 128-bit value.
func add64(p, q int64) decimal128.Num {
	lo, c := bits.Add64(uint64(p), uint64(q), 0)
	return decimal128.New(p>>63+q>>63+int64(c), lo)
}

// sub64 returns p - q as an exact 128-bit value.
func sub64(p, q int64) decimal128.Num {
	lo, b := bits.Sub64(uint64(p), uint64(q), 0)
	return decimal128.New(p>>63-q>>63-int64(b), lo)
}

// mul64 returns p * q as an exact 128-bit value (|p*q| <= 2^126).
func mul64(p, q int64) decimal128.Num {
	hi, lo := bits.Mul64(uint64(p), uint64(q))
	return decimal128.New(int64(hi)-(p>>63)&q-(q>>63)&p, lo)
}

// decArith64 computes out = x op y (op is +, - or *) assuming every operand
// value fits an int64; xm / ym are 0 for a one-element scalar operand and -1
// otherwise. It returns false, with out partly written, when some value did
// not fit: the caller must then use the 128-bit kernel. Invalid (NULL) rows
// take part too: their values are whatever the buffer holds, and a NULL row
// whose garbage does not fit merely sends the batch to the general path.
func decArith64(op physical.BinaryOp, x, y []decimal128.Num, xm, ym int, out []decimal128.Num) bool {
	switch {
	case xm == 0 && ym == 0:
		return false // both scalar: not worth a fast path
	case xm == 0:
		return decArithSA(op, x[0], y[:len(out)], out)
	case ym == 0:
		return decArithAS(op, x[:len(out)], y[0], out)
	}
	x, y = x[:len(out)], y[:len(out)]
	var bad int64
	switch op {
	case physical.OpAdd:
		for i := range out {
			p, q := x[i], y[i]
			bad |= fit64Bad(p) | fit64Bad(q)
			out[i] = add64(int64(p.LowBits()), int64(q.LowBits()))
		}
	case physical.OpSub:
		for i := range out {
			p, q := x[i], y[i]
			bad |= fit64Bad(p) | fit64Bad(q)
			out[i] = sub64(int64(p.LowBits()), int64(q.LowBits()))
		}
	case physical.OpMul:
		for i := range out {
			p, q := x[i], y[i]
			bad |= fit64Bad(p) | fit64Bad(q)
			out[i] = mul64(int64(p.LowBits()), int64(q.LowBits()))
		}
	default:
		return false
	}
	return bad == 0
}

// decArithAS is decArith64 for an array x and a scalar s.
func decArithAS(op physical.BinaryOp, x []decimal128.Num, s decimal128.Num, out []decimal128.Num) bool {
	if fit64Bad(s) != 0 {
		return false
	}
	q := int64(s.LowBits())
	var bad int64
	switch op {
	case physical.OpAdd:
		for i, p := range x {
			bad |= fit64Bad(p)
			out[i] = add64(int64(p.LowBits()), q)
		}
	case physical.OpSub:
		for i, p := range x {
			bad |= fit64Bad(p)
			out[i] = sub64(int64(p.LowBits()), q)
		}
	case physical.OpMul:
		for i, p := range x {
			bad |= fit64Bad(p)
			out[i] = mul64(int64(p.LowBits()), q)
		}
	default:
		return false
	}
	return bad == 0
}

// decArithSA is decArith64 for a scalar s and an array y.
func decArithSA(op physical.BinaryOp, s decimal128.Num, y []decimal128.Num, out []decimal128.Num) bool {
	if fit64Bad(s) != 0 {
		return false
	}
	p := int64(s.LowBits())
	var bad int64
	switch op {
	case physical.OpAdd:
		for i, q := range y {
			bad |= fit64Bad(q)
			out[i] = add64(p, int64(q.LowBits()))
		}
	case physical.OpSub:
		for i, q := range y {
			bad |= fit64Bad(q)
			out[i] = sub64(p, int64(q.LowBits()))
		}
	case physical.OpMul:
		for i, q := range y {
			bad |= fit64Bad(q)
			out[i] = mul64(p, int64(q.LowBits()))
		}
	default:
		return false
	}
	return bad == 0
}

// cmpDecAS64 writes x op s into bm (zeroed) when s and every x fit an
// int64, comparing the low words as int64; it returns false otherwise (bm
// then holds garbage and must be cleared before the 128-bit kernel runs).
// op is never OpNotEq.
func cmpDecAS64(op physical.BinaryOp, x []decimal128.Num, s decimal128.Num, bm []byte) bool {
	if fit64Bad(s) != 0 {
		return false
	}
	q := int64(s.LowBits())
	var bad int64
	switch op {
	case physical.OpEq:
		bad = cmpDecEqAS64(x, q, bm)
	case physical.OpLt:
		bad = cmpDecLtAS64(x, q, bm)
	case physical.OpLtEq:
		bad = cmpDecLeAS64(x, q, bm)
	case physical.OpGt:
		bad = cmpDecGtAS64(x, q, bm)
	case physical.OpGtEq:
		bad = cmpDecGeAS64(x, q, bm)
	default:
		return false
	}
	return bad == 0
}

// cmpDecAA64 is cmpDecAS64 for two arrays.
func cmpDecAA64(op physical.BinaryOp, x, y []decimal128.Num, bm []byte) bool {
	var bad int64
	switch op {
	case physical.OpEq:
		bad = cmpDecEqAA64(x, y, bm)
	case physical.OpLt:
		bad = cmpDecLtAA64(x, y, bm)
	case physical.OpLtEq:
		bad = cmpDecLeAA64(x, y, bm)
	case physical.OpGt:
		bad = cmpDecLtAA64(y[:len(x)], x, bm)
	case physical.OpGtEq:
		bad = cmpDecLeAA64(y[:len(x)], x, bm)
	default:
		return false
	}
	return bad == 0
}
