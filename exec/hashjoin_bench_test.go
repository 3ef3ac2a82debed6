package exec_test

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver/exec"
	"github.com/quiverdb/quiver/exec/execop"
	"github.com/quiverdb/quiver/exec/exectest"
	"github.com/quiverdb/quiver/physical"
)

// joinBenchTable makes a memory table of n rows in 8192-row batches over
// two partitions: k = key(i), v = i (int64), d = i (float64), s a short string.
func joinBenchTable(mem memory.Allocator, n int, key func(i int) int64) ([][]arrow.RecordBatch, *arrow.Schema) {
	sc := schemaOf(fld("k", i64), fld("v", i64), fld("d", arrow.PrimitiveTypes.Float64), fld("s", str))
	parts := make([][]arrow.RecordBatch, 2)
	for lo, b := 0, 0; lo < n; lo, b = lo+8192, b+1 {
		hi := min(lo+8192, n)
		kb := array.NewInt64Builder(mem)
		vb := array.NewInt64Builder(mem)
		db := array.NewFloat64Builder(mem)
		sb := array.NewStringBuilder(mem)
		for i := lo; i < hi; i++ {
			kb.Append(key(i))
			vb.Append(int64(i))
			db.Append(float64(i))
			sb.Append("row-value")
		}
		cols := []arrow.Array{kb.NewArray(), vb.NewArray(), db.NewArray(), sb.NewArray()}
		parts[b%2] = append(parts[b%2], array.NewRecordBatch(sc, cols, int64(hi-lo)))
		for _, c := range cols {
			c.Release()
		}
		kb.Release()
		vb.Release()
		db.Release()
		sb.Release()
	}
	return parts, sc
}

func benchJoin(b *testing.B, typ physical.JoinType, nl, nr int, lkey, rkey func(int) int64, filter physical.Expr) {
	mem := memory_(b)
	tables := exectest.Tables{}
	var ls, rs *arrow.Schema
	tables["l"], ls = joinBenchTable(mem, nl, lkey)
	tables["r"], rs = joinBenchTable(mem, nr, rkey)
	defer tables.Release()
	plan := &physical.HashJoin{Left: exectest.MemoryScan("l", ls, 2), Right: exectest.MemoryScan("r", rs, 2),
		Mode: physical.CollectLeft, Type: typ, Filter: filter,
		On: []physical.JoinOn{{Left: col(0, "k", i64), Right: col(0, "k", i64)}}}
	b.ReportAllocs()
	for b.Loop() {
		tc := exec.NewTaskContext(mem, 0)
		tc.MemoryTables = tables.Lookup
		bs, err := execop.CollectAll(context.Background(), tc, plan)
		if err != nil {
			b.Fatal(err)
		}
		for _, x := range bs {
			x.Release()
		}
	}
}

// Each probe row matches one build row (a PK-FK join).
func BenchmarkHashJoinUniqueAllMatch(b *testing.B) {
	benchJoin(b, physical.InnerJoin, 100_000, 1_000_000,
		func(i int) int64 { return int64(i) * 3 }, func(i int) int64 { return int64(i*7919%100_000) * 3 }, nil)
}

// One probe row in eight matches one build row.
func BenchmarkHashJoinUniqueSparse(b *testing.B) {
	benchJoin(b, physical.InnerJoin, 100_000, 1_000_000,
		func(i int) int64 { return int64(i) * 8 }, func(i int) int64 { return int64(i*7919) % 800_000 }, nil)
}

// Four build rows per key; Q21's EXISTS shape with a residual filter.
func BenchmarkHashJoinSemiFilter(b *testing.B) {
	ne := &physical.Binary{Op: physical.OpNotEq, Left: col(1, "v", i64), Right: col(5, "v", i64), Type: boolT}
	benchJoin(b, physical.SemiJoin, 200_000, 1_000_000,
		func(i int) int64 { return int64(i / 4) }, func(i int) int64 { return int64(i / 4) }, ne)
}

// Four build rows per key, no filter (Q4/Q22's EXISTS shape).
func BenchmarkHashJoinAnti(b *testing.B) {
	benchJoin(b, physical.AntiJoin, 200_000, 1_000_000,
		func(i int) int64 { return int64(i / 4) }, func(i int) int64 { return int64(i / 2) }, nil)
}
