package codec

import (
	"github.com/quiverdb/quiver/arrowpb"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
	"github.com/quiverdb/quiver/rpc"
	"github.com/quiverdb/quiver/wire"
)

// unchecked is the input width that disables column-index checks (for
// expressions whose input is not known, as in DecodeExpr).
const unchecked = -1

// EncodeExpr encodes one physical expression to bytes.
func EncodeExpr(e physical.Expr) ([]byte, error) {
	m, err := encodeExpr(e)
	if err != nil {
		return nil, err
	}
	return wire.Marshal(m, "expression")
}

// DecodeExpr decodes an expression made by EncodeExpr. Column indices are
// not checked against any input (there is none).
func DecodeExpr(b []byte) (e physical.Expr, err error) {
	defer wire.Recover(&err)
	var m rpc.PhysicalExpr
	if err := wire.Unmarshal(b, &m, "expression"); err != nil {
		return nil, err
	}
	return decodeExpr(&m, unchecked)
}

func encodeExprs(es []physical.Expr) ([]*rpc.PhysicalExpr, error) {
	return wire.Map(es, encodeExpr)
}

// encodeOptExpr encodes e, or nil when e is nil.
func encodeOptExpr(e physical.Expr) (*rpc.PhysicalExpr, error) {
	if e == nil {
		return nil, nil
	}
	return encodeExpr(e)
}

func encodeExpr(e physical.Expr) (*rpc.PhysicalExpr, error) {
	switch e := e.(type) {
	case nil:
		return nil, qerr.Internalf("codec: missing expression")
	case *physical.Column:
		t, err := arrowpb.EncodeType(e.Type)
		if err != nil {
			return nil, err
		}
		return &rpc.PhysicalExpr{Kind: &rpc.PhysicalExpr_Column{Column: &rpc.PhysicalColumn{Index: int32(e.Index), Name: e.Name, Type: t}}}, nil
	case *physical.Literal:
		l, err := arrowpb.EncodeLiteral(e.Type, e.Value)
		if err != nil {
			return nil, err
		}
		return &rpc.PhysicalExpr{Kind: &rpc.PhysicalExpr_Literal{Literal: l}}, nil
	case *physical.Binary:
		l, err := encodeExpr(e.Left)
		if err != nil {
			return nil, err
		}
		r, err := encodeExpr(e.Right)
		if err != nil {
			return nil, err
		}
		t, err := arrowpb.EncodeType(e.Type)
		if err != nil {
			return nil, err
		}
		return &rpc.PhysicalExpr{Kind: &rpc.PhysicalExpr_Binary{Binary: &rpc.PhysicalBinary{Op: int32(e.Op), Left: l, Right: r, Type: t}}}, nil
	case *physical.Not:
		x, err := encodeExpr(e.Expr)
		if err != nil {
			return nil, err
		}
		return &rpc.PhysicalExpr{Kind: &rpc.PhysicalExpr_Not{Not: x}}, nil
	case *physical.Negative:
		x, err := encodeExpr(e.Expr)
		if err != nil {
			return nil, err
		}
		return &rpc.PhysicalExpr{Kind: &rpc.PhysicalExpr_Negative{Negative: x}}, nil
	case *physical.IsNull:
		x, err := encodeExpr(e.Expr)
		if err != nil {
			return nil, err
		}
		return &rpc.PhysicalExpr{Kind: &rpc.PhysicalExpr_IsNull{IsNull: &rpc.PhysicalIsNull{Expr: x, Negated: e.Negated}}}, nil
	case *physical.Cast:
		x, err := encodeExpr(e.Expr)
		if err != nil {
			return nil, err
		}
		t, err := arrowpb.EncodeType(e.Type)
		if err != nil {
			return nil, err
		}
		return &rpc.PhysicalExpr{Kind: &rpc.PhysicalExpr_Cast{Cast: &rpc.PhysicalCast{Expr: x, Type: t}}}, nil
	case *physical.Case:
		m := &rpc.PhysicalCase{Whens: make([]*rpc.PhysicalWhen, len(e.Whens))}
		var err error
		if m.Operand, err = encodeOptExpr(e.Operand); err != nil {
			return nil, err
		}
		for i, w := range e.Whens {
			c, err := encodeExpr(w.Cond)
			if err != nil {
				return nil, err
			}
			th, err := encodeExpr(w.Then)
			if err != nil {
				return nil, err
			}
			m.Whens[i] = &rpc.PhysicalWhen{Cond: c, Then: th}
		}
		if m.Else, err = encodeOptExpr(e.Else); err != nil {
			return nil, err
		}
		if m.Type, err = arrowpb.EncodeType(e.Type); err != nil {
			return nil, err
		}
		return &rpc.PhysicalExpr{Kind: &rpc.PhysicalExpr_Case{Case: m}}, nil
	case *physical.Like:
		x, err := encodeExpr(e.Expr)
		if err != nil {
			return nil, err
		}
		p, err := encodeExpr(e.Pattern)
		if err != nil {
			return nil, err
		}
		return &rpc.PhysicalExpr{Kind: &rpc.PhysicalExpr_Like{Like: &rpc.PhysicalLike{Expr: x, Pattern: p, Negated: e.Negated, CaseInsensitive: e.CaseInsensitive}}}, nil
	case *physical.InList:
		x, err := encodeExpr(e.Expr)
		if err != nil {
			return nil, err
		}
		list, err := encodeExprs(e.List)
		if err != nil {
			return nil, err
		}
		return &rpc.PhysicalExpr{Kind: &rpc.PhysicalExpr_InList{InList: &rpc.PhysicalInList{Expr: x, List: list, Negated: e.Negated}}}, nil
	case *physical.ScalarFunc:
		args, err := encodeExprs(e.Args)
		if err != nil {
			return nil, err
		}
		t, err := arrowpb.EncodeType(e.Type)
		if err != nil {
			return nil, err
		}
		return &rpc.PhysicalExpr{Kind: &rpc.PhysicalExpr_ScalarFunc{ScalarFunc: &rpc.PhysicalScalarFunc{Name: e.Name, Args: args, Type: t}}}, nil
	}
	return nil, qerr.Internalf("codec: unknown physical expression %T", e)
}

func decodeExprs(ms []*rpc.PhysicalExpr, width int) ([]physical.Expr, error) {
	return wire.Map(ms, func(m *rpc.PhysicalExpr) (physical.Expr, error) { return decodeExpr(m, width) })
}

func decodeOptExpr(m *rpc.PhysicalExpr, width int) (physical.Expr, error) {
	if m == nil {
		return nil, nil
	}
	return decodeExpr(m, width)
}

// decodeExpr decodes an expression over an input of width columns
// (unchecked: any width).
func decodeExpr(m *rpc.PhysicalExpr, width int) (physical.Expr, error) {
	if m == nil {
		return nil, qerr.Internalf("codec: missing expression")
	}
	switch k := m.Kind.(type) {
	case *rpc.PhysicalExpr_Column:
		c := k.Column
		if c == nil {
			break
		}
		if c.Index < 0 || (width != unchecked && int(c.Index) >= width) {
			return nil, qerr.Internalf("codec: column %q index %d out of range for an input of %d columns", c.Name, c.Index, width)
		}
		t, err := arrowpb.DecodeType(c.Type)
		if err != nil {
			return nil, err
		}
		return &physical.Column{Index: int(c.Index), Name: c.Name, Type: t}, nil
	case *rpc.PhysicalExpr_Literal:
		t, v, err := arrowpb.DecodeLiteral(k.Literal)
		if err != nil {
			return nil, err
		}
		return &physical.Literal{Type: t, Value: v}, nil
	case *rpc.PhysicalExpr_Binary:
		b := k.Binary
		if b == nil {
			break
		}
		if b.Op < int32(physical.OpEq) || b.Op > int32(physical.OpConcat) {
			return nil, qerr.Internalf("codec: unknown binary operator %d", b.Op)
		}
		l, err := decodeExpr(b.Left, width)
		if err != nil {
			return nil, err
		}
		r, err := decodeExpr(b.Right, width)
		if err != nil {
			return nil, err
		}
		t, err := arrowpb.DecodeType(b.Type)
		if err != nil {
			return nil, err
		}
		return &physical.Binary{Op: physical.BinaryOp(b.Op), Left: l, Right: r, Type: t}, nil
	case *rpc.PhysicalExpr_Not:
		x, err := decodeExpr(k.Not, width)
		if err != nil {
			return nil, err
		}
		return &physical.Not{Expr: x}, nil
	case *rpc.PhysicalExpr_Negative:
		x, err := decodeExpr(k.Negative, width)
		if err != nil {
			return nil, err
		}
		return &physical.Negative{Expr: x}, nil
	case *rpc.PhysicalExpr_IsNull:
		if k.IsNull == nil {
			break
		}
		x, err := decodeExpr(k.IsNull.Expr, width)
		if err != nil {
			return nil, err
		}
		return &physical.IsNull{Expr: x, Negated: k.IsNull.Negated}, nil
	case *rpc.PhysicalExpr_Cast:
		if k.Cast == nil {
			break
		}
		x, err := decodeExpr(k.Cast.Expr, width)
		if err != nil {
			return nil, err
		}
		t, err := arrowpb.DecodeType(k.Cast.Type)
		if err != nil {
			return nil, err
		}
		return &physical.Cast{Expr: x, Type: t}, nil
	case *rpc.PhysicalExpr_Case:
		c := k.Case
		if c == nil {
			break
		}
		if len(c.Whens) == 0 {
			return nil, qerr.Internalf("codec: CASE without WHEN")
		}
		out := &physical.Case{Whens: make([]physical.When, len(c.Whens))}
		var err error
		if out.Operand, err = decodeOptExpr(c.Operand, width); err != nil {
			return nil, err
		}
		for i, w := range c.Whens {
			if w == nil {
				return nil, qerr.Internalf("codec: missing CASE arm")
			}
			if out.Whens[i].Cond, err = decodeExpr(w.Cond, width); err != nil {
				return nil, err
			}
			if out.Whens[i].Then, err = decodeExpr(w.Then, width); err != nil {
				return nil, err
			}
		}
		if out.Else, err = decodeOptExpr(c.Else, width); err != nil {
			return nil, err
		}
		if out.Type, err = arrowpb.DecodeType(c.Type); err != nil {
			return nil, err
		}
		return out, nil
	case *rpc.PhysicalExpr_Like:
		l := k.Like
		if l == nil {
			break
		}
		x, err := decodeExpr(l.Expr, width)
		if err != nil {
			return nil, err
		}
		p, err := decodeExpr(l.Pattern, width)
		if err != nil {
			return nil, err
		}
		return &physical.Like{Expr: x, Pattern: p, Negated: l.Negated, CaseInsensitive: l.CaseInsensitive}, nil
	case *rpc.PhysicalExpr_InList:
		in := k.InList
		if in == nil {
			break
		}
		x, err := decodeExpr(in.Expr, width)
		if err != nil {
			return nil, err
		}
		list, err := decodeExprs(in.List, width)
		if err != nil {
			return nil, err
		}
		return &physical.InList{Expr: x, List: list, Negated: in.Negated}, nil
	case *rpc.PhysicalExpr_ScalarFunc:
		f := k.ScalarFunc
		if f == nil {
			break
		}
		if f.Name == "" {
			return nil, qerr.Internalf("codec: scalar function without a name")
		}
		args, err := decodeExprs(f.Args, width)
		if err != nil {
			return nil, err
		}
		t, err := arrowpb.DecodeType(f.Type)
		if err != nil {
			return nil, err
		}
		return &physical.ScalarFunc{Name: f.Name, Args: args, Type: t}, nil
	}
	return nil, qerr.Internalf("codec: empty or unknown physical expression %T", m.Kind)
}

func encodeSortKeys(keys []physical.SortKey) ([]*rpc.PhysicalSortKey, error) {
	out := make([]*rpc.PhysicalSortKey, len(keys))
	for i, k := range keys {
		e, err := encodeExpr(k.Expr)
		if err != nil {
			return nil, err
		}
		out[i] = &rpc.PhysicalSortKey{Expr: e, Asc: k.Asc, NullsFirst: k.NullsFirst}
	}
	return out, nil
}

func decodeSortKeys(ms []*rpc.PhysicalSortKey, width int) ([]physical.SortKey, error) {
	if ms == nil {
		return nil, nil
	}
	out := make([]physical.SortKey, len(ms))
	for i, m := range ms {
		if m == nil {
			return nil, qerr.Internalf("codec: missing sort key")
		}
		e, err := decodeExpr(m.Expr, width)
		if err != nil {
			return nil, err
		}
		out[i] = physical.SortKey{Expr: e, Asc: m.Asc, NullsFirst: m.NullsFirst}
	}
	return out, nil
}
