package codec

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver/arrowpb"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
	"github.com/quiverdb/quiver/rpc"
)

func encodeWindow(n *physical.Window) (*rpc.PhysicalPlan, error) {
	in, err := encodePlan(n.Input)
	if err != nil {
		return nil, err
	}
	part, err := encodeExprs(n.PartitionBy)
	if err != nil {
		return nil, err
	}
	order, err := encodeSortKeys(n.OrderBy)
	if err != nil {
		return nil, err
	}
	m := &rpc.PhysicalWindow{Input: in, PartitionBy: part, OrderBy: order}
	for _, f := range n.Funcs {
		args, err := encodeExprs(f.Args)
		if err != nil {
			return nil, err
		}
		t, err := arrowpb.EncodeType(f.Type)
		if err != nil {
			return nil, err
		}
		var desc, nullsFirst []bool
		for _, o := range f.Order {
			desc, nullsFirst = append(desc, o.Desc), append(nullsFirst, o.NullsFirst)
		}
		m.Funcs = append(m.Funcs, &rpc.PhysicalWindowFunc{
			Func: int32(f.Func), Agg: int32(f.Agg), Args: args, Type: t, Name: f.Name,
			IgnoreNulls: f.IgnoreNulls, Distinct: f.Distinct, OrderDesc: desc, OrderNullsFirst: nullsFirst,
			Frame: &rpc.WindowFrame{
				Unit:      int32(f.Frame.Unit),
				StartKind: int32(f.Frame.Start.Kind), StartOffset: f.Frame.Start.Offset,
				EndKind: int32(f.Frame.End.Kind), EndOffset: f.Frame.End.Offset,
				StartScale: f.Frame.Start.Scale, StartInterval: encodeFrameInterval(f.Frame.Start),
				EndScale: f.Frame.End.Scale, EndInterval: encodeFrameInterval(f.Frame.End),
			},
		})
	}
	return &rpc.PhysicalPlan{Node: &rpc.PhysicalPlan_Window{Window: m}}, nil
}

func decodeWindow(n *rpc.PhysicalWindow) (physical.Plan, error) {
	if n == nil {
		return nil, qerr.Internalf("codec: empty window node")
	}
	in, err := decodePlan(n.Input)
	if err != nil {
		return nil, err
	}
	w := width(in)
	part, err := decodeExprs(n.PartitionBy, w)
	if err != nil {
		return nil, err
	}
	order, err := decodeSortKeys(n.OrderBy, w)
	if err != nil {
		return nil, err
	}
	out := &physical.Window{Input: in, PartitionBy: part, OrderBy: order}
	for _, fm := range n.Funcs {
		if fm == nil || fm.Frame == nil {
			return nil, qerr.Internalf("codec: missing window function")
		}
		if fm.Func < int32(physical.WinAggregate) || fm.Func > int32(physical.WinNthValue) {
			return nil, qerr.Internalf("codec: unknown window function %d", fm.Func)
		}
		if fm.Agg < int32(physical.AggCount) || fm.Agg > int32(physical.AggLast) {
			return nil, qerr.Internalf("codec: unknown aggregate function %d", fm.Agg)
		}
		if len(fm.OrderDesc) != len(fm.OrderNullsFirst) || len(fm.OrderDesc) > len(fm.Args) {
			return nil, qerr.Internalf("codec: window function with %d sort directions, %d NULL orders and %d arguments", len(fm.OrderDesc), len(fm.OrderNullsFirst), len(fm.Args))
		}
		var aggOrder []physical.AggOrder
		for i, d := range fm.OrderDesc {
			aggOrder = append(aggOrder, physical.AggOrder{Desc: d, NullsFirst: fm.OrderNullsFirst[i]})
		}
		fr := fm.Frame
		if fr.Unit < int32(physical.FrameRows) || fr.Unit > int32(physical.FrameGroups) ||
			fr.StartKind < int32(physical.UnboundedPreceding) || fr.StartKind > int32(physical.UnboundedFollowing) ||
			fr.EndKind < int32(physical.UnboundedPreceding) || fr.EndKind > int32(physical.UnboundedFollowing) ||
			fr.StartOffset < 0 || fr.EndOffset < 0 || fr.StartScale < 0 || fr.EndScale < 0 {
			return nil, qerr.Internalf("codec: bad window frame")
		}
		// DISTINCT counts each value once per partition: only an
		// aggregate with an argument over the whole partition may have it.
		if fm.Distinct && (fm.Func != int32(physical.WinAggregate) || len(fm.Args) == 0 ||
			fr.StartKind != int32(physical.UnboundedPreceding) || fr.EndKind != int32(physical.UnboundedFollowing)) {
			return nil, qerr.Internalf("codec: DISTINCT on window function %d without an argument or over a partial frame", fm.Func)
		}
		args, err := decodeExprs(fm.Args, w)
		if err != nil {
			return nil, err
		}
		t, err := arrowpb.DecodeType(fm.Type)
		if err != nil {
			return nil, err
		}
		out.Funcs = append(out.Funcs, physical.WindowFuncExpr{
			Func: physical.WindowFunc(fm.Func), Agg: physical.AggFunc(fm.Agg), Args: args, Type: t, Name: fm.Name,
			IgnoreNulls: fm.IgnoreNulls, Distinct: fm.Distinct, Order: aggOrder,
			Frame: physical.WindowFrame{
				Unit:  physical.FrameUnit(fr.Unit),
				Start: decodeFrameBound(fr.StartKind, fr.StartOffset, fr.StartScale, fr.StartInterval),
				End:   decodeFrameBound(fr.EndKind, fr.EndOffset, fr.EndScale, fr.EndInterval),
			},
		})
	}
	return out, nil
}

// encodeFrameInterval is b's interval offset, nil when it has none.
func encodeFrameInterval(b physical.FrameBound) *rpc.IntervalValue {
	if !b.IsInterval {
		return nil
	}
	return &rpc.IntervalValue{Months: b.Interval.Months, Days: b.Interval.Days, Nanoseconds: b.Interval.Nanoseconds}
}

func decodeFrameBound(kind int32, off int64, scale int32, iv *rpc.IntervalValue) physical.FrameBound {
	b := physical.FrameBound{Kind: physical.BoundKind(kind), Offset: off, Scale: scale}
	if iv != nil {
		b.IsInterval = true
		b.Interval = arrow.MonthDayNanoInterval{Months: iv.Months, Days: iv.Days, Nanoseconds: iv.Nanoseconds}
	}
	return b
}

// decodePartitionLimit checks a sort's per-partition limit against its
// nkeys sort keys: the partition keys a prefix, K positive, no fetch beside it.
func decodePartitionLimit(m *rpc.PartitionLimit, nkeys int, fetch int64) (*physical.PartitionLimit, error) {
	if m == nil {
		return nil, nil
	}
	mode := physical.TopKMode(m.Mode)
	switch {
	case m.Keys < 0 || int(m.Keys) > nkeys:
		return nil, qerr.Internalf("codec: sort partition limit over %d of %d keys", m.Keys, nkeys)
	case m.K < 1:
		return nil, qerr.Internalf("codec: sort partition limit of %d rows", m.K)
	case mode < physical.TopKRows || mode > physical.TopKDistinct:
		return nil, qerr.Internalf("codec: bad sort partition limit mode %d", m.Mode)
	case fetch >= 0:
		return nil, qerr.Internalf("codec: sort with both a fetch and a partition limit")
	}
	return &physical.PartitionLimit{Keys: int(m.Keys), K: m.K, Mode: mode}, nil
}
