package sql

import (
	"slices"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver/logical"
	"github.com/quiverdb/quiver/qerr"
	"github.com/quiverdb/quiver/temporal"
)

// temporalTypeName finishes a TIMESTAMP, DATETIME, TIME, TIMESTAMPTZ or
// INTERVAL type name whose first word is t, reading an optional
// WITH[OUT] TIME ZONE from toks[i:]. A timestamp with a time zone has zone
// zone; TIME WITH TIME ZONE is not supported.
func temporalTypeName(t token, toks []token, i int, zone string) (arrow.DataType, int, error) {
	word := func(j int, kw string) bool { return j < len(toks) && toks[j].is(kw) }
	tz := false
	switch {
	case word(i, "WITHOUT") && word(i+1, "TIME") && word(i+2, "ZONE"):
		i += 3
	case word(i, "WITH") && word(i+1, "TIME") && word(i+2, "ZONE"):
		i += 3
		tz = true
	}
	switch t.upper() {
	case "TIMESTAMPTZ":
		tz = true
		fallthrough
	case "TIMESTAMP", "DATETIME":
		if tz {
			return logical.TimestampTZ(zone), i, nil
		}
		return logical.Timestamp, i, nil
	case "TIME":
		if tz {
			return nil, i, qerr.NotImplementedf("TIME WITH TIME ZONE is not supported (TIME is)")
		}
		return logical.Time, i, nil
	}
	return logical.Interval, i, nil
}

// intervalUnitWord reports whether t is a unit word an INTERVAL literal may
// end with (INTERVAL '3' DAY, INTERVAL 3 DAYS); the one-letter
// abbreviations are left out there, where they would take an alias's place.
func intervalUnitWord(t token) bool {
	return t.Kind == tokIdent && temporal.IsIntervalUnit(t.Text) && !t.is("M") && !t.is("S") && !t.is("D") && !t.is("H") && !t.is("Y") && !t.is("W")
}

// temporalEdits rewrites the temporal literals TiDB does not read as
// PostgreSQL and DuckDB do into casts of their text (quiver_cast('...',
// 'type')), which the lowering folds into constants:
//
//	INTERVAL '1 year 2 months'   INTERVAL '3' DAY   INTERVAL 3 DAYS
//	TIMESTAMP '2024-01-02 03:04:05'   TIME '12:00'   TIMESTAMPTZ '...'
//
// An INTERVAL of a window frame (… PRECEDING/FOLLOWING) is left to TiDB.
// DATE_ADD(x, y) and DATE_SUB(x, y) (ADDDATE, SUBDATE) become x + y and
// x - y, since TiDB's grammar takes only INTERVAL n unit as y.
func temporalEdits(toks []token) []edit {
	var edits []edit
	pun := func(i int, p string) bool { return i >= 0 && i < len(toks) && toks[i].punct(p) }
	cast := func(start, end int, text, typ string) {
		edits = append(edits, edit{toks[start].Off, toks[end].End,
			fnCast + "('" + strings.ReplaceAll(text, "'", "''") + "', '" + typ + "')"})
	}
	edits = atTimeZoneEdits(toks)
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if t.Kind != tokIdent || i+1 >= len(toks) {
			continue
		}
		next := toks[i+1]
		switch {
		case (t.is("TIMESTAMP") || t.is("TIMESTAMPTZ") || t.is("TIME") || t.is("DATETIME")) && next.Kind == tokString && !pun(i-1, "."):
			cast(i, i+1, next.value(), strings.ToLower(t.Text))
			i++
		case (t.is("DATE_ADD") || t.is("DATE_SUB") || t.is("ADDDATE") || t.is("SUBDATE")) && pun(i+1, "(") && !pun(i-1, "."):
			// date_add(x, y) → (x + y), date_sub(x, y) → (x - y): TiDB's
			// grammar takes only INTERVAL n unit as y.
			comma, closeAt, d := -1, -1, 0
			for j := i + 1; j < len(toks) && closeAt < 0; j++ {
				switch {
				case toks[j].punct("("):
					d++
				case toks[j].punct(")"):
					if d--; d == 0 {
						closeAt = j
					}
				case toks[j].punct(",") && d == 1:
					if comma >= 0 {
						closeAt = -2 // more than two arguments: TiDB reports it
					}
					comma = j
				}
			}
			if comma < 0 || closeAt < 0 {
				continue
			}
			op := "+"
			if t.is("DATE_SUB") || t.is("SUBDATE") {
				op = "-"
			}
			edits = append(edits, edit{t.Off, toks[i+1].End, "(("}, edit{toks[comma].Off, toks[comma].End, ") " + op + " ("},
				edit{toks[closeAt].Off, toks[closeAt].End, "))"})
			i++
		case t.is("INTERVAL") && !pun(i-1, "."):
			j := i + 1
			sign := ""
			if pun(j, "-") || pun(j, "+") {
				sign = toks[j].Text
				j++
			}
			if j >= len(toks) || (toks[j].Kind != tokString && toks[j].Kind != tokNumber) {
				continue
			}
			text := sign + toks[j].value()
			end := j
			if j+1 < len(toks) && intervalUnitWord(toks[j+1]) {
				text += " " + toks[j+1].Text
				end = j + 1
			}
			if end+1 < len(toks) && (toks[end+1].is("PRECEDING") || toks[end+1].is("FOLLOWING")) {
				continue
			}
			cast(i, end, text, "interval")
			i = end
		}
	}
	return edits
}

// temporalCast folds CAST('text' AS timestamp|time|interval) at planning,
// so that a malformed literal is a planning error naming it; other casts
// are left to coercion.
func temporalCast(x logical.Expr, t arrow.DataType) (logical.Expr, error) {
	l, ok := x.(*logical.Literal)
	if !ok || l.Value == nil || !logical.IsString(l.Type) || !logical.IsTemporal(t) || t.ID() == arrow.DATE32 {
		return &logical.Cast{Expr: x, Type: t}, nil
	}
	f := logical.CastTo(l, t)
	if _, folded := f.(*logical.Literal); folded {
		return f, nil
	}
	what := map[arrow.Type]string{
		arrow.TIMESTAMP:               "timestamp (want YYYY-MM-DD [HH:MM[:SS[.ffffff]]])",
		arrow.TIME64:                  "time (want HH:MM[:SS[.ffffff]])",
		arrow.INTERVAL_MONTH_DAY_NANO: "interval (want e.g. '1 year 2 months 3 days 04:05:06')",
	}[t.ID()]
	if logical.IsTimestampTZ(t) {
		what = "timestamptz (want YYYY-MM-DD [HH:MM[:SS[.ffffff]]] [an offset such as +02, or a zone name])"
	}
	return nil, qerr.Planf("invalid %s: %s", what, l)
}

// SetTimeZone sets the session time zone the planner gives TIMESTAMPTZ
// types (a canonical value of quiver.timezone; one LoadZone refuses leaves
// UTC).
func (p *Planner) SetTimeZone(name string) {
	loc, ok := temporal.LoadZone(name)
	if !ok || loc == time.UTC {
		p.zone, p.zoneName = nil, ""
		return
	}
	p.zone, p.zoneName = loc, name
}

// zoneText is the session time zone's name, as TIMESTAMPTZ types carry it.
func (p *Planner) zoneText() string {
	if p.zoneName == "" {
		return "UTC"
	}
	return p.zoneName
}

// statementClock is the time now(), current_timestamp and current_date
// read, taken once per builder so that every call in one statement sees
// the same instant (PostgreSQL's rule). Microseconds, UTC.
func (b *builder) statementClock() time.Time {
	if b.now.IsZero() {
		b.now = time.Now().UTC().Truncate(time.Microsecond)
	}
	return b.now
}

// clockCall lowers now(), current_timestamp, localtimestamp and
// current_date to constants of the statement's clock, as PostgreSQL types
// them: now() is a TIMESTAMPTZ, localtimestamp the TIMESTAMP and
// current_date the date of the session zone's wall clock; ok is false for
// other names.
func (b *builder) clockCall(name string, nargs int) (logical.Expr, bool, error) {
	now := b.statementClock().UnixMicro()
	local := now
	if b.p.zone != nil {
		local = temporal.ToLocal(now, b.p.zone)
	}
	var lit *logical.Literal
	switch name {
	case "now", "current_timestamp", "transaction_timestamp", "statement_timestamp", "get_current_timestamp":
		lit = &logical.Literal{Type: logical.TimestampTZ(b.p.zoneText()), Value: arrow.Timestamp(now)}
	case "localtimestamp":
		lit = &logical.Literal{Type: logical.Timestamp, Value: arrow.Timestamp(local)}
	case "current_date", "curdate", "today":
		if nargs != 0 {
			return nil, true, qerr.Planf("function %s takes no arguments", name)
		}
		days, _ := temporal.SplitTimestamp(local)
		return &logical.Literal{Type: logical.Date, Value: arrow.Date32(days)}, true, nil
	default:
		return nil, false, nil
	}
	// CURRENT_TIMESTAMP(p) and NOW(p) set a precision: microseconds is the
	// only one, so p is not read.
	if nargs > 1 {
		return nil, true, qerr.Planf("function %s takes at most one argument (a precision)", name)
	}
	return lit, true, nil
}

// atTimeZoneEdits rewrites x AT TIME ZONE z into timezone(z, x), which is
// PostgreSQL's own spelling. x is what binds tighter than any operator: a
// parenthesized expression or a function call, a literal (with its type
// word: TIMESTAMP '...'), or a possibly qualified name; z is a literal or
// a name.
func atTimeZoneEdits(toks []token) []edit {
	var edits []edit
	prevStart, prevEnd, prevIns := -1, -1, -1
	for i := 1; i+3 < len(toks); i++ {
		if !toks[i].is("AT") || !toks[i+1].is("TIME") || !toks[i+2].is("ZONE") {
			continue
		}
		start := operandStart(toks, i-1)
		chained := i-1 == prevEnd
		if chained {
			// x AT TIME ZONE a AT TIME ZONE b: the left operand is the
			// whole first conversion.
			start = prevStart
		}
		zEnd := i + 3
		if toks[zEnd].Kind == tokIdent || toks[zEnd].Kind == tokQuotedIdent {
			for zEnd+2 < len(toks) && toks[zEnd+1].punct(".") {
				zEnd += 2
			}
		} else if toks[zEnd].Kind != tokString {
			continue
		}
		if start < 0 {
			continue
		}
		zone := ""
		for j := i + 3; j <= zEnd; j++ {
			zone += toks[j].Text
		}
		open := edit{toks[start].Off, toks[start].Off, "timezone(" + zone + ", "}
		if chained {
			// Insertions at one offset apply in order: the outer call first.
			edits = slices.Insert(edits, prevIns, open)
		} else {
			prevIns = len(edits)
			edits = append(edits, open)
		}
		edits = append(edits, edit{toks[i].Off, toks[zEnd].End, ")"})
		prevStart, prevEnd = start, zEnd
		i = zEnd
	}
	return edits
}

// operandStart is castOperandStart, with a typed literal's type word
// (TIMESTAMP '...') taken in.
func operandStart(toks []token, end int) int {
	t := toks[end]
	if t.Kind == tokString && end > 0 && !(end > 1 && toks[end-2].punct(".")) {
		if w := toks[end-1]; w.is("TIMESTAMP") || w.is("TIMESTAMPTZ") || w.is("DATE") || w.is("DATETIME") {
			return end - 1
		}
	}
	return castOperandStart(toks, end)
}

// inSessionZone gives the TIMESTAMPTZ columns of a table or file scan the
// session's time zone, so that they print and read their fields in it as
// every other TIMESTAMPTZ of the statement does (the instants are kept): a
// projection casting them, under the scan's alias. Scans without such
// columns are returned as they are.
func (b *builder) inSessionZone(s *logical.Scan, alias string) (logical.Plan, error) {
	zone := b.p.zoneText()
	fs := s.Schema().Fields
	var list []logical.Expr
	for i, f := range fs {
		if !logical.IsTimestampTZ(f.Type) || f.Type.(*arrow.TimestampType).TimeZone == zone {
			continue
		}
		if list == nil {
			list = make([]logical.Expr, len(fs))
			for j, g := range fs {
				list[j] = &logical.Column{Qualifier: g.Qualifier, Name: g.Name}
			}
		}
		list[i] = &logical.Alias{Expr: &logical.Cast{Expr: list[i], Type: logical.TimestampTZ(zone)}, Name: f.Name}
	}
	if list == nil {
		return s, nil
	}
	p, err := logical.NewProjection(s, list)
	if err != nil {
		return nil, err
	}
	return logical.NewSubqueryAlias(p, alias), nil
}
