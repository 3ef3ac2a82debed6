package logical

import (
	"strings"
)

// Inspect walks p in pre-order, calling f on each node; f returns false to
// skip the node's children.
func Inspect(p Plan, f func(Plan) bool) {
	if !f(p) {
		return
	}
	for _, c := range p.Children() {
		Inspect(c, f)
	}
}

// InspectExpr walks e in pre-order (not into subquery plans); f returns false to skip children.
func InspectExpr(e Expr, f func(Expr) bool) {
	if !f(e) {
		return
	}
	for _, c := range e.Children() {
		InspectExpr(c, f)
	}
}

// TransformUp rewrites p bottom-up: children first, then f on the node with
// its new children. It reports whether anything changed.
func TransformUp(p Plan, f func(Plan) (Plan, bool, error)) (Plan, bool, error) {
	children := p.Children()
	changed := false
	if len(children) > 0 {
		nc := make([]Plan, len(children))
		for i, c := range children {
			n, ch, err := TransformUp(c, f)
			if err != nil {
				return nil, false, err
			}
			nc[i], changed = n, changed || ch
		}
		if changed {
			var err error
			if p, err = p.WithChildren(nc); err != nil {
				return nil, false, err
			}
		}
	}
	n, ch, err := f(p)
	if err != nil {
		return nil, false, err
	}
	return n, changed || ch, nil
}

// TransformDown rewrites p top-down: f on the node first, then on the
// children of its result. It reports whether anything changed.
func TransformDown(p Plan, f func(Plan) (Plan, bool, error)) (Plan, bool, error) {
	p, changed, err := f(p)
	if err != nil {
		return nil, false, err
	}
	children := p.Children()
	if len(children) == 0 {
		return p, changed, nil
	}
	nc := make([]Plan, len(children))
	cc := false
	for i, c := range children {
		n, ch, err := TransformDown(c, f)
		if err != nil {
			return nil, false, err
		}
		nc[i], cc = n, cc || ch
	}
	if !cc {
		return p, changed, nil
	}
	p, err = p.WithChildren(nc)
	return p, true, err
}

// TransformExprUp rewrites e bottom-up (not into subquery plans) and reports whether anything changed.
func TransformExprUp(e Expr, f func(Expr) (Expr, bool, error)) (Expr, bool, error) {
	children := e.Children()
	changed := false
	if len(children) > 0 {
		nc := make([]Expr, len(children))
		for i, c := range children {
			n, ch, err := TransformExprUp(c, f)
			if err != nil {
				return nil, false, err
			}
			nc[i], changed = n, changed || ch
		}
		if changed {
			e = e.WithChildren(nc)
		}
	}
	n, ch, err := f(e)
	if err != nil {
		return nil, false, err
	}
	return n, changed || ch, nil
}

// ColumnsOf returns the column references in e (not inside subqueries).
func ColumnsOf(e Expr) []*Column {
	var out []*Column
	InspectExpr(e, func(x Expr) bool {
		if c, ok := x.(*Column); ok {
			out = append(out, c)
		}
		return true
	})
	return out
}

// Indent renders p as numbered, indented lines, one node per line:
//
//	01)Projection: a
//	02)--Filter: a > 1
//	03)----TableScan: t
//
// A shared CTE's input shows under its first reference only.
func Indent(p Plan) string {
	var b strings.Builder
	indentCTE(&b, p)
	return b.String()
}

// DisplayName is e's display name with column qualifiers dropped, the name
// an unaliased select item gets ("sum(l_quantity)").
func DisplayName(e Expr) string {
	out, _, _ := TransformExprUp(e, func(x Expr) (Expr, bool, error) {
		if c, ok := x.(*Column); ok && c.Qualifier != "" {
			return &Column{Name: c.Name}, true, nil
		}
		return x, false, nil
	})
	return out.String()
}
