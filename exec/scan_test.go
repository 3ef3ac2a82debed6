package exec_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/quiverdb/quiver/exec"
	"github.com/quiverdb/quiver/exec/execop"
	"github.com/quiverdb/quiver/exec/exectest"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
)

const lineitemPath = "../testdata/tpch/sf0.01/lineitem.parquet"

// lineitemSchema is the table schema as the catalog would give it.
func lineitemSchema(t testing.TB) *arrow.Schema {
	t.Helper()
	f, err := os.Open(lineitemPath)
	if err != nil {
		t.Fatalf("no TPC-H data: %v", err)
	}
	defer f.Close()
	mem := memory.NewGoAllocator()
	rdr, err := pqarrow.ReadTable(context.Background(), f, nil, pqarrow.ArrowReadProperties{}, mem)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Release()
	return rdr.Schema()
}

func TestScanParquetLineitem(t *testing.T) {
	schema := lineitemSchema(t)
	idx := func(name string) int {
		is := schema.FieldIndices(name)
		if len(is) != 1 {
			t.Fatalf("no column %s", name)
		}
		return is[0]
	}
	mem := exectest.Allocator(t)
	tc := exec.NewTaskContext(mem, 1000)
	scan := &physical.Scan{Table: "lineitem", Format: physical.FormatParquet, FileSchema: schema,
		Projection: []int{idx("l_extendedprice"), idx("l_orderkey"), idx("l_shipdate")},
		Partitions: [][]string{{lineitemPath}}, Fetch: -1}
	ext := scan.Schema().Field(0).Type
	if d, ok := ext.(*arrow.Decimal128Type); !ok || d.Scale != 2 {
		t.Fatalf("l_extendedprice is %s, want DECIMAL(15,2) as Decimal128", ext)
	}
	bs, err := execop.CollectAll(context.Background(), tc, scan)
	if err != nil {
		t.Fatal(err)
	}
	var rows int64
	var sum decimal128.Num
	for _, b := range bs {
		if !b.Schema().Equal(scan.Schema()) {
			t.Fatalf("schema %s, want %s", b.Schema(), scan.Schema())
		}
		if b.NumRows() > 1000 {
			t.Fatalf("batch of %d rows", b.NumRows())
		}
		rows += b.NumRows()
		for _, v := range b.Column(0).(*array.Decimal128).Values() {
			sum = sum.Add(v)
		}
		b.Release()
	}
	if rows != 60175 {
		t.Errorf("lineitem rows = %d, want 60175", rows)
	}
	if sum.Sign() <= 0 {
		t.Errorf("sum of l_extendedprice = %s", sum.ToString(2))
	}
	// Fetch stops early.
	scan.Fetch = 10
	bs, err = execop.CollectAll(context.Background(), tc, scan)
	if err != nil {
		t.Fatal(err)
	}
	rows = 0
	for _, b := range bs {
		rows += b.NumRows()
		b.Release()
	}
	if rows != 10 {
		t.Errorf("fetch 10: got %d rows", rows)
	}
}

func TestScanMissingFile(t *testing.T) {
	mem := exectest.Allocator(t)
	tc := exec.NewTaskContext(mem, 0)
	for _, f := range []physical.Format{physical.FormatParquet, physical.FormatCSV, physical.FormatArrow} {
		scan := &physical.Scan{Table: "t", Format: f, FileSchema: abSchema, Partitions: [][]string{{"/nonexistent/x"}}, Fetch: -1}
		_, err := execop.CollectAll(context.Background(), tc, scan)
		if !qerr.Is(err, qerr.IO) {
			t.Errorf("%s: want an io error, got %v", f, err)
		}
	}
	bad := filepath.Join(t.TempDir(), "bad.parquet")
	os.WriteFile(bad, []byte("this is not parquet at all"), 0o644)
	scan := &physical.Scan{Table: "t", Format: physical.FormatParquet, FileSchema: abSchema, Partitions: [][]string{{bad}}, Fetch: -1}
	if _, err := execop.CollectAll(context.Background(), tc, scan); !qerr.Is(err, qerr.Execution) {
		t.Errorf("corrupt parquet: want an execution error, got %v", err)
	}
}

// writeParquet writes rows as row groups of rgRows rows each.
func writeParquet(t *testing.T, mem memory.Allocator, path string, rec arrow.RecordBatch, rgRows int64) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := pqarrow.NewFileWriter(rec.Schema(), f, parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(rgRows), parquet.WithStats(true)), pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestScanParquetPruning(t *testing.T) {
	mem := exectest.Allocator(t)
	// a = 0..11 in order, 4 rows per row group: groups [0-3] [4-7] [8-11].
	bs := exectest.Batches(t, mem, abSchema, `[
		{"a":0,"b":"a"},{"a":1,"b":"b"},{"a":2,"b":"c"},{"a":3,"b":"d"},
		{"a":4,"b":"e"},{"a":5,"b":"f"},{"a":6,"b":"g"},{"a":7,"b":"h"},
		{"a":8,"b":"i"},{"a":9,"b":"j"},{"a":10,"b":"k"},{"a":11,"b":null}]`, 12)
	rec := bs[0]
	defer rec.Release()
	path := filepath.Join(t.TempDir(), "t.parquet")
	writeParquet(t, mem, path, rec, 4)

	lit := func(v int64) *physical.Literal { return &physical.Literal{Type: arrow.PrimitiveTypes.Int64, Value: v} }
	slit := func(v string) *physical.Literal { return &physical.Literal{Type: arrow.BinaryTypes.String, Value: v} }
	bin := func(op physical.BinaryOp, l, r physical.Expr) physical.Expr {
		return &physical.Binary{Op: op, Left: l, Right: r, Type: arrow.FixedWidthTypes.Boolean}
	}
	for _, c := range []struct {
		name string
		proj []int
		pred physical.Expr
		rows int64
	}{
		{"none", nil, nil, 12},
		{"eq", nil, bin(physical.OpEq, colA, lit(5)), 4},
		{"gt", nil, bin(physical.OpGt, colA, lit(7)), 4},
		{"gteq-reversed", nil, bin(physical.OpGtEq, lit(3), colA), 4},
		{"lt", nil, bin(physical.OpLt, colA, lit(4)), 4},
		{"and", nil, bin(physical.OpAnd, bin(physical.OpGt, colA, lit(2)), bin(physical.OpLt, colA, lit(5))), 8},
		{"nothing", nil, bin(physical.OpGt, colA, lit(100)), 0},
		{"string", nil, bin(physical.OpEq, colB, slit("f")), 4},
		{"projected", []int{1}, bin(physical.OpEq, opCol(0, "b", arrow.BinaryTypes.String), slit("j")), 4},
	} {
		scan := &physical.Scan{Table: "t", Format: physical.FormatParquet, FileSchema: abSchema, Projection: c.proj,
			Partitions: [][]string{{path}}, Predicate: c.pred, Fetch: -1}
		tc := exec.NewTaskContext(mem, 3)
		tc.EnableMetrics()
		got := exectest.Collect(t, context.Background(), tc, scan)
		if int64(len(got)) != c.rows {
			t.Errorf("%s: read %d rows (%d row groups), want %d", c.name, len(got), len(got)/4, c.rows)
		}
	}
}

func TestScanCSVAndIPC(t *testing.T) {
	mem := exectest.Allocator(t)
	dir := t.TempDir()
	csvPath := filepath.Join(dir, "t.csv")
	os.WriteFile(csvPath, []byte("a;b\n1;x\nNA;y\n3;NA\n4;z\n"), 0o644)
	scan := &physical.Scan{Table: "t", Format: physical.FormatCSV, FileSchema: abSchema, Projection: []int{1, 0},
		Partitions: [][]string{{csvPath}}, Options: map[string]string{"delimiter": ";", "null": "NA"}, Fetch: -1}
	tc := exec.NewTaskContext(mem, 3)
	got := exectest.Collect(t, context.Background(), tc, scan)
	exectest.Compare(t, got, []string{"x|1", "y|NULL", "NULL|3", "z|4"}, exectest.Ordered)

	nh := filepath.Join(dir, "nh.csv")
	os.WriteFile(nh, []byte("1,x\n2,\n"), 0o644)
	scan = &physical.Scan{Table: "t", Format: physical.FormatCSV, FileSchema: abSchema,
		Partitions: [][]string{{nh}}, Options: map[string]string{"has_header": "false"}, Fetch: -1}
	exectest.Compare(t, exectest.Collect(t, context.Background(), tc, scan), []string{"1|x", "2|NULL"}, exectest.Ordered)

	bs := exectest.Batches(t, mem, abSchema, abRows, 5, 9)
	defer func() {
		for _, b := range bs {
			b.Release()
		}
	}()
	for _, stream := range []bool{false, true} {
		path := filepath.Join(dir, "t.arrow")
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		var w interface {
			Write(arrow.RecordBatch) error
			Close() error
		}
		if stream {
			w = ipc.NewWriter(f, ipc.WithSchema(abSchema), ipc.WithAllocator(mem))
		} else {
			if w, err = ipc.NewFileWriter(f, ipc.WithSchema(abSchema), ipc.WithAllocator(mem)); err != nil {
				t.Fatal(err)
			}
		}
		for _, b := range bs {
			if err := w.Write(b); err != nil {
				t.Fatal(err)
			}
		}
		w.Close()
		f.Close()
		scan := &physical.Scan{Table: "t", Format: physical.FormatArrow, FileSchema: abSchema, Projection: []int{0},
			Partitions: [][]string{{path}}, Fetch: -1}
		got := exectest.Collect(t, context.Background(), tc, scan)
		if len(got) != 12 || got[0] != "3" || got[1] != "NULL" {
			t.Errorf("stream=%v: got %v", stream, got)
		}
	}
}
