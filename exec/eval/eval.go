package eval

import (
	"context"
	"runtime/debug"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver/functions"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
)

// Evaluator evaluates one compiled expression. It is safe for concurrent use
// by many partitions: everything it holds (the node tree, LIKE matchers, IN
// sets) is immutable after Compile, and all scratch state lives in the call.
type Evaluator struct {
	expr physical.Expr
	root node
}

// input is what a node evaluates over: the batch's columns (a sub-batch's
// columns may be nil where the expression does not reference them) and the
// row count. Nodes never retain it.
type input struct {
	cols []arrow.Array
	n    int
}

// node is a compiled expression. eval returns an array of in.n values whose
// single reference moves to the caller.
type node interface {
	eval(ctx context.Context, mem memory.Allocator, in *input) (arrow.Array, error)
}

// Compile prepares e for evaluation: it validates the tree, resolves operand
// types, precompiles LIKE patterns, IN-list sets and function kernels.
func Compile(e physical.Expr) (ev *Evaluator, err error) {
	defer func() {
		if r := recover(); r != nil {
			ev, err = nil, qerr.Internalf("eval: compile %s: panic: %v\n%s", e, r, debug.Stack())
		}
	}()
	if e == nil {
		return nil, qerr.Internalf("eval: compile: nil expression")
	}
	root, err := compile(e)
	if err != nil {
		return nil, err
	}
	return &Evaluator{expr: e, root: root}, nil
}

// Expr returns the expression the evaluator was compiled from.
func (ev *Evaluator) Expr() physical.Expr { return ev.expr }

// Eval evaluates over batch and returns an array of batch.NumRows() values of
// the expression's DataType. The caller owns the result and must Release it.
// Buffers come from mem.
func (ev *Evaluator) Eval(ctx context.Context, mem memory.Allocator, batch arrow.RecordBatch) (out arrow.Array, err error) {
	defer func() {
		if r := recover(); r != nil {
			if out != nil {
				out.Release()
			}
			rethrowLimit(r)
			out, err = nil, qerr.Internalf("eval: %s: panic: %v\n%s", ev.expr, r, debug.Stack())
		}
	}()
	in := &input{cols: batch.Columns(), n: int(batch.NumRows())}
	if in.n == 0 {
		// Nothing to evaluate (and nothing that could fail): kernels may
		// then assume at least one row, where Arrow buffers are non-nil.
		return array.MakeArrayOfNull(mem, ev.expr.DataType(), 0), nil
	}
	out, err = ev.root.eval(ctx, mem, in)
	if err != nil {
		return nil, err
	}
	if out.Len() != in.n {
		n := out.Len()
		out.Release()
		return nil, qerr.Internalf("eval: %s produced %d rows for a batch of %d", ev.expr, n, in.n)
	}
	return out, nil
}

// EvalSelection evaluates a boolean predicate and returns the indices of the
// rows where it is TRUE (not FALSE, not NULL), appended to sel[:0]. The
// returned slice may be sel's backing array grown; the caller keeps it.
func (ev *Evaluator) EvalSelection(ctx context.Context, mem memory.Allocator, batch arrow.RecordBatch, sel []int32) ([]int32, error) {
	if t := ev.expr.DataType(); t.ID() != arrow.BOOL && t.ID() != arrow.NULL {
		return sel[:0], qerr.Internalf("eval: selection over non-boolean expression %s of type %s", ev.expr, t)
	}
	arr, err := ev.Eval(ctx, mem, batch)
	if err != nil {
		return sel[:0], err
	}
	defer arr.Release()
	return appendTrue(sel[:0], arr), nil
}

// rethrowLimit re-panics a memory-limit panic (exec's LimitError, which
// marks itself with ResourcesExhausted): the operator boundary turns it into
// a Resources error. Every other panic in eval is reported as internal.
func rethrowLimit(r any) {
	if _, ok := r.(interface{ ResourcesExhausted() }); ok {
		panic(r)
	}
}

// Columns returns the indices of the batch columns the expression reads,
// in increasing order.
func (ev *Evaluator) Columns() []int {
	used := map[int]bool{}
	physical.ColumnsOf(ev.expr, used)
	out := make([]int, 0, len(used))
	for c := range used {
		out = append(out, c)
	}
	slices.Sort(out)
	return out
}

// Refine evaluates a boolean predicate over n rows of cols (a column the
// predicate does not read may be nil) and clears in mask, a bitmap of at
// least n bits, every row where the predicate is not TRUE (false or NULL).
// It returns how many of the first n bits of mask are still set; the bits
// of mask's last byte past n are unspecified afterwards.
func (ev *Evaluator) Refine(ctx context.Context, mem memory.Allocator, cols []arrow.Array, n int, mask []byte) (count int, err error) {
	defer func() {
		if r := recover(); r != nil {
			rethrowLimit(r)
			count, err = 0, qerr.Internalf("eval: %s: panic: %v\n%s", ev.expr, r, debug.Stack())
		}
	}()
	if t := ev.expr.DataType(); t.ID() != arrow.BOOL && t.ID() != arrow.NULL {
		return 0, qerr.Internalf("eval: selection over non-boolean expression %s of type %s", ev.expr, t)
	}
	if n == 0 {
		return 0, nil
	}
	a, err := ev.root.eval(ctx, mem, &input{cols: cols, n: n})
	if err != nil {
		return 0, err
	}
	defer a.Release()
	if a.Len() != n {
		return 0, qerr.Internalf("eval: %s produced %d rows for a batch of %d", ev.expr, a.Len(), n)
	}
	nb := int(bitutil.BytesForBits(int64(n)))
	if a.DataType().ID() == arrow.NULL {
		clear(mask[:nb])
		return 0, nil
	}
	vals, valid := boolParts(a)
	m := mask[:nb]
	if valid == nil {
		for i := range m {
			m[i] &= vals[i]
		}
	} else {
		for i := range m {
			m[i] &= vals[i] & valid[i]
		}
	}
	return bitutil.CountSetBits(mask, 0, n), nil
}

// ScalarValue evaluates an expression with no column references to a
// one-element array the caller owns.
func (ev *Evaluator) ScalarValue(ctx context.Context, mem memory.Allocator) (out arrow.Array, err error) {
	defer func() {
		if r := recover(); r != nil {
			if out != nil {
				out.Release()
			}
			rethrowLimit(r)
			out, err = nil, qerr.Internalf("eval: %s: panic: %v\n%s", ev.expr, r, debug.Stack())
		}
	}()
	if hasColumn(ev.expr) {
		return nil, qerr.Internalf("eval: scalar value of %s, which references columns", ev.expr)
	}
	return ev.root.eval(ctx, mem, &input{n: 1})
}

// ScalarValue compiles and evaluates a literal-only expression to a
// one-element array the caller owns.
func ScalarValue(ctx context.Context, mem memory.Allocator, e physical.Expr) (arrow.Array, error) {
	ev, err := Compile(e)
	if err != nil {
		return nil, err
	}
	return ev.ScalarValue(ctx, mem)
}

// hasColumn reports whether e depends on its input's rows: a column, or a
// volatile function (random), which must not be folded to one value.
func hasColumn(e physical.Expr) bool {
	if _, ok := e.(*physical.Column); ok {
		return true
	}
	if f, ok := e.(*physical.ScalarFunc); ok {
		if fn, ok := functions.Lookup(f.Name); ok && fn.Volatile {
			return true
		}
	}
	for _, c := range e.Children() {
		if hasColumn(c) {
			return true
		}
	}
	return false
}

// compile turns a physical expression into a node, with one type switch.
func compile(e physical.Expr) (node, error) {
	switch e := e.(type) {
	case *physical.Column:
		if e.Index < 0 {
			return nil, qerr.Internalf("eval: column %s has a negative index", e)
		}
		return &columnNode{idx: e.Index, typ: e.Type, name: e.Name}, nil
	case *physical.Literal:
		lv, err := newLit(e)
		if err != nil {
			return nil, err
		}
		return &literalNode{lit: e, v: lv}, nil
	case *physical.Binary:
		return compileBinary(e)
	case *physical.Not:
		if t := e.Expr.DataType().ID(); t != arrow.BOOL && t != arrow.NULL {
			return nil, qerr.Internalf("eval: NOT of %s", e.Expr.DataType())
		}
		c, err := compile(e.Expr)
		if err != nil {
			return nil, err
		}
		return &notNode{child: c, nullIn: e.Expr.DataType().ID() == arrow.NULL}, nil
	case *physical.Negative:
		return compileNegative(e)
	case *physical.IsNull:
		c, err := compile(e.Expr)
		if err != nil {
			return nil, err
		}
		return &isNullNode{child: c, negated: e.Negated}, nil
	case *physical.Cast:
		c, err := compile(e.Expr)
		if err != nil {
			return nil, err
		}
		return newCast(c, e.Expr.DataType(), e.Type)
	case *physical.Case:
		return compileCase(e)
	case *physical.Like:
		return compileLike(e)
	case *physical.InList:
		return compileInList(e)
	case *physical.ScalarFunc:
		return compileFunc(e)
	case nil:
		return nil, qerr.Internalf("eval: nil expression")
	}
	return nil, qerr.NotImplementedf("eval: expression %T (%s) is not supported", e, e)
}

type columnNode struct {
	idx  int
	typ  arrow.DataType
	name string
}

func (c *columnNode) eval(_ context.Context, _ memory.Allocator, in *input) (arrow.Array, error) {
	if c.idx >= len(in.cols) || in.cols[c.idx] == nil {
		return nil, qerr.Internalf("eval: column %s@%d is not in the batch (%d columns)", c.name, c.idx, len(in.cols))
	}
	a := in.cols[c.idx]
	if !arrow.TypeEqual(a.DataType(), c.typ) && !(a.DataType().ID() == c.typ.ID() && c.typ.ID() != arrow.DECIMAL128) {
		return nil, qerr.Internalf("eval: column %s@%d has type %s, the plan expects %s", c.name, c.idx, a.DataType(), c.typ)
	}
	a.Retain()
	return a, nil
}

type literalNode struct {
	lit *physical.Literal
	v   litVal
}

func (l *literalNode) eval(_ context.Context, mem memory.Allocator, in *input) (arrow.Array, error) {
	return Literal(mem, l.lit, in.n)
}
