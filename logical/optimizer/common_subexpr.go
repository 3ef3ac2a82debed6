package optimizer

// common_subexpr_eliminate computes a repeated expensive subexpression once,
// in a Projection below, and refers to it by name above (TPC-H Q1):
//
//	Aggregate: aggr=[sum(p * (1 - d)), sum((p * (1 - d)) * (1 + t))]
//	→ Aggregate: aggr=[sum(__common_expr_1) AS "sum(p * (1 - d))",
//	                   sum(__common_expr_1 * (1 + t)) AS "sum((p * (1 - d)) * (1 + t))"]
//	    Projection: <input columns>, p * (1 - d) AS __common_expr_1
//
// It applies to Projection lists and Aggregate arguments (not group keys).
// Only arithmetic, casts, CASE, LIKE and function calls count as expensive;
// columns, literals and aliases never do. The largest repeated subexpression
// wins. It must NOT fire when the input has columns it cannot name
// unambiguously, on expressions with subqueries, or inside aggregate calls
// of a Projection.

import (
	"context"
	"fmt"
	"strings"

	"github.com/quiverdb/quiver/logical"
)

// CommonSubexprEliminate is the common-subexpression rule.
type CommonSubexprEliminate struct{}

// Name implements Rule.
func (CommonSubexprEliminate) Name() string { return "common_subexpr_eliminate" }

// Rewrite implements Rule.
func (CommonSubexprEliminate) Rewrite(ctx context.Context, p logical.Plan) (logical.Plan, bool, error) {
	used := 0
	logical.Inspect(p, func(x logical.Plan) bool {
		for _, f := range x.Schema().Fields {
			if !strings.HasPrefix(f.Name, "__common_expr_") {
				continue // most names: skip Sscanf, whose failure allocates an error
			}
			var k int
			if _, err := fmt.Sscanf(f.Name, "__common_expr_%d", &k); err == nil && k > used {
				used = k
			}
		}
		return true
	})
	nm := &namer{n: used}
	f := func(n logical.Plan) (logical.Plan, bool, error) {
		switch n := n.(type) {
		case *logical.Projection:
			return cseNode(n, n.Input, n.List, 0, nm)
		case *logical.Aggregate:
			return cseNode(n, n.Input, n.Aggs, len(n.GroupBy), nm)
		}
		return n, false, nil
	}
	// Every reference to a shared CTE gets the one rewrite of its input: the
	// names nm hands out differ per walk, and references whose inputs differ
	// are no longer shared (logical.CTERef).
	type cteDone struct {
		key     string
		out     logical.Plan
		changed bool
	}
	done := map[int]cteDone{}
	var up func(p logical.Plan) (logical.Plan, bool, error)
	up = func(p logical.Plan) (logical.Plan, bool, error) {
		if err := ctx.Err(); err != nil {
			return nil, false, err
		}
		if r, ok := p.(*logical.CTERef); ok {
			key := planString(r.Input)
			d, seen := done[r.ID]
			if !seen || d.key != key {
				out, ch, err := up(r.Input)
				if err != nil {
					return nil, false, err
				}
				d = cteDone{key: key, out: out, changed: ch}
				if !seen {
					done[r.ID] = d
				}
			}
			if !d.changed {
				return p, false, nil
			}
			np, err := r.WithChildren([]logical.Plan{d.out})
			return np, true, err
		}
		children := p.Children()
		changed := false
		if len(children) > 0 {
			nc := make([]logical.Plan, len(children))
			for i, c := range children {
				n, ch, err := up(c)
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
	return up(p)
}

// What expensive needs to know of a subtree.
const (
	flagSubquery = 1 << iota
	flagAgg
	flagColumns
)

// cseInfo answers expensive for every node of the expressions of one node
// and keys them (logical.ExprKeys), remembering the answers per node:
// asking at every node of a deep expression is otherwise quadratic.
type cseInfo struct {
	keys  *logical.ExprKeys
	flags map[logical.Expr]int
}

func newCSEInfo() *cseInfo {
	return &cseInfo{keys: logical.NewExprKeys(), flags: map[logical.Expr]int{}}
}

func (ci *cseInfo) flagsOf(e logical.Expr) int {
	if f, ok := ci.flags[e]; ok {
		return f
	}
	f := 0
	switch e.(type) {
	case *logical.ScalarSubquery, *logical.Exists, *logical.InSubquery:
		f |= flagSubquery
	case *logical.AggExpr:
		f |= flagAgg
	case *logical.Column:
		f |= flagColumns
	}
	for _, c := range e.Children() {
		f |= ci.flagsOf(c)
	}
	ci.flags[e] = f
	return f
}

// expensive reports whether computing e once is worth a column: arithmetic,
// casts, CASE, LIKE, IN lists and function calls over columns, without
// subqueries or aggregates.
func (ci *cseInfo) expensive(e logical.Expr) bool {
	switch e.(type) {
	case *logical.Binary, *logical.Cast, *logical.Case, *logical.Like, *logical.ScalarFunc, *logical.Negative, *logical.InList:
		return ci.flagsOf(e)&(flagSubquery|flagAgg|flagColumns) == flagColumns
	}
	return false
}

// cseNode rewrites exprs (the node's Exprs from index off on) of n.
func cseNode(n logical.Plan, input logical.Plan, exprs []logical.Expr, off int, nm *namer) (logical.Plan, bool, error) {
	ci := newCSEInfo()
	counts := map[int]int{}
	for _, e := range exprs {
		logical.InspectExpr(e, func(x logical.Expr) bool {
			if _, isAgg := x.(*logical.AggExpr); isAgg {
				return true
			}
			if ci.expensive(x) {
				counts[ci.keys.Key(x)]++
			}
			return true
		})
	}
	// Choose maximal repeated subexpressions, top-down.
	var chosen []logical.Expr
	seen := map[int]bool{}
	for _, e := range exprs {
		logical.InspectExpr(e, func(x logical.Expr) bool {
			if !ci.expensive(x) {
				return true
			}
			if k := ci.keys.Key(x); counts[k] > 1 {
				if !seen[k] {
					seen[k] = true
					chosen = append(chosen, x)
				}
				return false
			}
			return true
		})
	}
	if len(chosen) == 0 {
		return n, false, nil
	}
	base, ok := identityExprs(input.Schema())
	if !ok {
		return n, false, nil
	}
	taken := map[string]bool{}
	for _, f := range input.Schema().Fields {
		taken[strings.ToLower(f.Name)] = true
	}
	names := map[int]string{}
	list := append([]logical.Expr(nil), base...)
	for _, c := range chosen {
		name := nm.next("__common_expr")
		for taken[name] {
			name = nm.next("__common_expr")
		}
		names[ci.keys.Key(c)] = name
		list = append(list, &logical.Alias{Expr: c, Name: name})
	}
	below, err := logical.NewProjection(input, list)
	if err != nil {
		return nil, false, err
	}
	all := n.Exprs()
	out := append([]logical.Expr(nil), all...)
	for i, e := range exprs {
		ne, _, _ := logical.TransformExprUp(e, func(x logical.Expr) (logical.Expr, bool, error) {
			if !ci.expensive(x) {
				return x, false, nil
			}
			if name, ok := names[ci.keys.Key(x)]; ok {
				return &logical.Column{Name: name}, true, nil
			}
			return x, false, nil
		})
		out[off+i] = aliasBack(ne, e)
	}
	nn, err := n.WithChildren([]logical.Plan{below})
	if err != nil {
		return nil, false, err
	}
	nn, err = nn.WithExprs(out)
	if err != nil {
		return nil, false, err
	}
	return nn, true, nil
}
