package write_test

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/quiverdb/quiver/exec"
	"github.com/quiverdb/quiver/exec/execop"
	"github.com/quiverdb/quiver/exec/exectest"
	"github.com/quiverdb/quiver/exec/memcheck"
	"github.com/quiverdb/quiver/physical"
)

var schema = arrow.NewSchema([]arrow.Field{
	{Name: "k", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "g", Type: arrow.BinaryTypes.String, Nullable: true},
}, nil)

// rowsJSON is n rows: k = i (NULL every 11th), g cycling a, b, NULL.
func rowsJSON(n int) string {
	var b strings.Builder
	b.WriteString("[")
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		k := fmt.Sprint(i)
		if i%11 == 10 {
			k = "null"
		}
		g := [...]string{`"a"`, `"b"`, "null"}[i%3]
		fmt.Fprintf(&b, `{"k": %s, "g": %s}`, k, g)
	}
	return b.String() + "]"
}

// run executes p over the memory table "t" (n rows in parts partitions,
// batches of at most batch rows), wrapping each scan with wrap if set.
func run(t *testing.T, p physical.Plan, n, parts, batch int, wrap func(execop.Operator) execop.Operator) ([]string, error) {
	t.Helper()
	mem := memcheck.New(t)
	rec, _, err := array.RecordFromJSON(mem, schema, strings.NewReader(rowsJSON(n)))
	if err != nil {
		t.Fatal(err)
	}
	var splits []int
	for i := batch; i < n; i += batch {
		splits = append(splits, i)
	}
	bs := exectest.Split(rec, splits)
	rec.Release()
	tables := exectest.Tables{"t": make([][]arrow.RecordBatch, parts)}
	for i, b := range bs {
		tables["t"][i%parts] = append(tables["t"][i%parts], b)
	}
	defer tables.Release()
	tc := exec.NewTaskContext(mem, batch)
	tc.MemoryTables = tables.Lookup
	if wrap != nil {
		tc.WrapSource = func(_ *physical.Scan, _ int, op execop.Operator) execop.Operator { return wrap(op) }
	}
	return collect(t, tc, p)
}

func collect(t *testing.T, tc *execop.TaskContext, p physical.Plan) (out []string, err error) {
	ctx := context.Background()
	op, err := exec.Execute(ctx, tc, p)
	if err != nil {
		return nil, err
	}
	defer func() {
		if cerr := op.Close(); err == nil {
			err = cerr
		}
	}()
	if err := op.Open(ctx); err != nil {
		return nil, err
	}
	for {
		b, err := op.Next(ctx)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		out = append(out, exectest.Rows(b)...)
		b.Release()
	}
}

// plan is what the planner makes of a write of "t" (parts partitions).
func plan(parts int, target string, spec physical.WriteSpec, overwrite bool) physical.Plan {
	var in physical.Plan = exectest.MemoryScan("t", schema, parts)
	single := len(spec.PartitionBy) == 0
	if single && parts > 1 {
		in = &physical.Coalesce{Input: in}
	}
	var files physical.Plan = &physical.FileSink{Input: in, Staging: staging(target), Spec: spec}
	if files.OutputPartitions() > 1 {
		files = &physical.Coalesce{Input: files}
	}
	return &physical.FileCommit{Input: files, Staging: staging(target), Target: target, Single: single, Overwrite: overwrite}
}

func staging(target string) string {
	return filepath.Join(filepath.Dir(target), "."+filepath.Base(target)+physical.StagingMark+"test")
}

// readCSV returns every data line of the CSV files under dir (recursively),
// each prefixed with its directory relative to dir, sorted.
func readCSV(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		recs, err := csv.NewReader(f).ReadAll()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, filepath.Dir(p))
		for _, r := range recs[1:] { // the header
			out = append(out, rel+":"+strings.Join(r, ","))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

// wantCSV is readCSV's result for n rows written partitioned by g.
func wantCSV(n int) []string {
	var out []string
	for i := range n {
		k := fmt.Sprint(i)
		if i%11 == 10 {
			k = ""
		}
		out = append(out, [...]string{"g=a", "g=b", "g=__HIVE_DEFAULT_PARTITION__"}[i%3]+":"+k)
	}
	sort.Strings(out)
	return out
}

// TestPartitionedWrite: every row lands once, in its key's directory
// (NULL keys in Hive's default partition), at several batch sizes and
// partition counts, and nothing is left in the staging directory.
func TestPartitionedWrite(t *testing.T) {
	for _, batch := range []int{1, 7, 1024} {
		for _, parts := range []int{1, 3} {
			dir := t.TempDir()
			target := filepath.Join(dir, "out")
			got, err := run(t, plan(parts, target, physical.WriteSpec{Format: physical.FormatCSV, PartitionBy: []int{1}, Delimiter: ',', Header: true}, false), 100, parts, batch, nil)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != "[100]" {
				t.Errorf("batch %d, %d partitions: count %v, want [100]", batch, parts, got)
			}
			if back, want := readCSV(t, target), wantCSV(100); fmt.Sprint(back) != fmt.Sprint(want) {
				t.Errorf("batch %d, %d partitions: read back %v, want %v", batch, parts, back, want)
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 1 {
				t.Errorf("the write left %d entries beside its target", len(ents)-1)
			}
		}
	}
}

// TestSingleFileWrite: an unpartitioned write is one file, also for an
// empty input; a second write needs Overwrite and then replaces it.
func TestSingleFileWrite(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "out.csv")
	spec := physical.WriteSpec{Format: physical.FormatCSV, Delimiter: ',', Header: true}
	if got, err := run(t, plan(2, target, spec, false), 0, 2, 4, nil); err != nil || fmt.Sprint(got) != "[0]" {
		t.Fatalf("empty write: %v %v", got, err)
	}
	if b, err := os.ReadFile(target); err != nil || string(b) != "k,g\n" {
		t.Fatalf("empty write made %q, %v; want the header only", b, err)
	}
	if _, err := run(t, plan(2, target, spec, false), 5, 2, 4, nil); err == nil || !strings.Contains(err.Error(), "OVERWRITE") {
		t.Fatalf("a second write without Overwrite: %v", err)
	}
	if got, err := run(t, plan(2, target, spec, true), 5, 2, 4, nil); err != nil || fmt.Sprint(got) != "[5]" {
		t.Fatalf("overwrite: %v %v", got, err)
	}
	if b, _ := os.ReadFile(target); strings.Count(string(b), "\n") != 6 {
		t.Errorf("overwritten file:\n%s", b)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("the writes left %d entries beside the target", len(ents)-1)
	}
}

// failAfter passes one batch, then fails.
type failAfter struct {
	execop.Operator
	n int
}

func (f *failAfter) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if f.n++; f.n > 1 {
		return nil, errors.New("boom")
	}
	return f.Operator.Next(ctx)
}

// TestFailedWriteLeavesNoFiles: when the input fails after files were
// opened, the sink removes what it wrote and nothing reaches the target.
func TestFailedWriteLeavesNoFiles(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "out")
	spec := physical.WriteSpec{Format: physical.FormatParquet, PartitionBy: []int{1}}
	_, err := run(t, plan(2, target, spec, false), 60, 2, 5, func(op execop.Operator) execop.Operator { return &failAfter{Operator: op} })
	if err == nil || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("got %v, want the input's error", err)
	}
	var files []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, p)
		}
		return nil
	})
	if len(files) != 0 {
		t.Errorf("a failed write left files: %v", files)
	}
	if _, err := os.Stat(target); !os.IsNotExist(err) {
		t.Errorf("a failed write made its target: %v", err)
	}
}

// TestHostilePaths: a plan naming a staging directory that is not one, or
// a target elsewhere than beside it, is refused before any file is made.
func TestHostilePaths(t *testing.T) {
	dir := t.TempDir()
	spec := physical.WriteSpec{Format: physical.FormatCSV}
	for _, c := range []struct{ target, staging string }{
		{filepath.Join(dir, "out"), dir},                                        // not hidden, no mark
		{filepath.Join(dir, "out"), filepath.Join(dir, ".plain")},               // no mark
		{filepath.Join(dir, "out"), "relative/.x" + physical.StagingMark + "1"}, // relative
		{"/etc/passwd", filepath.Join(dir, ".out"+physical.StagingMark+"1")},    // not beside
		{dir + "/a/../out", filepath.Join(dir, ".o"+physical.StagingMark)},      // not clean
	} {
		p := &physical.FileCommit{Input: &physical.FileSink{Input: exectest.MemoryScan("t", schema, 1), Staging: c.staging, Spec: spec},
			Staging: c.staging, Target: c.target, Single: true}
		if _, err := run(t, p, 3, 1, 2, nil); err == nil {
			t.Errorf("target %q, staging %q: accepted", c.target, c.staging)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("refused plans made %d entries", len(ents))
	}
}
