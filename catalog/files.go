package catalog

import (
	"errors"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver/qerr"
)

// JSON is newline-delimited JSON: one object per line.
const JSON Format = "json"

// PartitionColumnsOption is the table option naming a table's hive
// partition columns (comma-separated, in order). They are the last fields
// of the table's schema; their values come from the key=value directories
// of each file's path (see HiveValues), not from the files.
const PartitionColumnsOption = "partition_columns"

// hiveNull is the directory value that stands for NULL, as Hive writes it.
const hiveNull = "__HIVE_DEFAULT_PARTITION__"

// FormatOf infers a file's format from its extension; ok is false for an
// extension that names no format Quiver reads.
func FormatOf(p string) (f Format, ok bool) {
	switch strings.ToLower(filepath.Ext(p)) {
	case ".parquet", ".pq":
		return Parquet, true
	case ".csv", ".tsv", ".txt", ".tbl":
		return CSV, true
	case ".json", ".ndjson", ".jsonl":
		return JSON, true
	case ".arrow", ".ipc", ".feather", ".arrows":
		return Arrow, true
	}
	return "", false
}

// ParseFormat reads a format name as SQL and options give it.
func ParseFormat(name string) (Format, error) {
	switch strings.ToLower(name) {
	case "parquet":
		return Parquet, nil
	case "csv", "tsv":
		return CSV, nil
	case "json", "ndjson", "jsonl":
		return JSON, nil
	case "arrow", "ipc", "feather":
		return Arrow, nil
	}
	return "", qerr.Planf("unknown format %q: expected PARQUET, CSV, JSON or ARROW", name)
}

// fileEntry is one data file and its path relative to the location it was
// found under (the directory, or a glob's fixed prefix).
type fileEntry struct{ Path, Rel string }

// hasGlob reports whether p has glob metacharacters.
func hasGlob(p string) bool { return strings.ContainsAny(p, "*?[") }

// skipName reports whether a directory entry is not data: hidden files and
// those starting with '_' (_SUCCESS, _metadata) or ending in .tmp.
func skipName(name string) bool {
	return strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || strings.HasSuffix(name, ".tmp")
}

// ExpandLocations lists the data files of locations, sorted and without
// duplicates: each location is a file, a directory (read recursively,
// skipping hidden and '_' entries) or a glob (*, ?, [...] within a path
// segment and ** for any number of directories).
func ExpandLocations(locations []string) ([]string, error) {
	es, err := expand(locations)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.Path
	}
	return out, nil
}

func expand(locations []string) ([]fileEntry, error) {
	if len(locations) == 0 {
		return nil, qerr.Planf("catalog: no location given")
	}
	seen := map[string]bool{}
	var out []fileEntry
	for _, loc := range locations {
		if loc == "" {
			return nil, qerr.Planf("catalog: empty location")
		}
		var es []fileEntry
		var err error
		if hasGlob(loc) {
			es, err = expandGlob(loc)
		} else {
			es, err = expandPath(loc)
		}
		if err != nil {
			return nil, err
		}
		for _, e := range es {
			if !seen[e.Path] {
				seen[e.Path] = true
				out = append(out, e)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

func expandPath(loc string) ([]fileEntry, error) {
	st, err := os.Stat(loc)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, qerr.IOf("catalog: location %q does not exist", loc)
		}
		return nil, qerr.IOf("catalog: cannot read location %q: %w", loc, err)
	}
	if !st.IsDir() {
		return []fileEntry{{Path: loc, Rel: filepath.Base(loc)}}, nil
	}
	var out []fileEntry
	err = filepath.WalkDir(loc, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == loc {
			return nil
		}
		if skipName(d.Name()) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() || (!d.IsDir() && d.Type()&fs.ModeSymlink != 0) {
			rel, _ := filepath.Rel(loc, p)
			out = append(out, fileEntry{Path: p, Rel: rel})
		}
		return nil
	})
	if err != nil {
		return nil, qerr.IOf("catalog: cannot list directory %q: %w", loc, err)
	}
	if len(out) == 0 {
		return nil, qerr.IOf("catalog: directory %q has no data files", loc)
	}
	return out, nil
}

// expandGlob walks the glob's fixed prefix directory and keeps the files
// whose relative path matches the rest of the pattern.
func expandGlob(pattern string) ([]fileEntry, error) {
	clean := filepath.ToSlash(filepath.Clean(pattern))
	segs := strings.Split(clean, "/")
	fixed := 0
	for fixed < len(segs) && !hasGlob(segs[fixed]) {
		fixed++
	}
	root := strings.Join(segs[:fixed], "/")
	switch {
	case root == "" && strings.HasPrefix(clean, "/"):
		root = "/"
	case root == "":
		root = "."
	}
	rest := segs[fixed:]
	for _, s := range rest {
		if _, err := path.Match(s, ""); err != nil {
			return nil, qerr.Planf("catalog: bad glob %q: %v", pattern, err)
		}
	}
	if st, err := os.Stat(root); err != nil || !st.IsDir() {
		return nil, qerr.IOf("catalog: no files match %q (directory %q does not exist)", pattern, root)
	}
	var out []fileEntry
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == root {
			return nil
		}
		if skipName(d.Name()) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		relSegs := strings.Split(filepath.ToSlash(rel), "/")
		if d.IsDir() {
			if !globPrefixCanMatch(rest, relSegs) {
				return filepath.SkipDir
			}
			return nil
		}
		if globMatch(rest, relSegs) {
			out = append(out, fileEntry{Path: p, Rel: rel})
		}
		return nil
	})
	if err != nil {
		return nil, qerr.IOf("catalog: cannot expand %q: %w", pattern, err)
	}
	if len(out) == 0 {
		return nil, qerr.IOf("catalog: no files match %q", pattern)
	}
	return out, nil
}

// globMatch matches path segments against pattern segments; "**" matches
// any number of segments (none included).
func globMatch(pat, segs []string) bool {
	if len(pat) == 0 {
		return len(segs) == 0
	}
	if pat[0] == "**" {
		for k := 0; k <= len(segs); k++ {
			if globMatch(pat[1:], segs[k:]) {
				return true
			}
		}
		return false
	}
	if len(segs) == 0 {
		return false
	}
	ok, _ := path.Match(pat[0], segs[0])
	return ok && globMatch(pat[1:], segs[1:])
}

// globPrefixCanMatch reports whether a directory at segs could hold a match.
func globPrefixCanMatch(pat, segs []string) bool {
	for i, s := range segs {
		if i >= len(pat) {
			return false
		}
		if pat[i] == "**" {
			return true
		}
		if ok, _ := path.Match(pat[i], s); !ok {
			return false
		}
	}
	return true
}

// resolveFormat checks every file is of one format: format when given (a
// file whose extension names another format is an error naming it), else
// the format the extensions agree on.
func resolveFormat(format Format, es []fileEntry) (Format, error) {
	var first string
	for _, e := range es {
		f, ok := FormatOf(e.Path)
		if !ok {
			if format == "" {
				return "", qerr.Planf("catalog: cannot tell the format of %s from its name; give the format (STORED AS, or the reader function)", e.Path)
			}
			continue
		}
		if format == "" {
			format, first = f, e.Path
			continue
		}
		if f != format {
			if first == "" {
				return "", qerr.Planf("catalog: %s is a %s file, but the table is read as %s", e.Path, f, format)
			}
			return "", qerr.Planf("catalog: %s is a %s file, but %s is %s: a table's files must all be of one format", e.Path, f, first, format)
		}
		if first == "" {
			first = e.Path
		}
	}
	return format, nil
}

// hiveKeys returns the key=value directory segments of a relative path.
func hiveKeys(rel string) (keys, vals []string) {
	segs := strings.Split(filepath.ToSlash(rel), "/")
	for _, s := range segs[:len(segs)-1] {
		k, v, ok := strings.Cut(s, "=")
		if !ok || k == "" {
			continue
		}
		keys = append(keys, k)
		vals = append(vals, v)
	}
	return keys, vals
}

// HiveValues returns the values of the partition columns cols in a file's
// path: each column's last key=value directory segment (keys compare
// case-insensitively), unescaped; null[i] is set for a missing value or
// the Hive NULL marker.
func HiveValues(p string, cols []string) (vals []string, null []bool) {
	segs := strings.Split(filepath.ToSlash(p), "/")
	vals, null = make([]string, len(cols)), make([]bool, len(cols))
	for i, c := range cols {
		null[i] = true
		for _, s := range segs[:len(segs)-1] {
			k, v, ok := strings.Cut(s, "=")
			if !ok || !strings.EqualFold(k, c) {
				continue
			}
			if u, err := url.PathUnescape(v); err == nil {
				v = u
			}
			vals[i], null[i] = v, v == hiveNull
		}
	}
	return vals, null
}

// PartitionColumns returns a table's hive partition columns (nil: none).
func (t *Table) PartitionColumns() []string {
	v := t.Options[PartitionColumnsOption]
	if v == "" {
		return nil
	}
	return strings.Split(v, ",")
}

// discoverHive finds the partition columns common to every file's relative
// path. mode is the hive_partitioning option: "true" requires them,
// "false" ignores them, "" (auto) uses them when every file has the same
// keys.
func discoverHive(es []fileEntry, mode string) ([]arrow.Field, error) {
	want := false
	switch strings.ToLower(mode) {
	case "", "auto":
	case "true", "1", "yes", "on":
		want = true
	case "false", "0", "no", "off":
		return nil, nil
	default:
		return nil, qerr.Planf("catalog: option hive_partitioning must be true or false, got %q", mode)
	}
	var keys []string
	values := map[string][]string{}
	for i, e := range es {
		ks, vs := hiveKeys(e.Rel)
		if i == 0 {
			keys = ks
		} else if !slicesEqualFold(keys, ks) {
			if want {
				return nil, qerr.Planf("catalog: hive partitioning: %s has partition keys %v, %s has %v", es[0].Path, keys, e.Path, ks)
			}
			return nil, nil
		}
		for j, k := range keys {
			values[strings.ToLower(k)] = append(values[strings.ToLower(k)], vs[j])
		}
	}
	if len(keys) == 0 {
		if want {
			return nil, qerr.Planf("catalog: hive_partitioning is set but %s has no key=value directories", es[0].Path)
		}
		return nil, nil
	}
	fields := make([]arrow.Field, len(keys))
	for i, k := range keys {
		fields[i] = arrow.Field{Name: k, Type: hiveType(values[strings.ToLower(k)]), Nullable: true}
	}
	return fields, nil
}

func slicesEqualFold(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !strings.EqualFold(a[i], b[i]) {
			return false
		}
	}
	return true
}

// hiveType is Int64 when every value is an integer, Date32 when every value
// is a date, else Utf8 (the NULL marker fits any).
func hiveType(vals []string) arrow.DataType {
	isInt, isDate := true, true
	for _, v := range vals {
		if u, err := url.PathUnescape(v); err == nil {
			v = u
		}
		if v == hiveNull {
			continue
		}
		if _, err := strconv.ParseInt(v, 10, 64); err != nil {
			isInt = false
		}
		if _, err := time.Parse("2006-01-02", v); err != nil {
			isDate = false
		}
	}
	switch {
	case isInt:
		return arrow.PrimitiveTypes.Int64
	case isDate:
		return arrow.FixedWidthTypes.Date32
	}
	return arrow.BinaryTypes.String
}

// OpenFiles describes the table stored at locations (files, directories or
// globs; see ExpandLocations). format may be empty: it is then inferred from
// the files' extensions. A directory or glob that mixes formats is an error
// naming the odd file. Hive key=value directories become partition columns
// after the file columns (option hive_partitioning: true, false or auto).
// The schema comes from declared if given (the file columns), else from the
// files. Nothing is registered: the caller registers the result.
func OpenFiles(name string, format Format, locations []string, options map[string]string, declared []arrow.Field) (*Table, error) {
	es, err := expand(locations)
	if err != nil {
		return nil, err
	}
	if format, err = resolveFormat(format, es); err != nil {
		return nil, err
	}
	opts := make(map[string]string, len(options))
	for k, v := range options {
		opts[strings.ToLower(k)] = v
	}
	hive, err := discoverHive(es, opts["hive_partitioning"])
	if err != nil {
		return nil, err
	}
	delete(opts, "hive_partitioning")
	delete(opts, PartitionColumnsOption)
	files := make([]string, len(es))
	for i, e := range es {
		files[i] = e.Path
	}
	t := &Table{Name: name, Format: format, Location: locations[0], Locations: locations, Files: files, Options: opts, Rows: -1}
	if declared != nil {
		t.Schema = arrow.NewSchema(declared, nil)
	}
	switch format {
	case Parquet:
		err = t.openParquet()
	case Arrow:
		err = t.openIPC()
	case CSV:
		err = t.openCSV()
	case JSON:
		if t.Schema == nil {
			t.Schema, err = inferJSON(files, opts)
		}
	default:
		err = qerr.NotImplementedf("catalog: tables stored as %q are not supported (use PARQUET, CSV, JSON or ARROW)", format)
	}
	if err != nil {
		return nil, err
	}
	if len(hive) > 0 {
		names := make([]string, len(hive))
		for i, f := range hive {
			if t.Schema.FieldIndices(f.Name) != nil {
				return nil, qerr.Planf("catalog: partition column %q is also a column of the files", f.Name)
			}
			names[i] = f.Name
		}
		t.Schema = arrow.NewSchema(append(t.Schema.Fields(), hive...), nil)
		t.Options[PartitionColumnsOption] = strings.Join(names, ",")
		if t.Distinct != nil {
			t.Distinct = append(t.Distinct, make([]int64, len(hive))...)
		}
		if t.Bounds != nil {
			t.Bounds = append(t.Bounds, make([]KeyRange, len(hive))...)
		}
		// Row-group ranges are kept per file column; the planner reads
		// ranges only for columns it finds there.
	}
	return t, nil
}

// Dir returns the directory new files of the table go to (INSERT INTO):
// its location when that is a directory, else the directory of its first
// file.
func (t *Table) Dir() string {
	if len(t.Locations) <= 1 && !hasGlob(t.Location) {
		if st, err := os.Stat(t.Location); err == nil && st.IsDir() {
			return t.Location
		}
	}
	if len(t.Files) > 0 {
		return filepath.Dir(t.Files[0])
	}
	return t.Location
}
