package codec

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver/logical"
	"github.com/quiverdb/quiver/qerr"
	"github.com/quiverdb/quiver/rpc"
)

func encodeFrame(f logical.WindowFrame) *rpc.WindowFrame {
	return &rpc.WindowFrame{
		Unit:      int32(f.Unit),
		StartKind: int32(f.Start.Kind), StartOffset: f.Start.Offset,
		EndKind: int32(f.End.Kind), EndOffset: f.End.Offset,
		StartScale: f.Start.Scale, StartInterval: encodeFrameInterval(f.Start),
		EndScale: f.End.Scale, EndInterval: encodeFrameInterval(f.End),
	}
}

// encodeFrameInterval is b's interval offset, nil when it has none.
func encodeFrameInterval(b logical.FrameBound) *rpc.IntervalValue {
	if !b.IsInterval {
		return nil
	}
	return &rpc.IntervalValue{Months: b.Interval.Months, Days: b.Interval.Days, Nanoseconds: b.Interval.Nanoseconds}
}

func decodeFrameBound(kind int32, off int64, scale int32, iv *rpc.IntervalValue) logical.FrameBound {
	b := logical.FrameBound{Kind: logical.BoundKind(kind), Offset: off, Scale: scale}
	if iv != nil {
		b.IsInterval = true
		b.Interval = arrow.MonthDayNanoInterval{Months: iv.Months, Days: iv.Days, Nanoseconds: iv.Nanoseconds}
	}
	return b
}

func decodeFrame(m *rpc.WindowFrame) (logical.WindowFrame, error) {
	if m == nil {
		return logical.WindowFrame{}, qerr.Internalf("codec: missing window frame")
	}
	if m.Unit < int32(logical.FrameRows) || m.Unit > int32(logical.FrameGroups) ||
		m.StartKind < int32(logical.UnboundedPreceding) || m.StartKind > int32(logical.UnboundedFollowing) ||
		m.EndKind < int32(logical.UnboundedPreceding) || m.EndKind > int32(logical.UnboundedFollowing) {
		return logical.WindowFrame{}, qerr.Internalf("codec: bad window frame")
	}
	return logical.WindowFrame{
		Unit:  logical.FrameUnit(m.Unit),
		Start: decodeFrameBound(m.StartKind, m.StartOffset, m.StartScale, m.StartInterval),
		End:   decodeFrameBound(m.EndKind, m.EndOffset, m.EndScale, m.EndInterval),
	}, nil
}

func encodeWindowExpr(w *logical.WindowExpr) (*rpc.LogicalExpr, error) {
	args, err := encodeExprs(w.Args)
	if err != nil {
		return nil, err
	}
	part, err := encodeExprs(w.PartitionBy)
	if err != nil {
		return nil, err
	}
	order, err := encodeSortKeys(w.OrderBy)
	if err != nil {
		return nil, err
	}
	m := &rpc.LogicalWindowExpr{
		Func: int32(w.Func), Agg: int32(w.Agg), Args: args, PartitionBy: part, OrderBy: order, Frame: encodeFrame(w.Frame),
		IgnoreNulls: w.IgnoreNulls, Distinct: w.Distinct,
	}
	for _, o := range w.Order {
		m.OrderDesc = append(m.OrderDesc, o.Desc)
		m.OrderNullsFirst = append(m.OrderNullsFirst, o.NullsFirst)
	}
	return &rpc.LogicalExpr{Kind: &rpc.LogicalExpr_Window{Window: m}}, nil
}

func decodeWindowExpr(m *rpc.LogicalWindowExpr) (logical.Expr, error) {
	if m == nil {
		return nil, qerr.Internalf("codec: missing window expression")
	}
	if m.Func < int32(logical.WinAggregate) || m.Func > int32(logical.WinNthValue) {
		return nil, qerr.Internalf("codec: unknown window function %d", m.Func)
	}
	if m.Agg < int32(logical.AggCount) || m.Agg > int32(logical.AggLast) {
		return nil, qerr.Internalf("codec: unknown aggregate function %d", m.Agg)
	}
	if len(m.OrderDesc) != len(m.OrderNullsFirst) || len(m.OrderDesc) > len(m.Args) {
		return nil, qerr.Internalf("codec: window function with %d sort directions, %d NULL orders and %d arguments", len(m.OrderDesc), len(m.OrderNullsFirst), len(m.Args))
	}
	var aggOrder []logical.AggOrder
	for i, d := range m.OrderDesc {
		aggOrder = append(aggOrder, logical.AggOrder{Desc: d, NullsFirst: m.OrderNullsFirst[i]})
	}
	args, err := decodeExprs(m.Args)
	if err != nil {
		return nil, err
	}
	part, err := decodeExprs(m.PartitionBy)
	if err != nil {
		return nil, err
	}
	order, err := decodeSortKeys(m.OrderBy)
	if err != nil {
		return nil, err
	}
	frame, err := decodeFrame(m.Frame)
	if err != nil {
		return nil, err
	}
	return &logical.WindowExpr{Func: logical.WindowFunc(m.Func), Agg: logical.AggFunc(m.Agg), Args: args, PartitionBy: part, OrderBy: order, Frame: frame,
		IgnoreNulls: m.IgnoreNulls, Distinct: m.Distinct, Order: aggOrder}, nil
}

func encodeWindow(n *logical.Window) (*rpc.LogicalPlan, error) {
	in, err := encodePlan(n.Input)
	if err != nil {
		return nil, err
	}
	es, err := encodeExprs(n.List)
	if err != nil {
		return nil, err
	}
	return &rpc.LogicalPlan{Node: &rpc.LogicalPlan_Window{Window: &rpc.LogicalWindow{Input: in, Exprs: es, TopK: n.TopK.K, TopKFunc: int32(n.TopK.Func)}}}, nil
}

func decodeWindow(m *rpc.LogicalWindow) (logical.Plan, error) {
	if m == nil {
		return nil, qerr.Internalf("codec: missing window node")
	}
	in, err := decodePlan(m.Input)
	if err != nil {
		return nil, err
	}
	es, err := decodeExprs(m.Exprs)
	if err != nil {
		return nil, err
	}
	w, err := logical.NewWindow(in, es)
	if err != nil || m.TopK == 0 {
		return w, err
	}
	t := logical.WindowTopK{Func: logical.WindowFunc(m.TopKFunc), K: m.TopK}
	switch {
	case m.TopK < 0:
		return nil, qerr.Internalf("codec: window top-k of %d rows", m.TopK)
	case t.Func != logical.WinRowNumber && t.Func != logical.WinRank && t.Func != logical.WinDenseRank:
		return nil, qerr.Internalf("codec: window top-k over function %d", m.TopKFunc)
	}
	return w.WithTopK(t), nil
}
