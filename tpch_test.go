package quiver_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver"
	"github.com/quiverdb/quiver/format"
)

var tpchTables = []string{"customer", "lineitem", "nation", "orders", "part", "partsupp", "region", "supplier"}

// newTPCHSession registers the SF 0.01 tables from testdata in a session
// whose allocator is checked for leaks when the test ends.
func newTPCHSession(t testing.TB, opts ...quiver.Option) *quiver.Session {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	ctx := context.Background()
	s, err := quiver.NewSession(ctx, append([]quiver.Option{quiver.WithAllocator(mem)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.Close()
		mem.AssertSize(t, 0)
	})
	for _, name := range tpchTables {
		if err := s.RegisterParquet(ctx, name, filepath.Join("testdata", "tpch", "sf0.01", name+".parquet")); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func TestTPCH(t *testing.T) {
	configs := []struct {
		name string
		opts []quiver.Option
	}{
		{"standalone", nil},
		{"standalone,executors=2,partitions=3", []quiver.Option{quiver.WithStandaloneCluster(2), quiver.WithTargetPartitions(3)}},
		{"local", []quiver.Option{quiver.WithLocalExecution()}},
		{"local,partitions=1", []quiver.Option{quiver.WithLocalExecution(), quiver.WithTargetPartitions(1)}},
		{"local,partitions=3,batch=7", []quiver.Option{quiver.WithLocalExecution(), quiver.WithTargetPartitions(3), quiver.WithBatchSize(7)}},
	}
	if !testing.Short() {
		configs = append(configs, struct {
			name string
			opts []quiver.Option
		}{"local,batch=1", []quiver.Option{quiver.WithLocalExecution(), quiver.WithBatchSize(1)}})
	}
	for _, cfg := range configs {
		t.Run(cfg.name, func(t *testing.T) {
			s := newTPCHSession(t, cfg.opts...)
			for q := 1; q <= 22; q++ {
				t.Run(fmt.Sprintf("q%02d", q), func(t *testing.T) {
					runTPCH(t, s, q)
				})
			}
		})
	}
}

func runTPCH(t *testing.T, s *quiver.Session, q int) {
	ctx := context.Background()
	text, err := os.ReadFile(filepath.Join("testdata", "tpch", "queries", fmt.Sprintf("q%02d.sql", q)))
	if err != nil {
		t.Fatal(err)
	}
	df, err := s.SQL(ctx, string(text))
	if err != nil {
		t.Fatalf("plan: %v", err)
	}
	batches, err := df.Collect(ctx)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	defer func() {
		for _, b := range batches {
			b.Release()
		}
	}()
	got := render(df.Schema(), batches)
	want := readAnswer(t, filepath.Join("testdata", "tpch", "answers", fmt.Sprintf("q%02d.csv", q)))
	compareAnswer(t, df.Schema(), got, want)
}

// render turns batches into rows of text (NULL as "").
func render(schema *arrow.Schema, batches []arrow.RecordBatch) [][]string {
	var rows [][]string
	for _, b := range batches {
		cols := make([][]string, b.NumCols())
		for i := range cols {
			cols[i], _ = format.Column(b.Column(i))
		}
		for r := 0; r < int(b.NumRows()); r++ {
			row := make([]string, len(cols))
			for i := range cols {
				row[i] = cols[i][r]
			}
			rows = append(rows, row)
		}
	}
	return rows
}

// readAnswer reads an answer file: '|'-delimited, a header line, no
// quoting, NULL as an empty field (a one-column NULL row is an empty line).
func readAnswer(t *testing.T, path string) [][]string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	recs := make([][]string, len(lines))
	for i, l := range lines {
		recs[i] = strings.Split(strings.TrimSuffix(l, "\r"), "|")
	}
	return recs
}

// compareAnswer checks got against an answer file's records (header first):
// the header names, then every cell, floats within 1e-9 relative, all else exactly.
func compareAnswer(t *testing.T, schema *arrow.Schema, got, want [][]string) {
	t.Helper()
	header, want := want[0], want[1:]
	names := make([]string, schema.NumFields())
	for i, f := range schema.Fields() {
		names[i] = f.Name
	}
	if strings.Join(names, "|") != strings.Join(header, "|") {
		t.Errorf("columns %v, want %v", names, header)
	}
	if len(got) != len(want) {
		t.Fatalf("%d rows, want %d\nfirst rows: %v", len(got), len(want), head(got))
	}
	bad := 0
	for r := range want {
		for c := range want[r] {
			if c >= len(got[r]) {
				t.Fatalf("row %d has %d columns, want %d", r, len(got[r]), len(want[r]))
			}
			if !cellEqual(schema.Field(c).Type, got[r][c], want[r][c]) {
				t.Errorf("row %d column %s: got %q, want %q", r, header[c], got[r][c], want[r][c])
				if bad++; bad > 10 {
					t.FailNow()
				}
			}
		}
	}
}

func head(rows [][]string) [][]string {
	if len(rows) > 5 {
		return rows[:5]
	}
	return rows
}

func cellEqual(typ arrow.DataType, got, want string) bool {
	if typ.ID() != arrow.FLOAT64 && typ.ID() != arrow.FLOAT32 {
		return got == want
	}
	if got == "" || want == "" {
		return got == want
	}
	g, err1 := strconv.ParseFloat(got, 64)
	w, err2 := strconv.ParseFloat(want, 64)
	if err1 != nil || err2 != nil {
		return false
	}
	if g == w {
		return true
	}
	return math.Abs(g-w) <= 1e-9*math.Max(math.Abs(g), math.Abs(w))
}
