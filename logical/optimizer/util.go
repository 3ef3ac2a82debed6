package optimizer

import (
	"context"
	"fmt"
	"strings"

	"github.com/quiverdb/quiver/logical"
)

// transformUp is logical.TransformUp that stops when ctx ends: rules check
// the context at every plan node, not only between rules, so a statement
// timeout holds inside one long rewrite.
func transformUp(ctx context.Context, p logical.Plan, f func(logical.Plan) (logical.Plan, bool, error)) (logical.Plan, bool, error) {
	return logical.TransformUp(p, func(n logical.Plan) (logical.Plan, bool, error) {
		if err := ctx.Err(); err != nil {
			return nil, false, err
		}
		return f(n)
	})
}

// transformDown is logical.TransformDown that stops when ctx ends.
func transformDown(ctx context.Context, p logical.Plan, f func(logical.Plan) (logical.Plan, bool, error)) (logical.Plan, bool, error) {
	return logical.TransformDown(p, func(n logical.Plan) (logical.Plan, bool, error) {
		if err := ctx.Err(); err != nil {
			return nil, false, err
		}
		return f(n)
	})
}

// mapChildren returns p with f applied to each of its children (p itself
// when it has none).
func mapChildren(p logical.Plan, f func(logical.Plan) (logical.Plan, error)) (logical.Plan, error) {
	ch := p.Children()
	if len(ch) == 0 {
		return p, nil
	}
	nc := make([]logical.Plan, len(ch))
	for i, c := range ch {
		n, err := f(c)
		if err != nil {
			return nil, err
		}
		nc[i] = n
	}
	return p.WithChildren(nc)
}

// hasSubquery reports whether e contains a subquery expression.
func hasSubquery(e logical.Expr) bool {
	found := false
	logical.InspectExpr(e, func(x logical.Expr) bool {
		switch x.(type) {
		case *logical.ScalarSubquery, *logical.Exists, *logical.InSubquery:
			found = true
		}
		return !found
	})
	return found
}

// hasOuterRef reports whether e contains an OuterRef (not looking into subquery plans).
func hasOuterRef(e logical.Expr) bool {
	found := false
	logical.InspectExpr(e, func(x logical.Expr) bool {
		if _, ok := x.(*logical.OuterRef); ok {
			found = true
		}
		return !found
	})
	return found
}

// hasAgg reports whether e contains an aggregate call.
func hasAgg(e logical.Expr) bool {
	found := false
	logical.InspectExpr(e, func(x logical.Expr) bool {
		if _, ok := x.(*logical.AggExpr); ok {
			found = true
		}
		return !found
	})
	return found
}

// resolvesIn reports whether every column of e resolves unambiguously in s
// and e has no outer references or subqueries.
func resolvesIn(e logical.Expr, s *logical.Schema) bool {
	ok := true
	logical.InspectExpr(e, func(x logical.Expr) bool {
		switch x := x.(type) {
		case *logical.Column:
			if !s.Has(x.Qualifier, x.Name) {
				ok = false
			}
		case *logical.OuterRef, *logical.ScalarSubquery, *logical.Exists, *logical.InSubquery:
			ok = false
		}
		return ok
	})
	return ok
}

// hasColumns reports whether e references at least one column.
func hasColumns(e logical.Expr) bool { return len(logical.ColumnsOf(e)) > 0 }

// mapColumns rewrites every Column of e with f; f returns false when a column
// cannot be mapped, which makes mapColumns return false.
func mapColumns(e logical.Expr, f func(*logical.Column) (logical.Expr, bool)) (logical.Expr, bool) {
	ok := true
	out, _, _ := logical.TransformExprUp(e, func(x logical.Expr) (logical.Expr, bool, error) {
		c, isCol := x.(*logical.Column)
		if !isCol || !ok {
			return x, false, nil
		}
		n, good := f(c)
		if !good {
			ok = false
			return x, false, nil
		}
		return n, true, nil
	})
	return out, ok
}

// columnFor returns a column reference to field i of s that resolves back to i
// in s, or false if the field cannot be named unambiguously.
func columnFor(s *logical.Schema, i int) (*logical.Column, bool) {
	f := s.Field(i)
	c := &logical.Column{Qualifier: f.Qualifier, Name: f.Name}
	j, err := s.IndexOf(c.Qualifier, c.Name)
	if err != nil || j != i {
		return nil, false
	}
	return c, true
}

// identityProjection returns a projection of every column of input in order,
// or false if some column cannot be named unambiguously.
func identityExprs(s *logical.Schema) ([]logical.Expr, bool) {
	out := make([]logical.Expr, s.Len())
	for i := range out {
		c, ok := columnFor(s, i)
		if !ok {
			return nil, false
		}
		out[i] = c
	}
	return out, true
}

// restoreSchema projects p back to want (same fields, possibly in another
// order or a subset of p's columns) if p's schema differs.
func restoreSchema(p logical.Plan, want *logical.Schema) (logical.Plan, error) {
	if p.Schema().Equal(want) {
		return p, nil
	}
	exprs := make([]logical.Expr, want.Len())
	for i, f := range want.Fields {
		exprs[i] = &logical.Column{Qualifier: f.Qualifier, Name: f.Name}
	}
	return logical.NewProjection(p, exprs)
}

// aliasBack names e as old's display name when a rewrite changed it, so the
// output column keeps its name. A bare column keeps its own qualified field.
func aliasBack(e, old logical.Expr) logical.Expr {
	if e.String() == old.String() {
		return e
	}
	if a, ok := old.(*logical.Alias); ok {
		if na, ok := e.(*logical.Alias); ok && na.Name == a.Name {
			return e
		}
		return &logical.Alias{Expr: logical.StripAlias(e), Name: a.Name}
	}
	return &logical.Alias{Expr: logical.StripAlias(e), Name: old.String()}
}

// planString renders a plan tree for change detection of rules whose
// rewrites are easier to compare than to track.
func planString(p logical.Plan) string {
	var b strings.Builder
	var walk func(logical.Plan)
	walk = func(p logical.Plan) {
		b.WriteString(p.String())
		b.WriteByte('(')
		for _, c := range p.Children() {
			walk(c)
			b.WriteByte(',')
		}
		b.WriteByte(')')
	}
	walk(p)
	return b.String()
}

// namer hands out names unique within one rule application.
type namer struct{ n int }

func (n *namer) next(prefix string) string {
	n.n++
	return fmt.Sprintf("%s_%d", prefix, n.n)
}

// splitConjuncts returns the conjuncts of e with nil dropped.
func splitConjuncts(e logical.Expr) []logical.Expr { return logical.SplitAnd(e) }

// exprSet is a set of expressions by display string, keeping first-seen order.
func dedupe(es []logical.Expr) []logical.Expr {
	seen := map[string]bool{}
	var out []logical.Expr
	for _, e := range es {
		k := e.String()
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, e)
	}
	return out
}
