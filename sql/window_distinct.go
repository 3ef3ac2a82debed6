package sql

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
)

// fnWindowDistinct marks the argument of count(DISTINCT x) OVER (...):
// TiDB parses DISTINCT inside sum, avg, min and max window calls but not
// inside count's, so the pre-pass writes count(quiver_window_distinct(x))
// OVER (...) and the lowering takes the marker back off as DISTINCT.
const fnWindowDistinct = "quiver_window_distinct"

// windowCountDistinctEdits rewrites count(DISTINCT args) when the OVER at
// toks[i] follows it; nothing otherwise.
func windowCountDistinctEdits(toks []token, i int, matching func(int) int) []edit {
	open := callOpen(toks, i)
	if open < 1 || !toks[open-1].is("COUNT") || open+1 >= len(toks) || !toks[open+1].is("DISTINCT") {
		return nil
	}
	closeAt := matching(open)
	if closeAt < 0 || closeAt != i-1 {
		return nil
	}
	d := toks[open+1]
	return []edit{{d.Off, d.End, fnWindowDistinct + "("}, {toks[closeAt].Off, toks[closeAt].Off, ")"}}
}

// windowDistinctArgs takes the marker off a window call's arguments:
// count(quiver_window_distinct(x)) is count(DISTINCT x).
func windowDistinctArgs(args []ast.ExprNode) ([]ast.ExprNode, bool) {
	if len(args) != 1 {
		return args, false
	}
	f, ok := args[0].(*ast.FuncCallExpr)
	if !ok || !strings.EqualFold(f.FnName.L, fnWindowDistinct) {
		return args, false
	}
	return f.Args, true
}
