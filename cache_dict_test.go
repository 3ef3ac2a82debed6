package quiver_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quiverdb/quiver"
	"github.com/quiverdb/quiver/exec/aggregate"
	"github.com/quiverdb/quiver/exec/eval"
	"github.com/quiverdb/quiver/exec/filemap"
)

// TestCacheDictionaryKeys: group-bys over a cached string column give the
// answers of the same queries over its source, whether the cache files'
// dictionaries fit the limit (the partial aggregates group on codes), one
// file's column crosses the limit while its dictionary is built (that file
// is read as strings, the other on codes) or every file's does (no codes);
// with NULL keys, two keys, a second string key, and a filter before the
// group-by (whose gathered output keeps the file's codes, so its aggregate
// groups on them too).
func TestCacheDictionaryKeys(t *testing.T) {
	dir := t.TempDir()
	// few.csv: three values and NULLs; many.csv: three, then forty more.
	var few, many strings.Builder
	few.WriteString("k,g,s,v\n")
	many.WriteString("k,g,s,v\n")
	vals := []string{"alpha-long-name", "beta-long-name", "gamma"}
	// notGamma counts each file's rows k <> 'gamma' keeps (few, many).
	var notGamma [2]int64
	for i := range 3000 {
		k := vals[i%3]
		if i%17 == 0 {
			k = ""
		}
		fmt.Fprintf(&few, "%s,%d,%s,%d\n", k, i%3, vals[(i/7)%3], i)
		if k != "" && k != "gamma" {
			notGamma[0]++
		}
		if i >= 1500 {
			k = fmt.Sprintf("value-%02d", i%40)
		}
		fmt.Fprintf(&many, "%s,%d,%s,%d\n", k, i%4, vals[(i/5)%3], i)
		if k != "" && k != "gamma" {
			notGamma[1]++
		}
	}
	s := csvSource(t, dir, "k VARCHAR, g BIGINT, s VARCHAR, v BIGINT", map[string]string{"few.csv": few.String(), "many.csv": many.String()})
	queries := []string{
		"SELECT k, count(*), sum(v) FROM %s GROUP BY k ORDER BY k NULLS FIRST",
		"SELECT k, g, count(*), min(v) FROM %s GROUP BY k, g ORDER BY k NULLS FIRST, g",
		"SELECT s, k, max(v) FROM %s GROUP BY s, k ORDER BY s, k NULLS FIRST",
		"SELECT k, count(*) FROM %s WHERE v %% 2 = 0 GROUP BY k ORDER BY k NULLS FIRST",
		"SELECT g, k, count(*) FROM %s WHERE k <> 'gamma' GROUP BY g, k ORDER BY g, k",
	}
	want := answersOver(t, s, queries, "src")
	// Each file is one partition of the cache, read by one partial
	// aggregate: coded says how many rows each query groups on codes (the
	// filtered ones the rows their filters keep in the files with codes).
	for _, c := range []struct {
		name  string
		limit int
		coded []int64
	}{
		{"fits", filemap.DefaultDictLimit, []int64{6000, 6000, 12000, 3000, notGamma[0] + notGamma[1]}},
		{"one file crosses", 10, []int64{3000, 3000, 9000, 1500, notGamma[0]}},
		{"every file crosses", 2, []int64{0, 0, 0, 0, 0}},
	} {
		restore := filemap.SetDictLimit(c.limit)
		sqlRows(t, s, "CACHE TABLE c AS SELECT * FROM src")
		for i, q := range queries {
			before := aggregate.DictKeyRows()
			got := fmt.Sprint(sqlRows(t, s, fmt.Sprintf(q, "c")))
			if got != want[i] {
				t.Errorf("%s: %s: got %s, want %s", c.name, fmt.Sprintf(q, "c"), got, want[i])
			}
			if coded := aggregate.DictKeyRows() - before; coded != c.coded[i] {
				t.Errorf("%s: %s: %d rows grouped on codes, want %d", c.name, fmt.Sprintf(q, "c"), coded, c.coded[i])
			}
		}
		sqlRows(t, s, "UNCACHE TABLE c")
		restore()
	}
}

// TestCacheDictionaryFilters: filters, IN lists and CASE conditions over a
// cached string column give the answers of the same queries over its
// source, whether they test the files' rows on dictionary codes or on the
// strings: with a value present in one file's dictionary only ('R'), one
// in none, NULLs, a file whose column crosses the limit while its
// dictionary is built (its rows are compared as strings) and both files
// over it.
func TestCacheDictionaryFilters(t *testing.T) {
	dir := t.TempDir()
	// a.csv: two values and NULLs; b.csv: three with 'R', then forty more.
	// Both hold a value below and one above every constant the queries
	// name, so no file's zone maps let a filter skip its batches and every
	// row is tested (on codes or on strings).
	bracket := func(i int, k string) string {
		switch i {
		case 1:
			return "0"
		case 2:
			return "zzz"
		}
		return k
	}
	var a, b strings.Builder
	a.WriteString("k,v\n")
	b.WriteString("k,v\n")
	for i := range 3000 {
		k := []string{"A", "N"}[i%2]
		if i%13 == 0 {
			k = ""
		}
		k = bracket(i, k)
		fmt.Fprintf(&a, "%s,%d\n", k, i)
		k = []string{"A", "N", "R"}[i%3]
		if i%11 == 0 {
			k = ""
		}
		if i >= 1500 && i%2 == 0 {
			k = fmt.Sprintf("value-%02d", i%40)
		}
		k = bracket(i, k)
		fmt.Fprintf(&b, "%s,%d\n", k, i)
	}
	s := csvSource(t, dir, "k VARCHAR, v BIGINT", map[string]string{"a.csv": a.String(), "b.csv": b.String()})
	queries := []string{
		"SELECT count(*), sum(v) FROM %s WHERE k = 'R'",
		"SELECT count(*), sum(v) FROM %s WHERE k = 'absent'",
		"SELECT count(*), sum(v) FROM %s WHERE k <> 'A'",
		"SELECT count(*), sum(v) FROM %s WHERE k < 'N'",
		"SELECT count(*), sum(v) FROM %s WHERE k >= 'R'",
		"SELECT count(*), sum(v) FROM %s WHERE k IN ('R', 'value-04', 'absent')",
		"SELECT count(*), sum(v) FROM %s WHERE k NOT IN ('A', 'value-06')",
		"SELECT count(*), sum(v) FROM %s WHERE k IN ('Q', 'R', 'S', 'T', 'U', 'V', 'W', 'X', 'N')",
		"SELECT count(*) FROM %s WHERE (k IN ('R', NULL)) IS NULL",
		"SELECT sum(CASE WHEN k = 'R' THEN v ELSE 0 END), sum(CASE WHEN k <> 'N' THEN 1 END) FROM %s",
	}
	want := answersOver(t, s, queries, "src")
	for _, c := range []struct {
		name  string
		limit int
		coded int64 // rows each query tests on codes
	}{
		{"fits", filemap.DefaultDictLimit, 6000},
		{"one file crosses", 10, 3000},
		{"every file crosses", 1, 0},
	} {
		restore := filemap.SetDictLimit(c.limit)
		sqlRows(t, s, "CACHE TABLE c AS SELECT * FROM src")
		for i, q := range queries {
			before := eval.DictCompareRows()
			got := fmt.Sprint(sqlRows(t, s, fmt.Sprintf(q, "c")))
			if got != want[i] {
				t.Errorf("%s: %s: got %s, want %s", c.name, fmt.Sprintf(q, "c"), got, want[i])
			}
			coded := eval.DictCompareRows() - before
			if strings.Contains(q, "CASE") {
				coded /= 2 // two conditions
			}
			if coded != c.coded {
				t.Errorf("%s: %s: %d rows tested on codes, want %d", c.name, fmt.Sprintf(q, "c"), coded, c.coded)
			}
		}
		sqlRows(t, s, "UNCACHE TABLE c")
		restore()
	}
}

// TestCacheDictionaryDependentKeys: a group-by of an integer key and
// cached string keys that follow from it (id, name, nation) gives the
// answers of the same query over its source, whether the strings follow
// from the integer in every file (the partial aggregates group on the
// integer alone), stop following in the middle of a file (the groups so
// far move to a table of every key), never follow, have NULLs, or the
// integer's range is too wide to index; with the integer first or not.
func TestCacheDictionaryDependentKeys(t *testing.T) {
	dir := t.TempDir()
	// Per file: id; name and nat follow from id; odd follows until row
	// 15000 of b.csv (past its first batch); nul follows but is NULL for
	// some ids; wide is id spread over a range too wide to index; small is
	// id as INT; nid is id or NULL; down falls row by row (the indexed
	// range grows downwards); rep repeats each value on four rows, rn
	// follows from it but changes within a run at row 17001 of b.csv; v
	// the value.
	for f, name := range []string{"a.csv", "b.csv"} {
		var w strings.Builder
		w.WriteString("id,name,nat,odd,nul,wide,small,nid,down,rep,rn,v\n")
		for i := range 20000 {
			id := (i*7919)%1000 + f*500 // the files share ids 500..999
			odd := fmt.Sprintf("o-%d", id%5)
			if f == 1 && i >= 15000 {
				odd = "late"
			}
			nul := fmt.Sprintf("n-%d", id%3)
			if id%10 == 0 {
				nul = ""
			}
			nid := fmt.Sprint(id)
			if i == 9000 {
				nid = ""
			}
			rn := fmt.Sprintf("r-%d", i/4%100)
			if f == 1 && i == 17001 {
				rn = "changed"
			}
			fmt.Fprintf(&w, "%d,name-%04d,nat-%d,%s,%s,%d,%d,%s,%d,%d,%s,%d\n", id, id, id%25, odd, nul, int64(id)*1_000_003, id, nid, 100000-i, i/4, rn, i)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(w.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := csvSource(t, dir, "id BIGINT, name VARCHAR, nat VARCHAR, odd VARCHAR, nul VARCHAR, wide BIGINT, small INT, nid BIGINT, down BIGINT, rep BIGINT, rn VARCHAR, v BIGINT", nil)
	queries := []struct {
		q          string
		minD, maxD int64 // rows grouped on the integer alone
		// rows that need no check, their cache file's columns following
		// (filemap.Dependency): each source file is one cache file, and
		// b's breaks odd and rn, so its rows are checked one by one
		byFile int64
	}{
		{"SELECT id, name, nat, sum(v), count(*) FROM %s GROUP BY id, name, nat ORDER BY id", 40000, 40000, 40000},
		{"SELECT nat, id, max(v) FROM %s GROUP BY nat, id ORDER BY id", 40000, 40000, 40000},
		{"SELECT id, odd, sum(v) FROM %s GROUP BY id, odd ORDER BY id, odd", 20000, 39999, 20000},
		{"SELECT id, nul, count(*) FROM %s GROUP BY id, nul ORDER BY id, nul NULLS FIRST", 0, 0, 0},
		{"SELECT wide, name, sum(v) FROM %s GROUP BY wide, name ORDER BY wide", 0, 0, 0},
		{"SELECT id %% 7 AS k, nat, count(*) FROM %s GROUP BY id %% 7, nat ORDER BY k, nat", 0, 0, 0},
		{"SELECT nat, name, count(*) FROM %s GROUP BY nat, name ORDER BY nat, name", 0, 0, 0},
		{"SELECT small, name, sum(v) FROM %s GROUP BY small, name ORDER BY small", 40000, 40000, 40000},
		{"SELECT nid, name, sum(v) FROM %s GROUP BY nid, name ORDER BY nid NULLS FIRST, name", 8192, 39999, 0},
		{"SELECT count(*), sum(d), min(nat), max(nat), sum(s) FROM (SELECT down AS d, nat, sum(v) AS s FROM %s GROUP BY down, nat)", 40000, 40000, 40000},
		{"SELECT id, wide, count(*) FROM %s GROUP BY id, wide ORDER BY id", 0, 0, 0},
		{"SELECT id, small, name, count(*) FROM %s GROUP BY id, small, name ORDER BY id", 0, 0, 0},
		{"SELECT rep, rn, sum(v) FROM %s GROUP BY rep, rn ORDER BY rep, rn", 20000, 39999, 20000},
	}
	restore := filemap.SetDictLimit(filemap.DefaultDictLimit)
	defer restore()
	sqlRows(t, s, "CACHE TABLE c AS SELECT * FROM src")
	for _, q := range queries {
		want := fmt.Sprint(sqlRows(t, s, fmt.Sprintf(q.q, "src")))
		before, beforeF := aggregate.DepKeyRows(), aggregate.FileDepRows()
		got := fmt.Sprint(sqlRows(t, s, fmt.Sprintf(q.q, "c")))
		if got != want {
			at := 0
			for at < min(len(got), len(want)) && got[at] == want[at] {
				at++
			}
			t.Errorf("%s: the answer differs from the source's from character %d: got ...%.80s, want ...%.80s", fmt.Sprintf(q.q, "c"), at, got[at:], want[at:])
		}
		if d := aggregate.DepKeyRows() - before; d < q.minD || d > q.maxD {
			t.Errorf("%s: %d rows grouped on the integer alone, want %d to %d", fmt.Sprintf(q.q, "c"), d, q.minD, q.maxD)
		}
		if f := aggregate.FileDepRows() - beforeF; f != q.byFile {
			t.Errorf("%s: %d rows taken by the file's dependency, want %d", fmt.Sprintf(q.q, "c"), f, q.byFile)
		}
	}
}

// TestCacheDictionaryBudget: the dictionaries and codes stay within their
// byte budget — a column that does not fit evicts the one used longest ago,
// and with no budget at all nothing gets codes — the answers stay those of
// the source, and an uncached table's codes are given back.
func TestCacheDictionaryBudget(t *testing.T) {
	dir := t.TempDir()
	for f, name := range []string{"a.csv", "b.csv"} {
		var w strings.Builder
		w.WriteString("x,y,v\n")
		for i := range 3000 {
			fmt.Fprintf(&w, "x-%d,y-%d,%d\n", (i+f)%5, i%7, i)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(w.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := csvSource(t, dir, "x VARCHAR, y VARCHAR, v BIGINT", nil)
	queries := []string{
		"SELECT x, count(*), sum(v) FROM %s GROUP BY x ORDER BY x",
		"SELECT y, count(*), sum(v) FROM %s GROUP BY y ORDER BY y",
		"SELECT count(*) FROM %s WHERE x = 'x-3'",
		"SELECT x, count(*), sum(v) FROM %s GROUP BY x ORDER BY x",
	}
	want := answersOver(t, s, queries, "src")
	base := filemap.DictBytes()
	// One file's column takes 3000 codes of four bytes and a few values.
	for _, c := range []struct {
		name   string
		budget int64
	}{{"room for one column", base + 13_000}, {"no room", 0}} {
		restore := filemap.SetDictBudget(c.budget)
		sqlRows(t, s, "CACHE TABLE c AS SELECT * FROM src")
		coded, evicted := int64(0), filemap.DictEvictions()
		for i, q := range queries {
			before := aggregate.DictKeyRows() + eval.DictCompareRows()
			got := fmt.Sprint(sqlRows(t, s, fmt.Sprintf(q, "c")))
			coded += aggregate.DictKeyRows() + eval.DictCompareRows() - before
			if got != want[i] {
				t.Errorf("%s: %s: got %s, want %s", c.name, fmt.Sprintf(q, "c"), got, want[i])
			}
			if used := filemap.DictBytes(); used > max(c.budget, base) {
				t.Errorf("%s: %s: dictionaries hold %d bytes, budget %d", c.name, fmt.Sprintf(q, "c"), used, c.budget)
			}
		}
		if c.budget == 0 && coded != 0 {
			t.Errorf("%s: %d rows on codes without a budget", c.name, coded)
		}
		if c.budget > 0 && coded < 3000 {
			t.Errorf("%s: %d rows on codes, want at least one file's", c.name, coded)
		}
		if c.budget > 0 && filemap.DictEvictions() == evicted {
			t.Errorf("%s: no column's codes were evicted", c.name)
		}
		sqlRows(t, s, "UNCACHE TABLE c")
		if used := filemap.DictBytes(); used > base {
			t.Errorf("%s: %d bytes of dictionaries after UNCACHE, %d before CACHE", c.name, used, base)
		}
		restore()
	}
}

// TestCaseConstantKeys: a group-by of a CASE of string constants groups on
// its results' ids and gives the answers of the same CASE grouped as
// strings (made opaque by a concatenation): with a result twice, NULL
// conditions, a second key, and a condition that fails on rows a WHEN
// before it guards (those batches are grouped as strings, the same groups).
func TestCaseConstantKeys(t *testing.T) {
	dir := t.TempDir()
	var w strings.Builder
	w.WriteString("q,v,s\n")
	for i := range 6000 {
		q := fmt.Sprint(i % 50)
		if i%23 == 0 {
			q = ""
		}
		fmt.Fprintf(&w, "%s,%d,%s\n", q, i, []string{"a", "b", "c"}[i%3])
	}
	if err := os.WriteFile(filepath.Join(dir, "t.csv"), []byte(w.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	s := csvSource(t, dir, "q BIGINT, v BIGINT, s VARCHAR", nil)
	bands := "CASE WHEN q <= 10 THEN '01-10' WHEN q <= 25 THEN '11-25' WHEN q <= 40 THEN 'low' ELSE 'low' END"
	guarded := "CASE WHEN q = 0 THEN 'zero' WHEN 100 / q > 5 THEN 'big' ELSE 'small' END"
	for _, c := range []struct {
		key   string
		coded bool // every batch grouped on ids
	}{{bands, true}, {guarded, false}} {
		for _, q := range []string{
			"SELECT %s AS k, count(*), sum(v) FROM src GROUP BY %s ORDER BY k NULLS FIRST",
			"SELECT %s AS k, s, count(*), max(v) FROM src GROUP BY %s, s ORDER BY k NULLS FIRST, s",
		} {
			before := aggregate.CaseKeyRows()
			got := fmt.Sprint(sqlRows(t, s, fmt.Sprintf(q, c.key, c.key)))
			coded := aggregate.CaseKeyRows() - before
			opaque := c.key + " || ''"
			want := fmt.Sprint(sqlRows(t, s, fmt.Sprintf(q, opaque, opaque)))
			if got != want {
				t.Errorf("%s: got %s, want %s", fmt.Sprintf(q, c.key, c.key), got, want)
			}
			if c.coded && coded != 6000 {
				t.Errorf("%s: %d rows grouped on the CASE's ids, want 6000", fmt.Sprintf(q, c.key, c.key), coded)
			}
			if !c.coded && coded == 6000 {
				t.Errorf("%s: every row grouped on the CASE's ids, though 100 / q fails where q = 0", fmt.Sprintf(q, c.key, c.key))
			}
		}
	}
}

// csvSource writes files (name → CSV text with a header line) into dir and
// returns a two-partition session with dir's files as table src of the
// given columns (SQL column definitions).
func csvSource(t *testing.T, dir, columns string, files map[string]string) *quiver.Session {
	t.Helper()
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := newTPCHSession(t, quiver.WithTargetPartitions(2))
	sqlRows(t, s, "CREATE EXTERNAL TABLE src ("+columns+") STORED AS CSV LOCATION '"+dir+"' OPTIONS ('header' 'true')")
	return s
}

// answersOver is each query's printed rows with %s naming table.
func answersOver(t *testing.T, s *quiver.Session, queries []string, table string) []string {
	t.Helper()
	out := make([]string, len(queries))
	for i, q := range queries {
		out[i] = fmt.Sprint(sqlRows(t, s, fmt.Sprintf(q, table)))
	}
	return out
}
