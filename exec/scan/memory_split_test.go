package scan

import (
	"math"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver/exec/hashtable"
)

// TestSplitContiguous: a table sorted by its first column, each key on
// several rows and batches cutting through keys, is split in order into
// partitions of about equal rows whose cuts fall where the key changes, so
// the key's partition ranges are disjoint; every row is kept once and every
// batch reference is released.
func TestSplitContiguous(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	schema := arrow.NewSchema([]arrow.Field{{Name: "k", Type: arrow.PrimitiveTypes.Int64}}, nil)
	const rows, batch, perKey = 10_000, 333, 7
	var batches []arrow.RecordBatch
	for start := 0; start < rows; start += batch {
		b := array.NewInt64Builder(mem)
		for r := start; r < min(rows, start+batch); r++ {
			b.Append(int64(r / perKey))
		}
		col := b.NewArray()
		b.Release()
		batches = append(batches, array.NewRecordBatch(schema, []arrow.Array{col}, int64(col.Len())))
		col.Release()
	}
	for _, n := range []int{2, 3} {
		for _, b := range batches {
			b.Retain() // SplitContiguous takes one reference per call
		}
		parts, total := SplitContiguous(batches, n)
		if total != rows {
			t.Fatalf("n=%d: %d rows, want %d", n, total, rows)
		}
		var lows, highs []int64
		var seen int64
		for p, bs := range parts {
			var got int64
			for _, b := range bs {
				got += b.NumRows()
			}
			if got < rows/int64(n)-perKey || got > rows/int64(n)+perKey+1 {
				t.Errorf("n=%d: partition %d has %d rows, want about %d", n, p, got, rows/n)
			}
			seen += got
			lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
			for _, b := range bs {
				l, h, ok := hashtable.IntegerRange(b.Column(0))
				if !ok {
					t.Fatalf("n=%d: partition %d: no integer range", n, p)
				}
				lo, hi = min(lo, l), max(hi, h)
			}
			lows, highs = append(lows, lo), append(highs, hi)
		}
		if seen != rows {
			t.Fatalf("n=%d: partitions hold %d rows, want %d", n, seen, rows)
		}
		for p := 1; p < n; p++ {
			if lows[p] <= highs[p-1] {
				t.Errorf("n=%d: partition %d starts at key %d, not after partition %d's last key %d", n, p, lows[p], p-1, highs[p-1])
			}
		}
		for _, bs := range parts {
			for _, b := range bs {
				b.Release()
			}
		}
	}
	for _, b := range batches {
		b.Release()
	}
}
