package eval

import (
	"context"
	"sort"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
)

// caseNode is CASE. Each WHEN is evaluated only on the rows no earlier WHEN
// took, and each THEN only on the rows that take it, so a branch that would
// fail elsewhere (division by zero, a bad cast) runs only where it applies.
// The branch results are then merged by position.
type caseNode struct {
	conds []node
	thens []node
	els   node // nil: NULL
	typ   arrow.DataType
	used  []int        // columns the expression references, gathered for sub-batches
	fast  []caseBranch // the THENs and the ELSE for the fast path (case_fast.go); nil: none
}

func compileCase(e *physical.Case) (node, error) {
	if len(e.Whens) == 0 {
		return nil, qerr.Internalf("eval: CASE without WHEN")
	}
	c := &caseNode{typ: e.Type}
	used := map[int]bool{}
	physical.ColumnsOf(e, used)
	for k := range used {
		c.used = append(c.used, k)
	}
	sort.Ints(c.used)
	branch := func(x physical.Expr) (node, error) {
		n, err := compile(x)
		if err != nil {
			return nil, err
		}
		if t := x.DataType(); t.ID() != arrow.NULL && !arrow.TypeEqual(t, e.Type) {
			return newCast(n, t, e.Type)
		}
		return n, nil
	}
	for _, w := range e.Whens {
		cond := w.Cond
		if e.Operand != nil {
			cond = &physical.Binary{Op: physical.OpEq, Left: e.Operand, Right: w.Cond, Type: boolType}
		} else if id := cond.DataType().ID(); id != arrow.BOOL && id != arrow.NULL {
			return nil, qerr.Internalf("eval: CASE WHEN condition %s has type %s", cond, cond.DataType())
		}
		cn, err := compile(cond)
		if err != nil {
			return nil, err
		}
		tn, err := branch(w.Then)
		if err != nil {
			return nil, err
		}
		c.conds = append(c.conds, cn)
		c.thens = append(c.thens, tn)
	}
	if e.Else != nil {
		en, err := branch(e.Else)
		if err != nil {
			return nil, err
		}
		c.els = en
	}
	c.compileFast(e)
	return c, nil
}

func (c *caseNode) eval(ctx context.Context, mem memory.Allocator, in *input) (arrow.Array, error) {
	if c.fast != nil && in.n > 0 {
		if out, ok := c.evalFast(ctx, mem, in); ok {
			return out, nil
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	return c.evalExact(ctx, mem, in)
}

// evalExact evaluates each WHEN only on the rows no earlier WHEN took and
// each branch only on its rows.
func (c *caseNode) evalExact(ctx context.Context, mem memory.Allocator, in *input) (out arrow.Array, err error) {
	n := in.n
	var pieces []arrow.Array
	defer func() {
		for _, p := range pieces {
			p.Release()
		}
	}()
	pos := make([]int32, n)
	next := int32(0)
	cur := in        // rows not yet taken
	var rows []int32 // cur's rows in the original batch; nil means identity
	owned := false   // whether cur was gathered here (and must be released)
	defer func() {
		if owned {
			releaseInput(cur)
		}
	}()
	orig := func(k int32) int32 {
		if rows == nil {
			return k
		}
		return rows[k]
	}
	var sel, rest []int32
	for w := range c.conds {
		if cur.n == 0 {
			break
		}
		ca, err := c.conds[w].eval(ctx, mem, cur)
		if err != nil {
			return nil, err
		}
		sel = appendTrue(sel[:0], ca)
		ca.Release()
		if len(sel) == 0 {
			continue
		}
		var th arrow.Array
		if len(sel) == cur.n {
			th, err = c.thens[w].eval(ctx, mem, cur)
		} else {
			var sub *input
			if sub, err = subInput(ctx, mem, cur, c.used, sel); err != nil {
				return nil, err
			}
			th, err = c.thens[w].eval(ctx, mem, sub)
			releaseInput(sub)
		}
		if err != nil {
			return nil, err
		}
		pieces = append(pieces, th)
		for _, k := range sel {
			pos[orig(k)] = next
			next++
		}
		// the rows left for the next WHEN
		rest = complement(rest[:0], sel, cur.n)
		newRows := make([]int32, len(rest))
		for i, k := range rest {
			newRows[i] = orig(k)
		}
		var nxt *input
		if len(rest) > 0 {
			if nxt, err = subInput(ctx, mem, cur, c.used, rest); err != nil {
				return nil, err
			}
		} else {
			nxt = &input{cols: make([]arrow.Array, len(in.cols))}
		}
		if owned {
			releaseInput(cur)
		}
		cur, rows, owned = nxt, newRows, true
	}
	if cur.n > 0 {
		var ea arrow.Array
		if c.els != nil {
			if ea, err = c.els.eval(ctx, mem, cur); err != nil {
				return nil, err
			}
		} else {
			ea = array.MakeArrayOfNull(mem, c.typ, cur.n)
		}
		pieces = append(pieces, ea)
		for k := int32(0); k < int32(cur.n); k++ {
			pos[orig(k)] = next
			next++
		}
	}
	if len(pieces) == 1 && pieces[0].Len() == n && arrow.TypeEqual(pieces[0].DataType(), c.typ) {
		// one branch took every row, in order
		p := pieces[0]
		p.Retain()
		return p, nil
	}
	if len(pieces) == 0 {
		return array.MakeArrayOfNull(mem, c.typ, n), nil
	}
	return assemble(ctx, mem, c.typ, pieces, pos)
}

// complement appends the indices in [0, n) not in sel (ascending) to dst.
func complement(dst, sel []int32, n int) []int32 {
	j := 0
	for i := int32(0); i < int32(n); i++ {
		if j < len(sel) && sel[j] == i {
			j++
			continue
		}
		dst = append(dst, i)
	}
	return dst
}
