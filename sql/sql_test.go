package sql

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/pingcap/tidb/pkg/parser"
	"github.com/pingcap/tidb/pkg/parser/format"
	"github.com/quiverdb/quiver/logical"
	"github.com/quiverdb/quiver/qerr"
)

func TestSplit(t *testing.T) {
	cases := []struct {
		script string
		want   []Source
	}{
		{"SELECT 1; SELECT 2", []Source{{"SELECT 1", 1, 1}, {"SELECT 2", 1, 11}}},
		{"-- c\nSELECT ';' ;;\n  SELECT (1;2)", []Source{{"SELECT ';'", 2, 1}, {"SELECT (1;2)", 3, 3}}},
		{"/* a; b */ SELECT \"x;y\"", []Source{{"SELECT \"x;y\"", 1, 12}}},
		{" ; ;", nil},
	}
	for _, c := range cases {
		got, err := Split(c.script)
		if err != nil {
			t.Fatalf("Split(%q): %v", c.script, err)
		}
		if len(got) != len(c.want) {
			t.Fatalf("Split(%q) = %v, want %v", c.script, got, c.want)
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("Split(%q)[%d] = %+v, want %+v", c.script, i, got[i], c.want[i])
			}
		}
	}
	for _, bad := range []string{"SELECT 'x", "SELECT /* x", "SELECT \"x"} {
		if _, err := Split(bad); !qerr.Is(err, qerr.Plan) {
			t.Errorf("Split(%q): want a planning error, got %v", bad, err)
		}
	}
}

func TestPlanErrors(t *testing.T) {
	p := NewPlanner(tpchCatalog(t))
	cases := []struct {
		src       Source
		kind      qerr.Kind
		line, col int // 0: not checked
	}{
		{Source{"SELECT * FROM nation WHERE", 3, 5}, qerr.Plan, 3, 31},
		{Source{"SELECT 1 FROM nation\nWHERE n_name = = 'x'", 10, 1}, qerr.Plan, 11, 16},
		{Source{"SELECT CAST(n_name AS INT) FROM nation ORDER BY n_name NULLS FIRST LIMIT", 1, 1}, qerr.Plan, 1, 73},
		{Source{"SELECT * FROM nope", 1, 1}, qerr.Plan, 0, 0},
		{Source{"SELECT nope FROM nation", 1, 1}, qerr.Plan, 0, 0},
		{Source{"SELECT nope(1)", 1, 1}, qerr.Plan, 0, 0},
		{Source{"UPDATE nation SET n_name = 'x'", 1, 1}, qerr.NotImplemented, 0, 0},
		{Source{"SELECT a <=> b FROM t", 1, 1}, qerr.Plan, 1, 10},
		{Source{"SET x", 1, 1}, qerr.Plan, 1, 6},
		{Source{"SELECT n_name FROM nation QUALIFY", 1, 1}, qerr.Plan, 1, 27},
		{Source{"SELECT n_name FROM nation WINDOW w AS (), w AS ()", 1, 1}, qerr.Plan, 0, 0},
	}
	for _, c := range cases {
		_, err := p.Plan(c.src)
		if err == nil || qerr.KindOf(err) != c.kind {
			t.Errorf("%q: want %v, got %v", c.src.Text, c.kind, err)
			continue
		}
		if c.line > 0 {
			var e *qerr.Error
			if !asQerr(err, &e) || e.Line != c.line || e.Column != c.col {
				t.Errorf("%q: want position %d:%d, got %v", c.src.Text, c.line, c.col, err)
			}
		}
	}
}

func asQerr(err error, out **qerr.Error) bool {
	e, ok := err.(*qerr.Error)
	*out = e
	return ok
}

func TestStatements(t *testing.T) {
	p := NewPlanner(tpchCatalog(t))
	st, err := p.Plan(Source{Text: "SELECT n_name FROM nation ORDER BY n_name DESC NULLS LAST", Line: 1, Col: 1})
	if err != nil {
		t.Fatal(err)
	}
	var s *logical.Sort
	logical.Inspect(st.(*Query).Plan, func(n logical.Plan) bool {
		if x, ok := n.(*logical.Sort); ok {
			s = x
		}
		return true
	})
	if s == nil || s.Keys[0].Asc || s.Keys[0].NullsFirst {
		t.Fatalf("want DESC NULLS LAST, got %v", s)
	}
	st, err = p.Plan(Source{Text: "CREATE EXTERNAL TABLE x (a BIGINT NOT NULL) STORED AS ARROW LOCATION 'f.arrow' OPTIONS ('Compression' 'zstd')", Line: 1, Col: 1})
	if err != nil {
		t.Fatal(err)
	}
	ce := st.(*CreateExternalTable)
	if ce.Name != "x" || len(ce.Columns) != 1 || ce.Columns[0].Nullable || ce.Options["compression"] != "zstd" || ce.Location != "f.arrow" {
		t.Errorf("CreateExternalTable = %+v", ce)
	}
	st, err = p.Plan(Source{Text: "CREATE EXTERNAL TABLE y STORED AS CSV LOCATION 'y.csv'", Line: 1, Col: 1})
	if err != nil || st.(*CreateExternalTable).Columns != nil {
		t.Errorf("want nil Columns, got %+v %v", st, err)
	}
	if _, err := p.PlanQuery("SHOW TABLES"); !qerr.Is(err, qerr.Plan) {
		t.Errorf("PlanQuery(SHOW TABLES): want a planning error, got %v", err)
	}
}

// seeds returns the TPC-H queries and the golden test SQL, one statement each.
func seeds(t testing.TB) []string {
	var out []string
	files, _ := filepath.Glob("../tpch/queries/*.sql")
	more, _ := filepath.Glob("testdata/plans/*.sql")
	for _, f := range append(files, more...) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		srcs, err := Split(string(b))
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range srcs {
			out = append(out, s.Text)
		}
	}
	return out
}

func restore(t *testing.T, p *parser.Parser, text string) (string, bool) {
	stmts, _, err := p.Parse(text, "", "")
	if err != nil {
		return "", false
	}
	var b strings.Builder
	for _, s := range stmts {
		if err := s.Restore(format.NewRestoreCtx(format.DefaultRestoreFlags, &b)); err != nil {
			return "", false
		}
		b.WriteString(";")
	}
	return b.String(), true
}

// FuzzParse checks that the pre-pass and the TiDB parser never panic and that
// parse → restore → parse → restore is stable.
func FuzzParse(f *testing.F) {
	for _, s := range seeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if !utf8.ValidString(text) {
			return // Plan rejects it; TiDB restores invalid bytes as '?'
		}
		toks, err := tokenize(text)
		if err != nil {
			return
		}
		rw, err := prepass(text, toks)
		if err != nil {
			return
		}
		p := NewPlanner(nil).parser(0)
		r1, ok := restore(t, p, rw.Text)
		if !ok {
			return
		}
		r2, ok := restore(t, p, r1)
		if !ok {
			t.Fatalf("restored text does not parse: %q (from %q)", r1, text)
		}
		if r3, _ := restore(t, p, r2); r2 != r3 {
			t.Fatalf("restore is not stable:\n%q\n%q", r2, r3)
		}
	})
}

// FuzzPlan checks that any input plans or returns a qerr error, never panics.
func FuzzPlan(f *testing.F) {
	for _, s := range seeds(f) {
		f.Add(s)
	}
	cat := tpchCatalog(f)
	f.Fuzz(func(t *testing.T, text string) {
		p := NewPlanner(cat)
		st, err := p.Plan(Source{Text: text, Line: 1, Col: 1})
		if err != nil {
			var e *qerr.Error
			if !asQerr(err, &e) {
				t.Fatalf("%q: error is not a qerr error: %T %v", text, err, err)
			}
			if e.Kind == qerr.Internal {
				t.Fatalf("%q: internal error: %v", text, err)
			}
			return
		}
		if st == nil {
			t.Fatalf("%q: nil statement without error", text)
		}
	})
}

// TestOrderByKeys checks the sort key every ORDER BY form plans to: an
// ordinal stays an ordinal when NULLS FIRST/LAST wraps it (the pre-pass
// once turned `ORDER BY 1 NULLS FIRST` into a sort by the constant 1).
func TestOrderByKeys(t *testing.T) {
	p := NewPlanner(tpchCatalog(t))
	cases := []struct {
		sql             string
		key             string // the first key's expression
		asc, nullsFirst bool
	}{
		{"SELECT n_name, n_nationkey FROM nation ORDER BY 2", "nation.n_nationkey", true, false},
		{"SELECT n_name, n_nationkey FROM nation ORDER BY 2 NULLS FIRST", "nation.n_nationkey", true, true},
		{"SELECT n_name, n_nationkey FROM nation ORDER BY 2 ASC NULLS LAST", "nation.n_nationkey", true, false},
		{"SELECT n_name, n_nationkey FROM nation ORDER BY 2 DESC", "nation.n_nationkey", false, true},
		{"SELECT n_name, n_nationkey FROM nation ORDER BY 2 DESC NULLS LAST", "nation.n_nationkey", false, false},
		{"SELECT n_name, n_nationkey FROM nation ORDER BY 1 DESC NULLS FIRST", "nation.n_name", false, true},
		{"SELECT n_name AS x FROM nation ORDER BY x NULLS FIRST", "x", true, true},
		{"SELECT n_name AS x FROM nation ORDER BY x DESC NULLS LAST", "x", false, false},
		{"SELECT n_name FROM nation ORDER BY n_nationkey + 1 NULLS FIRST", "nation.n_nationkey + 1", true, true},
		{"SELECT n_name FROM nation UNION ALL SELECT r_name FROM region ORDER BY 1 NULLS FIRST", "nation.n_name", true, true},
		{"SELECT n_regionkey, count(*) FROM nation GROUP BY n_regionkey ORDER BY 1 NULLS FIRST, 2 DESC NULLS LAST", "nation.n_regionkey", true, true},
	}
	for _, c := range cases {
		st, err := p.Plan(Source{Text: c.sql, Line: 1, Col: 1})
		if err != nil {
			t.Errorf("%s: %v", c.sql, err)
			continue
		}
		var s *logical.Sort
		logical.Inspect(st.(*Query).Plan, func(n logical.Plan) bool {
			if x, ok := n.(*logical.Sort); ok && s == nil {
				s = x
			}
			return true
		})
		if s == nil {
			t.Errorf("%s: no sort in the plan", c.sql)
			continue
		}
		k := s.Keys[0]
		if k.Expr.String() != c.key || k.Asc != c.asc || k.NullsFirst != c.nullsFirst {
			t.Errorf("%s: first key %s asc=%v nulls_first=%v, want %s asc=%v nulls_first=%v",
				c.sql, k.Expr, k.Asc, k.NullsFirst, c.key, c.asc, c.nullsFirst)
		}
	}
	for _, q := range []string{
		"SELECT n_name FROM nation ORDER BY 2 NULLS FIRST",
		"SELECT n_name FROM nation ORDER BY 0 DESC NULLS LAST",
		"SELECT n_name FROM nation UNION ALL SELECT r_name FROM region ORDER BY 3 NULLS LAST",
	} {
		if _, err := p.Plan(Source{Text: q, Line: 1, Col: 1}); err == nil || !strings.Contains(err.Error(), "not in select list") {
			t.Errorf("%s: want a position error, got %v", q, err)
		}
	}
}

// TestUnknownTableError: the planning error for an unknown name in FROM
// carries an *UnknownTableError naming it, wherever the name is and however
// the planner located the error, relocation into a script included.
func TestUnknownTableError(t *testing.T) {
	p := NewPlanner(tpchCatalog(t))
	for _, q := range []string{
		"SELECT * FROM nope",
		"EXPLAIN SELECT * FROM nope",
		"SELECT * FROM (SELECT * FROM nope) x",
		"WITH a AS (SELECT * FROM nope) SELECT * FROM a",
		"SELECT * FROM nation WHERE n_nationkey IN (SELECT x FROM nope)",
		"SELECT * FROM nation JOIN nope USING (n_nationkey)",
	} {
		_, err := p.Plan(Source{Text: q, Line: 3, Col: 2})
		var u *UnknownTableError
		if !errors.As(err, &u) || u.Name != "nope" || !qerr.Is(err, qerr.Plan) {
			t.Errorf("%q: %v (cause %+v), want a planning error caused by table nope", q, err, u)
		}
	}
	if _, err := p.Plan(Source{Text: "SELECT nope FROM nation", Line: 1, Col: 1}); errors.As(err, new(*UnknownTableError)) {
		t.Errorf("an unknown column: %v is an unknown table", err)
	}
	b := &builder{p: p, src: Source{Text: "SELECT 1;\nSELECT * FROM nope", Line: 4, Col: 1}}
	err := b.relocate(qerr.At(1, 15, "%w", &UnknownTableError{Name: "nope"}), "SELECT * FROM nope", 10)
	var u *UnknownTableError
	var qe *qerr.Error
	if !errors.As(err, &u) || u.Name != "nope" || !errors.As(err, &qe) || qe.Line != 5 || qe.Column != 15 {
		t.Fatalf("relocated: %v (cause %+v), want table nope at line 5, column 15", err, u)
	}
}
