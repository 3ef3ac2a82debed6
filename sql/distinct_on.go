package sql

import (
	"strings"

	"github.com/quiverdb/quiver/logical"
	"github.com/quiverdb/quiver/qerr"
)

// fnDistinctOn is the marker the pre-pass writes for SELECT DISTINCT ON
// (a, b) ...: a last select item quiver_distinct_on(a, b), which the
// lowering takes out of the list.
const fnDistinctOn = "quiver_distinct_on"

// selectListEnds are the words that end a select list at its own depth.
var selectListEnds = map[string]bool{"FROM": true, "WHERE": true, "GROUP": true, "HAVING": true, "WINDOW": true, "QUALIFY": true,
	"ORDER": true, "LIMIT": true, "OFFSET": true, "FETCH": true, "UNION": true, "INTERSECT": true, "EXCEPT": true, "INTO": true}

// distinctOnEdits rewrites SELECT DISTINCT ON (keys) items, with DISTINCT
// at token i, into SELECT items, quiver_distinct_on(keys) (TiDB wants a
// bare * first in the list). The keys are pre-passed on their own, as
// their text moves.
func distinctOnEdits(text string, toks []token, i int, matching func(int) int) ([]edit, error) {
	t := toks[i]
	closeAt := matching(i + 2)
	if closeAt < 0 || closeAt == i+3 {
		return nil, qerr.At(t.Line, t.Col, "syntax error: DISTINCT ON needs a parenthesised list of expressions")
	}
	end, d := len(toks), 0
	for j := closeAt + 1; j < len(toks); j++ {
		tk := toks[j]
		if tk.punct("(") {
			d++
		} else if tk.punct(")") {
			if d == 0 {
				end = j
				break
			}
			d--
		} else if d == 0 && (tk.punct(";") || (tk.Kind == tokIdent && selectListEnds[strings.ToUpper(tk.Text)])) {
			end = j
			break
		}
	}
	if end == closeAt+1 {
		return nil, qerr.At(t.Line, t.Col, "syntax error: SELECT DISTINCT ON (...) needs a select list")
	}
	keysText := text[toks[i+3].Off:toks[closeAt-1].End]
	keyToks, err := tokenize(keysText)
	if err != nil {
		return nil, err
	}
	keys, err := prepass(keysText, keyToks, temporalEdits(keyToks)...)
	if err != nil {
		return nil, err
	}
	at := toks[end-1].End
	return []edit{
		{t.Off, toks[closeAt].End, ""},
		{at, at, ", " + fnDistinctOn + "(" + keys.Text + ")"},
	}, nil
}

// distinctOn keeps the first row of each group of rows equal on the first
// n sort keys of keys (over in's columns), in the order of the others: a
// ROW_NUMBER() window partitioned by those keys, and the rows numbered 1.
// The output has in's columns.
func distinctOn(in logical.Plan, keys []logical.SortKey, n int) (logical.Plan, error) {
	part := make([]logical.Expr, n)
	for i := range part {
		part[i] = keys[i].Expr
	}
	order := keys[n:]
	const rn = "__quiver_distinct_on_row"
	w, err := logical.NewWindow(in, []logical.Expr{&logical.Alias{Name: rn, Expr: &logical.WindowExpr{
		Func: logical.WinRowNumber, PartitionBy: part, OrderBy: order, Frame: logical.DefaultFrame(len(order) > 0)}}})
	if err != nil {
		return nil, err
	}
	ws := w.Schema()
	f, err := logical.NewFilter(w, &logical.Binary{Op: logical.OpEq, Left: outCol(ws, ws.Len()-1), Right: logical.Lit(int64(1))})
	if err != nil {
		return nil, err
	}
	cols := make([]logical.Expr, in.Schema().Len())
	for i := range cols {
		cols[i] = outCol(ws, i)
	}
	return logical.NewProjection(f, cols)
}
