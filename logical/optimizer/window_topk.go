package optimizer

// window_topk marks a window whose only consumer is a filter bounding one
// of its ranking functions, so that the physical plan keeps only the rows
// the filter can pass of each window partition instead of sorting them all:
//
//	Filter: rk <= 100 AND ...            Filter: rk <= 100 AND ...
//	  Window: rank() OVER (...) AS rk  →   Window: rank() OVER (...) AS rk, topk=rank<=100
//
// It fires when the filter has a conjunct rf <= N, rf < N or rf = N (or the
// same with the sides swapped) where rf is a row_number(), rank() or
// dense_rank() column of the window and N an integer constant, and every
// function of the window is one of those three over the same PARTITION BY
// and ORDER BY: each of them is decided, for a row, by the rows sorting
// before it, so dropping the rows after the bound changes none of the
// values the filter passes. The filter stays.

import (
	"context"
	"math"

	"github.com/quiverdb/quiver/logical"
)

// WindowTopK marks windows bounded by a ranking filter above them.
type WindowTopK struct{}

// Name implements Rule.
func (WindowTopK) Name() string { return "window_topk" }

// Rewrite implements Rule.
func (WindowTopK) Rewrite(ctx context.Context, p logical.Plan) (logical.Plan, bool, error) {
	return transformUp(ctx, p, func(n logical.Plan) (logical.Plan, bool, error) {
		f, ok := n.(*logical.Filter)
		if !ok {
			return n, false, nil
		}
		w, ok := f.Input.(*logical.Window)
		if !ok {
			return n, false, nil
		}
		t, ok := rankBound(f.Predicate, w)
		if !ok || (w.TopK.K > 0 && w.TopK.K <= t.K) {
			return n, false, nil
		}
		nf, err := logical.NewFilter(w.WithTopK(t), f.Predicate)
		if err != nil {
			return nil, false, err
		}
		return nf, true, nil
	})
}

// rankBound returns the tightest bound pred's conjuncts put on a ranking
// function of w, when every function of w is a ranking function over one
// window.
func rankBound(pred logical.Expr, w *logical.Window) (logical.WindowTopK, bool) {
	var first *logical.WindowExpr
	for _, e := range w.List {
		we, ok := logical.StripAlias(e).(*logical.WindowExpr)
		if !ok || !isRanking(we.Func) {
			return logical.WindowTopK{}, false
		}
		if first == nil {
			first = we
		} else if !first.SameWindow(we) {
			return logical.WindowTopK{}, false
		}
	}
	width := w.Input.Schema().Len()
	var best logical.WindowTopK
	for _, c := range logical.SplitAnd(pred) {
		b, ok := c.(*logical.Binary)
		if !ok {
			continue
		}
		op, col, lit := b.Op, b.Left, b.Right
		if _, isCol := col.(*logical.Column); !isCol {
			op, col, lit = op.Swap(), b.Right, b.Left
		}
		cc, ok := col.(*logical.Column)
		if !ok {
			continue
		}
		v, ok := logical.IntConst(lit)
		if !ok {
			continue
		}
		var k int64
		switch op {
		case logical.OpLtEq, logical.OpEq:
			k = v
		case logical.OpLt:
			if v == math.MinInt64 {
				continue
			}
			k = v - 1
		default:
			continue
		}
		if k < 1 {
			continue
		}
		i, err := w.Schema().IndexOf(cc.Qualifier, cc.Name)
		if err != nil || i < width {
			continue
		}
		we := logical.StripAlias(w.List[i-width]).(*logical.WindowExpr)
		if best.K == 0 || k < best.K {
			best = logical.WindowTopK{Func: we.Func, K: k}
		}
	}
	return best, best.K > 0
}

func isRanking(f logical.WindowFunc) bool {
	return f == logical.WinRowNumber || f == logical.WinRank || f == logical.WinDenseRank
}
