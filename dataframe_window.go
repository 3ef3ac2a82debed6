package quiver

import (
	"math"

	"github.com/quiverdb/quiver/logical"
	"github.com/quiverdb/quiver/qerr"
)

// Frame offsets for WindowSpec.Rows, Range and Groups: negative offsets are
// rows (or peer groups, or key distances) before the current row, positive
// ones after it, 0 is the current row, and these two are the partition's
// ends.
const (
	UnboundedPreceding int64 = math.MinInt64
	UnboundedFollowing int64 = math.MaxInt64
)

// WindowSpec says which rows a window function sees: its partition, their
// order, and the frame. Build one with Window and its methods; like Expr it
// is an immutable value that records a bad argument for the DataFrame
// method that uses it.
type WindowSpec struct {
	partition []Expr
	order     []SortKey
	frame     *logical.WindowFrame
	err       error
}

// Window is an empty window specification: one partition of all rows, in
// no order, with the SQL standard's default frame.
func Window() WindowSpec { return WindowSpec{} }

// PartitionBy splits the rows into partitions by exprs' values.
func (w WindowSpec) PartitionBy(exprs ...Expr) WindowSpec {
	w.partition = append(append([]Expr(nil), w.partition...), exprs...)
	return w
}

// OrderBy orders each partition's rows by keys.
func (w WindowSpec) OrderBy(keys ...SortKey) WindowSpec {
	w.order = append(append([]SortKey(nil), w.order...), keys...)
	return w
}

// Rows sets a ROWS frame from start to end rows around the current one:
// Rows(-2, 0) is ROWS BETWEEN 2 PRECEDING AND CURRENT ROW.
func (w WindowSpec) Rows(start, end int64) WindowSpec {
	return w.withFrame(logical.FrameRows, start, end)
}

// Range sets a RANGE frame: rows whose ORDER BY key is within start..end
// of the current row's (in the key's units, days for a DATE); 0 means the
// current row's peers.
func (w WindowSpec) Range(start, end int64) WindowSpec {
	return w.withFrame(logical.FrameRange, start, end)
}

// Groups sets a GROUPS frame: start..end peer groups around the current
// row's.
func (w WindowSpec) Groups(start, end int64) WindowSpec {
	return w.withFrame(logical.FrameGroups, start, end)
}

func (w WindowSpec) withFrame(unit logical.FrameUnit, start, end int64) WindowSpec {
	if start == UnboundedFollowing || end == UnboundedPreceding {
		w.err = qerr.Planf("Window: a frame cannot start at UnboundedFollowing nor end at UnboundedPreceding")
	}
	w.frame = &logical.WindowFrame{Unit: unit, Start: frameBound(start), End: frameBound(end)}
	return w
}

func frameBound(off int64) logical.FrameBound {
	switch {
	case off == UnboundedPreceding:
		return logical.FrameBound{Kind: logical.UnboundedPreceding}
	case off == UnboundedFollowing:
		return logical.FrameBound{Kind: logical.UnboundedFollowing}
	case off < 0:
		return logical.FrameBound{Kind: logical.Preceding, Offset: -off}
	case off > 0:
		return logical.FrameBound{Kind: logical.Following, Offset: off}
	}
	return logical.FrameBound{Kind: logical.CurrentRow}
}

// Over computes x, a window function (RowNumber, Rank, Lag, ...) or an
// aggregate (Sum, Count, Min, Max, Avg, ArrayAgg and StringAgg, with their
// OrderBy), over the window w: one value per row, the rows kept. Use the
// result in Select or WithColumn.
func (x Expr) Over(w WindowSpec) Expr {
	if x.err != nil {
		return x
	}
	if w.err != nil {
		return Expr{err: w.err}
	}
	var win logical.WindowExpr
	switch e := x.e.(type) {
	case *unwindowed:
		win = *e.WindowExpr
	case *logical.WindowExpr:
		return Expr{err: qerr.Planf("Over: %s already has a window", e)}
	case *logical.AggExpr:
		if e.Distinct {
			return Expr{err: qerr.NotImplementedf("Over: %s: DISTINCT aggregates are not supported over a window", e)}
		}
		if e.Filter {
			return Expr{err: qerr.NotImplementedf("Over: %s: FILTER is not supported over a window", e)}
		}
		win = logical.WindowExpr{Func: logical.WinAggregate, Agg: e.Func, Args: e.Args, Order: e.Order}
	default:
		return Expr{err: qerr.Planf("Over: %s is neither a window function nor an aggregate", x.e)}
	}
	for _, p := range w.partition {
		if p.err != nil {
			return p
		}
		win.PartitionBy = append(win.PartitionBy, p.e)
	}
	for _, k := range w.order {
		if k.expr.err != nil {
			return k.expr
		}
		win.OrderBy = append(win.OrderBy, logical.SortKey{Expr: k.expr.e, Asc: k.asc, NullsFirst: k.nullsFirst})
	}
	win.Frame = logical.DefaultFrame(len(win.OrderBy) > 0)
	if w.frame != nil {
		win.Frame = *w.frame
	}
	return Expr{e: &win}
}

// windowFunc is a window-only function awaiting Over; used anywhere else it
// is an error (unwindowed reports it).
func windowFunc(f logical.WindowFunc, args ...Expr) Expr {
	w := &logical.WindowExpr{Func: f}
	for _, a := range args {
		if a.err != nil {
			return a
		}
		w.Args = append(w.Args, a.e)
	}
	return Expr{e: &unwindowed{w}}
}

// unwindowed marks a window function not yet given a window with Over.
type unwindowed struct{ *logical.WindowExpr }

// RowNumber numbers each partition's rows 1, 2, 3, ... in window order.
func RowNumber() Expr { return windowFunc(logical.WinRowNumber) }

// Rank is the row's rank in window order, with gaps after ties.
func Rank() Expr { return windowFunc(logical.WinRank) }

// DenseRank is the row's rank in window order, without gaps.
func DenseRank() Expr { return windowFunc(logical.WinDenseRank) }

// PercentRank is (rank - 1) / (partition rows - 1), 0 for a single row.
func PercentRank() Expr { return windowFunc(logical.WinPercentRank) }

// CumeDist is the fraction of the partition's rows at or before the row's
// peers.
func CumeDist() Expr { return windowFunc(logical.WinCumeDist) }

// Ntile splits each partition into n buckets as equal as can be, numbered
// from 1.
func Ntile(n int64) Expr { return windowFunc(logical.WinNtile, Lit(n)) }

// Lag is x at offset rows before the row in its partition, or def where
// there is none (Lit(nil) for NULL).
func Lag(x Expr, offset int64, def Expr) Expr {
	return windowFunc(logical.WinLag, x, Lit(offset), def)
}

// Lead is x at offset rows after the row in its partition, or def where
// there is none (Lit(nil) for NULL).
func Lead(x Expr, offset int64, def Expr) Expr {
	return windowFunc(logical.WinLead, x, Lit(offset), def)
}

// FirstValue is x at the first row of the frame.
func FirstValue(x Expr) Expr { return windowFunc(logical.WinFirstValue, x) }

// LastValue is x at the last row of the frame.
func LastValue(x Expr) Expr { return windowFunc(logical.WinLastValue, x) }

// NthValue is x at the frame's n-th row (from 1), NULL if it has fewer.
func NthValue(x Expr, n int64) Expr { return windowFunc(logical.WinNthValue, x, Lit(n)) }

// checkWindowed refuses a window function that was never given a window.
func checkWindowed(e logical.Expr) error {
	var bad *unwindowed
	logical.InspectExpr(e, func(x logical.Expr) bool {
		if u, ok := x.(*unwindowed); ok {
			bad = u
		}
		return bad == nil
	})
	if bad != nil {
		return qerr.Planf("window function %s needs a window: call Over(quiver.Window()...)", bad.Name())
	}
	return nil
}
