package sql

import (
	"github.com/quiverdb/quiver/logical"
	"github.com/quiverdb/quiver/qerr"
)

// MaxNesting bounds, before parsing, how deeply a statement can nest: the
// parser, the lowering to logical plans and every rule after it recurse
// once per level, and a Go stack overflow kills the process (it is not a
// panic). The depth of an expression is at most its operators (a chain
// a OR b OR ... is as deep as it is long) plus its parentheses, so a
// statement whose count of both exceeds the bound is refused; what passes
// is checked exactly, against logical.MaxExprDepth, once it is a plan.
const MaxNesting = 100_000

// exprKeywords are the words that build an expression node of their own.
var exprKeywords = map[string]bool{
	"AND": true, "OR": true, "XOR": true, "NOT": true, "IS": true, "LIKE": true, "ILIKE": true,
	"BETWEEN": true, "IN": true, "CASE": true, "WHEN": true, "DIV": true, "MOD": true,
	"EXISTS": true, "CAST": true, "INTERVAL": true, "SELECT": true,
}

// checkNesting refuses a statement that may nest more than MaxNesting
// levels; the error points at the token where the bound is passed.
func checkNesting(toks []token) error {
	ops, depth, maxDepth := 0, 0, 0
	for _, t := range toks {
		switch {
		case t.Kind == tokPunct && t.Text == "(":
			depth++
			maxDepth = max(maxDepth, depth)
		case t.Kind == tokPunct && t.Text == ")":
			depth--
		case t.Kind == tokPunct && t.Text != "," && t.Text != ";" && t.Text != ".":
			ops++
		case t.Kind == tokIdent && exprKeywords[t.upper()]:
			ops++
		}
		if ops+maxDepth > MaxNesting {
			return qerr.At(t.Line, t.Col, "the statement nests too deeply: more than %d operators and levels of parentheses; split it, or use IN (...) for long OR lists", MaxNesting)
		}
	}
	return nil
}

// checkPlan applies the plan-size limits of logical.CheckSize.
func checkPlan(p logical.Plan) error { return logical.CheckSize(p) }
