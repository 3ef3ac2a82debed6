package exec_test

import (
	"context"
	"errors"
	"io"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver/exec"
	"github.com/quiverdb/quiver/exec/execop"
	"github.com/quiverdb/quiver/exec/exectest"
	"github.com/quiverdb/quiver/physical"
)

// benchTable returns rows of (k int64 in [0, groups), d decimal(12,2)) in batches.
func benchTable(mem memory.Allocator, rows, groups int) []arrow.RecordBatch {
	sc := schemaOf(fld("k", i64), fld("d", &arrow.Decimal128Type{Precision: 12, Scale: 2}))
	var out []arrow.RecordBatch
	for start := 0; start < rows; start += execop.DefaultBatchSize {
		n := min(execop.DefaultBatchSize, rows-start)
		kb := array.NewInt64Builder(mem)
		db := array.NewDecimal128Builder(mem, sc.Field(1).Type.(*arrow.Decimal128Type))
		for i := range n {
			kb.Append(int64((start + i) * 7919 % groups))
			db.Append(decimal128.FromI64(int64(start + i)))
		}
		k, d := kb.NewArray(), db.NewArray()
		out = append(out, array.NewRecordBatch(sc, []arrow.Array{k, d}, int64(n)))
		k.Release()
		d.Release()
		kb.Release()
		db.Release()
	}
	return out
}

func drainPlan(b *testing.B, tc *execop.TaskContext, p physical.Plan) int64 {
	op, err := exec.Execute(context.Background(), tc, p)
	if err != nil {
		b.Fatal(err)
	}
	defer op.Close()
	if err := op.Open(context.Background()); err != nil {
		b.Fatal(err)
	}
	var n int64
	for {
		r, err := op.Next(context.Background())
		if errors.Is(err, io.EOF) {
			return n
		}
		if err != nil {
			b.Fatal(err)
		}
		n += r.NumRows()
		r.Release()
	}
}

func BenchmarkHashAggregate1M(b *testing.B) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	tbl := exectest.Tables{"t": {benchTable(mem, 1<<20, 1000)}}
	defer func() { tbl.Release(); mem.AssertSize(b, 0) }()
	sc := tbl["t"][0][0].Schema()
	d := col(1, "d", sc.Field(1).Type)
	p := &physical.HashAggregate{Input: exectest.MemoryScan("t", sc, 1), Mode: physical.AggSingle,
		GroupBy: []physical.Expr{col(0, "k", i64)}, GroupNames: []string{"k"},
		Aggs: []physical.AggregateExpr{{Func: physical.AggSum, Arg: d, Type: &arrow.Decimal128Type{Precision: 38, Scale: 2}, Name: "s"}}}
	tc := exec.NewTaskContext(mem, 0)
	tc.MemoryTables = tbl.Lookup
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if n := drainPlan(b, tc, p); n != 1000 {
			b.Fatalf("%d groups", n)
		}
	}
}

func BenchmarkHashJoin(b *testing.B) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	tbl := exectest.Tables{"build": {benchTable(mem, 100_000, 100_000)}, "probe": {benchTable(mem, 1<<20, 200_000)}}
	defer func() { tbl.Release(); mem.AssertSize(b, 0) }()
	sc := tbl["build"][0][0].Schema()
	k := col(0, "k", i64)
	p := &physical.HashJoin{Left: exectest.MemoryScan("build", sc, 1), Right: exectest.MemoryScan("probe", sc, 1),
		Mode: physical.CollectLeft, Type: physical.InnerJoin, On: []physical.JoinOn{{Left: k, Right: k}}}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		tc := exec.NewTaskContext(mem, 0)
		tc.MemoryTables = tbl.Lookup
		if n := drainPlan(b, tc, p); n == 0 {
			b.Fatal("no rows")
		}
	}
}
