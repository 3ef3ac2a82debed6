package sql

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver/catalog"
	"github.com/quiverdb/quiver/logical"
	"github.com/quiverdb/quiver/qerr"
)

// A file read in FROM: a quoted path (FROM 'data/*.parquet') or a reader
// function (read_parquet, read_csv, read_json, read_ndjson, read_arrow).
// TiDB parses neither, so the pre-pass replaces each with a placeholder
// table name (filePrefix and a number) that tableRef resolves to a scan of
// the files.
type fileSource struct {
	Func    string // the reader function, or "" for a quoted path
	Paths   []string
	Format  catalog.Format    // "" to infer from the files' extensions
	Options map[string]string // catalog option keys
	Columns []arrow.Field     // declared columns; nil: learned from the files
}

// filePrefix starts the placeholder names; user SQL may not use it.
const filePrefix = "__quiver_file_"

// readerFormats are the reader functions and the format each reads.
var readerFormats = map[string]catalog.Format{
	"read_parquet": catalog.Parquet, "parquet_scan": catalog.Parquet,
	"read_csv": catalog.CSV, "read_csv_auto": catalog.CSV,
	"read_json": catalog.JSON, "read_ndjson": catalog.JSON, "read_json_auto": catalog.JSON,
	"read_arrow": catalog.Arrow, "read_ipc": catalog.Arrow,
}

// fileSourceEdits finds the file sources of a query's FROM clauses, records
// them in b.files and returns the edits that replace them by placeholders.
func (b *builder) fileSourceEdits(toks []token) ([]edit, error) {
	var edits []edit
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if (t.Kind == tokIdent || t.Kind == tokQuotedIdent) && strings.HasPrefix(strings.ToLower(t.value()), filePrefix) {
			return nil, qerr.At(t.Line, t.Col, "names starting with %s are reserved", filePrefix)
		}
		switch {
		case t.Kind == tokString && inFromList(toks, i):
			p := t.value()
			if p == "" {
				return nil, qerr.At(t.Line, t.Col, "empty file path in FROM")
			}
			edits = append(edits, edit{t.Off, t.End, b.addFile(&fileSource{Paths: []string{p}, Options: map[string]string{}})})
		case t.Kind == tokIdent && readerFormats[strings.ToLower(t.Text)] != "" && i+1 < len(toks) && toks[i+1].punct("(") && inFromList(toks, i):
			fs, end, err := parseReaderCall(toks, i)
			if err != nil {
				return nil, err
			}
			edits = append(edits, edit{t.Off, toks[end].End, b.addFile(fs)})
			i = end
		}
	}
	return edits, nil
}

// addFile records fs and returns its placeholder, quoted.
func (b *builder) addFile(fs *fileSource) string {
	if b.files == nil {
		b.files = map[string]*fileSource{}
	}
	name := fmt.Sprintf("%s%d", filePrefix, len(b.files)+1)
	b.files[name] = fs
	return "`" + name + "`"
}

// inFromList reports whether token i stands where a table goes: right after
// FROM or JOIN, or after a comma of a FROM list.
func inFromList(toks []token, i int) bool {
	if i == 0 {
		return false
	}
	p := toks[i-1]
	if p.is("JOIN") {
		return true
	}
	if p.is("FROM") {
		return !inCallParens(toks, i-1)
	}
	if !p.punct(",") {
		return false
	}
	d := 0
	for k := i - 2; k >= 0; k-- {
		t := toks[k]
		switch {
		case t.punct(")"):
			d++
		case t.punct("("):
			if d == 0 {
				return false
			}
			d--
		case d > 0:
		case t.is("FROM"):
			return !inCallParens(toks, k)
		case t.is("SELECT") || t.is("WHERE") || t.is("BY") || t.is("HAVING") || t.is("ON") ||
			t.is("USING") || t.is("VALUES") || t.is("LIMIT") || t.is("SET") || t.is("INTO"):
			return false
		}
	}
	return false
}

// inCallParens reports whether token i stands inside a function call's
// parentheses (EXTRACT(YEAR FROM x), SUBSTRING(s FROM 2)) rather than in a
// query: the innermost '(' around it does not open a subquery.
func inCallParens(toks []token, i int) bool {
	d := 0
	for k := i - 1; k >= 0; k-- {
		switch {
		case toks[k].punct(")"):
			d++
		case toks[k].punct("("):
			if d > 0 {
				d--
				continue
			}
			next := toks[k+1]
			return !(next.is("SELECT") || next.is("WITH") || next.is("VALUES") || next.punct("("))
		}
	}
	return false
}

// parseReaderCall reads fn(path | [paths], name => value, ...) starting at
// the function name; it returns the source and the index of the ')'.
func parseReaderCall(toks []token, i int) (*fileSource, int, error) {
	fn := strings.ToLower(toks[i].Text)
	fs := &fileSource{Func: fn, Format: readerFormats[fn], Options: map[string]string{}}
	at := func(j int) token {
		if j < len(toks) {
			return toks[j]
		}
		return toks[len(toks)-1]
	}
	bad := func(j int, format string, args ...any) error {
		t := at(j)
		return qerr.At(t.Line, t.Col, "%s: "+format, append([]any{fn}, args...)...)
	}
	j := i + 2
	// The paths: a string or a list of strings.
	switch {
	case at(j).Kind == tokString:
		fs.Paths = []string{at(j).value()}
		j++
	case at(j).punct("["):
		j++
		for !at(j).punct("]") {
			if at(j).Kind != tokString {
				return nil, 0, bad(j, "expected a quoted path in the path list, got %q", at(j).Text)
			}
			fs.Paths = append(fs.Paths, at(j).value())
			j++
			if at(j).punct(",") {
				j++
			}
			if j >= len(toks) {
				return nil, 0, bad(j, "unterminated path list")
			}
		}
		j++
		if len(fs.Paths) == 0 {
			return nil, 0, bad(j, "the path list is empty")
		}
	default:
		return nil, 0, bad(j, "expected a quoted path or a list of paths as the first argument")
	}
	for {
		if j >= len(toks) {
			return nil, 0, bad(j, "missing ')'")
		}
		if at(j).punct(")") {
			break
		}
		if !at(j).punct(",") {
			return nil, 0, bad(j, "expected ',' or ')', got %q", at(j).Text)
		}
		j++
		if at(j).Kind != tokIdent {
			return nil, 0, bad(j, "expected an option name, got %q", at(j).Text)
		}
		name := strings.ToLower(at(j).Text)
		j++
		switch {
		case at(j).punct("=") && at(j+1).punct(">"):
			j += 2
		case at(j).punct(":=") || at(j).punct("="):
			j++
		default:
			return nil, 0, bad(j, "expected => after option %s", name)
		}
		if name == "columns" {
			cols, next, err := parseColumnsArg(toks, j, bad)
			if err != nil {
				return nil, 0, err
			}
			fs.Columns, j = cols, next
			continue
		}
		v := at(j)
		var val string
		switch v.Kind {
		case tokString, tokNumber:
			val = v.value()
		case tokIdent:
			val = strings.ToLower(v.Text)
		default:
			return nil, 0, bad(j, "option %s: expected a value, got %q", name, v.Text)
		}
		j++
		if err := setReaderOption(fs, name, val); err != nil {
			t := at(j - 1)
			return nil, 0, qerr.At(t.Line, t.Col, "%s: %s", fn, msgOf(err))
		}
	}
	return fs, j, nil
}

// parseColumnsArg reads {'name': 'TYPE', ...}.
func parseColumnsArg(toks []token, j int, bad func(int, string, ...any) error) ([]arrow.Field, int, error) {
	if j >= len(toks) || !toks[j].punct("{") {
		return nil, 0, bad(j, "columns: expected {'name': 'TYPE', ...}")
	}
	j++
	var cols []arrow.Field
	for j < len(toks) && !toks[j].punct("}") {
		if toks[j].Kind != tokString && toks[j].Kind != tokQuotedIdent && toks[j].Kind != tokIdent {
			return nil, 0, bad(j, "columns: expected a column name, got %q", toks[j].Text)
		}
		name := toks[j].value()
		j++
		if j >= len(toks) || !toks[j].punct(":") {
			return nil, 0, bad(j, "columns: expected ':' after %q", name)
		}
		j++
		if j >= len(toks) || toks[j].Kind != tokString {
			return nil, 0, bad(j, "columns: expected a quoted type name for %q", name)
		}
		typ, err := typeFromString(toks[j].value(), "UTC")
		if err != nil {
			return nil, 0, bad(j, "columns: %s", msgOf(err))
		}
		cols = append(cols, arrow.Field{Name: name, Type: typ, Nullable: true})
		j++
		if j < len(toks) && toks[j].punct(",") {
			j++
		}
	}
	if j >= len(toks) {
		return nil, 0, bad(j, "columns: missing '}'")
	}
	if len(cols) == 0 {
		return nil, 0, bad(j, "columns: no columns given")
	}
	return cols, j + 1, nil
}

// setReaderOption maps a reader option to the catalog's option keys.
func setReaderOption(fs *fileSource, name, val string) error {
	csvOnly := func() error {
		if fs.Format != catalog.CSV {
			return qerr.Planf("option %s applies to CSV files only", name)
		}
		return nil
	}
	switch name {
	case "hive_partitioning":
		fs.Options["hive_partitioning"] = val
	case "delim", "sep", "delimiter":
		if err := csvOnly(); err != nil {
			return err
		}
		fs.Options["delimiter"] = val
	case "header", "has_header":
		if err := csvOnly(); err != nil {
			return err
		}
		fs.Options["has_header"] = val
	case "quote", "escape":
		if err := csvOnly(); err != nil {
			return err
		}
		fs.Options[name] = val
	case "nullstr", "null":
		if err := csvOnly(); err != nil {
			return err
		}
		fs.Options["null"] = val
	case "auto_detect":
		// Sniffing is how the schema is found unless columns are given.
	case "format":
		switch {
		case fs.Format == catalog.JSON && (val == "newline_delimited" || val == "nd" || val == "auto"):
		case fs.Format == catalog.JSON && val == "array":
			return qerr.NotImplementedf("JSON arrays are not supported; use newline-delimited JSON")
		default:
			return qerr.Planf("option format: unexpected value %q", val)
		}
	case "compression":
		if val != "none" && val != "auto" && val != "uncompressed" {
			return qerr.NotImplementedf("compressed %s files (%s) are not supported", fs.Format, val)
		}
	default:
		return qerr.Planf("unknown option %q (the options are hive_partitioning, columns, and for CSV delim, header, quote, escape, nullstr)", name)
	}
	return nil
}

// fileScan opens the files of a file source and scans them.
func (b *builder) fileScan(fs *fileSource, alias string) (logical.Plan, error) {
	name := strings.Join(fs.Paths, ",")
	if alias == "" {
		if fs.Func != "" {
			alias = fs.Func
		} else {
			alias = fileAlias(fs.Paths[0])
		}
	}
	t, err := catalog.OpenFiles(name, fs.Format, fs.Paths, fs.Options, fs.Columns)
	if err != nil {
		return nil, err
	}
	return b.inSessionZone(logical.NewScan(t, alias), alias)
}

// fileAlias names the table of a quoted path: its file name without
// extension ('data/trips.parquet' is trips), or the last fixed directory
// of a glob.
func fileAlias(p string) string {
	segs := strings.Split(filepath.ToSlash(filepath.Clean(p)), "/")
	for i := len(segs) - 1; i >= 0; i-- {
		s := segs[i]
		if s == "" || strings.ContainsAny(s, "*?[") || s == "." || s == ".." {
			continue
		}
		if i == len(segs)-1 {
			s = strings.TrimSuffix(s, filepath.Ext(s))
		}
		return s
	}
	return "files"
}
