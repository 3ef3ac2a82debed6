package exec_test

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver/exec"
	"github.com/quiverdb/quiver/exec/execop"
	"github.com/quiverdb/quiver/physical"
)

func memory_(b *testing.B) memory.Allocator {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	b.Cleanup(func() { mem.AssertSize(b, 0) })
	return mem
}

func lineitemScan(b *testing.B, cols ...string) (*physical.Scan, []*physical.Column) {
	schema := lineitemSchema(b)
	scan := &physical.Scan{Table: "lineitem", Format: physical.FormatParquet, FileSchema: schema,
		Partitions: [][]string{{lineitemPath}}, Fetch: -1}
	var out []*physical.Column
	for i, c := range cols {
		idx := schema.FieldIndices(c)[0]
		scan.Projection = append(scan.Projection, idx)
		out = append(out, &physical.Column{Index: i, Name: c, Type: schema.Field(idx).Type})
	}
	return scan, out
}

func runBench(b *testing.B, plan physical.Plan) {
	mem := memory_(b)
	b.ReportAllocs()
	for b.Loop() {
		tc := exec.NewTaskContext(mem, 0)
		bs, err := execop.CollectAll(context.Background(), tc, plan)
		if err != nil {
			b.Fatal(err)
		}
		for _, x := range bs {
			x.Release()
		}
	}
}

func BenchmarkScanParquetLineitem(b *testing.B) {
	scan, _ := lineitemScan(b, "l_orderkey", "l_extendedprice", "l_shipdate", "l_comment")
	runBench(b, scan)
}

func BenchmarkSortLineitem(b *testing.B) {
	scan, cols := lineitemScan(b, "l_shipdate", "l_extendedprice", "l_orderkey")
	runBench(b, &physical.Sort{Input: scan, Fetch: -1, Keys: []physical.SortKey{
		{Expr: cols[0], Asc: true}, {Expr: cols[1], Asc: false}}})
}

func BenchmarkTopKLineitem(b *testing.B) {
	scan, cols := lineitemScan(b, "l_shipdate", "l_extendedprice", "l_orderkey")
	runBench(b, &physical.Sort{Input: scan, Fetch: 10, Keys: []physical.SortKey{
		{Expr: cols[1], Asc: false}, {Expr: cols[0], Asc: true}}})
}
