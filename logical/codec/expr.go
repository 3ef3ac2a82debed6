package codec

import (
	"github.com/quiverdb/quiver/arrowpb"
	"github.com/quiverdb/quiver/logical"
	"github.com/quiverdb/quiver/qerr"
	"github.com/quiverdb/quiver/rpc"
	"github.com/quiverdb/quiver/wire"
)

// EncodeExpr encodes one logical expression to bytes.
func EncodeExpr(e logical.Expr) ([]byte, error) {
	m, err := encodeExpr(e)
	if err != nil {
		return nil, err
	}
	return wire.Marshal(m, "expression")
}

// DecodeExpr decodes an expression made by EncodeExpr. It is not typed
// against any schema (there is none); it never panics.
func DecodeExpr(b []byte) (e logical.Expr, err error) {
	defer wire.Recover(&err)
	var m rpc.LogicalExpr
	if err := wire.Unmarshal(b, &m, "expression"); err != nil {
		return nil, err
	}
	e, err = decodeExpr(&m)
	if err != nil {
		return nil, err
	}
	probeExpr(e)
	return e, nil
}

func encodeExprs(es []logical.Expr) ([]*rpc.LogicalExpr, error) {
	return wire.Map(es, encodeExpr)
}

func encodeOptExpr(e logical.Expr) (*rpc.LogicalExpr, error) {
	if e == nil {
		return nil, nil
	}
	return encodeExpr(e)
}

func encodeExpr(e logical.Expr) (*rpc.LogicalExpr, error) {
	switch e := e.(type) {
	case nil:
		return nil, qerr.Internalf("codec: missing expression")
	case *logical.Column:
		return &rpc.LogicalExpr{Kind: &rpc.LogicalExpr_Column{Column: &rpc.LogicalColumn{Qualifier: e.Qualifier, Name: e.Name}}}, nil
	case *logical.OuterRef:
		t, err := arrowpb.EncodeType(e.Type)
		if err != nil {
			return nil, err
		}
		return &rpc.LogicalExpr{Kind: &rpc.LogicalExpr_OuterRef{OuterRef: &rpc.LogicalOuterRef{Qualifier: e.Qualifier, Name: e.Name, Type: t, Nullable: e.Nullable}}}, nil
	case *logical.Literal:
		l, err := arrowpb.EncodeLiteral(e.Type, e.Value)
		if err != nil {
			return nil, err
		}
		return &rpc.LogicalExpr{Kind: &rpc.LogicalExpr_Literal{Literal: l}}, nil
	case *logical.Alias:
		x, err := encodeExpr(e.Expr)
		if err != nil {
			return nil, err
		}
		return &rpc.LogicalExpr{Kind: &rpc.LogicalExpr_Alias{Alias: &rpc.LogicalAlias{Expr: x, Name: e.Name}}}, nil
	case *logical.Binary:
		l, err := encodeExpr(e.Left)
		if err != nil {
			return nil, err
		}
		r, err := encodeExpr(e.Right)
		if err != nil {
			return nil, err
		}
		return &rpc.LogicalExpr{Kind: &rpc.LogicalExpr_Binary{Binary: &rpc.LogicalBinary{Op: int32(e.Op), Left: l, Right: r}}}, nil
	case *logical.Not:
		x, err := encodeExpr(e.Expr)
		if err != nil {
			return nil, err
		}
		return &rpc.LogicalExpr{Kind: &rpc.LogicalExpr_Not{Not: x}}, nil
	case *logical.Negative:
		x, err := encodeExpr(e.Expr)
		if err != nil {
			return nil, err
		}
		return &rpc.LogicalExpr{Kind: &rpc.LogicalExpr_Negative{Negative: x}}, nil
	case *logical.IsNull:
		x, err := encodeExpr(e.Expr)
		if err != nil {
			return nil, err
		}
		return &rpc.LogicalExpr{Kind: &rpc.LogicalExpr_IsNull{IsNull: &rpc.LogicalIsNull{Expr: x, Negated: e.Negated}}}, nil
	case *logical.Cast:
		x, err := encodeExpr(e.Expr)
		if err != nil {
			return nil, err
		}
		t, err := arrowpb.EncodeType(e.Type)
		if err != nil {
			return nil, err
		}
		return &rpc.LogicalExpr{Kind: &rpc.LogicalExpr_Cast{Cast: &rpc.LogicalCast{Expr: x, Type: t}}}, nil
	case *logical.Case:
		m := &rpc.LogicalCase{Whens: make([]*rpc.LogicalWhen, len(e.Whens))}
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
			m.Whens[i] = &rpc.LogicalWhen{Cond: c, Then: th}
		}
		if m.Else, err = encodeOptExpr(e.Else); err != nil {
			return nil, err
		}
		return &rpc.LogicalExpr{Kind: &rpc.LogicalExpr_Case{Case: m}}, nil
	case *logical.Like:
		x, err := encodeExpr(e.Expr)
		if err != nil {
			return nil, err
		}
		p, err := encodeExpr(e.Pattern)
		if err != nil {
			return nil, err
		}
		return &rpc.LogicalExpr{Kind: &rpc.LogicalExpr_Like{Like: &rpc.LogicalLike{Expr: x, Pattern: p, Negated: e.Negated, CaseInsensitive: e.CaseInsensitive}}}, nil
	case *logical.InList:
		x, err := encodeExpr(e.Expr)
		if err != nil {
			return nil, err
		}
		list, err := encodeExprs(e.List)
		if err != nil {
			return nil, err
		}
		return &rpc.LogicalExpr{Kind: &rpc.LogicalExpr_InList{InList: &rpc.LogicalInList{Expr: x, List: list, Negated: e.Negated}}}, nil
	case *logical.ScalarFunc:
		args, err := encodeExprs(e.Args)
		if err != nil {
			return nil, err
		}
		return &rpc.LogicalExpr{Kind: &rpc.LogicalExpr_ScalarFunc{ScalarFunc: &rpc.LogicalScalarFunc{Name: e.Name, Args: args}}}, nil
	case *logical.AggExpr:
		args, err := encodeExprs(e.Args)
		if err != nil {
			return nil, err
		}
		m := &rpc.LogicalAggExpr{Func: int32(e.Func), Args: args, Distinct: e.Distinct, Filter: e.Filter}
		for _, o := range e.Order {
			m.OrderDesc = append(m.OrderDesc, o.Desc)
			m.OrderNullsFirst = append(m.OrderNullsFirst, o.NullsFirst)
		}
		return &rpc.LogicalExpr{Kind: &rpc.LogicalExpr_Agg{Agg: m}}, nil
	case *logical.WindowExpr:
		return encodeWindowExpr(e)
	case *logical.ScalarSubquery:
		p, err := encodePlan(e.Plan)
		if err != nil {
			return nil, err
		}
		return &rpc.LogicalExpr{Kind: &rpc.LogicalExpr_ScalarSubquery{ScalarSubquery: p}}, nil
	case *logical.Exists:
		p, err := encodePlan(e.Plan)
		if err != nil {
			return nil, err
		}
		return &rpc.LogicalExpr{Kind: &rpc.LogicalExpr_Exists{Exists: &rpc.LogicalExists{Plan: p, Negated: e.Negated}}}, nil
	case *logical.InSubquery:
		x, err := encodeExpr(e.Expr)
		if err != nil {
			return nil, err
		}
		p, err := encodePlan(e.Plan)
		if err != nil {
			return nil, err
		}
		return &rpc.LogicalExpr{Kind: &rpc.LogicalExpr_InSubquery{InSubquery: &rpc.LogicalInSubquery{Expr: x, Plan: p, Negated: e.Negated}}}, nil
	}
	return nil, qerr.Internalf("codec: unknown logical expression %T", e)
}

func decodeExprs(ms []*rpc.LogicalExpr) ([]logical.Expr, error) {
	return wire.Map(ms, decodeExpr)
}

func decodeOptExpr(m *rpc.LogicalExpr) (logical.Expr, error) {
	if m == nil {
		return nil, nil
	}
	return decodeExpr(m)
}

func decodeExpr(m *rpc.LogicalExpr) (logical.Expr, error) {
	if m == nil {
		return nil, qerr.Internalf("codec: missing expression")
	}
	switch k := m.Kind.(type) {
	case *rpc.LogicalExpr_Column:
		if k.Column == nil || k.Column.Name == "" {
			return nil, qerr.Internalf("codec: column without a name")
		}
		return &logical.Column{Qualifier: k.Column.Qualifier, Name: k.Column.Name}, nil
	case *rpc.LogicalExpr_OuterRef:
		o := k.OuterRef
		if o == nil || o.Name == "" {
			return nil, qerr.Internalf("codec: outer reference without a name")
		}
		t, err := arrowpb.DecodeType(o.Type)
		if err != nil {
			return nil, err
		}
		return &logical.OuterRef{Qualifier: o.Qualifier, Name: o.Name, Type: t, Nullable: o.Nullable}, nil
	case *rpc.LogicalExpr_Literal:
		t, v, err := arrowpb.DecodeLiteral(k.Literal)
		if err != nil {
			return nil, err
		}
		return &logical.Literal{Type: t, Value: v}, nil
	case *rpc.LogicalExpr_Alias:
		if k.Alias == nil {
			break
		}
		x, err := decodeExpr(k.Alias.Expr)
		if err != nil {
			return nil, err
		}
		return &logical.Alias{Expr: x, Name: k.Alias.Name}, nil
	case *rpc.LogicalExpr_Binary:
		b := k.Binary
		if b == nil {
			break
		}
		if b.Op < int32(logical.OpEq) || b.Op > int32(logical.OpConcat) {
			return nil, qerr.Internalf("codec: unknown binary operator %d", b.Op)
		}
		l, err := decodeExpr(b.Left)
		if err != nil {
			return nil, err
		}
		r, err := decodeExpr(b.Right)
		if err != nil {
			return nil, err
		}
		return &logical.Binary{Op: logical.BinaryOp(b.Op), Left: l, Right: r}, nil
	case *rpc.LogicalExpr_Not:
		x, err := decodeExpr(k.Not)
		if err != nil {
			return nil, err
		}
		return &logical.Not{Expr: x}, nil
	case *rpc.LogicalExpr_Negative:
		x, err := decodeExpr(k.Negative)
		if err != nil {
			return nil, err
		}
		return &logical.Negative{Expr: x}, nil
	case *rpc.LogicalExpr_IsNull:
		if k.IsNull == nil {
			break
		}
		x, err := decodeExpr(k.IsNull.Expr)
		if err != nil {
			return nil, err
		}
		return &logical.IsNull{Expr: x, Negated: k.IsNull.Negated}, nil
	case *rpc.LogicalExpr_Cast:
		if k.Cast == nil {
			break
		}
		x, err := decodeExpr(k.Cast.Expr)
		if err != nil {
			return nil, err
		}
		t, err := arrowpb.DecodeType(k.Cast.Type)
		if err != nil {
			return nil, err
		}
		return &logical.Cast{Expr: x, Type: t}, nil
	case *rpc.LogicalExpr_Case:
		c := k.Case
		if c == nil {
			break
		}
		if len(c.Whens) == 0 {
			return nil, qerr.Internalf("codec: CASE without WHEN")
		}
		out := &logical.Case{Whens: make([]logical.When, len(c.Whens))}
		var err error
		if out.Operand, err = decodeOptExpr(c.Operand); err != nil {
			return nil, err
		}
		for i, w := range c.Whens {
			if w == nil {
				return nil, qerr.Internalf("codec: missing CASE arm")
			}
			if out.Whens[i].Cond, err = decodeExpr(w.Cond); err != nil {
				return nil, err
			}
			if out.Whens[i].Then, err = decodeExpr(w.Then); err != nil {
				return nil, err
			}
		}
		if out.Else, err = decodeOptExpr(c.Else); err != nil {
			return nil, err
		}
		return out, nil
	case *rpc.LogicalExpr_Like:
		l := k.Like
		if l == nil {
			break
		}
		x, err := decodeExpr(l.Expr)
		if err != nil {
			return nil, err
		}
		p, err := decodeExpr(l.Pattern)
		if err != nil {
			return nil, err
		}
		return &logical.Like{Expr: x, Pattern: p, Negated: l.Negated, CaseInsensitive: l.CaseInsensitive}, nil
	case *rpc.LogicalExpr_InList:
		in := k.InList
		if in == nil {
			break
		}
		x, err := decodeExpr(in.Expr)
		if err != nil {
			return nil, err
		}
		list, err := decodeExprs(in.List)
		if err != nil {
			return nil, err
		}
		return &logical.InList{Expr: x, List: list, Negated: in.Negated}, nil
	case *rpc.LogicalExpr_ScalarFunc:
		f := k.ScalarFunc
		if f == nil {
			break
		}
		if f.Name == "" {
			return nil, qerr.Internalf("codec: scalar function without a name")
		}
		if (f.Name == "coalesce" || f.Name == "nullif") && len(f.Args) == 0 {
			// logical.ScalarFunc.DataType indexes the last argument of these.
			return nil, qerr.Internalf("codec: %s without arguments", f.Name)
		}
		args, err := decodeExprs(f.Args)
		if err != nil {
			return nil, err
		}
		return &logical.ScalarFunc{Name: f.Name, Args: args}, nil
	case *rpc.LogicalExpr_Agg:
		a := k.Agg
		if a == nil {
			break
		}
		if a.Func < int32(logical.AggCount) || a.Func > int32(logical.AggLast) {
			return nil, qerr.Internalf("codec: unknown aggregate function %d", a.Func)
		}
		args, err := decodeExprs(a.Args)
		if err != nil {
			return nil, err
		}
		out := &logical.AggExpr{Func: logical.AggFunc(a.Func), Args: args, Distinct: a.Distinct, Filter: a.Filter}
		for i, d := range a.OrderDesc {
			if i >= len(a.OrderNullsFirst) {
				return nil, qerr.Internalf("codec: aggregate with %d sort directions and %d NULL orders", len(a.OrderDesc), len(a.OrderNullsFirst))
			}
			out.Order = append(out.Order, logical.AggOrder{Desc: d, NullsFirst: a.OrderNullsFirst[i]})
		}
		if len(a.OrderNullsFirst) != len(out.Order) || out.NumArgs() < 1 && (len(out.Order) > 0 || out.Filter) {
			return nil, qerr.Internalf("codec: aggregate %s with %d arguments, %d sort keys and filter %t", out.Func, len(args), len(out.Order), out.Filter)
		}
		return out, nil
	case *rpc.LogicalExpr_Window:
		return decodeWindowExpr(k.Window)
	case *rpc.LogicalExpr_ScalarSubquery:
		p, err := decodeSubquery(k.ScalarSubquery)
		if err != nil {
			return nil, err
		}
		return &logical.ScalarSubquery{Plan: p}, nil
	case *rpc.LogicalExpr_Exists:
		if k.Exists == nil {
			break
		}
		p, err := decodePlan(k.Exists.Plan)
		if err != nil {
			return nil, err
		}
		return &logical.Exists{Plan: p, Negated: k.Exists.Negated}, nil
	case *rpc.LogicalExpr_InSubquery:
		in := k.InSubquery
		if in == nil {
			break
		}
		x, err := decodeExpr(in.Expr)
		if err != nil {
			return nil, err
		}
		p, err := decodeSubquery(in.Plan)
		if err != nil {
			return nil, err
		}
		return &logical.InSubquery{Expr: x, Plan: p, Negated: in.Negated}, nil
	}
	return nil, qerr.Internalf("codec: empty or unknown logical expression %T", m.Kind)
}

// decodeSubquery decodes the plan of a scalar or IN subquery, which must
// produce at least one column (their DataType reads column 0).
func decodeSubquery(m *rpc.LogicalPlan) (logical.Plan, error) {
	p, err := decodePlan(m)
	if err != nil {
		return nil, err
	}
	if p.Schema().Len() == 0 {
		return nil, qerr.Internalf("codec: subquery produces no column")
	}
	return p, nil
}

func encodeSortKeys(keys []logical.SortKey) ([]*rpc.LogicalSortKey, error) {
	out := make([]*rpc.LogicalSortKey, len(keys))
	for i, k := range keys {
		e, err := encodeExpr(k.Expr)
		if err != nil {
			return nil, err
		}
		out[i] = &rpc.LogicalSortKey{Expr: e, Asc: k.Asc, NullsFirst: k.NullsFirst}
	}
	return out, nil
}

func decodeSortKeys(ms []*rpc.LogicalSortKey) ([]logical.SortKey, error) {
	if ms == nil {
		return nil, nil
	}
	out := make([]logical.SortKey, len(ms))
	for i, m := range ms {
		if m == nil {
			return nil, qerr.Internalf("codec: missing sort key")
		}
		e, err := decodeExpr(m.Expr)
		if err != nil {
			return nil, err
		}
		out[i] = logical.SortKey{Expr: e, Asc: m.Asc, NullsFirst: m.NullsFirst}
	}
	return out, nil
}
