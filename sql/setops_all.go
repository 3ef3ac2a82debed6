package sql

import (
	"github.com/quiverdb/quiver/logical"
)

// setOp lowers left INTERSECT|EXCEPT [ALL] right.
func setOp(left, right logical.Plan, except, all bool) (logical.Plan, error) {
	if all {
		return intersectExceptAll(left, right, except)
	}
	return intersectExcept(left, right, except)
}

// Names of the window columns intersectExceptAll filters on.
const (
	setRowNumber  = "__quiver_set_rn"
	setRightCount = "__quiver_set_rc"
)

// intersectExceptAll lowers left INTERSECT ALL right, or left EXCEPT ALL
// right when except, by multiplicity: a row value seen m times on the left
// and n times on the right comes out min(m, n) times (INTERSECT ALL) or
// max(m-n, 0) times (EXCEPT ALL).
//
// Both sides' rows, tagged with their side, meet in one window partitioned
// by every column (NULLs equal, as set operations want) and ordered with
// the right side's rows first. Per row, rc is the partition's count of
// right rows and rn the row's number, so a left row is the (rn-rc)-th left
// copy of its value: INTERSECT ALL keeps the left rows with rn-rc <= rc,
// EXCEPT ALL those with rn-rc > rc. The left rows themselves are what is
// kept, so no step has to re-expand counts into rows, and the window's
// hash partitioning on all columns makes it run distributed like any
// other window.
func intersectExceptAll(left, right logical.Plan, except bool) (logical.Plan, error) {
	what := "INTERSECT ALL"
	if except {
		what = "EXCEPT ALL"
	}
	u, n, err := taggedUnion(left, right, what)
	if err != nil {
		return nil, err
	}
	us := u.Schema()
	part := make([]logical.Expr, n)
	for i := range part {
		part[i] = outCol(us, i)
	}
	order := []logical.SortKey{{Expr: outCol(us, n), Asc: true}}
	whole := logical.WindowFrame{Unit: logical.FrameRows,
		Start: logical.FrameBound{Kind: logical.UnboundedPreceding}, End: logical.FrameBound{Kind: logical.UnboundedFollowing}}
	rn := &logical.WindowExpr{Func: logical.WinRowNumber, PartitionBy: part, OrderBy: order, Frame: logical.DefaultFrame(true)}
	rc := &logical.WindowExpr{Func: logical.WinAggregate, Agg: logical.AggSum, Args: []logical.Expr{outCol(us, n+1)},
		PartitionBy: part, OrderBy: order, Frame: whole}
	win, err := logical.NewWindow(u, []logical.Expr{
		&logical.Alias{Expr: rn, Name: setRowNumber},
		&logical.Alias{Expr: rc, Name: setRightCount},
	})
	if err != nil {
		return nil, err
	}
	ws := win.Schema()
	leftCopy := &logical.Binary{Op: logical.OpSub, Left: outCol(ws, n+2), Right: outCol(ws, n+3)}
	cmp := logical.OpLtEq
	if except {
		cmp = logical.OpGt
	}
	keep := &logical.Binary{Op: logical.OpAnd,
		Left:  &logical.Binary{Op: logical.OpEq, Left: outCol(ws, n), Right: logical.Lit(int64(1))},
		Right: &logical.Binary{Op: cmp, Left: leftCopy, Right: outCol(ws, n+3)},
	}
	f, err := logical.NewFilter(win, keep)
	if err != nil {
		return nil, err
	}
	fs, ls := f.Schema(), left.Schema()
	out := make([]logical.Expr, n)
	for i := range out {
		out[i] = &logical.Alias{Expr: outCol(fs, i), Name: ls.Field(i).Name}
	}
	return logical.NewProjection(f, out)
}
