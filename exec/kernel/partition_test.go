package kernel

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestHashPartitionerGroupsEveryRowOnce splits batches of several sizes,
// reusing one partitioner, and checks that each row lands exactly once, in
// the partition its hash names, in input order within the partition.
func TestHashPartitionerGroupsEveryRowOnce(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	var p HashPartitioner
	for _, tc := range []struct{ rows, n int }{{1000, 7}, {3, 5}, {0, 4}, {500, 1}, {2000, 64}} {
		bld := array.NewInt64Builder(mem)
		for i := range tc.rows {
			if i%11 == 0 {
				bld.AppendNull()
			} else {
				bld.Append(int64(i * 31 % 97))
			}
		}
		col := bld.NewArray()
		bld.Release()
		keys := []arrow.Array{col}
		p.Split(keys, tc.rows, tc.n)
		hashes := make([]uint64, tc.rows)
		HashColumns(keys, hashes)
		seen := make([]bool, tc.rows)
		for part := range tc.n {
			prev := int32(-1)
			for _, r := range p.Rows(part) {
				if seen[r] {
					t.Fatalf("%d rows into %d: row %d twice", tc.rows, tc.n, r)
				}
				seen[r] = true
				if got := int(hashes[r] % uint64(tc.n)); got != part {
					t.Fatalf("%d rows into %d: row %d in partition %d, its hash names %d", tc.rows, tc.n, r, part, got)
				}
				if r <= prev {
					t.Fatalf("%d rows into %d: partition %d out of input order (%d after %d)", tc.rows, tc.n, part, r, prev)
				}
				prev = r
			}
		}
		for r, ok := range seen {
			if !ok {
				t.Fatalf("%d rows into %d: row %d in no partition", tc.rows, tc.n, r)
			}
		}
		col.Release()
	}
}
