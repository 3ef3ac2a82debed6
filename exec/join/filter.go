package join

import (
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver/exec/kernel"
	"github.com/quiverdb/quiver/physical"
)

// joinFilter is a join's residual filter compiled over only the pair
// columns it references: evaluating it gathers those columns of each
// candidate pair, not every left and right column (Q21's `l_suppkey <>
// l_suppkey_1` reads two of five).
type joinFilter struct {
	run    kernel.ExprRunner
	cols   []int         // referenced pair columns (left first), ascending
	schema *arrow.Schema // the fields of cols, in order
}

// compileJoinFilter compiles f, whose columns index pairSc, into a
// joinFilter over the columns f references.
func compileJoinFilter(f physical.Expr, pairSc *arrow.Schema) (*joinFilter, error) {
	used := map[int]bool{}
	physical.ColumnsOf(f, used)
	cols := make([]int, 0, len(used))
	for c := range used {
		cols = append(cols, c)
	}
	slices.Sort(cols)
	pos := make(map[int]int, len(cols))
	fields := make([]arrow.Field, len(cols))
	for i, c := range cols {
		pos[c] = i
		fields[i] = pairSc.Field(c)
	}
	remapped, ok := remapColumns(f, pos)
	if !ok {
		// An expression kind this file does not know: evaluate over every column.
		cols = cols[:0]
		for c := range pairSc.NumFields() {
			cols = append(cols, c)
		}
		remapped, fields = f, pairSc.Fields()
	}
	r, err := kernel.CompileExpr(remapped)
	if err != nil {
		return nil, err
	}
	return &joinFilter{run: r, cols: cols, schema: arrow.NewSchema(fields, nil)}, nil
}

// remapColumns returns a copy of e with each column index i replaced by
// pos[i] (every referenced index must be in pos); ok is false for an
// expression kind it does not know.
func remapColumns(e physical.Expr, pos map[int]int) (_ physical.Expr, ok bool) {
	rm := func(x physical.Expr) physical.Expr {
		if !ok || x == nil {
			return x
		}
		y, k := remapColumns(x, pos)
		ok = ok && k
		return y
	}
	ok = true
	switch e := e.(type) {
	case *physical.Column:
		p, found := pos[e.Index]
		if !found {
			return e, false
		}
		return &physical.Column{Index: p, Name: e.Name, Type: e.Type}, true
	case *physical.Literal:
		return e, true
	case *physical.Binary:
		n := *e
		n.Left, n.Right = rm(e.Left), rm(e.Right)
		return &n, ok
	case *physical.Not:
		return &physical.Not{Expr: rm(e.Expr)}, ok
	case *physical.Negative:
		return &physical.Negative{Expr: rm(e.Expr)}, ok
	case *physical.IsNull:
		n := *e
		n.Expr = rm(e.Expr)
		return &n, ok
	case *physical.Cast:
		n := *e
		n.Expr = rm(e.Expr)
		return &n, ok
	case *physical.Case:
		n := *e
		n.Operand, n.Else = rm(e.Operand), rm(e.Else)
		n.Whens = make([]physical.When, len(e.Whens))
		for i, w := range e.Whens {
			n.Whens[i] = physical.When{Cond: rm(w.Cond), Then: rm(w.Then)}
		}
		return &n, ok
	case *physical.Like:
		n := *e
		n.Expr, n.Pattern = rm(e.Expr), rm(e.Pattern)
		return &n, ok
	case *physical.InList:
		n := *e
		n.Expr = rm(e.Expr)
		n.List = make([]physical.Expr, len(e.List))
		for i, x := range e.List {
			n.List[i] = rm(x)
		}
		return &n, ok
	case *physical.ScalarFunc:
		n := *e
		n.Args = make([]physical.Expr, len(e.Args))
		for i, x := range e.Args {
			n.Args[i] = rm(x)
		}
		return &n, ok
	}
	return e, false
}
