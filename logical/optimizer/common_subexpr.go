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
func (CommonSubexprEliminate) Rewrite(_ context.Context, p logical.Plan) (logical.Plan, bool, error) {
	used := 0
	logical.Inspect(p, func(x logical.Plan) bool {
		for _, f := range x.Schema().Fields {
			var k int
			if _, err := fmt.Sscanf(f.Name, "__common_expr_%d", &k); err == nil && k > used {
				used = k
			}
		}
		return true
	})
	nm := &namer{n: used}
	return logical.TransformUp(p, func(n logical.Plan) (logical.Plan, bool, error) {
		switch n := n.(type) {
		case *logical.Projection:
			return cseNode(n, n.Input, n.List, 0, nm)
		case *logical.Aggregate:
			return cseNode(n, n.Input, n.Aggs, len(n.GroupBy), nm)
		}
		return n, false, nil
	})
}

func expensive(e logical.Expr) bool {
	switch e.(type) {
	case *logical.Binary, *logical.Cast, *logical.Case, *logical.Like, *logical.ScalarFunc, *logical.Negative, *logical.InList:
		return !hasSubquery(e) && !hasAgg(e) && hasColumns(e)
	}
	return false
}

// cseNode rewrites exprs (the node's Exprs from index off on) of n.
func cseNode(n logical.Plan, input logical.Plan, exprs []logical.Expr, off int, nm *namer) (logical.Plan, bool, error) {
	counts := map[string]int{}
	for _, e := range exprs {
		logical.InspectExpr(e, func(x logical.Expr) bool {
			if _, isAgg := x.(*logical.AggExpr); isAgg {
				return true
			}
			if expensive(x) {
				counts[x.String()]++
			}
			return true
		})
	}
	// Choose maximal repeated subexpressions, top-down.
	var chosen []logical.Expr
	seen := map[string]bool{}
	for _, e := range exprs {
		logical.InspectExpr(e, func(x logical.Expr) bool {
			k := x.String()
			if expensive(x) && counts[k] > 1 {
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
	names := map[string]string{}
	list := append([]logical.Expr(nil), base...)
	for _, c := range chosen {
		name := nm.next("__common_expr")
		for taken[name] {
			name = nm.next("__common_expr")
		}
		names[c.String()] = name
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
			if name, ok := names[x.String()]; ok && expensive(x) {
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
