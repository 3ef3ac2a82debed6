package sql

import (
	"sort"
	"strings"

	"github.com/quiverdb/quiver/functions"
	"github.com/quiverdb/quiver/qerr"
)

// Marker functions the pre-pass writes into the text TiDB parses. The
// lowering recognises them and restores the syntax they stand for; user SQL
// may not call them.
const (
	fnCast       = "quiver_cast"        // quiver_cast(expr, 'type name'): CAST(expr AS type name)
	fnNullsFirst = "quiver_nulls_first" // ORDER BY quiver_nulls_first(expr): expr ... NULLS FIRST
	fnNullsLast  = "quiver_nulls_last"  // ORDER BY quiver_nulls_last(expr): expr ... NULLS LAST
	fnBool       = "quiver_bool"        // quiver_bool(1|0): TRUE or FALSE
	fnTryCast    = "quiver_try_cast"    // quiver_try_cast(expr, 'type name'): TRY_CAST(expr AS type name)
	fnExclude    = "quiver_exclude"     // *, quiver_exclude('a', 'b'): * EXCLUDE (a, b)
	// quiver_agg('array_agg', 'flags', args..., keys..., cond):
	// array_agg or string_agg with DISTINCT, ORDER BY inside or FILTER
	// (collectingAgg has the flags).
	fnCollectAgg = "quiver_agg"
	// a || b is written as a <=> b (TiDB reads || as OR); the lowering
	// re-associates it where comparison precedence differs from PostgreSQL's.
	concatMarker = "<=>"
	// a IS NOT DISTINCT FROM b is written as a REGEXP b and a IS DISTINCT
	// FROM b as a NOT REGEXP b: TiDB parses both at comparison precedence.
	// User SQL may not use REGEXP (regexp functions are the way).
	notDistinctMarker = "REGEXP"
	// FULL [OUTER] JOIN is written as STRAIGHT_JOIN (an inner join TiDB
	// accepts with ON); user SQL may not use STRAIGHT_JOIN.
	fullJoinMarker = "STRAIGHT_JOIN"
)

// edit replaces text[Start:End] with Repl.
type edit struct {
	Start, End int
	Repl       string
}

// rewritten is the text handed to TiDB and the map back to the original.
type rewritten struct {
	Text    string
	anchors []anchor // sorted by Out
	// colAliases are the column lists of FROM ... [AS] alias(a, b, ...),
	// by lower-case alias, which the pre-pass removes from the text.
	colAliases map[string][]string
}

// anchor says that output offset Out corresponds to source offset Src; for a
// copied chunk the correspondence continues byte by byte, for replaced text
// every byte maps to Src.
type anchor struct {
	Out, Src int
	Copied   bool
}

// srcOffset maps an offset in the rewritten text back to the original text.
func (r *rewritten) srcOffset(out int) int {
	i := sort.Search(len(r.anchors), func(i int) bool { return r.anchors[i].Out > out }) - 1
	if i < 0 {
		return 0
	}
	a := r.anchors[i]
	if a.Copied {
		return a.Src + (out - a.Out)
	}
	return a.Src
}

func applyEdits(text string, edits []edit) *rewritten {
	sort.SliceStable(edits, func(i, j int) bool {
		if edits[i].Start != edits[j].Start {
			return edits[i].Start < edits[j].Start
		}
		return edits[i].End < edits[j].End // insertions before a replacement at the same offset
	})
	var b strings.Builder
	r := &rewritten{}
	pos := 0
	for _, e := range edits {
		if e.Start < pos { // overlapping edits cannot happen by construction; keep the first
			continue
		}
		r.anchors = append(r.anchors, anchor{Out: b.Len(), Src: pos, Copied: true})
		b.WriteString(text[pos:e.Start])
		r.anchors = append(r.anchors, anchor{Out: b.Len(), Src: e.Start})
		b.WriteString(e.Repl)
		pos = e.End
	}
	r.anchors = append(r.anchors, anchor{Out: b.Len(), Src: pos, Copied: true})
	b.WriteString(text[pos:])
	r.Text = b.String()
	return r
}

// prepass rewrites the syntax TiDB lacks into forms it parses (see the
// marker constants): CAST(x AS type) for any type name, NULLS FIRST/LAST,
// FULL [OUTER] JOIN, TRUE/FALSE (TiDB reads them as 1 and 0) and
// VALUES (...), (...) (TiDB wants ROW(...)).
// Extra edits (the file sources in FROM) are applied with them and win over
// the pre-pass's own edits inside the text they replace.
func prepass(text string, toks []token, extra ...edit) (*rewritten, error) {
	edits := extra
	colAliases := map[string][]string{}
	word := func(i int, kw string) bool { return i >= 0 && i < len(toks) && toks[i].is(kw) }
	pun := func(i int, p string) bool { return i >= 0 && i < len(toks) && toks[i].punct(p) }
	// matching returns the index of the ')' closing the '(' at i, or -1.
	matching := func(i int) int {
		d := 0
		for j := i; j < len(toks); j++ {
			if toks[j].punct("(") {
				d++
			} else if toks[j].punct(")") {
				d--
				if d == 0 {
					return j
				}
			}
		}
		return -1
	}
	consumed := map[int]bool{} // tokens an edit already rewrote, which no other case may see
	for i, t := range toks {
		if consumed[i] {
			continue
		}
		if t.Kind == tokIdent {
			switch strings.ToLower(t.Text) {
			case fnCast, fnTryCast, fnExclude, fnCollectAgg, fnNullsFirst, fnNullsLast, fnBool, qualifyWindow, "straight_join",
				fnRollup, fnCube, fnGroupingSets, fnGroupSet, fnDistinctOn:
				return nil, qerr.At(t.Line, t.Col, "%s is reserved", t.Text)
			}
		}
		switch {
		case t.Kind == tokIdent && t.is("QUALIFY"):
			e, err := qualifyEdits(toks, i)
			if err != nil {
				return nil, err
			}
			edits = append(edits, e...)
		case t.Kind == tokString && t.Text[0] != '\'':
			// E'...' → the standard literal of the same value.
			edits = append(edits, edit{t.Off, t.End, "'" + strings.ReplaceAll(t.value(), "'", "''") + "'"})
		case t.punct("(") && i >= 2 && (toks[i-1].Kind == tokIdent || toks[i-1].Kind == tokQuotedIdent) &&
			(word(i-2, "AS") || pun(i-2, ")") || (toks[i-2].Kind == tokIdent && (word(i-3, "FROM") || word(i-3, "JOIN") || pun(i-3, ",")))) &&
			!isCastKeyword(toks[i-1]) && !notAlias[strings.ToUpper(toks[i-1].Text)]:
			// FROM ... [AS] alias(a, b) (after AS, a subquery, or a table
			// name in FROM or JOIN): the pre-pass drops the column list
			// and the lowering renames the source's columns.
			closeAt := matching(i)
			names, ok := identList(toks, i+1, closeAt)
			if !ok {
				continue
			}
			key := strings.ToLower(toks[i-1].value())
			if prev, dup := colAliases[key]; dup && strings.Join(prev, "\x00") != strings.Join(names, "\x00") {
				return nil, qerr.NotImplementedf("sql: line %d, column %d: alias %s is given two different column lists", t.Line, t.Col, toks[i-1].value())
			}
			colAliases[key] = names
			edits = append(edits, edit{t.Off, toks[closeAt].End, ""})
		case t.Kind == tokIdent && mysqlReserved[strings.ToLower(t.Text)] && usedAsName(toks, i):
			// Words MySQL reserves but PostgreSQL and DuckDB let name
			// columns: quoted for TiDB where they are not keywords.
			edits = append(edits, edit{t.Off, t.End, "`" + t.Text + "`"})
		case t.is("EXCLUDE") && pun(i-1, "*") && (word(i-2, "SELECT") || word(i-2, "DISTINCT") || word(i-2, "ALL") || pun(i-2, ",") || pun(i-2, ".")):
			// (a * exclude, with a column named exclude, is a product.)
			// * EXCLUDE (a, b) or * EXCLUDE a: the star's columns but those.
			var names []string
			last := i + 1
			if pun(i+1, "(") {
				last = matching(i + 1)
				var ok bool
				if names, ok = identList(toks, i+2, last); !ok {
					return nil, qerr.At(t.Line, t.Col, "syntax error: EXCLUDE needs a column name or a parenthesised list of them")
				}
			} else if last < len(toks) && (toks[last].Kind == tokIdent || toks[last].Kind == tokQuotedIdent) {
				names = []string{toks[last].value()}
			} else {
				return nil, qerr.At(t.Line, t.Col, "syntax error: EXCLUDE needs a column name or a parenthesised list of them")
			}
			quoted := make([]string, len(names))
			for k, n := range names {
				quoted[k] = "'" + strings.ReplaceAll(n, "'", "''") + "'"
			}
			edits = append(edits, edit{t.Off, toks[last].End, ", " + fnExclude + "(" + strings.Join(quoted, ", ") + ")"})
		case t.is("OVER") && pun(i-1, ")"):
			edits = append(edits, windowCountDistinctEdits(toks, i, matching)...)
		case t.is("INTERVAL") && !pun(i-1, "."):
			edits = append(edits, frameIntervalEdits(toks, i)...)
		case t.is("FILTER") && pun(i+1, "(") && word(i+2, "WHERE") && pun(i-1, ")"):
			es, err := filterClause(text, toks, i, matching)
			if err != nil {
				return nil, err
			}
			edits = append(edits, es...)
		case t.is("DISTINCT") && word(i+1, "ON") && pun(i+2, "(") && word(i-1, "SELECT"):
			es, err := distinctOnEdits(text, toks, i, matching)
			if err != nil {
				return nil, err
			}
			edits = append(edits, es...)
		case (t.is("STRING_AGG") || t.is("ARRAY_AGG")) && pun(i+1, "(") && !pun(i-1, "."):
			es, err := collectingAgg(toks, i, matching, consumed)
			if err != nil {
				return nil, err
			}
			edits = append(edits, es...)
		case t.is("WITHIN") && word(i+1, "GROUP") && pun(i+2, "("):
			es, err := withinGroup(text, toks, i, matching)
			if err != nil {
				return nil, err
			}
			edits = append(edits, es...)
		case t.punct("||"):
			edits = append(edits, edit{t.Off, t.End, concatMarker})
		case t.punct("<=") && pun(i+1, ">") && toks[i+1].Off == t.End:
			return nil, qerr.At(t.Line, t.Col, "operator <=> is not supported; use IS NOT DISTINCT FROM semantics with IS NULL checks")
		case t.is("EXTRACT") && pun(i+1, "(") && i+3 < len(toks) && toks[i+2].Kind == tokIdent && word(i+3, "FROM"):
			// EXTRACT(field FROM x) → date_part('field', x): TiDB knows
			// only MySQL's units, not dow, doy, epoch and the like.
			edits = append(edits, edit{t.Off, toks[i+3].End, "date_part('" + strings.ToLower(toks[i+2].Text) + "', "})
		case (t.is("CAST") || t.is("TRY_CAST")) && pun(i+1, "("):
			closeAt := matching(i + 1)
			if closeAt < 0 {
				continue // TiDB reports the syntax error
			}
			as, d := -1, 0
			for j := i + 1; j < closeAt; j++ {
				switch {
				case toks[j].punct("("):
					d++
				case toks[j].punct(")"):
					d--
				case d == 1 && toks[j].is("AS"):
					as = j
				}
			}
			if as < 0 || as+1 >= closeAt {
				continue
			}
			parts := make([]string, 0, closeAt-as-1)
			for j := as + 1; j < closeAt; j++ {
				parts = append(parts, toks[j].Text)
			}
			typ := strings.ReplaceAll(strings.Join(parts, " "), "'", "''")
			marker := fnCast
			if t.is("TRY_CAST") {
				marker = fnTryCast
			}
			edits = append(edits,
				edit{t.Off, t.End, marker},
				edit{toks[as].Off, toks[closeAt-1].End, ", '" + typ + "'"})
		case t.is("GROUP") && word(i+1, "BY"):
			// ROLLUP, CUBE, GROUPING SETS and () → marker calls
			// (grouping.go), which TiDB parses as function calls.
			es, err := groupByEdits(toks, i, matching)
			if err != nil {
				return nil, err
			}
			edits = append(edits, es...)
		case t.is("IS") && word(i+1, "DISTINCT") && word(i+2, "FROM"):
			edits = append(edits, edit{t.Off, toks[i+2].End, "NOT " + notDistinctMarker})
		case t.is("IS") && word(i+1, "NOT") && word(i+2, "DISTINCT") && word(i+3, "FROM"):
			edits = append(edits, edit{t.Off, toks[i+3].End, notDistinctMarker})
		case t.is("REGEXP") || t.is("RLIKE"):
			return nil, qerr.NotImplementedf("sql: line %d, column %d: the %s operator is not supported", t.Line, t.Col, t.upper())
		case (t.is("VARIANCE") || t.is("STDDEV")) && pun(i+1, "("):
			// TiDB reads these as MySQL does (population); PostgreSQL and
			// DuckDB mean the sample forms.
			name := "stddev_samp"
			if t.is("VARIANCE") {
				name = "var_samp"
			}
			edits = append(edits, edit{t.Off, t.End, name})
		case t.is("OFFSET") && !word(i-2, "LIMIT") && i+1 < len(toks) && toks[i+1].Kind == tokNumber:
			// OFFSET n [ROW|ROWS] [FETCH FIRST|NEXT [m] ROW|ROWS ONLY], the
			// standard's form, and a bare OFFSET n: TiDB knows only
			// LIMIT m OFFSET n.
			end := i + 1
			if word(end+1, "ROW") || word(end+1, "ROWS") {
				end++
			}
			limit := "9223372036854775807"
			if word(end+1, "FETCH") {
				m, last, ok := fetchClause(toks, end+1)
				if !ok {
					return nil, qerr.At(toks[end+1].Line, toks[end+1].Col, "syntax error: want FETCH FIRST|NEXT [n] ROW|ROWS ONLY")
				}
				limit, end = m, last
			}
			edits = append(edits, edit{t.Off, toks[end].End, "LIMIT " + limit + " OFFSET " + toks[i+1].Text})
		case t.is("FETCH") && (word(i+1, "FIRST") || word(i+1, "NEXT")) && !word(i-2, "OFFSET") && !word(i-3, "OFFSET"):
			m, last, ok := fetchClause(toks, i)
			if !ok {
				return nil, qerr.At(t.Line, t.Col, "syntax error: want FETCH FIRST|NEXT [n] ROW|ROWS ONLY")
			}
			edits = append(edits, edit{t.Off, toks[last].End, "LIMIT " + m})
		case t.punct("::"):
			// x::type → quiver_cast(x, 'type'), as CAST(x AS type): the
			// postfix cast binds tighter than any operator, so x is the
			// primary just before it.
			start := castOperandStart(toks, i-1)
			if start < 0 || i+1 >= len(toks) || toks[i+1].Kind != tokIdent {
				return nil, qerr.At(t.Line, t.Col, "syntax error: :: needs an expression before it and a type name after it")
			}
			end := i + 1
			if word(i+1, "DOUBLE") && word(i+2, "PRECISION") {
				end = i + 2
			}
			if pun(end+1, "(") {
				if end = matching(end + 1); end < 0 {
					continue // TiDB reports the syntax error
				}
			}
			parts := make([]string, 0, end-i)
			for j := i + 1; j <= end; j++ {
				parts = append(parts, toks[j].Text)
			}
			typ := strings.ReplaceAll(strings.Join(parts, " "), "'", "''")
			edits = append(edits,
				edit{toks[start].Off, toks[start].Off, fnCast + "("},
				edit{t.Off, toks[end].End, ", '" + typ + "')"})
		case t.is("FULL") && (word(i+1, "JOIN") || (word(i+1, "OUTER") && word(i+2, "JOIN"))):
			last := i + 1
			if word(i+1, "OUTER") {
				last = i + 2
			}
			edits = append(edits, edit{t.Off, toks[last].End, fullJoinMarker})
		case t.is("NULLS") && (word(i+1, "FIRST") || word(i+1, "LAST")):
			fn := fnNullsFirst
			if word(i+1, "LAST") {
				fn = fnNullsLast
			}
			exprEnd := i - 1
			if word(exprEnd, "ASC") || word(exprEnd, "DESC") {
				exprEnd--
			}
			start, d := -1, 0
			for j := exprEnd; j >= 0; j-- {
				if toks[j].punct(")") {
					d++
					continue
				}
				if toks[j].punct("(") {
					if d == 0 {
						start = j + 1
						break
					}
					d--
					continue
				}
				if d == 0 && (toks[j].punct(",") || (toks[j].is("BY") && word(j-1, "ORDER"))) {
					start = j + 1
					break
				}
			}
			if start < 0 || start > exprEnd {
				return nil, qerr.At(t.Line, t.Col, "NULLS %s outside ORDER BY", toks[i+1].upper())
			}
			edits = append(edits,
				edit{toks[start].Off, toks[start].Off, fn + "("},
				edit{toks[exprEnd].End, toks[exprEnd].End, ")"},
				edit{t.Off, toks[i+1].End, ""})
		case (t.is("TRUE") || t.is("FALSE")) && !word(i-1, "IS") && !(word(i-1, "NOT") && word(i-2, "IS")):
			v := "1"
			if t.is("FALSE") {
				v = "0"
			}
			edits = append(edits, edit{t.Off, t.End, fnBool + "(" + v + ")"})
		case t.is("VALUES") && pun(i+1, "("):
			// VALUES (a, b), (c, d) → VALUES ROW(a, b), ROW(c, d)
			j := i + 1
			for pun(j, "(") {
				edits = append(edits, edit{toks[j].Off, toks[j].Off, "ROW"})
				k := matching(j)
				if k < 0 || !pun(k+1, ",") {
					break
				}
				j = k + 2
			}
		}
	}
	rw := applyEdits(text, edits)
	rw.colAliases = colAliases
	return rw, nil
}

// notAlias are words that can stand before a parenthesised list of names
// without being a table alias.
var notAlias = map[string]bool{"USING": true, "OVER": true, "FILTER": true, "JOIN": true, "PARTITION": true,
	"TABLE": true, "VIEW": true, "WITH": true, "RECURSIVE": true, "LATERAL": true, "WINDOW": true}

// identList reads the names between tokens from and to (exclusive): one or
// more identifiers separated by commas.
func identList(toks []token, from, to int) ([]string, bool) {
	if to <= from {
		return nil, false
	}
	var names []string
	for j := from; j < to; j += 2 {
		if toks[j].Kind != tokIdent && toks[j].Kind != tokQuotedIdent {
			return nil, false
		}
		names = append(names, toks[j].value())
		if j+1 < to && !toks[j+1].punct(",") {
			return nil, false
		}
	}
	return names, true
}

// castOperandStart returns the index of the first token of the primary
// expression that ends at token last (an identifier or a dotted name, a
// literal, or a parenthesized expression or function call), or -1.
func castOperandStart(toks []token, last int) int {
	if last < 0 {
		return -1
	}
	t := toks[last]
	switch {
	case t.punct(")"):
		d := 0
		for j := last; j >= 0; j-- {
			if toks[j].punct(")") {
				d++
			} else if toks[j].punct("(") {
				d--
				if d == 0 {
					if j > 0 && (toks[j-1].Kind == tokIdent || toks[j-1].Kind == tokQuotedIdent) && !isCastKeyword(toks[j-1]) {
						return nameStart(toks, j-1)
					}
					return j
				}
			}
		}
		return -1
	case t.Kind == tokIdent || t.Kind == tokQuotedIdent:
		return nameStart(toks, last)
	case t.Kind == tokString || t.Kind == tokNumber:
		return last
	}
	return -1
}

// nameStart extends the name ending at token i backwards over a.b.c.
func nameStart(toks []token, i int) int {
	for i >= 2 && toks[i-1].punct(".") && (toks[i-2].Kind == tokIdent || toks[i-2].Kind == tokQuotedIdent) {
		i -= 2
	}
	return i
}

// isCastKeyword reports whether t, before a parenthesis, is a keyword that
// does not name a function (x IN (...)::int is not a call of IN).
func isCastKeyword(t token) bool {
	for _, kw := range []string{"IN", "AND", "OR", "NOT", "SELECT", "FROM", "WHERE", "ON", "AS", "BY", "WHEN", "THEN", "ELSE", "EXISTS", "ANY", "ALL", "SOME", "VALUES", "ROW"} {
		if t.is(kw) {
			return true
		}
	}
	return false
}

// fetchClause reads FETCH FIRST|NEXT [m] ROW|ROWS ONLY starting at token i:
// the row count (1 when left out) and the index of ONLY.
func fetchClause(toks []token, i int) (count string, last int, ok bool) {
	j := i + 1 // FIRST or NEXT
	if j >= len(toks) || !(toks[j].is("FIRST") || toks[j].is("NEXT")) {
		return "", 0, false
	}
	count = "1"
	if j+1 < len(toks) && toks[j+1].Kind == tokNumber {
		count = toks[j+1].Text
		j++
	}
	if j+2 >= len(toks) || !(toks[j+1].is("ROW") || toks[j+1].is("ROWS")) || !toks[j+2].is("ONLY") {
		return "", 0, false
	}
	return count, j + 2, true
}

// filterClause rewrites agg(args) FILTER (WHERE cond), with FILTER at token
// i, into agg(CASE WHEN cond THEN arg END, ...): every aggregate skips NULLs,
// so the rows the condition rejects no longer count; count(*) counts
// CASE WHEN cond THEN 1 END, and DISTINCT stays in front. The condition is
// pre-passed on its own, as its text moves.
func filterClause(text string, toks []token, i int, matching func(int) int) ([]edit, error) {
	t := toks[i]
	closeFilter := matching(i + 1)
	if closeFilter < 0 || closeFilter == i+3 {
		return nil, qerr.At(t.Line, t.Col, "syntax error: FILTER needs (WHERE condition)")
	}
	// The aggregate call's parentheses end just before FILTER.
	open := callOpen(toks, i)
	if open < 1 || toks[open-1].Kind != tokIdent {
		return nil, qerr.At(t.Line, t.Col, "FILTER (WHERE ...) must follow an aggregate call")
	}
	if f, ok := functions.Lookup(strings.ToLower(toks[open-1].Text)); !ok || f.Kind != functions.Aggregate {
		return nil, qerr.At(t.Line, t.Col, "FILTER (WHERE ...) must follow an aggregate call, not %s(...)", toks[open-1].Text)
	}
	// Only the first argument is wrapped: string_agg's separator stays,
	// and a pair with one NULL is skipped by covar_* and corr anyway.
	lastArg := i - 2
	for j, d := open+1, 0; j < i-1; j++ {
		switch {
		case toks[j].punct("("):
			d++
		case toks[j].punct(")"):
			d--
		case d == 0 && toks[j].punct(","):
			lastArg = min(lastArg, j-1)
		}
	}
	condText := text[toks[i+3].Off:toks[closeFilter-1].End]
	condToks, err := tokenize(condText)
	if err != nil {
		return nil, err
	}
	cond, err := prepass(condText, condToks, temporalEdits(condToks)...)
	if err != nil {
		return nil, err
	}
	first := open + 1
	if first < i-1 && (toks[first].is("DISTINCT") || toks[first].is("ALL")) {
		first++
	}
	if first >= i-1 {
		return nil, qerr.At(t.Line, t.Col, "FILTER (WHERE ...) must follow an aggregate call with an argument or *")
	}
	es := []edit{{toks[first].Off, toks[first].Off, "CASE WHEN " + cond.Text + " THEN "}}
	if toks[first].punct("*") && first == lastArg {
		es = append(es, edit{toks[first].Off, toks[first].End, "1"})
	}
	return append(es,
		edit{toks[lastArg].End, toks[lastArg].End, " END"},
		edit{t.Off, toks[closeFilter].End, ""}), nil
}

// mysqlReserved are the words TiDB reserves that are ordinary column names
// in PostgreSQL and DuckDB.
var mysqlReserved = map[string]bool{"key": true, "rank": true, "range": true, "row": true, "mod": true,
	"out": true, "database": true, "keys": true, "div": true, "rows": true, "groups": true}

// usedAsName reports whether the reserved word at token i names something
// rather than acting as a keyword: not a call (rank(), mod(a, b), ROW(...)),
// not a window frame's ROWS/RANGE/GROUPS or CURRENT ROW, not FETCH's ROW,
// not MySQL's MOD and DIV operators between two operands, not PRIMARY KEY.
func usedAsName(toks []token, i int) bool {
	at := func(j int) token {
		if j < 0 || j >= len(toks) {
			return token{}
		}
		return toks[j]
	}
	next, prev := at(i+1), at(i-1)
	if next.punct("(") && !prev.punct(".") {
		return false
	}
	exprEnd := func(t token) bool {
		return (t.Kind == tokIdent && !t.is("SELECT") && !t.is("WHERE") && !t.is("AND") && !t.is("OR") && !t.is("BY") && !t.is("ON") && !t.is("NOT")) ||
			t.Kind == tokQuotedIdent || t.Kind == tokNumber || t.Kind == tokString || t.punct(")")
	}
	exprStart := func(t token) bool {
		return (t.Kind == tokIdent && !t.is("FROM") && !t.is("AS") && !t.is("WHERE") && !t.is("AND") && !t.is("OR") && !t.is("ORDER") && !t.is("GROUP")) ||
			t.Kind == tokQuotedIdent || t.Kind == tokNumber || t.Kind == tokString || t.punct("(") || t.punct("-")
	}
	switch w := strings.ToLower(toks[i].Text); w {
	case "mod", "div":
		return !(exprEnd(prev) && exprStart(next))
	case "row", "rows":
		if prev.is("CURRENT") || prev.is("FIRST") || prev.is("NEXT") || prev.Kind == tokNumber || next.is("ONLY") ||
			next.is("BETWEEN") || next.is("UNBOUNDED") || next.is("CURRENT") || next.Kind == tokNumber {
			return false
		}
	case "range", "groups":
		if next.is("BETWEEN") || next.is("UNBOUNDED") || next.is("CURRENT") || next.Kind == tokNumber || next.is("INTERVAL") {
			return false
		}
	case "key", "keys":
		if prev.is("PRIMARY") || prev.is("FOREIGN") || prev.is("UNIQUE") {
			return false
		}
	}
	return true
}

// collectingAgg rewrites array_agg or string_agg, at token i, when it has
// DISTINCT, ORDER BY inside or FILTER (WHERE ...) after it, into
// quiver_agg('name', 'flags', args..., keys..., cond): flags are "D" for
// DISTINCT, then "|" and two letters per key (a or d, then f or l for NULLS
// FIRST or LAST, PostgreSQL's default NULLS FIRST for DESC only), then "|F"
// with a FILTER condition. The tokens it removes are marked consumed so that
// no other case rewrites them; the expressions stay where they are, for the
// other cases to rewrite.
func collectingAgg(toks []token, i int, matching func(int) int, consumed map[int]bool) ([]edit, error) {
	t := toks[i]
	open, closeAt := i+1, matching(i+1)
	if closeAt < 0 {
		return nil, nil // TiDB reports the syntax error
	}
	var es []edit
	drop := func(j int) {
		es = append(es, edit{toks[j].Off, toks[j].End, ""})
		consumed[j] = true
	}
	flags := ""
	if open+1 < closeAt && toks[open+1].is("DISTINCT") {
		flags = "D"
		drop(open + 1)
	}
	orderAt := -1
	for j, d := open+1, 0; j < closeAt; j++ {
		switch {
		case toks[j].punct("("):
			d++
		case toks[j].punct(")"):
			d--
		case d == 0 && toks[j].is("ORDER") && j+1 < closeAt && toks[j+1].is("BY"):
			orderAt = j
		}
		if orderAt >= 0 {
			break
		}
	}
	keys := ""
	if orderAt >= 0 {
		es = append(es, edit{toks[orderAt].Off, toks[orderAt+1].End, ","})
		consumed[orderAt], consumed[orderAt+1] = true, true
		// Each key ends at a comma at depth 0 or at the closing parenthesis.
		start := orderAt + 2
		for j, d := start, 0; j <= closeAt; j++ {
			switch {
			case toks[j].punct("(") && j < closeAt:
				d++
				continue
			case toks[j].punct(")") && j < closeAt:
				d--
				continue
			case !(j == closeAt || (d == 0 && toks[j].punct(","))):
				continue
			}
			end := j - 1 // the key's last token, before its modifiers
			nulls := ""
			if end-1 >= start && toks[end-1].is("NULLS") && (toks[end].is("FIRST") || toks[end].is("LAST")) {
				nulls = "l"
				if toks[end].is("FIRST") {
					nulls = "f"
				}
				drop(end - 1)
				drop(end)
				end -= 2
			}
			dir := "a"
			if end >= start && (toks[end].is("ASC") || toks[end].is("DESC")) {
				if toks[end].is("DESC") {
					dir = "d"
				}
				drop(end)
				end--
			}
			if end < start {
				return nil, qerr.At(toks[j].Line, toks[j].Col, "syntax error: ORDER BY inside %s needs an expression", t.Text)
			}
			if nulls == "" {
				nulls = map[string]string{"a": "l", "d": "f"}[dir]
			}
			keys += dir + nulls
			start = j + 1
		}
	}
	filter := ""
	if closeAt+3 < len(toks) && toks[closeAt+1].is("FILTER") && toks[closeAt+2].punct("(") && toks[closeAt+3].is("WHERE") {
		closeFilter := matching(closeAt + 2)
		if closeFilter < 0 || closeFilter == closeAt+4 {
			return nil, qerr.At(toks[closeAt+1].Line, toks[closeAt+1].Col, "syntax error: FILTER needs (WHERE condition)")
		}
		filter = "F"
		es = append(es, edit{toks[closeAt].Off, toks[closeAt+3].End, ", "})
		for j := closeAt; j <= closeAt+3; j++ {
			consumed[j] = true
		}
	}
	after := closeAt + 1
	if filter != "" {
		after = matching(closeAt+2) + 1
	}
	if after < len(toks) && toks[after].is("OVER") {
		return windowCollectEdits(toks, i, closeAt, flags, keys, filter, es, consumed)
	}
	if flags == "" && keys == "" && filter == "" {
		return nil, nil // a plain call
	}
	if open+1 == closeAt || (flags == "D" && open+2 == closeAt) {
		return nil, qerr.At(t.Line, t.Col, "%s needs an argument", t.Text)
	}
	consumed[i], consumed[open] = true, true
	return append(es,
		edit{t.Off, t.End, fnCollectAgg},
		edit{toks[open].Off, toks[open].End, "('" + strings.ToLower(t.Text) + "', '" + flags + "|" + keys + "|" + filter + "', "}), nil
}

// withinGroup rewrites percentile_cont(f) WITHIN GROUP (ORDER BY x [ASC|DESC]),
// with WITHIN at token i, into percentile_cont(x, f) (percentile_cont(x,
// 1 - (f)) for DESC, the same value counted from the other end), and the
// same for percentile_disc (ascending only). The ordering expression is
// pre-passed on its own, as its text moves.
func withinGroup(text string, toks []token, i int, matching func(int) int) ([]edit, error) {
	t := toks[i]
	closeAt := matching(i + 2)
	if closeAt < 0 || !(i+4 < closeAt && toks[i+3].is("ORDER") && toks[i+4].is("BY")) {
		return nil, qerr.At(t.Line, t.Col, "syntax error: WITHIN GROUP needs (ORDER BY expression)")
	}
	open := callOpen(toks, i)
	if open < 1 || !(toks[open-1].is("percentile_cont") || toks[open-1].is("percentile_disc")) || !pun(toks, i-1, ")") {
		return nil, qerr.NotImplementedf("sql: line %d, column %d: WITHIN GROUP is supported for percentile_cont and percentile_disc only", t.Line, t.Col)
	}
	if open+1 == i-1 {
		return nil, qerr.At(t.Line, t.Col, "%s needs a fraction: %s(0.5) WITHIN GROUP (ORDER BY ...)", toks[open-1].Text, toks[open-1].Text)
	}
	last := closeAt - 1
	desc := toks[last].is("DESC")
	if desc || toks[last].is("ASC") {
		last--
	}
	for j, d := i+5, 0; j <= last; j++ {
		switch {
		case toks[j].punct("("):
			d++
		case toks[j].punct(")"):
			d--
		case d == 0 && toks[j].punct(","):
			return nil, qerr.At(toks[j].Line, toks[j].Col, "WITHIN GROUP takes one ORDER BY expression")
		}
	}
	if desc && toks[open-1].is("percentile_disc") {
		return nil, qerr.NotImplementedf("sql: line %d, column %d: percentile_disc with ORDER BY ... DESC is not supported", t.Line, t.Col)
	}
	if last < i+5 {
		return nil, qerr.At(t.Line, t.Col, "syntax error: WITHIN GROUP needs (ORDER BY expression)")
	}
	exprText := text[toks[i+5].Off:toks[last].End]
	exprToks, err := tokenize(exprText)
	if err != nil {
		return nil, err
	}
	expr, err := prepass(exprText, exprToks, temporalEdits(exprToks)...)
	if err != nil {
		return nil, err
	}
	es := []edit{{toks[open].End, toks[open].End, expr.Text + ", "}}
	if desc {
		es = append(es, edit{toks[open].End, toks[open].End, "1 - ("}, edit{toks[i-1].Off, toks[i-1].Off, ")"})
	}
	return append(es, edit{t.Off, toks[closeAt].End, ""}), nil
}

func pun(toks []token, i int, p string) bool { return i >= 0 && i < len(toks) && toks[i].punct(p) }

// callOpen returns the index of the '(' whose ')' is the token before i
// (the call a FILTER or WITHIN GROUP at i follows), or -1.
func callOpen(toks []token, i int) int {
	d := 0
	for j := i - 1; j >= 0; j-- {
		if toks[j].punct(")") {
			d++
		} else if toks[j].punct("(") {
			d--
			if d == 0 {
				return j
			}
		}
	}
	return -1
}
