package repl

import (
	"slices"
	"testing"

	"github.com/quiverdb/quiver"
)

func TestStatementState(t *testing.T) {
	for _, c := range []struct {
		text string
		want inputState
	}{
		{"SELECT 1;\n", complete},
		{"SELECT 1\n", incomplete},
		{"SELECT 1;  -- done\n", complete},
		{"SELECT 1 -- not done;\n", incomplete},
		{"SELECT ';\n", incomplete},
		{"SELECT ';';\n", complete},
		{"SELECT 1 /* ; */\n", incomplete},
		{"SELECT 1 /* ;\n", incomplete},
		{"SELECT (1;\n", incomplete}, // a ';' inside parentheses does not end it
		{"SELECT \"a;b\" FROM t;\n", complete},
		{"SELECT 1; SELECT 2\n", incomplete},
		{"SELECT 1; SELECT 2;\n", complete},
		{"-- only a comment\n", blank},
		{";\n", blank},
		{"\n", blank},
	} {
		if got := statementState(c.text); got != c.want {
			t.Errorf("statementState(%q) = %d, want %d", c.text, got, c.want)
		}
	}
}

func TestCaret(t *testing.T) {
	for _, c := range []struct {
		line string
		col  int
		want string
	}{
		{"  FRM lineitem", 7, "LINE 2:   FRM lineitem\n              ^\n"},
		{"x", 1, "LINE 2: x\n        ^\n"},
		{"\tx", 2, "LINE 2: \tx\n        \t^\n"},
		{"'東京' y", 10, "LINE 2: '東京' y\n               ^\n"}, // the wide characters take two columns each
		{"ab", 99, "LINE 2: ab\n          ^\n"},              // past the end: after the last character
	} {
		if got := caret(2, c.line, c.col); got != c.want {
			t.Errorf("caret(%q, %d) =\n%s\nwant\n%s", c.line, c.col, got, c.want)
		}
	}
}

var testTables = []quiver.TableInfo{
	{Name: "lineitem", Kind: "table", Columns: []quiver.ColumnInfo{{Name: "l_orderkey"}, {Name: "l_returnflag"}, {Name: "l_shipmode"}}},
	{Name: "orders", Kind: "table", Columns: []quiver.ColumnInfo{{Name: "o_orderkey"}, {Name: "o_orderdate"}}},
	{Name: "revenue", Kind: "view", Columns: []quiver.ColumnInfo{{Name: "total"}}},
}

func TestComplete(t *testing.T) {
	for _, c := range []struct {
		name, pending, before string
		word                  string
		want                  []string
	}{
		{"keyword upper", "", "SEL", "SEL", []string{"SELECT"}},
		{"keyword lower", "", "sel", "sel", []string{"select"}},
		{"table", "", "SELECT * FROM ord", "ord", []string{"order", "orders"}},
		{"view", "", "SELECT * FROM rev", "rev", []string{"revenue"}},
		{"qualified column", "", "SELECT lineitem.l_r", "lineitem.l_r", []string{"lineitem.l_returnflag"}},
		{"all columns of a table, in schema order", "", "SELECT orders.", "orders.", []string{"orders.o_orderkey", "orders.o_orderdate"}},
		{"alias", "", "SELECT 1 FROM orders o WHERE o.o_order", "o.o_order", []string{"o.o_orderkey", "o.o_orderdate"}},
		{"alias with AS", "", "SELECT 1 FROM lineitem AS li WHERE li.l_s", "li.l_s", []string{"li.l_shipmode"}},
		{"columns of tables named so far", "", "SELECT * FROM orders WHERE o_orderd", "o_orderd", []string{"o_orderdate"}},
		{"columns of unnamed tables are not offered", "", "SELECT * FROM orders WHERE l_", "l_", nil},
		{"earlier lines count", "SELECT *\nFROM lineitem\n", "WHERE l_ship", "l_ship", []string{"l_shipmode"}},
		{"mixed", "", "SELECT * FROM orders WHERE o", "o", []string{"o_orderdate", "o_orderkey", "offset", "on", "options", "or", "order", "orders", "outer"}},
		{"unknown qualifier", "", "SELECT x.", "x.", nil},
		{"string literals are not tables", "", "SELECT 'orders' WHERE o_", "o_", nil},
		{"meta commands", "", `\ti`, `\ti`, []string{`\timing`}},
		{"meta \\d", "", `\d line`, "line", []string{"lineitem"}},
		{"meta \\format", "", `\format nd`, "nd", []string{"ndjson"}},
		{"meta \\explain", "", `\explain SELECT * FROM orders WHERE o_orderk`, "o_orderk", []string{"o_orderkey"}},
		{"backslash mid-statement is SQL", "SELECT\n", `\d`, "d", []string{"date", "day", "decimal", "desc", "describe", "distinct", "double", "drop"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			word, got := Complete(testTables, c.pending, c.before)
			if word != c.word || !slices.Equal(got, c.want) {
				t.Errorf("Complete(%q, %q) = %q, %q; want %q, %q", c.pending, c.before, word, got, c.word, c.want)
			}
		})
	}
}
