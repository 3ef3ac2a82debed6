package eval

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
)

// tryCastNode is TRY_CAST(x AS t), planned as try_cast(x, NULL of t): the
// cast, with NULL where a value does not convert. A batch whose values all
// convert costs one cast; only a batch with a failing value is cast again
// row by row to find which rows fail.
type tryCastNode struct {
	arg      node
	from, to arrow.DataType
}

func compileTryCast(f *physical.ScalarFunc) (node, error) {
	from := f.Args[0].DataType()
	if !castSupported(from, f.Type) {
		return nil, qerr.NotImplementedf("eval: cast from %s to %s is not supported", from, f.Type)
	}
	n, err := compile(f.Args[0])
	if err != nil {
		return nil, err
	}
	return &tryCastNode{arg: n, from: from, to: f.Type}, nil
}

func (g *tryCastNode) eval(ctx context.Context, mem memory.Allocator, in *input) (arrow.Array, error) {
	a, err := g.arg.eval(ctx, mem, in)
	if err != nil {
		return nil, err
	}
	defer a.Release()
	if arrow.TypeEqual(a.DataType(), g.to) {
		a.Retain()
		return a, nil
	}
	out, err := castArray(ctx, mem, a, g.to)
	if err == nil || !qerr.Is(err, qerr.Execution) {
		return out, err
	}
	n := a.Len()
	pieces := make([]arrow.Array, 0, n+1)
	defer func() {
		for _, p := range pieces {
			p.Release()
		}
	}()
	pos := make([]int32, n)
	var failed []int
	for i := 0; i < n; i++ {
		s := array.NewSlice(a, int64(i), int64(i+1))
		c, err := castArray(ctx, mem, s, g.to)
		s.Release()
		if err != nil {
			if !qerr.Is(err, qerr.Execution) {
				return nil, err
			}
			failed = append(failed, i)
			continue
		}
		pos[i] = int32(len(pieces))
		pieces = append(pieces, c)
	}
	null := array.MakeArrayOfNull(mem, g.to, 1)
	for _, i := range failed {
		pos[i] = int32(len(pieces))
	}
	pieces = append(pieces, null)
	return assemble(ctx, mem, g.to, pieces, pos)
}
