package sql

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver/catalog"
	"github.com/quiverdb/quiver/logical"
	"github.com/quiverdb/quiver/qerr"
)

// Copy is COPY (query) TO 'path' [(options)] or COPY table TO 'path'
// [(options)]. Options: FORMAT, PARTITION_BY (cols), COMPRESSION,
// ROW_GROUP_SIZE, OVERWRITE, and for CSV HEADER and DELIMITER.
type Copy struct {
	Plan         logical.Plan
	Path         string
	Format       catalog.Format // "" from the path's extension
	PartitionBy  []string
	Compression  string
	RowGroupSize int64
	Overwrite    bool
	Delimiter    rune // 0: ','
	Header       *bool
}

// CreateTable is CREATE [OR REPLACE] TABLE [IF NOT EXISTS] name (columns)
// or ... AS query: a memory table.
type CreateTable struct {
	Name                   string
	Columns                []arrow.Field // when Plan is nil
	Plan                   logical.Plan  // CREATE TABLE AS
	IfNotExists, OrReplace bool
}

// Insert is INSERT INTO name [(columns)] VALUES ... | query. Plan produces
// the table's columns in order (typed as the table's; columns left out are
// NULL).
type Insert struct {
	Table string
	Plan  logical.Plan
}

// Delete is DELETE FROM name [WHERE cond]: Keep is the table's rows that
// stay (a Filter over a scan of it).
type Delete struct {
	Table string
	Keep  logical.Plan
}

// Truncate is TRUNCATE [TABLE] name.
type Truncate struct{ Table string }

func (*Copy) isStatement()        {}
func (*CreateTable) isStatement() {}
func (*Insert) isStatement()      {}
func (*Delete) isStatement()      {}
func (*Truncate) isStatement()    {}

// quoteName quotes a table name for TiDB.
func quoteName(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }

// closing returns the index of the ')' that closes the '(' at token i, or -1.
func closing(toks []token, i int) int {
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

func (b *builder) copyStmt(c *cursor) (Statement, error) {
	c.next()
	st := &Copy{}
	if c.cur().punct("(") {
		end := closing(c.toks, c.i)
		if end < 0 {
			return nil, c.errHere("COPY: unclosed '(' around the query")
		}
		off := c.toks[c.i+1].Off
		lp, err := b.query(c.text[off:c.toks[end].Off], off)
		if err != nil {
			return nil, err
		}
		st.Plan = lp
		c.i = end + 1
	} else {
		name, err := c.name("table name or (query)")
		if err != nil {
			return nil, err
		}
		if c.accept("FROM") {
			return nil, qerr.NotImplementedf("sql: COPY ... FROM is not supported; query the file directly (SELECT * FROM 'path') or INSERT INTO %s SELECT * FROM 'path'", name)
		}
		lp, err := b.tablePlan(name)
		if err != nil {
			return nil, err
		}
		st.Plan = lp
	}
	if err := c.expect("TO"); err != nil {
		return nil, err
	}
	if c.cur().Kind != tokString {
		return nil, c.errHere("COPY ... TO needs a quoted path")
	}
	st.Path = c.cur().value()
	c.next()
	c.accept("WITH")
	if c.acceptPunct("(") {
		for !c.acceptPunct(")") {
			if c.done() {
				return nil, c.errHere("COPY: unterminated option list")
			}
			if err := b.copyOption(c, st); err != nil {
				return nil, err
			}
			if !c.acceptPunct(",") && !c.cur().punct(")") {
				return nil, c.errHere("COPY: expected ',' or ')' in the option list, got %q", c.cur().Text)
			}
		}
	}
	if err := c.end(); err != nil {
		return nil, err
	}
	return st, nil
}

func (b *builder) copyOption(c *cursor, st *Copy) error {
	at := c.off()
	key, err := c.name("option name")
	if err != nil {
		return err
	}
	key = strings.ToLower(key)
	// value reads the option's value; "" when the option is a bare flag.
	value := func() (string, error) {
		if c.done() || c.cur().punct(",") || c.cur().punct(")") {
			return "", nil
		}
		return c.value()
	}
	switch key {
	case "partition_by":
		if c.acceptPunct("(") {
			for {
				n, err := c.name("column name")
				if err != nil {
					return err
				}
				st.PartitionBy = append(st.PartitionBy, n)
				if c.acceptPunct(")") {
					break
				}
				if err := c.expectPunct(","); err != nil {
					return err
				}
			}
		} else {
			n, err := c.name("column name")
			if err != nil {
				return err
			}
			st.PartitionBy = append(st.PartitionBy, n)
		}
		for _, p := range st.PartitionBy {
			if _, err := st.Plan.Schema().IndexOf("", p); err != nil {
				return b.atOff(at, "COPY: PARTITION_BY column %q is not a column of the result", p)
			}
		}
		return nil
	}
	v, err := value()
	if err != nil {
		return err
	}
	switch key {
	case "format":
		f, err := catalog.ParseFormat(v)
		if err != nil {
			return b.atOff(at, "COPY: %s", msgOf(err))
		}
		st.Format = f
	case "compression", "codec":
		st.Compression = strings.ToLower(v)
	case "row_group_size":
		var n int64
		if _, err := fmt.Sscan(v, &n); err != nil || n <= 0 {
			return b.atOff(at, "COPY: ROW_GROUP_SIZE must be a positive number of rows, got %q", v)
		}
		st.RowGroupSize = n
	case "overwrite", "overwrite_or_ignore":
		on, err := boolOption(v)
		if err != nil {
			return b.atOff(at, "COPY: %s %s", strings.ToUpper(key), msgOf(err))
		}
		st.Overwrite = on
	case "header":
		on, err := boolOption(v)
		if err != nil {
			return b.atOff(at, "COPY: HEADER %s", msgOf(err))
		}
		st.Header = &on
	case "delimiter", "delim", "sep":
		r := []rune(v)
		if v == `\t` {
			r = []rune{'\t'}
		}
		if len(r) != 1 {
			return b.atOff(at, "COPY: DELIMITER must be one character, got %q", v)
		}
		st.Delimiter = r[0]
	default:
		return b.atOff(at, "COPY: unknown option %s (the options are FORMAT, PARTITION_BY, COMPRESSION, ROW_GROUP_SIZE, OVERWRITE, HEADER, DELIMITER)", strings.ToUpper(key))
	}
	return nil
}

// boolOption reads a flag's value: none (true), true/false, on/off, 1/0.
func boolOption(v string) (bool, error) {
	switch strings.ToLower(v) {
	case "", "true", "on", "1", "yes":
		return true, nil
	case "false", "off", "0", "no":
		return false, nil
	}
	return false, qerr.Planf("must be true or false, got %q", v)
}

// tablePlan plans SELECT * FROM name.
func (b *builder) tablePlan(name string) (logical.Plan, error) {
	child := &builder{p: b.p, src: Source{Text: "SELECT * FROM " + quoteName(name), Line: 1, Col: 1}, noPos: true, depth: b.depth}
	return child.query(child.src.Text, 0)
}

func (b *builder) createTable(c *cursor, orReplace bool) (Statement, error) {
	st := &CreateTable{OrReplace: orReplace}
	st.IfNotExists = c.accept("IF", "NOT", "EXISTS")
	if st.IfNotExists && orReplace {
		return nil, c.errHere("CREATE OR REPLACE TABLE cannot have IF NOT EXISTS")
	}
	var err error
	if st.Name, err = c.name("table name"); err != nil {
		return nil, err
	}
	if c.accept("AS") {
		if c.done() {
			return nil, c.errHere("CREATE TABLE %s AS needs a query", st.Name)
		}
		off := c.off()
		if st.Plan, err = b.query(c.text[off:], off); err != nil {
			return nil, err
		}
		return st, nil
	}
	if !c.acceptPunct("(") {
		return nil, c.errHere("CREATE TABLE %s: expected (columns) or AS query", st.Name)
	}
	if st.Columns, err = b.columnDefs(c, "CREATE TABLE "+st.Name); err != nil {
		return nil, err
	}
	return st, c.end()
}

// columnDefs parses a table's column definitions after their opening
// parenthesis: name type [NOT NULL | NULL], ... ). A name given twice is an
// error naming the statement (what).
func (b *builder) columnDefs(c *cursor, what string) ([]arrow.Field, error) {
	cols := []arrow.Field{}
	seen := map[string]bool{}
	for {
		col, err := c.name("column name")
		if err != nil {
			return nil, err
		}
		if seen[strings.ToLower(col)] {
			return nil, c.b.atOff(c.toks[c.i-1].Off, "%s: column %q given twice", what, col)
		}
		seen[strings.ToLower(col)] = true
		t, next, err := parseTypeName(c.toks, c.i, b.p.zoneText())
		if err != nil {
			return nil, b.relocate(err, c.text, 0)
		}
		c.i = next
		nullable := true
		if c.accept("NOT", "NULL") {
			nullable = false
		} else {
			c.accept("NULL")
		}
		cols = append(cols, arrow.Field{Name: col, Type: t, Nullable: nullable})
		if c.acceptPunct(",") {
			continue
		}
		if err := c.expectPunct(")"); err != nil {
			return nil, err
		}
		return cols, nil
	}
}

func (b *builder) insert(c *cursor) (Statement, error) {
	c.next()
	if err := c.expect("INTO"); err != nil {
		return nil, err
	}
	nameAt := c.off()
	name, err := c.name("table name")
	if err != nil {
		return nil, err
	}
	t, ok := b.p.cat.Table(name)
	if !ok {
		if _, isView := b.p.cat.View(name); isView {
			return nil, b.atOff(nameAt, "cannot INSERT INTO view %q", name)
		}
		return nil, b.atOff(nameAt, "table %q not found", name)
	}
	var cols []string
	// A '(' starts the column list unless it starts the query itself.
	if c.cur().punct("(") && c.i+1 < len(c.toks) && !c.toks[c.i+1].is("SELECT") && !c.toks[c.i+1].is("WITH") && !c.toks[c.i+1].is("VALUES") {
		c.next()
		for {
			n, err := c.name("column name")
			if err != nil {
				return nil, err
			}
			cols = append(cols, n)
			if c.acceptPunct(")") {
				break
			}
			if err := c.expectPunct(","); err != nil {
				return nil, err
			}
		}
	}
	if c.done() {
		return nil, c.errHere("INSERT INTO %s needs VALUES or a query", name)
	}
	off := c.off()
	src, err := b.query(c.text[off:], off)
	if err != nil {
		return nil, err
	}
	lp, err := insertPlan(t, cols, src)
	if err != nil {
		return nil, b.atOff(off, "INSERT INTO %s: %s", name, msgOf(err))
	}
	return &Insert{Table: t.Name, Plan: lp}, nil
}

// insertPlan projects the source's columns onto the table's: the listed
// columns (all, in order, when cols is empty) take the source's columns by
// position, cast to the table's types; the others are NULL.
func insertPlan(t *catalog.Table, cols []string, src logical.Plan) (logical.Plan, error) {
	fields := t.Schema.Fields()
	if n := len(t.PartitionColumns()); n > 0 {
		return nil, qerr.NotImplementedf("inserting into a hive-partitioned table is not supported")
	}
	target := make([]int, 0, len(fields))
	if len(cols) == 0 {
		for i := range fields {
			target = append(target, i)
		}
	} else {
		seen := map[int]bool{}
		for _, c := range cols {
			i := -1
			for j, f := range fields {
				if strings.EqualFold(f.Name, c) {
					i = j
				}
			}
			if i < 0 {
				return nil, qerr.Planf("column %q not found in the table", c)
			}
			if seen[i] {
				return nil, qerr.Planf("column %q listed twice", c)
			}
			seen[i] = true
			target = append(target, i)
		}
	}
	ss := src.Schema()
	if ss.Len() != len(target) {
		return nil, qerr.Planf("the source has %d columns, the insert needs %d", ss.Len(), len(target))
	}
	exprs := make([]logical.Expr, len(fields))
	for k, i := range target {
		sf := ss.Field(k)
		if !logical.CanCast(sf.Type, fields[i].Type) {
			return nil, qerr.Planf("column %q is %s, the value %s is %s", fields[i].Name, logical.TypeString(fields[i].Type), sf.Name, logical.TypeString(sf.Type))
		}
		ref := &logical.Column{Qualifier: sf.Qualifier, Name: sf.Name}
		if _, err := ss.IndexOf(sf.Qualifier, sf.Name); err != nil {
			return nil, qerr.Planf("the source has two columns named %q; give them distinct names", sf.Name)
		}
		exprs[i] = ref
		if !arrow.TypeEqual(sf.Type, fields[i].Type) {
			exprs[i] = logical.CastTo(ref, fields[i].Type)
		}
	}
	for i, f := range fields {
		if exprs[i] == nil {
			if !f.Nullable {
				return nil, qerr.Planf("column %q is NOT NULL and has no value", f.Name)
			}
			exprs[i] = logical.CastTo(logical.Lit(nil), f.Type)
		}
		exprs[i] = &logical.Alias{Expr: exprs[i], Name: f.Name}
	}
	return logical.NewProjection(src, exprs)
}

func (b *builder) deleteStmt(c *cursor) (Statement, error) {
	c.next()
	if err := c.expect("FROM"); err != nil {
		return nil, err
	}
	name, err := c.name("table name")
	if err != nil {
		return nil, err
	}
	if _, ok := b.p.cat.Table(name); !ok {
		return nil, c.b.atOff(c.toks[c.i-1].Off, "table %q not found", name)
	}
	text := "SELECT * FROM " + quoteName(name)
	if c.accept("WHERE") {
		if c.done() {
			return nil, c.errHere("DELETE: WHERE needs a condition")
		}
		// The rows kept are those the condition does not make true (NULL keeps a row).
		text += " WHERE CASE WHEN " + c.text[c.off():] + " THEN FALSE ELSE TRUE END"
	} else if err := c.end(); err != nil {
		return nil, err
	} else {
		text += " WHERE 1 = 0" // no condition: every row goes
	}
	child := &builder{p: b.p, src: Source{Text: text, Line: 1, Col: 1}, noPos: true, depth: b.depth}
	keep, err := child.query(text, 0)
	if err != nil {
		return nil, err
	}
	return &Delete{Table: name, Keep: keep}, nil
}

func (b *builder) truncate(c *cursor) (Statement, error) {
	c.next()
	c.accept("TABLE")
	name, err := c.name("table name")
	if err != nil {
		return nil, err
	}
	return &Truncate{Table: name}, c.end()
}
