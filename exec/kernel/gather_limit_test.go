package kernel_test

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver/exec/execop"
	"github.com/quiverdb/quiver/exec/kernel"
)

// TestGatherAtTheLimitLeaksNothing: when a memory limit is crossed by one
// of the allocations a gather makes (the values, or the validity after
// them), the buffers it already made are released as the panic unwinds.
func TestGatherAtTheLimitLeaksNothing(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	b := array.NewStringBuilder(mem)
	for i := range 1000 {
		if i%7 == 0 {
			b.AppendNull()
		} else {
			b.Append("a value of some length")
		}
	}
	arr := b.NewArray()
	b.Release()
	defer arr.Release()
	idx := make([]int32, 1000)
	for i := range idx {
		idx[i] = int32(999 - i)
	}
	// What the gather takes without a limit; then limits that fail at the
	// offsets, at the values and at the validity (the last allocation).
	probe := execop.NewAccountingAllocator(mem, 0)
	out, ok := kernel.Gather(probe, arr, idx)
	if !ok {
		t.Fatal("strings are not gathered")
	}
	out.Release()
	for _, limit := range []int64{100, 4100, probe.Peak() - 1} {
		acct := execop.NewAccountingAllocator(mem, limit)
		func() {
			defer func() {
				if r := recover(); r == nil {
					t.Errorf("limit %d: the gather did not cross it", limit)
				}
			}()
			out, ok := kernel.Gather(acct, arr, idx)
			if ok {
				out.Release()
			}
		}()
		if acct.Current() != 0 {
			t.Errorf("limit %d: %d bytes held after the failed gather", limit, acct.Current())
		}
	}
}

// TestGatherListAtTheLimitLeaksNothing: a list of structs (array_agg's
// state) whose child's gather crosses the limit releases the list's
// offsets too.
func TestGatherListAtTheLimitLeaksNothing(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	lb := array.NewListBuilder(mem, arrow.StructOf(arrow.Field{Name: "v", Type: arrow.BinaryTypes.String, Nullable: true}))
	sb := lb.ValueBuilder().(*array.StructBuilder)
	for i := range 300 {
		lb.Append(true)
		for range i % 5 {
			sb.Append(true)
			sb.FieldBuilder(0).(*array.StringBuilder).Append("a collected value")
		}
	}
	arr := lb.NewArray()
	lb.Release()
	defer arr.Release()
	idx := make([]int32, 300)
	for i := range idx {
		idx[i] = int32(299 - i)
	}
	probe := execop.NewAccountingAllocator(mem, 0)
	out, ok := kernel.Gather(probe, arr, idx)
	if !ok {
		t.Fatal("lists of structs are not gathered")
	}
	out.Release()
	for _, limit := range []int64{1300, 3000, probe.Peak() - 1} {
		acct := execop.NewAccountingAllocator(mem, limit)
		func() {
			defer func() {
				if r := recover(); r == nil {
					t.Errorf("limit %d: the gather did not cross it", limit)
				}
			}()
			out, ok := kernel.Gather(acct, arr, idx)
			if ok {
				out.Release()
			}
		}()
		if acct.Current() != 0 {
			t.Errorf("limit %d: %d bytes held after the failed gather", limit, acct.Current())
		}
	}
}
