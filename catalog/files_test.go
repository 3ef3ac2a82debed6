package catalog

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

func TestGlobMatch(t *testing.T) {
	for _, c := range []struct {
		pat, path string
		want      bool
	}{
		{"*.csv", "a.csv", true},
		{"*.csv", "d/a.csv", false},
		{"**/*.csv", "a.csv", true},
		{"**/*.csv", "d/e/a.csv", true},
		{"d/**/x.parquet", "d/x.parquet", true},
		{"d/**/x.parquet", "d/a/b/x.parquet", true},
		{"d/**/x.parquet", "e/x.parquet", false},
		{"year=*/*.parquet", "year=2024/part.parquet", true},
		{"a?c", "abc", true},
		{"[ab]*", "cat", false},
	} {
		if got := globMatch(strings.Split(c.pat, "/"), strings.Split(c.path, "/")); got != c.want {
			t.Errorf("globMatch(%q, %q) = %v, want %v", c.pat, c.path, got, c.want)
		}
	}
}

func TestSniffCSV(t *testing.T) {
	for _, c := range []struct {
		text   string
		delim  rune
		header bool
		types  []arrow.DataType
	}{
		{"a|b|c\n1|x, y|2.5\n2|z|3\n", '|', true, []arrow.DataType{arrow.PrimitiveTypes.Int64, arrow.BinaryTypes.String, arrow.PrimitiveTypes.Float64}},
		{"1;2\n3;4\n", ';', false, []arrow.DataType{arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Int64}},
		{"a\tb\n2024-01-02\ttrue\n", '\t', true, []arrow.DataType{arrow.FixedWidthTypes.Date32, arrow.FixedWidthTypes.Boolean}},
		{"name,city\nann,paris\n", ',', true, []arrow.DataType{arrow.BinaryTypes.String, arrow.BinaryTypes.String}},
	} {
		path := filepath.Join(t.TempDir(), "f.csv")
		if err := os.WriteFile(path, []byte(c.text), 0o644); err != nil {
			t.Fatal(err)
		}
		tab, err := OpenFiles("t", "", []string{path}, nil, nil)
		if err != nil {
			t.Fatalf("%q: %v", c.text, err)
		}
		if d, _ := CSVDelimiter(tab.Options); d != c.delim {
			t.Errorf("%q: delimiter %q, want %q", c.text, d, c.delim)
		}
		if h, _ := CSVHasHeader(tab.Options); h != c.header {
			t.Errorf("%q: header %v, want %v", c.text, h, c.header)
		}
		for i, want := range c.types {
			if got := tab.Schema.Field(i).Type; !arrow.TypeEqual(got, want) {
				t.Errorf("%q: column %d is %s, want %s", c.text, i, got, want)
			}
		}
	}
}

func TestHive(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{"y=2023/m=1/a.csv", "y=2023/m=2/a.csv", "y=2024/m=__HIVE_DEFAULT_PARTITION__/a.csv"} {
		full := filepath.Join(dir, p)
		os.MkdirAll(filepath.Dir(full), 0o755)
		if err := os.WriteFile(full, []byte("v\n1\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tab, err := OpenFiles("t", "", []string{dir}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := tab.PartitionColumns(); strings.Join(got, ",") != "y,m" {
		t.Fatalf("partition columns %v", got)
	}
	if f := tab.Schema.Field(1); f.Name != "y" || f.Type.ID() != arrow.INT64 {
		t.Errorf("y is %v", f)
	}
	vals, null := HiveValues(tab.Files[2], tab.PartitionColumns())
	if vals[0] != "2024" || null[0] || !null[1] {
		t.Errorf("values of %s: %v %v", tab.Files[2], vals, null)
	}
	// A file outside the key=value layout turns auto-detection off, and is an
	// error when hive partitioning is asked for.
	os.WriteFile(filepath.Join(dir, "loose.csv"), []byte("v\n2\n"), 0o644)
	if tab, err := OpenFiles("t", "", []string{dir}, nil, nil); err != nil || tab.PartitionColumns() != nil {
		t.Errorf("auto with a loose file: %v, %v", err, tab)
	}
	if _, err := OpenFiles("t", "", []string{dir}, map[string]string{"hive_partitioning": "true"}, nil); err == nil {
		t.Error("hive_partitioning true with a loose file: no error")
	}
}
