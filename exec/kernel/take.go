package kernel

import (
	"context"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver/exec/execop"
	"github.com/quiverdb/quiver/qerr"
)

// indexArray wraps idx as an Int32 array without copying. The array
// borrows idx's memory: the caller keeps idx alive and unchanged until the
// array is released, and the array must not escape.
func indexArray(idx []int32) arrow.Array {
	var b []byte
	if len(idx) > 0 {
		b = unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(idx))), len(idx)*4)
	}
	data := array.NewData(arrow.PrimitiveTypes.Int32, len(idx), []*memory.Buffer{nil, memory.NewBufferBytes(b)}, nil, 0, 0)
	defer data.Release()
	return array.MakeFromData(data)
}

// TakeBatch returns the rows idx of b (in that order) as a new batch with
// schema; b keeps its reference.
func TakeBatch(ctx context.Context, mem memory.Allocator, schema *arrow.Schema, b arrow.RecordBatch, idx []int32) (arrow.RecordBatch, error) {
	cols, err := TakeSome(ctx, mem, schema, b.Columns(), nil, idx)
	if err != nil {
		return nil, err
	}
	defer ReleaseArrays(cols)
	return array.NewRecordBatch(schema, cols, int64(len(idx))), nil
}

// TakeSome gathers rows idx of the columns which (every column when which
// is nil) of cols, described by schema; the other entries of the result
// are nil. The caller owns the arrays.
func TakeSome(ctx context.Context, mem memory.Allocator, schema *arrow.Schema, cols []arrow.Array, which []int, idx []int32) ([]arrow.Array, error) {
	out := make([]arrow.Array, len(cols))
	defer func() {
		if r := recover(); r != nil { // a memory limit: free what was gathered, then let it through
			ReleaseArrays(out)
			panic(r)
		}
	}()
	if which == nil {
		which = make([]int, len(cols))
		for i := range which {
			which[i] = i
		}
	}
	if len(which) == 0 {
		return out, nil
	}
	runs := selRuns(idx, nil)
	var indices arrow.Array // for compute.Take, made on first need
	defer func() {
		if indices != nil {
			indices.Release()
		}
	}()
	for _, i := range which {
		c := cols[i]
		if runs != nil { // nil: the selection has too few runs to copy by runs
			if a, ok := gatherRuns(mem, c, runs, len(idx)); ok {
				out[i] = a
				continue
			}
		}
		if a, ok := Gather(mem, c, idx); ok {
			out[i] = a
			continue
		}
		if indices == nil {
			indices = indexArray(idx)
		}
		a, err := compute.TakeArrayOpts(compute.WithAllocator(ctx, mem), c, indices, compute.TakeOptions{BoundsCheck: false})
		if err != nil {
			ReleaseArrays(out)
			return nil, execop.LimitErr(qerr.Execf("exec: take rows of column %q: %w", schema.Field(i).Name, err))
		}
		out[i] = a
	}
	return out, nil
}

// ReleaseArrays releases every non-nil array of as.
func ReleaseArrays(as []arrow.Array) {
	for _, a := range as {
		if a != nil {
			a.Release()
		}
	}
}

// ConcatBatches concatenates bs (all of schema) into one batch; with one
// batch it returns it retained.
func ConcatBatches(mem memory.Allocator, schema *arrow.Schema, bs []arrow.RecordBatch) (arrow.RecordBatch, error) {
	if len(bs) == 1 {
		bs[0].Retain()
		return bs[0], nil
	}
	var rows int64
	for _, b := range bs {
		rows += b.NumRows()
	}
	cols := make([]arrow.Array, schema.NumFields())
	defer ReleaseArrays(cols)
	parts := make([]arrow.Array, len(bs))
	for i := range cols {
		for j, b := range bs {
			parts[j] = b.Column(i)
		}
		c, err := array.Concatenate(parts, mem)
		if err != nil {
			return nil, execop.LimitErr(qerr.Execf("exec: concatenate column %q: %w", schema.Field(i).Name, err))
		}
		cols[i] = c
	}
	return array.NewRecordBatch(schema, cols, rows), nil
}

// TakeArray returns rows idx of arr (in that order, every index in range)
// as a new array from mem: by Gather where it handles the type, else by
// arrow-go's take kernel. arr keeps its reference.
func TakeArray(ctx context.Context, mem memory.Allocator, arr arrow.Array, idx []int32) (arrow.Array, error) {
	if a, ok := Gather(mem, arr, idx); ok {
		return a, nil
	}
	indices := indexArray(idx)
	defer indices.Release()
	a, err := compute.TakeArrayOpts(compute.WithAllocator(ctx, mem), arr, indices, compute.TakeOptions{BoundsCheck: false})
	if err != nil {
		return nil, execop.LimitErr(qerr.Execf("exec: take %d rows of a %s column: %w", len(idx), arr.DataType(), err))
	}
	return a, nil
}
