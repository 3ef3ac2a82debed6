package quiver_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver"
	"github.com/quiverdb/quiver/format"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the expected output of .slt files from the actual results")

// A record of a sqllogictest file.
type sltRecord struct {
	line     int
	comments []string // the comment and blank-free lines before the record
	kind     string   // "statement" or "query"
	errRe    string   // statement error / query error regexp; "" when success is expected
	wantErr  bool
	types    string
	sortMode string // "", "nosort", "rowsort", "valuesort"
	sql      string
	expected []string
}

// parseSLT reads sqllogictest records: "statement ok", "statement error RE",
// "query TYPES [nosort|rowsort|valuesort]" with SQL up to "----" and the
// expected rows up to a blank line, "query error RE". Lines starting with
// '#' are comments.
func parseSLT(text string) ([]sltRecord, error) {
	lines := strings.Split(text, "\n")
	var recs []sltRecord
	var pending []string
	for i := 0; i < len(lines); i++ {
		l := strings.TrimSpace(lines[i])
		if l == "" {
			continue
		}
		if strings.HasPrefix(l, "#") {
			pending = append(pending, lines[i])
			continue
		}
		f := strings.Fields(l)
		rec := sltRecord{line: i + 1, kind: f[0], comments: pending}
		pending = nil
		switch {
		case f[0] == "statement" && len(f) >= 2 && f[1] == "ok":
		case (f[0] == "statement" || f[0] == "query") && len(f) >= 2 && f[1] == "error":
			rec.wantErr = true
			rec.errRe = strings.TrimSpace(strings.SplitN(l, "error", 2)[1])
		case f[0] == "query" && len(f) >= 2:
			rec.types = f[1]
			if len(f) > 2 {
				rec.sortMode = f[2]
			}
		default:
			return nil, fmt.Errorf("line %d: unknown record %q", i+1, l)
		}
		var sqlLines []string
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "" && strings.TrimSpace(lines[i]) != "----"; i++ {
			sqlLines = append(sqlLines, lines[i])
		}
		rec.sql = strings.Join(sqlLines, "\n")
		if i < len(lines) && strings.TrimSpace(lines[i]) == "----" {
			for i++; i < len(lines) && strings.TrimSpace(lines[i]) != ""; i++ {
				rec.expected = append(rec.expected, lines[i])
			}
		}
		recs = append(recs, rec)
	}
	return recs, nil
}

// sltConfigs are the configurations every file runs in: through the
// distributed path (the default standalone cluster) and directly, at the
// default batch size and at 1 and 7.
var sltConfigs = []struct {
	name    string
	opts    []quiver.Option
	cluster bool // on a cluster of real scheduler and executor processes
}{
	{"standalone", nil, false}, // one executor: whole stages, in-memory exchanges
	{"standalone,exchange=shuffle,batch=7", []quiver.Option{quiver.WithExchangeMode(quiver.ExchangeShuffle), quiver.WithBatchSize(7), quiver.WithTargetPartitions(3)}, false},
	{"local", []quiver.Option{quiver.WithLocalExecution()}, false},
	{"local,batch=1", []quiver.Option{quiver.WithLocalExecution(), quiver.WithBatchSize(1), quiver.WithTargetPartitions(1)}, false},
	{"standalone,executors=2,batch=7", []quiver.Option{quiver.WithStandaloneCluster(2), quiver.WithBatchSize(7), quiver.WithTargetPartitions(3)}, false},
	{"cluster,executors=2", []quiver.Option{quiver.WithTargetPartitions(3)}, true},
}

func TestSLT(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "slt", "*.slt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no .slt files: %v", err)
	}
	var cluster *testCluster
	if !*rewrite {
		cluster = startCluster(t, 2)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			recs, err := parseSLT(string(data))
			if err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			localOnly := strings.Contains(string(data), "\n# memory tables\n") || strings.HasPrefix(string(data), "# memory tables\n")
			for ci, cfg := range sltConfigs {
				if cfg.cluster && (cluster == nil || localOnly) {
					// A file marked "# memory tables" uses tables held in
					// this process, which a cluster's executors cannot read
					// (checkShippable refuses them: see remote.go).
					continue
				}
				t.Run(cfg.name, func(t *testing.T) {
					addr := ""
					if cfg.cluster {
						addr = cluster.addr
					}
					results := runSLT(t, file, recs, cfg.opts, addr)
					if *rewrite && ci == 0 {
						if err := os.WriteFile(file, []byte(formatSLT(recs, results)), 0o644); err != nil {
							t.Fatal(err)
						}
					}
				})
				if *rewrite {
					break
				}
			}
		})
	}
}

// runSLT runs the records in one fresh session and checks them; it returns
// the actual rows of each query record (for -rewrite).
func runSLT(t *testing.T, file string, recs []sltRecord, opts []quiver.Option, clusterAddr string) [][]string {
	ctx := context.Background()
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	opts = append([]quiver.Option{quiver.WithAllocator(mem)}, opts...)
	var s *quiver.Session
	var err error
	if clusterAddr != "" {
		s, err = quiver.Connect(ctx, clusterAddr, opts...)
	} else {
		s, err = quiver.NewSession(ctx, opts...)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		s.Close()
		mem.AssertSize(t, 0)
	}()
	results := make([][]string, len(recs))
	// __TEST_DIR__ in a record's SQL is a fresh directory of this run, for
	// the files a record writes.
	dir := t.TempDir()
	for i, rec := range recs {
		where := fmt.Sprintf("%s:%d", file, rec.line)
		rows, err := sltExec(ctx, s, strings.ReplaceAll(rec.sql, "__TEST_DIR__", dir))
		if rec.wantErr {
			if err == nil {
				t.Errorf("%s: expected an error matching %q, got success", where, rec.errRe)
			} else if ok, _ := regexp.MatchString(rec.errRe, err.Error()); !ok {
				t.Errorf("%s: error %q does not match %q", where, err, rec.errRe)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", where, err)
			continue
		}
		if rec.kind == "statement" {
			continue
		}
		if len(rows) > 0 && len(rec.types) != len(rows[0]) {
			t.Errorf("%s: query has %d columns, type string %q has %d", where, len(rows[0]), rec.types, len(rec.types))
		}
		got := sltRows(rows, rec.sortMode)
		results[i] = got
		if !*rewrite && !slices.Equal(got, rec.expected) {
			t.Errorf("%s: result mismatch\n%s\ngot:\n%s\nwant:\n%s", where, rec.sql, strings.Join(got, "\n"), strings.Join(rec.expected, "\n"))
		}
	}
	return results
}

func sltExec(ctx context.Context, s *quiver.Session, sql string) ([][]string, error) {
	df, err := s.SQL(ctx, sql)
	if err != nil {
		return nil, err
	}
	batches, err := df.Collect(ctx)
	if err != nil {
		return nil, err
	}
	defer func() {
		for _, b := range batches {
			b.Release()
		}
	}()
	// NULL prints as NULL and the empty string as (empty), so they differ.
	var rows [][]string
	for _, b := range batches {
		cols := make([][]string, b.NumCols())
		nulls := make([][]bool, b.NumCols())
		for i := range cols {
			cols[i], nulls[i] = format.Column(b.Column(i))
		}
		for r := 0; r < int(b.NumRows()); r++ {
			row := make([]string, len(cols))
			for i := range cols {
				switch {
				case nulls[i][r]:
					row[i] = "NULL"
				case cols[i][r] == "":
					row[i] = "(empty)"
				default:
					row[i] = cols[i][r]
				}
			}
			rows = append(rows, row)
		}
	}
	return rows, nil
}

func sltRows(rows [][]string, mode string) []string {
	out := make([]string, 0, len(rows))
	switch mode {
	case "valuesort":
		var vals []string
		for _, r := range rows {
			vals = append(vals, r...)
		}
		slices.Sort(vals)
		return vals
	}
	for _, r := range rows {
		out = append(out, strings.Join(r, " "))
	}
	if mode == "rowsort" {
		slices.Sort(out)
	}
	return out
}

func formatSLT(recs []sltRecord, results [][]string) string {
	var b strings.Builder
	for i, rec := range recs {
		if i > 0 {
			b.WriteString("\n")
		}
		for _, c := range rec.comments {
			b.WriteString(c + "\n")
		}
		switch {
		case rec.kind == "statement" && !rec.wantErr:
			b.WriteString("statement ok\n")
		case rec.wantErr:
			fmt.Fprintf(&b, "%s error %s\n", rec.kind, rec.errRe)
		default:
			b.WriteString("query " + rec.types)
			if rec.sortMode != "" {
				b.WriteString(" " + rec.sortMode)
			}
			b.WriteString("\n")
		}
		b.WriteString(rec.sql + "\n")
		if rec.kind == "query" && !rec.wantErr {
			b.WriteString("----\n")
			for _, r := range results[i] {
				b.WriteString(r + "\n")
			}
		}
	}
	return b.String()
}
