package eval

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/quiverdb/quiver/physical"
)

const benchRows = 8192

func benchBatch(b *testing.B) arrow.RecordBatch {
	mem := checkedMem(b)
	db := array.NewDecimal128Builder(mem, &arrow.Decimal128Type{Precision: 15, Scale: 2})
	eb := array.NewDecimal128Builder(mem, &arrow.Decimal128Type{Precision: 15, Scale: 2})
	ib := array.NewInt64Builder(mem)
	sb := array.NewStringBuilder(mem)
	mb := array.NewStringBuilder(mem)
	modes := []string{"AIR", "AIR REG", "MAIL", "SHIP", "TRUCK", "RAIL", "FOB"}
	words := []string{"special", "requests", "furiously", "pending", "express", "deposits"}
	for i := 0; i < benchRows; i++ {
		db.Append(decimal128.FromI64(int64(i*37%100000 + 1)))
		eb.Append(decimal128.FromI64(int64(i % 11)))
		ib.Append(int64(i % 1000))
		sb.Append(words[i%6] + " " + words[(i/6)%6] + " " + words[(i/36)%6])
		mb.Append(modes[(i*7919)%len(modes)])
	}
	arrs := []arrow.Array{db.NewArray(), eb.NewArray(), ib.NewArray(), sb.NewArray(), mb.NewArray()}
	mb.Release()
	db.Release()
	eb.Release()
	ib.Release()
	sb.Release()
	sch := arrow.NewSchema([]arrow.Field{
		{Name: "price", Type: arrs[0].DataType()}, {Name: "disc", Type: arrs[1].DataType()},
		{Name: "qty", Type: tI64}, {Name: "comment", Type: tStr}, {Name: "mode", Type: tStr},
	}, nil)
	rec := array.NewRecordBatch(sch, arrs, benchRows)
	for _, a := range arrs {
		a.Release()
	}
	b.Cleanup(rec.Release)
	return rec
}

func runBench(b *testing.B, e physical.Expr) {
	rec := benchBatch(b)
	mem := checkedMem(b)
	ev, err := Compile(e)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	b.SetBytes(benchRows)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		out, err := ev.Eval(ctx, mem, rec)
		if err != nil {
			b.Fatal(err)
		}
		out.Release()
	}
}

// l_extendedprice * (1 - l_discount)
func BenchmarkDecimalMultiply(b *testing.B) {
	price := col(0, "price", tDec(15, 2))
	disc := col(1, "disc", tDec(15, 2))
	one := lit(tDec(1, 0), decimal128.FromI64(1))
	runBench(b, bin(physical.OpMul, price, bin(physical.OpSub, one, disc, tDec(16, 2)), tDec(31, 4)))
}

func BenchmarkCompareLiteral(b *testing.B) {
	runBench(b, bin(physical.OpLt, col(2, "qty", tI64), lit(tI64, int64(24)), tBool))
}

func BenchmarkCompareLiteralSelection(b *testing.B) {
	rec := benchBatch(b)
	mem := checkedMem(b)
	ev, err := Compile(bin(physical.OpLt, col(2, "qty", tI64), lit(tI64, int64(24)), tBool))
	if err != nil {
		b.Fatal(err)
	}
	sel := make([]int32, 0, benchRows)
	b.ReportAllocs()
	b.SetBytes(benchRows)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if sel, err = ev.EvalSelection(context.Background(), mem, rec, sel); err != nil {
			b.Fatal(err)
		}
	}
}

// l_shipmode IN ('AIR', 'AIR REG') (Q19): a short list of short strings.
func BenchmarkInListShortStrings(b *testing.B) {
	runBench(b, &physical.InList{Expr: col(4, "mode", tStr), List: []physical.Expr{lit(tStr, "AIR"), lit(tStr, "AIR REG")}})
}

func BenchmarkLikeInfix(b *testing.B) {
	runBench(b, &physical.Like{Expr: col(3, "comment", tStr), Pattern: lit(tStr, "%requests%")})
}

func BenchmarkLikeSequence(b *testing.B) {
	runBench(b, &physical.Like{Expr: col(3, "comment", tStr), Pattern: lit(tStr, "%special%requests%")})
}

// CASE WHEN l_quantity <= 10 THEN '01-10' WHEN ... ELSE '41-50' END (the
// dashboard's quantity bands: string constants).
func BenchmarkCaseStringBands(b *testing.B) {
	qty := col(2, "qty", tI64)
	le := func(v int64) physical.Expr { return bin(physical.OpLtEq, qty, lit(tI64, v), tBool) }
	runBench(b, &physical.Case{Whens: []physical.When{
		{Cond: le(250), Then: lit(tStr, "01-10")},
		{Cond: le(500), Then: lit(tStr, "11-25")},
		{Cond: le(750), Then: lit(tStr, "26-40")},
	}, Else: lit(tStr, "41-50"), Type: tStr})
}

// CASE WHEN flag THEN price ELSE 0 END (a decimal column or a constant).
func BenchmarkCaseDecimalColumn(b *testing.B) {
	runBench(b, &physical.Case{Whens: []physical.When{
		{Cond: bin(physical.OpLt, col(2, "qty", tI64), lit(tI64, int64(333)), tBool), Then: col(0, "price", tDec(15, 2))},
	}, Else: lit(tDec(15, 2), decimal128.FromI64(0)), Type: tDec(15, 2)})
}

// BenchmarkDecimalKernels compares the int64 fast path of decimal
// arithmetic and comparison with the general 128-bit kernels on the same
// data (run with -count to interleave them on a noisy machine).
func BenchmarkDecimalKernels(b *testing.B) {
	x := make([]decimal128.Num, benchRows)
	y := make([]decimal128.Num, benchRows)
	for i := range x {
		x[i] = decimal128.FromI64(int64(i*37%100000+1) * 100)
		y[i] = decimal128.FromI64(int64(i%11) - 3)
	}
	out := make([]decimal128.Num, benchRows)
	bm := make([]byte, benchRows/8)
	b.Run("mul/fast", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if !decArith64(physical.OpMul, x, y, -1, -1, out) {
				b.Fatal("fast path refused")
			}
		}
	})
	b.Run("mul/slow", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			for j := range out {
				out[j], _ = mulDec(x[j], y[j])
			}
		}
	})
	b.Run("lt/fast", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			clear(bm)
			if !cmpDecAS64(physical.OpLt, x, y[5], bm) {
				b.Fatal("fast path refused")
			}
		}
	})
	b.Run("lt/slow", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			clear(bm)
			cmpDecAS(physical.OpLt, x, y[5], bm)
		}
	})
}
