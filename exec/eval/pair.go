package eval

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
)

// pairNode is physical.PairFunc: a two-argument aggregate's (y, x) as one
// struct array whose children are the two Float64 arrays as evaluated (no
// copy); the struct itself has no NULLs, the aggregate reads the children's.
type pairNode struct{ y, x node }

func compilePair(f *physical.ScalarFunc) (node, error) {
	if len(f.Args) != 2 {
		return nil, qerr.Internalf("eval: %s takes 2 arguments, got %d", physical.PairFunc, len(f.Args))
	}
	y, err := compileTo(f.Args[0], tFloat64)
	if err != nil {
		return nil, err
	}
	x, err := compileTo(f.Args[1], tFloat64)
	if err != nil {
		return nil, err
	}
	return &pairNode{y: y, x: x}, nil
}

func (g *pairNode) eval(ctx context.Context, mem memory.Allocator, in *input) (arrow.Array, error) {
	var kids [2]arrow.Array
	defer func() {
		for _, k := range kids {
			if k != nil {
				k.Release()
			}
		}
	}()
	for i, n := range []node{g.y, g.x} {
		a, err := n.eval(ctx, mem, in)
		if err != nil {
			return nil, err
		}
		if a.DataType().ID() == arrow.NULL {
			nulls := array.MakeArrayOfNull(mem, tFloat64, a.Len())
			a.Release()
			a = nulls
		}
		kids[i] = a
	}
	data := array.NewData(physical.PairType, in.n, []*memory.Buffer{nil}, []arrow.ArrayData{kids[0].Data(), kids[1].Data()}, 0, 0)
	defer data.Release()
	return array.MakeFromData(data), nil
}
