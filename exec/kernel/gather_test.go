package kernel

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestGatherMatchesTake checks gather against Arrow's Take kernel for every
// type it handles, with and without NULLs, on sliced arrays.
func TestGatherMatchesTake(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 300
	types := []arrow.DataType{
		arrow.FixedWidthTypes.Boolean, arrow.PrimitiveTypes.Int8, arrow.PrimitiveTypes.Int16,
		arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Float64,
		arrow.FixedWidthTypes.Date32, &arrow.Decimal128Type{Precision: 15, Scale: 2},
		arrow.BinaryTypes.String, arrow.BinaryTypes.LargeString, arrow.BinaryTypes.Binary,
		arrow.ListOf(arrow.PrimitiveTypes.Int32),
		// Collected rows: a struct, and lists of them (array_agg's state).
		arrow.StructOf(arrow.Field{Name: "v", Type: arrow.BinaryTypes.String, Nullable: true}, arrow.Field{Name: "k", Type: arrow.PrimitiveTypes.Int64, Nullable: true}),
		arrow.ListOf(arrow.StructOf(arrow.Field{Name: "v", Type: arrow.BinaryTypes.String, Nullable: true}, arrow.Field{Name: "k", Type: arrow.PrimitiveTypes.Int64, Nullable: true})),
	}
	for _, dt := range types {
		for _, nulls := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/nulls=%v", dt, nulls), func(t *testing.T) {
				full := testColumn(mem, rng, dt, n, nullEvery(nulls, 4), 7)
				defer full.Release()
				arr := array.NewSlice(full, 13, n-7)
				defer arr.Release()
				idx := make([]int32, 500)
				for i := range idx {
					idx[i] = int32(rng.IntN(arr.Len()))
				}
				got, ok := Gather(mem, arr, idx)
				if !ok {
					t.Fatalf("gather does not handle %s", dt)
				}
				defer got.Release()
				ia := indexArray(idx)
				defer ia.Release()
				want, err := compute.TakeArray(compute.WithAllocator(context.Background(), mem), arr, ia)
				if err != nil {
					t.Fatal(err)
				}
				defer want.Release()
				if !array.Equal(got, want) {
					t.Fatalf("gather differs from Take:\ngot  %v\nwant %v", got, want)
				}
				if got.NullN() != want.NullN() {
					t.Fatalf("null count %d, want %d", got.NullN(), want.NullN())
				}
			})
		}
	}
}

// nullEvery is 1 in every k rows NULL when nulls, else none (0).
func nullEvery(nulls bool, k int) int {
	if nulls {
		return k
	}
	return 0
}

// rowText is l bytes that spell row i's number over and over.
func rowText(i, l int) string {
	return strings.Repeat(fmt.Sprintf("%d,", i), l+1)[:l]
}

// appendRow appends row i of a (string, int64) struct, its string NULL
// every fifth row.
func appendRow(b *array.StructBuilder, i int) {
	b.Append(true)
	if sb := b.FieldBuilder(0).(*array.StringBuilder); i%5 == 0 {
		sb.AppendNull()
	} else {
		sb.Append(rowText(i, i%9))
	}
	b.FieldBuilder(1).(*array.Int64Builder).Append(int64(i))
}

// testColumn makes n rows of dt with about one NULL in nullOneIn rows (0:
// none); values follow the row number (decimals scaled by decMul) so that
// gathers of different rows differ.
func testColumn(mem memory.Allocator, rng *rand.Rand, dt arrow.DataType, n, nullOneIn int, decMul int64) arrow.Array {
	b := array.NewBuilder(mem, dt)
	defer b.Release()
	for i := range n {
		if nullOneIn > 0 && rng.IntN(nullOneIn) == 0 {
			b.AppendNull()
			continue
		}
		switch bb := b.(type) {
		case *array.BooleanBuilder:
			bb.Append(rng.IntN(2) == 0)
		case *array.Int8Builder:
			bb.Append(int8(i))
		case *array.Int16Builder:
			bb.Append(int16(i))
		case *array.Int32Builder:
			bb.Append(int32(i))
		case *array.Int64Builder:
			bb.Append(int64(i) << 20)
		case *array.Float64Builder:
			bb.Append(float64(i) / 3)
		case *array.Date32Builder:
			bb.Append(arrow.Date32(i))
		case *array.Decimal128Builder:
			bb.Append(decimal128.FromI64(int64(i) * decMul))
		case *array.StringBuilder:
			bb.Append(rowText(i, i%21)) // around the 16 bytes moved as words
		case *array.LargeStringBuilder:
			bb.Append(rowText(i, i%5))
		case *array.BinaryBuilder:
			bb.Append([]byte(rowText(i, i%19)))
		case *array.ListBuilder:
			bb.Append(true) // i%4 values, from i
			switch vb := bb.ValueBuilder().(type) {
			case *array.Int32Builder:
				for k := range i % 4 {
					vb.Append(int32(i + k))
				}
			case *array.StructBuilder:
				for k := range i % 4 {
					appendRow(vb, i+k)
				}
			}
		case *array.StructBuilder:
			appendRow(bb, i)
		}
	}
	return b.NewArray()
}

// TestGatherBits gathers bits at every length up to 40 and every source
// offset below 8 into a destination full of set bits, which gatherBits must
// overwrite byte by byte (its buffers are not zeroed), clearing the bits
// past the last row.
func TestGatherBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	src := make([]byte, 16)
	for i := range src {
		src[i] = byte(rng.Uint32())
	}
	for n := 0; n <= 40; n++ {
		for off := range 8 {
			idx := make([]int32, n)
			for i := range idx {
				idx[i] = int32(rng.IntN(8*len(src) - off))
			}
			dst := make([]byte, (n+7)/8)
			for i := range dst {
				dst[i] = 0xFF
			}
			set := gatherBits(dst, src, off, idx)
			want := 0
			for i := range 8 * len(dst) {
				w := false
				if i < n {
					p := off + int(idx[i])
					w = src[p>>3]>>(p&7)&1 == 1
				}
				if w {
					want++
				}
				if got := dst[i>>3]>>(i&7)&1 == 1; got != w {
					t.Fatalf("n %d off %d: bit %d is %v", n, off, i, got)
				}
			}
			if set != want {
				t.Fatalf("n %d off %d: %d set, want %d", n, off, set, want)
			}
		}
	}
}
