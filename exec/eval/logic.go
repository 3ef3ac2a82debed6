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

// logicNode is Kleene AND / OR, computed a byte (eight rows) at a time:
//
//	AND: true where both are true; false where either is a valid false
//	OR:  true where either is a valid true; false where both are false
//
// and NULL elsewhere.
type logicNode struct {
	and  bool
	l, r node
}

func compileLogic(e *physical.Binary) (node, error) {
	for _, c := range []physical.Expr{e.Left, e.Right} {
		if id := c.DataType().ID(); id != arrow.BOOL && id != arrow.NULL {
			return nil, qerr.Internalf("eval: %s: %s operand %s has type %s", e, e.Op, c, c.DataType())
		}
	}
	l, err := compile(e.Left)
	if err != nil {
		return nil, err
	}
	r, err := compile(e.Right)
	if err != nil {
		return nil, err
	}
	return &logicNode{and: e.Op == physical.OpAnd, l: l, r: r}, nil
}

func (g *logicNode) eval(ctx context.Context, mem memory.Allocator, in *input) (arrow.Array, error) {
	la, err := g.l.eval(ctx, mem, in)
	if err != nil {
		return nil, err
	}
	defer la.Release()
	ra, err := g.r.eval(ctx, mem, in)
	if err != nil {
		return nil, err
	}
	defer ra.Release()
	n := in.n
	lv, lm := boolParts(la)
	rv, rm := boolParts(ra)
	vals := newBitmap(mem, n, false)
	defer vals.Release()
	ov := vals.Bytes()
	if lm == nil && rm == nil {
		if g.and {
			for i := range ov {
				ov[i] = lv[i] & rv[i]
			}
		} else {
			for i := range ov {
				ov[i] = lv[i] | rv[i]
			}
		}
		return makeArray(boolType, n, nil, vals), nil
	}
	valid := newBitmap(mem, n, false)
	defer valid.Release()
	om := valid.Bytes()
	for i := range ov {
		l, r := lv[i], rv[i]
		lk, rk := byte(0xff), byte(0xff)
		if lm != nil {
			lk = lm[i]
		}
		if rm != nil {
			rk = rm[i]
		}
		lt, lf := l&lk, ^l&lk // known true, known false
		rt, rf := r&rk, ^r&rk
		if g.and {
			t := lt & rt
			f := lf | rf
			ov[i], om[i] = t, t|f
		} else {
			t := lt | rt
			f := lf & rf
			ov[i], om[i] = t, t|f
		}
	}
	return makeArray(boolType, n, valid, vals), nil
}

// notNode is boolean negation (NULL stays NULL).
type notNode struct {
	child  node
	nullIn bool
}

func (g *notNode) eval(ctx context.Context, mem memory.Allocator, in *input) (arrow.Array, error) {
	a, err := g.child.eval(ctx, mem, in)
	if err != nil {
		return nil, err
	}
	defer a.Release()
	n := in.n
	if g.nullIn || a.DataType().ID() == arrow.NULL {
		return array.MakeArrayOfNull(mem, boolType, n), nil
	}
	vals := newBitmap(mem, n, false)
	defer vals.Release()
	d := a.Data()
	bitutil.InvertBitmap(d.Buffers()[1].Bytes(), d.Offset(), n, vals.Bytes(), 0)
	valid := andValidity(mem, n, a)
	if valid != nil {
		defer valid.Release()
	}
	return makeArray(boolType, n, valid, vals), nil
}

// isNullNode is IS [NOT] NULL; its result is never NULL.
type isNullNode struct {
	child   node
	negated bool
}

func (g *isNullNode) eval(ctx context.Context, mem memory.Allocator, in *input) (arrow.Array, error) {
	a, err := g.child.eval(ctx, mem, in)
	if err != nil {
		return nil, err
	}
	defer a.Release()
	n := in.n
	if a.DataType().ID() == arrow.NULL {
		buf := newBitmap(mem, n, !g.negated)
		defer buf.Release()
		return makeArray(boolType, n, nil, buf), nil
	}
	bm, off := validityBits(a)
	if bm == nil {
		buf := newBitmap(mem, n, g.negated)
		defer buf.Release()
		return makeArray(boolType, n, nil, buf), nil
	}
	buf := newBitmap(mem, n, false)
	defer buf.Release()
	if g.negated {
		bitutil.CopyBitmap(bm, off, n, buf.Bytes(), 0)
	} else {
		bitutil.InvertBitmap(bm, off, n, buf.Bytes(), 0)
	}
	return makeArray(boolType, n, nil, buf), nil
}
