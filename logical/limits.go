package logical

import "github.com/quiverdb/quiver/qerr"

// Limits on the size of plans. Planning and running recurse once per level
// of an expression and per plan node, and a Go stack overflow is fatal (not
// a panic that can be recovered), so deeper or larger plans are refused with
// a planning error before anything recurses over them without bound. The
// bounds are far above what queries write: a 10,000-term sum nests 10,000
// levels deep.
const (
	// MaxExprDepth bounds the nesting of one expression.
	MaxExprDepth = 30_000
	// MaxPlanNodes bounds the nodes of a plan (subquery plans included).
	MaxPlanNodes = 100_000
)

// CheckSize returns a planning error when p has more than MaxPlanNodes
// nodes or an expression nested more than MaxExprDepth levels deep. Its own
// recursion stops at those bounds.
func CheckSize(p Plan) error {
	nodes := 0
	return checkPlanSize(p, &nodes)
}

func checkPlanSize(p Plan, nodes *int) error {
	*nodes++
	if *nodes > MaxPlanNodes {
		return qerr.Planf("the query plan has more than %d nodes; split the query", MaxPlanNodes)
	}
	for _, e := range p.Exprs() {
		if err := checkExpr(e, 1, nodes); err != nil {
			return err
		}
	}
	for _, c := range p.Children() {
		if err := checkPlanSize(c, nodes); err != nil {
			return err
		}
	}
	return nil
}

// checkExpr checks e, found at depth, and the plans of its subqueries.
func checkExpr(e Expr, depth int, nodes *int) error {
	if depth > MaxExprDepth {
		return qerr.Planf("an expression nests more than %d levels deep (operators, functions and parentheses count); split it, or use IN (...) for long OR lists", MaxExprDepth)
	}
	var sub Plan
	switch s := e.(type) {
	case *ScalarSubquery:
		sub = s.Plan
	case *Exists:
		sub = s.Plan
	case *InSubquery:
		sub = s.Plan
	}
	if sub != nil {
		if err := checkPlanSize(sub, nodes); err != nil {
			return err
		}
	}
	for _, c := range e.Children() {
		if err := checkExpr(c, depth+1, nodes); err != nil {
			return err
		}
	}
	return nil
}
