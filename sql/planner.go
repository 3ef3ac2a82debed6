package sql

import (
	"errors"
	"fmt"
	"regexp"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/pingcap/tidb/pkg/parser"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	_ "github.com/pingcap/tidb/pkg/parser/test_driver" // the parser's value expressions
	"github.com/quiverdb/quiver/catalog"
	"github.com/quiverdb/quiver/logical"
	"github.com/quiverdb/quiver/qerr"
)

// Planner plans statements against a catalog. It holds its own TiDB parsers
// (one per view-nesting level, so that expanding a view never re-uses the
// parser whose AST is being lowered). A Planner is not safe for concurrent
// use: give each session its own.
type Planner struct {
	cat     *catalog.Catalog
	parsers []*parser.Parser
	// refs, while a CACHE TABLE statement is planned, collects the
	// lower-cased names of the tables, views and cached names its query
	// resolves, views' own references included (CacheTable.Deps).
	refs map[string]bool
	// zone is the session's time zone (quiver.timezone), which TIMESTAMPTZ
	// types carry (temporal.go); nil means UTC.
	zone     *time.Location
	zoneName string
}

// noteRef records a catalog name a query resolved, if references are being
// collected.
func (p *Planner) noteRef(name string) {
	if p.refs != nil {
		p.refs[strings.ToLower(name)] = true
	}
}

// NewPlanner returns a planner over cat.
func NewPlanner(cat *catalog.Catalog) *Planner { return &Planner{cat: cat} }

func (p *Planner) parser(depth int) *parser.Parser {
	for len(p.parsers) <= depth {
		ps := parser.New()
		// ANSI quotes: "x" is an identifier. IGNORE_SPACE: a space may
		// come between a function's name and its parenthesis (sum (x)),
		// as TPC-DS writes it. NO_BACKSLASH_ESCAPES: string literals are
		// standard ('a\b' is three characters); the pre-pass turns E'...'
		// strings, which have escapes, into standard ones.
		ps.SetSQLMode(mysql.ModeANSIQuotes | mysql.ModeIgnoreSpace | mysql.ModeNoBackslashEscapes)
		p.parsers = append(p.parsers, ps)
	}
	return p.parsers[depth]
}

// maxViewDepth bounds view expansion (cycles are caught by name first).
const maxViewDepth = 32

// Plan lowers one statement, resolving names against the catalog as it is
// now. Errors are qerr errors; syntax errors carry the script position. An
// internal panic becomes a qerr.Internal error.
func (p *Planner) Plan(src Source) (st Statement, err error) {
	defer func() {
		if r := recover(); r != nil {
			st, err = nil, qerr.Internalf("sql: panic while planning %q: %v\n%s", truncate(src.Text, 200), r, debug.Stack())
		}
	}()
	if src.Line == 0 {
		src.Line, src.Col = 1, 1
	}
	b := &builder{p: p, src: src}
	st, err = b.statement()
	if err != nil {
		err = locateName(src, err)
	}
	return st, err
}

// nameInError finds the name a planning error is about: the quoted name of
// `column "x" not found`, `table "x" not found`, `unknown function "x"`.
var nameInError = regexp.MustCompile(`(?:column|table|function) "([^"]+)"`)

// locateName gives a planning error without a position the position of the
// first token that names what the error is about (TiDB's expression nodes
// carry no positions, so lowering errors are located in the text instead).
func locateName(src Source, err error) error {
	var qe *qerr.Error
	if !errors.As(err, &qe) || qe.Kind != qerr.Plan || qe.Line != 0 {
		return err
	}
	m := nameInError.FindStringSubmatch(qe.Msg)
	if m == nil {
		return err
	}
	name := m[1]
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		name = name[i+1:]
	}
	toks, terr := tokenize(src.Text)
	if terr != nil {
		return err
	}
	for _, t := range toks {
		if (t.Kind == tokIdent || t.Kind == tokQuotedIdent) && strings.EqualFold(t.value(), name) {
			line, col := src.position(t.Off)
			located := *qe
			located.Line, located.Column = line, col
			return &located
		}
	}
	return err
}

// PlanQuery lowers a query (SELECT/WITH/VALUES/UNION) text to a logical plan.
func (p *Planner) PlanQuery(text string) (lp logical.Plan, err error) {
	st, err := p.Plan(Source{Text: text, Line: 1, Col: 1})
	if err != nil {
		return nil, err
	}
	q, ok := st.(*Query)
	if !ok {
		return nil, qerr.Planf("expected a query (SELECT, WITH, VALUES), got %T", st)
	}
	return q.Plan, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// builder lowers one statement. Text offsets it reports are offsets in
// src.Text; views are planned by child builders without a script position.
type builder struct {
	p     *Planner
	src   Source
	noPos bool // src is a view's text: errors carry no script position
	depth int  // parser nesting level
	views []string
	ctes  []map[string]cteDef
	// cteSeq numbers the statement's WITH queries (cte.go), shared with
	// the child builders of views.
	cteSeq *int
	nextN  int // counter for synthesised derived-table aliases
	// colAliases are the pre-pass's column lists of aliased FROM items.
	colAliases map[string][]string
	files      map[string]*fileSource // file sources in FROM, by placeholder name (files.go)
	now        time.Time              // the statement's clock (temporal.go), set on first use
}

// atOff returns a planning error located at offset off of src.Text.
func (b *builder) atOff(off int, format string, args ...any) error {
	if b.noPos {
		return qerr.Planf(format, args...)
	}
	l, c := b.src.position(off)
	return qerr.At(l, c, format, args...)
}

// relocate turns an error located in text (which starts at offset base of
// src.Text) into one located in the script.
func (b *builder) relocate(err error, text string, base int) error {
	e, ok := err.(*qerr.Error)
	if !ok || e.Line == 0 {
		return err
	}
	off := base + lineColOffset(text, e.Line, e.Column)
	located := b.atOff(off, "%s", e.Msg).(*qerr.Error)
	located.Err = e.Err // the cause stays reachable with errors.Is and As
	return located
}

// lineColOffset is the byte offset of 1-based (line, col) in text.
func lineColOffset(text string, line, col int) int {
	off := 0
	for l := 1; l < line; l++ {
		i := strings.IndexByte(text[off:], '\n')
		if i < 0 {
			return len(text)
		}
		off += i + 1
	}
	return min(off+col-1, len(text))
}

func (b *builder) statement() (Statement, error) {
	text := b.src.Text
	if !utf8.ValidString(text) {
		return nil, qerr.Planf("statement is not valid UTF-8")
	}
	toks, err := tokenize(text)
	if err != nil {
		return nil, b.relocate(err, text, 0)
	}
	if len(toks) == 0 {
		return nil, qerr.Planf("empty statement")
	}
	if err := checkNesting(toks); err != nil {
		return nil, err
	}
	c := &cursor{b: b, toks: toks, text: text}
	first := toks[0].upper()
	switch first {
	case "SELECT", "WITH", "VALUES", "(":
		lp, err := b.query(text, 0)
		if err != nil {
			return nil, err
		}
		return &Query{Plan: lp}, nil
	case "CREATE":
		return b.create(c)
	case "DROP":
		return b.drop(c)
	case "CACHE":
		return b.cache(c)
	case "UNCACHE":
		return b.uncache(c, false)
	case "REFRESH":
		c.next()
		if err := c.expect("CACHE"); err != nil {
			return nil, err
		}
		st := &RefreshCache{}
		if st.Name, err = c.name("cache name"); err != nil {
			return nil, err
		}
		return st, c.end()
	case "CLEAR":
		c.next()
		if err := c.expect("CACHE"); err != nil {
			return nil, err
		}
		return &ClearCache{}, c.end()
	case "SHOW":
		c.next()
		switch {
		case c.accept("TABLES"):
			return &ShowTables{}, c.end()
		case c.accept("CACHES"):
			return &ShowCaches{}, c.end()
		case c.accept("FUNCTIONS"):
			// SHOW FUNCTIONS [LIKE 'pattern'] (on the name).
			pattern := ""
			if c.accept("LIKE") {
				if c.done() || c.cur().Kind != tokString {
					return nil, c.errHere("SHOW FUNCTIONS LIKE: expected a 'pattern'")
				}
				pattern = c.cur().value()
				c.next()
			}
			lp, err := showFunctions(pattern)
			if err != nil {
				return nil, err
			}
			return &Query{Plan: lp}, c.end()
		case c.accept("ALL"):
			return &ShowAll{}, c.end()
		case c.accept("COLUMNS"):
			// SHOW COLUMNS FROM|IN t is DESCRIBE t.
			if !c.accept("FROM") && !c.accept("IN") {
				return nil, c.errHere("SHOW COLUMNS: expected FROM or IN and a table name")
			}
			name, err := c.name("table name")
			if err != nil {
				return nil, err
			}
			return &Describe{Name: name}, c.end()
		}
		name, err := c.dotted("setting name")
		if err != nil {
			return nil, err
		}
		return &ShowSetting{Name: strings.ToLower(name)}, c.end()
	case "DESCRIBE", "DESC":
		c.next()
		if c.accept("TABLE") {
			name, err := c.name("table name")
			if err != nil {
				return nil, err
			}
			return &Describe{Name: name}, c.end()
		}
		if !c.done() && (c.cur().is("SELECT") || c.cur().is("WITH") || c.cur().is("VALUES") || c.cur().punct("(")) {
			// DESCRIBE <query>: the columns the query would return.
			off := c.off()
			lp, err := b.query(c.text[off:], off)
			if err != nil {
				return nil, err
			}
			return &Describe{Plan: lp}, nil
		}
		name, err := c.name("table name")
		if err != nil {
			return nil, err
		}
		return &Describe{Name: name}, c.end()
	case "EXPLAIN":
		c.next()
		st := &Explain{}
		for {
			switch {
			case c.accept("ANALYZE"):
				st.Analyze = true
				continue
			case c.accept("VERBOSE"):
				st.Verbose = true
				continue
			case c.accept("DISTRIBUTED"):
				st.Distributed = true
				continue
			}
			break
		}
		if c.done() {
			return nil, c.errHere("EXPLAIN needs a query")
		}
		if c.cur().is("UNCACHE") && !st.Analyze && !st.Verbose && !st.Distributed {
			return b.uncache(c, true)
		}
		lp, err := b.query(text[c.off():], c.off())
		if err != nil {
			return nil, err
		}
		st.Plan = lp
		return st, nil
	case "SET":
		c.next()
		if c.accept("TIME", "ZONE") {
			// SET TIME ZONE 'x' (the SQL standard's form) is SET timezone = 'x'.
			val, err := c.value()
			if err != nil {
				return nil, err
			}
			return &Set{Name: "timezone", Value: val}, c.end()
		}
		name, err := c.dotted("setting name")
		if err != nil {
			return nil, err
		}
		if !c.acceptPunct("=") && !c.accept("TO") {
			return nil, c.errHere("SET %s: expected = or TO", name)
		}
		val, err := c.value()
		if err != nil {
			return nil, err
		}
		return &Set{Name: strings.ToLower(name), Value: val}, c.end()
	}
	switch first { // writes (write.go)
	case "COPY":
		return b.copyStmt(c)
	case "INSERT":
		return b.insert(c)
	case "DELETE":
		return b.deleteStmt(c)
	case "TRUNCATE":
		return b.truncate(c)
	}
	if !knownStatements[first] {
		msg := fmt.Sprintf("syntax error: %q does not begin any statement", toks[0].Text)
		if s := suggestStatement(first); s != "" {
			msg += fmt.Sprintf(" (did you mean %s?)", s)
		}
		return nil, c.errHere("%s", msg)
	}
	what := first
	if len(toks) > 1 && toks[1].Kind == tokIdent {
		what += " " + toks[1].upper()
	}
	return nil, qerr.NotImplementedf("sql: %s statements are not supported", what)
}

// knownStatements are the first keywords of SQL statements that Quiver
// recognizes but does not run (beside those it runs): a statement starting
// with one is "not implemented", any other first word a syntax error.
var knownStatements = map[string]bool{
	"INSERT": true, "UPDATE": true, "DELETE": true, "MERGE": true, "UPSERT": true, "REPLACE": true,
	"COPY": true, "ALTER": true, "TRUNCATE": true, "GRANT": true, "REVOKE": true, "BEGIN": true,
	"START": true, "COMMIT": true, "ROLLBACK": true, "SAVEPOINT": true, "RELEASE": true, "CALL": true,
	"PREPARE": true, "EXECUTE": true, "DEALLOCATE": true, "ANALYZE": true, "VACUUM": true,
	"ATTACH": true, "DETACH": true, "INSTALL": true, "LOAD": true, "PRAGMA": true, "RESET": true,
	"USE": true, "DECLARE": true, "FETCH": true, "CLOSE": true, "LOCK": true, "UNLOCK": true,
	"CHECKPOINT": true, "EXPORT": true, "IMPORT": true, "SUMMARIZE": true, "PIVOT": true,
	"UNPIVOT": true, "RENAME": true, "COMMENT": true, "KILL": true, "FLUSH": true, "OPTIMIZE": true,
	"LISTEN": true, "NOTIFY": true, "DO": true, "HANDLER": true, "TABLE": true,
}

// statementWords are the first words of the statements Quiver runs, for
// suggesting one when a first word is misspelled.
var statementWords = []string{"SELECT", "WITH", "VALUES", "EXPLAIN", "CREATE", "DROP", "CACHE",
	"UNCACHE", "CLEAR", "SHOW", "DESCRIBE", "SET", "REFRESH", "COPY", "INSERT", "DELETE", "TRUNCATE"}

// suggestStatement returns the statement word within one edit of word, if
// any.
func suggestStatement(word string) string {
	for _, w := range statementWords {
		if editDistanceAtMostOne(word, w) {
			return w
		}
	}
	return ""
}

// editDistanceAtMostOne reports whether a becomes b by at most one insertion,
// deletion or substitution.
func editDistanceAtMostOne(a, b string) bool {
	if len(a) > len(b) {
		a, b = b, a
	}
	if len(b)-len(a) > 1 {
		return false
	}
	i := 0
	for i < len(a) && a[i] == b[i] {
		i++
	}
	if len(a) == len(b) {
		return a[i+min(1, len(a)-i):] == b[i+min(1, len(b)-i):]
	}
	return a[i:] == b[i+1:]
}

// create handles CREATE [OR REPLACE] EXTERNAL TABLE and CREATE [OR REPLACE] VIEW.
func (b *builder) create(c *cursor) (Statement, error) {
	c.next()
	orReplace := c.accept("OR", "REPLACE")
	switch {
	case c.accept("EXTERNAL", "TABLE"):
		return b.createExternal(c, orReplace)
	case c.accept("TABLE"):
		return b.createTable(c, orReplace)
	case c.accept("VIEW"):
		name, err := c.name("view name")
		if err != nil {
			return nil, err
		}
		if err := c.expect("AS"); err != nil {
			return nil, err
		}
		if c.done() {
			return nil, c.errHere("CREATE VIEW %s needs a query", name)
		}
		off := c.off()
		lp, err := b.query(c.text[off:], off)
		if err != nil {
			return nil, err
		}
		return &CreateView{Name: name, SQL: strings.TrimSpace(c.text[off:]), Plan: lp, OrReplace: orReplace}, nil
	}
	what := "CREATE"
	if !c.done() {
		what += " " + c.cur().upper()
	}
	return nil, qerr.NotImplementedf("sql: %s statements are not supported", what)
}

func (b *builder) createExternal(c *cursor, orReplace bool) (Statement, error) {
	st := &CreateExternalTable{OrReplace: orReplace, Options: map[string]string{}}
	st.IfNotExists = c.accept("IF", "NOT", "EXISTS")
	var err error
	if st.Name, err = c.name("table name"); err != nil {
		return nil, err
	}
	if c.acceptPunct("(") {
		if st.Columns, err = b.columnDefs(c, "CREATE EXTERNAL TABLE "+st.Name); err != nil {
			return nil, err
		}
	}
	// STORED AS may be left out: the files' extensions tell the format.
	if c.accept("STORED") {
		if err := c.expect("AS"); err != nil {
			return nil, err
		}
		if c.done() {
			return nil, c.errHere("expected PARQUET, CSV, JSON or ARROW")
		}
		f, err := catalog.ParseFormat(c.cur().Text)
		if err != nil {
			return nil, c.errHere("unknown format %q: expected PARQUET, CSV, JSON or ARROW", c.cur().Text)
		}
		st.Format = f
		c.next()
	}
	haveLoc := false
	for !c.done() {
		switch {
		case c.accept("OPTIONS"):
			opts, err := c.options()
			if err != nil {
				return nil, err
			}
			for k, v := range opts {
				st.Options[k] = v
			}
		case c.accept("LOCATION"):
			t := c.cur()
			if t.Kind != tokString {
				return nil, c.errHere("LOCATION needs a quoted path")
			}
			st.Location, haveLoc = t.value(), true
			c.next()
		case c.accept("WITH", "HEADER", "ROW"):
			st.Options["has_header"] = "true"
		default:
			return nil, c.errHere("unexpected %q: expected STORED AS, OPTIONS or LOCATION", c.cur().Text)
		}
	}
	if !haveLoc {
		return nil, c.errHere("CREATE EXTERNAL TABLE %s needs LOCATION 'path'", st.Name)
	}
	return st, nil
}

func (b *builder) drop(c *cursor) (Statement, error) {
	c.next()
	isView := false
	switch {
	case c.accept("TABLE"):
	case c.accept("VIEW"):
		isView = true
	default:
		what := "DROP"
		if !c.done() {
			what += " " + c.cur().upper()
		}
		return nil, qerr.NotImplementedf("sql: %s statements are not supported", what)
	}
	ifExists := c.accept("IF", "EXISTS")
	name, err := c.name("name")
	if err != nil {
		return nil, err
	}
	if err := c.end(); err != nil {
		return nil, err
	}
	if isView {
		return &DropView{Name: name, IfExists: ifExists}, nil
	}
	return &DropTable{Name: name, IfExists: ifExists}, nil
}

// uncache is UNCACHE TABLE [IF EXISTS] name [CASCADE], after EXPLAIN when
// explain is set.
func (b *builder) uncache(c *cursor, explain bool) (Statement, error) {
	c.next()
	if err := c.expect("TABLE"); err != nil {
		return nil, err
	}
	st := &UncacheTable{IfExists: c.accept("IF", "EXISTS"), Explain: explain}
	var err error
	if st.Name, err = c.name("table name"); err != nil {
		return nil, err
	}
	st.Cascade = c.accept("CASCADE")
	return st, c.end()
}

func (b *builder) cache(c *cursor) (Statement, error) {
	c.next()
	st := &CacheTable{Lazy: c.accept("LAZY")}
	if err := c.expect("TABLE"); err != nil {
		return nil, err
	}
	var err error
	if st.Name, err = c.name("table name"); err != nil {
		return nil, err
	}
	if c.accept("OPTIONS") {
		if st.Options, err = c.options(); err != nil {
			return nil, err
		}
	}
	c.accept("AS")
	b.p.refs = map[string]bool{}
	defer func() { b.p.refs = nil }()
	if c.done() {
		b.p.noteRef(st.Name)
		if v, ok := b.p.cat.View(st.Name); ok {
			if _, err := b.planView(v); err != nil {
				return nil, err
			}
		}
		st.Deps = sortedRefs(b.p.refs)
		return st, nil
	}
	off := c.off()
	if st.Plan, err = b.query(c.text[off:], off); err != nil {
		return nil, err
	}
	st.SQL = c.text[off:]
	st.Deps = sortedRefs(b.p.refs)
	return st, nil
}

func sortedRefs(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// ---- TiDB -------------------------------------------------------------------

var tidbErr = regexp.MustCompile(`(?s)line (\d+) column (\d+) near "(.*)"`)

// query parses and lowers a query text that starts at offset base of src.Text.
func (b *builder) query(text string, base int) (logical.Plan, error) {
	toks, err := tokenize(text)
	if err != nil {
		return nil, b.relocate(err, text, base)
	}
	files, err := b.fileSourceEdits(toks)
	if err != nil {
		return nil, b.relocate(err, text, base)
	}
	rw, err := prepass(text, toks, append(files, temporalEdits(toks)...)...)
	if err != nil {
		return nil, b.relocate(err, text, base)
	}
	for k, v := range rw.colAliases {
		if b.colAliases == nil {
			b.colAliases = map[string][]string{}
		}
		b.colAliases[k] = v
	}
	stmts, _, err := b.p.parser(b.depth).Parse(rw.Text, "", "")
	if err != nil {
		return nil, b.syntaxError(err, rw, text, base)
	}
	if len(stmts) != 1 {
		return nil, qerr.Planf("expected one statement, got %d", len(stmts))
	}
	var rs ast.Node
	switch s := stmts[0].(type) {
	case *ast.SelectStmt, *ast.SetOprStmt:
		rs = s
	default:
		return nil, qerr.NotImplementedf("sql: %T is not a query", s)
	}
	lp, err := b.resultSet(rs, nil)
	if err != nil {
		return nil, err
	}
	if err := checkPlan(lp); err != nil {
		return nil, err
	}
	return lp, nil
}

// syntaxError maps a TiDB parse error to the script position of the token
// it names. TiDB reports the line and the column just after the offending
// token, and the text from that token on ("near"); the near text locates it.
func (b *builder) syntaxError(err error, rw *rewritten, text string, base int) error {
	m := tidbErr.FindStringSubmatch(err.Error())
	if m == nil {
		return qerr.Planf("syntax error: %s", err.Error())
	}
	line, _ := strconv.Atoi(m[1])
	col, _ := strconv.Atoi(m[2])
	near := m[3]
	pos := lineColOffset(rw.Text, line, col)
	if near == "" {
		pos = len(strings.TrimRight(rw.Text, " \t\r\n"))
	} else {
		best := -1
		for i := 0; i <= pos && i < len(rw.Text); i++ {
			if strings.HasPrefix(rw.Text[i:], near) || (len(near) > 20 && strings.HasPrefix(rw.Text[i:], near[:20])) {
				best = i
			}
		}
		if best >= 0 {
			pos = best
		}
	}
	src := rw.srcOffset(pos)
	if src >= len(strings.TrimRight(text, " \t\r\n")) {
		return b.atOff(base+src, "syntax error at end of input")
	}
	snippet := text[src:]
	if i := strings.IndexByte(snippet, '\n'); i >= 0 {
		snippet = snippet[:i]
	}
	return b.atOff(base+src, "syntax error near %q", truncate(strings.TrimSpace(snippet), 40))
}

// ---- token cursor for the pre-parser ----------------------------------------

type cursor struct {
	b    *builder
	toks []token
	text string
	i    int
}

func (c *cursor) done() bool { return c.i >= len(c.toks) }
func (c *cursor) cur() token {
	if c.done() {
		return token{Off: len(c.text)}
	}
	return c.toks[c.i]
}
func (c *cursor) next() { c.i++ }

// off is the offset of the current token (the end of text when done).
func (c *cursor) off() int { return c.cur().Off }

func (c *cursor) errHere(format string, args ...any) error {
	return c.b.atOff(c.off(), format, args...)
}

// accept consumes the keyword sequence kws if it is next.
func (c *cursor) accept(kws ...string) bool {
	for j, kw := range kws {
		if c.i+j >= len(c.toks) || !c.toks[c.i+j].is(kw) {
			return false
		}
	}
	c.i += len(kws)
	return true
}

func (c *cursor) acceptPunct(p string) bool {
	if !c.done() && c.cur().punct(p) {
		c.i++
		return true
	}
	return false
}

func (c *cursor) expect(kw string) error {
	if c.accept(kw) {
		return nil
	}
	if c.done() {
		return c.errHere("expected %s at end of input", kw)
	}
	return c.errHere("expected %s, got %q", kw, c.cur().Text)
}

func (c *cursor) expectPunct(p string) error {
	if c.acceptPunct(p) {
		return nil
	}
	if c.done() {
		return c.errHere("expected %q at end of input", p)
	}
	return c.errHere("expected %q, got %q", p, c.cur().Text)
}

// end checks that the statement has no more tokens.
func (c *cursor) end() error {
	if c.done() {
		return nil
	}
	return c.errHere("syntax error near %q", c.cur().Text)
}

// name reads an identifier (bare or quoted).
func (c *cursor) name(what string) (string, error) {
	t := c.cur()
	if c.done() || (t.Kind != tokIdent && t.Kind != tokQuotedIdent) {
		if c.done() {
			return "", c.errHere("expected %s at end of input", what)
		}
		return "", c.errHere("expected %s, got %q", what, t.Text)
	}
	c.next()
	return t.value(), nil
}

// dotted reads a name like quiver.memory_limit.
func (c *cursor) dotted(what string) (string, error) {
	n, err := c.name(what)
	if err != nil {
		return "", err
	}
	for c.acceptPunct(".") {
		m, err := c.name(what)
		if err != nil {
			return "", err
		}
		n += "." + m
	}
	return n, nil
}

// value reads a setting or option value: a quoted string, a (signed) number or a word.
func (c *cursor) value() (string, error) {
	if c.done() {
		return "", c.errHere("expected a value at end of input")
	}
	sign := ""
	if c.cur().punct("-") || c.cur().punct("+") {
		sign = c.cur().Text
		c.next()
		if c.done() || c.cur().Kind != tokNumber {
			return "", c.errHere("expected a number after %s", sign)
		}
	}
	t := c.cur()
	switch t.Kind {
	case tokString, tokNumber, tokIdent, tokQuotedIdent:
		c.next()
		if t.Kind == tokNumber {
			return sign + t.Text, nil
		}
		return t.value(), nil
	}
	return "", c.errHere("expected a value, got %q", t.Text)
}

// options reads ('key' 'value', ...) (an '=' between key and value is allowed).
func (c *cursor) options() (map[string]string, error) {
	if err := c.expectPunct("("); err != nil {
		return nil, err
	}
	out := map[string]string{}
	if c.acceptPunct(")") {
		return out, nil
	}
	for {
		if c.done() {
			return nil, c.errHere("unterminated OPTIONS list")
		}
		k, err := c.value()
		if err != nil {
			return nil, err
		}
		for c.acceptPunct(".") { // dotted bare keys: format.delimiter
			m, err := c.value()
			if err != nil {
				return nil, err
			}
			k += "." + m
		}
		c.acceptPunct("=")
		v, err := c.value()
		if err != nil {
			return nil, err
		}
		out[strings.ToLower(k)] = v
		if c.acceptPunct(",") {
			continue
		}
		if err := c.expectPunct(")"); err != nil {
			return nil, err
		}
		return out, nil
	}
}

// planView plans a view's stored query in a child builder.
func (b *builder) planView(v *catalog.View) (logical.Plan, error) {
	for _, n := range b.views {
		if strings.EqualFold(n, v.Name) {
			return nil, qerr.Planf("view %q refers to itself (%s)", v.Name, strings.Join(append(b.views, v.Name), " -> "))
		}
	}
	if lp, ok := v.Plan.(logical.Plan); ok && v.SQL == "" {
		return lp, nil
	}
	if len(b.views) >= maxViewDepth {
		return nil, qerr.Planf("views nested deeper than %d", maxViewDepth)
	}
	child := &builder{p: b.p, src: Source{Text: v.SQL, Line: 1, Col: 1}, noPos: true, depth: b.depth + 1, cteSeq: b.cteCounter(),
		views: append(append([]string(nil), b.views...), v.Name)}
	lp, err := child.query(v.SQL, 0)
	if err != nil {
		return nil, &qerr.Error{Kind: qerr.KindOf(err), Msg: fmt.Sprintf("view %q: %s", v.Name, msgOf(err)), Err: err}
	}
	return lp, nil
}
