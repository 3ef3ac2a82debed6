package format_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver/format"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the golden files in testdata/table")

// tableCase is one golden table: a schema, rows as JSON, and options.
type tableCase struct {
	name   string
	fields []arrow.Field
	rows   string // a JSON array of objects (array.RecordFromJSON)
	opt    format.Options
}

func field(name string, t arrow.DataType) arrow.Field {
	return arrow.Field{Name: name, Type: t, Nullable: true}
}

var (
	str = arrow.BinaryTypes.String
	i64 = arrow.PrimitiveTypes.Int64
	f64 = arrow.PrimitiveTypes.Float64
	dec = &arrow.Decimal128Type{Precision: 15, Scale: 2}
)

func manyRows(n int) string {
	var b strings.Builder
	b.WriteString("[")
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"id": %d, "name": "row %d"}`, i, i)
	}
	return b.String() + "]"
}

func wideRow(cols int) ([]arrow.Field, string) {
	fields := make([]arrow.Field, cols)
	var b strings.Builder
	b.WriteString(`[{`)
	for i := range fields {
		fields[i] = field(fmt.Sprintf("column_%02d", i), str)
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"column_%02d": "value %d"`, i, i)
	}
	return fields, b.String() + `}]`
}

func tableCases() []tableCase {
	wideFields, wideRows := wideRow(16)
	return []tableCase{
		{
			name:   "types",
			fields: []arrow.Field{field("id", i64), field("price", dec), field("ratio", f64), field("day", arrow.FixedWidthTypes.Date32), field("flag", arrow.FixedWidthTypes.Boolean), field("name", str)},
			rows:   `[{"id": 1, "price": "12.50", "ratio": 0.25, "day": "1998-09-02", "flag": true, "name": "apple"}, {"id": -20, "price": "-3.00", "ratio": 1e20, "day": "1970-01-01", "flag": false, "name": "b"}]`,
		},
		{
			name:   "nulls",
			fields: []arrow.Field{field("id", i64), field("name", str), field("price", dec)},
			rows:   `[{"id": 1, "name": null, "price": "1.00"}, {"id": null, "name": "NULL", "price": null}]`,
		},
		{
			name:   "nulls_color",
			fields: []arrow.Field{field("id", i64), field("name", str)},
			rows:   `[{"id": null, "name": "NULL"}, {"id": 2, "name": null}]`,
			opt:    format.Options{Color: true, Null: "∅"},
		},
		{
			name:   "many_rows",
			fields: []arrow.Field{field("id", i64), field("name", str)},
			rows:   manyRows(100),
			opt:    format.Options{MaxRows: 7},
		},
		{
			name:   "many_rows_own_footer",
			fields: []arrow.Field{field("id", i64), field("name", str)},
			rows:   manyRows(100),
			opt:    format.Options{MaxRows: 4, HideRowCount: true},
		},
		{
			name:   "wide_values",
			fields: []arrow.Field{field("id", i64), field("comment", str), field("note", str)},
			rows: `[{"id": 1, "comment": "furiously regular requests. platelets affix furious and the rest of a long comment", "note": "short"},
			        {"id": 22, "comment": "x", "note": "another long value that will not fit in a sixty column terminal"}]`,
			opt: format.Options{Width: 60},
		},
		{
			name:   "max_width",
			fields: []arrow.Field{field("comment", str)},
			rows:   `[{"comment": "0123456789abcdef"}, {"comment": "short"}]`,
			opt:    format.Options{MaxWidth: 10},
		},
		{
			name:   "too_many_columns",
			fields: wideFields,
			rows:   wideRows,
			opt:    format.Options{Width: 80},
		},
		{
			name:   "unicode",
			fields: []arrow.Field{field("名前", str), field("n", i64), field("city", str)},
			rows:   `[{"名前": "東京タワー", "n": 1, "city": "Zürich"}, {"名前": "🚀 rocket", "n": 22, "city": "Ame\u0301lie"}, {"名前": "abc", "n": 333, "city": "Ελλάδα"}]`,
		},
		{
			name:   "unicode_cut",
			fields: []arrow.Field{field("名前", str), field("city", str)},
			rows:   `[{"名前": "東京タワーと富士山", "city": "Zürich Zürich Zürich"}]`,
			opt:    format.Options{MaxWidth: 7},
		},
		{
			name:   "multiline",
			fields: []arrow.Field{field("id", i64), field("text", str)},
			rows:   `[{"id": 1, "text": "line one\nline two\n"}, {"id": 2, "text": "tab\there"}]`,
		},
		{
			name:   "empty",
			fields: []arrow.Field{field("id", i64), field("name", str)},
			rows:   `[]`,
		},
	}
}

func TestTableGolden(t *testing.T) {
	for _, c := range tableCases() {
		t.Run(c.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
			t.Cleanup(func() { mem.AssertSize(t, 0) })
			schema := arrow.NewSchema(c.fields, nil)
			rec, _, err := array.RecordFromJSON(mem, schema, strings.NewReader(c.rows))
			if err != nil {
				t.Fatal(err)
			}
			defer rec.Release()
			var b strings.Builder
			if err := format.Write(&b, format.Table, schema, []arrow.RecordBatch{rec}, c.opt); err != nil {
				t.Fatal(err)
			}
			got := b.String()
			if c.opt.Width > 0 {
				for _, l := range strings.Split(strings.TrimSuffix(got, "\n"), "\n") {
					if w := format.TextWidth(l); w > c.opt.Width {
						t.Errorf("line is %d columns wide, want at most %d: %q", w, c.opt.Width, l)
					}
				}
			}
			golden(t, filepath.Join("testdata", "table", c.name+".txt"), got)
		})
	}
}

func golden(t *testing.T, path, got string) {
	t.Helper()
	if *rewrite {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -rewrite to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs (run with -rewrite to accept):\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}

func TestTextWidth(t *testing.T) {
	for _, c := range []struct {
		s string
		w int
	}{
		{"abc", 3}, {"東京", 4}, {"e\u0301", 1}, {"🚀", 2}, {"Ελλάδα", 6}, {"", 0}, {"─│…", 3},
	} {
		if got := format.TextWidth(c.s); got != c.w {
			t.Errorf("TextWidth(%q) = %d, want %d", c.s, got, c.w)
		}
	}
}
