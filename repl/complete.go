package repl

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/quiverdb/quiver"
)

// completer is the shell's readline.AutoCompleter: SQL keywords and
// functions, table and view names, and columns — after "t." the columns of
// table (or alias) t, elsewhere those of the tables the statement names so
// far. After a backslash it completes meta-commands and their arguments.
//
// readline calls Do from its own goroutine while Run waits in Readline.
type completer struct {
	sh *shell
}

// Do returns the candidates' remaining text after the word being typed, and
// that word's length in runes (readline's contract).
func (c *completer) Do(line []rune, pos int) ([][]rune, int) {
	c.sh.mu.Lock()
	pending := c.sh.pending.String()
	c.sh.mu.Unlock()
	before := string(line[:pos])
	word, cands := Complete(c.sh.s.Tables(), pending, before)
	out := make([][]rune, len(cands))
	n := len([]rune(word))
	for i, cand := range cands {
		out[i] = []rune(cand)[n:]
	}
	return out, n
}

// Complete returns the word being typed at the end of before (the current
// line up to the cursor; pending holds the statement's earlier lines) and
// the candidates that complete it, each starting with word (ignoring case;
// the word's own case wins for keywords). It is exported for tests and
// other front ends.
func Complete(tables []quiver.TableInfo, pending, before string) (word string, cands []string) {
	if pending == "" && strings.HasPrefix(strings.TrimLeft(before, " \t"), `\`) {
		return completeMeta(tables, strings.TrimLeft(before, " \t"))
	}
	return completeSQL(tables, pending+before)
}

func completeMeta(tables []quiver.TableInfo, line string) (string, []string) {
	cmd, arg, hasArg := strings.Cut(line, " ")
	if !hasArg {
		var names []string
		for _, m := range metaCommands {
			names = append(names, m.name)
		}
		return cmd, matching(cmd, names, false)
	}
	arg = strings.TrimLeft(arg, " ")
	switch strings.ToLower(cmd) {
	case `\d`, `\dt`, `\describe`:
		var names []string
		for _, t := range tables {
			names = append(names, t.Name)
		}
		return arg, matching(arg, names, false)
	case `\format`:
		return arg, matching(arg, []string{"table", "csv", "tsv", "json", "ndjson"}, false)
	case `\timing`:
		return arg, matching(arg, []string{"on", "off"}, false)
	case `\i`:
		return arg, completeFile(arg)
	case `\explain`:
		return completeSQL(tables, arg)
	}
	return "", nil
}

// completeFile completes a path: the entries of its directory that start
// with its last element, directories with a trailing slash.
func completeFile(prefix string) []string {
	dir, base := filepath.Split(prefix)
	ents, err := os.ReadDir(filepath.Join(".", dir))
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), base) {
			continue
		}
		name := dir + e.Name()
		if e.IsDir() {
			name += "/"
		}
		out = append(out, name)
	}
	return out
}

func completeSQL(tables []quiver.TableInfo, text string) (string, []string) {
	// The word runs back from the cursor over identifier characters and dots.
	start := len(text)
	for start > 0 && isWordByte(text[start-1]) {
		start--
	}
	word := text[start:]
	toks := identifiers(text[:start])
	byName := make(map[string]*quiver.TableInfo, len(tables))
	for i := range tables {
		byName[strings.ToLower(tables[i].Name)] = &tables[i]
	}

	if dot := strings.LastIndexByte(word, '.'); dot >= 0 {
		qual, part := word[:dot], word[dot+1:]
		t := byName[strings.ToLower(qual)]
		if t == nil {
			t = byName[aliases(toks, byName)[strings.ToLower(qual)]]
		}
		if t == nil {
			return word, nil
		}
		names := make([]string, len(t.Columns))
		for i, c := range t.Columns {
			names[i] = qual + "." + c.Name
		}
		return word, matching(qual+"."+part, names, false)
	}

	var names []string
	seen := map[string]bool{}
	for _, tok := range toks {
		t := byName[strings.ToLower(tok)]
		if t == nil || seen[t.Name] {
			continue
		}
		seen[t.Name] = true
		for _, c := range t.Columns {
			names = append(names, c.Name)
		}
	}
	for _, t := range tables {
		names = append(names, t.Name)
	}
	cands := matching(word, names, false)
	cands = append(cands, matching(word, keywords, true)...)
	slices.Sort(cands)
	return word, slices.Compact(cands)
}

func isWordByte(b byte) bool {
	return b == '_' || b == '.' || b == '$' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= 0x80
}

// matching returns the names that start with prefix, ignoring case. With
// keyword, each is spelled in the case of the prefix (lower if the prefix
// has no upper-case letter); other names keep their own spelling after the
// prefix the user typed.
func matching(prefix string, names []string, keyword bool) []string {
	lp := strings.ToLower(prefix)
	lower := keyword && prefix == lp
	var out []string
	for _, n := range names {
		if !strings.HasPrefix(strings.ToLower(n), lp) || len(n) == len(prefix) && keyword {
			continue
		}
		switch {
		case lower:
			n = strings.ToLower(n)
		case keyword:
			n = strings.ToUpper(n)
		}
		out = append(out, prefix+n[len(prefix):])
	}
	return out
}

// identifiers lists the bare and quoted identifiers of SQL text, skipping
// string literals and comments.
func identifiers(text string) []string {
	var out []string
	for i := 0; i < len(text); {
		c := text[i]
		switch {
		case c == '\'':
			j := i + 1
			for j < len(text) && text[j] != '\'' {
				j++
			}
			i = j + 1
		case c == '-' && i+1 < len(text) && text[i+1] == '-':
			j := strings.IndexByte(text[i:], '\n')
			if j < 0 {
				return out
			}
			i += j
		case c == '/' && i+1 < len(text) && text[i+1] == '*':
			j := strings.Index(text[i+2:], "*/")
			if j < 0 {
				return out
			}
			i += j + 4
		case c == '"' || c == '`':
			j := strings.IndexByte(text[i+1:], c)
			if j < 0 {
				return out
			}
			out = append(out, text[i+1:i+1+j])
			i += j + 2
		case isWordByte(c) && c != '.':
			j := i
			for j < len(text) && isWordByte(text[j]) && text[j] != '.' {
				j++
			}
			out = append(out, text[i:j])
			i = j
		default:
			i++
		}
	}
	return out
}

// aliases maps each alias in toks ("lineitem l", "lineitem AS l") to its
// table's lower-case name.
func aliases(toks []string, byName map[string]*quiver.TableInfo) map[string]string {
	out := map[string]string{}
	for i, tok := range toks {
		t := strings.ToLower(tok)
		if byName[t] == nil || i+1 >= len(toks) {
			continue
		}
		next := toks[i+1]
		if strings.EqualFold(next, "as") && i+2 < len(toks) {
			next = toks[i+2]
		}
		if !isKeyword(next) {
			out[strings.ToLower(next)] = t
		}
	}
	return out
}

func isKeyword(s string) bool {
	return slices.ContainsFunc(keywords, func(k string) bool { return strings.EqualFold(k, s) })
}

// keywords are the SQL words and functions completion offers.
var keywords = []string{
	"ALL", "ANALYZE", "AND", "AS", "ASC", "AVG", "BETWEEN", "BY", "CACHE", "CACHES", "CASE", "CAST",
	"CLEAR", "COALESCE", "CONCAT", "COUNT", "CREATE", "CROSS", "CSV", "DATE", "DAY", "DECIMAL",
	"DESC", "DESCRIBE", "DISTINCT", "DOUBLE", "DROP", "ELSE", "END", "EXCEPT", "EXISTS", "EXPLAIN",
	"EXTERNAL", "EXTRACT", "FALSE", "FIRST", "FROM", "FULL", "GROUP", "HAVING", "IF", "IN", "INNER",
	"INTEGER", "INTERVAL", "IS", "JOIN", "LAST", "LAZY", "LEFT", "LENGTH", "LIKE", "LIMIT", "LOCATION",
	"LOWER", "MAX", "MIN", "MONTH", "NOT", "NULL", "NULLIF", "NULLS", "OFFSET", "ON", "OPTIONS", "OR",
	"ORDER", "OUTER", "PARQUET", "REPLACE", "RIGHT", "SELECT", "SET", "SHOW", "STORED", "SUBSTRING",
	"SUM", "TABLE", "TABLES", "THEN", "TRIM", "TRUE", "UNCACHE", "UNION", "UPPER", "USING", "VALUES",
	"VARCHAR", "VERBOSE", "VIEW", "WHEN", "WHERE", "WITH", "YEAR",
}
