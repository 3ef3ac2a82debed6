package eval

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
)

// pairNode is physical.PairFunc: a two-argument aggregate's arguments as one
// struct array whose children are the two arrays as evaluated (no copy);
// the struct itself has no NULLs, the aggregate reads the children's.
type pairNode struct {
	y, x node
	typ  *arrow.StructType
}

func compilePair(f *physical.ScalarFunc) (node, error) {
	st, ok := f.Type.(*arrow.StructType)
	if len(f.Args) != 2 || !ok || st.NumFields() != 2 {
		return nil, qerr.Internalf("eval: malformed %s over %d arguments of type %s", physical.PairFunc, len(f.Args), f.Type)
	}
	y, err := compileTo(f.Args[0], st.Field(0).Type)
	if err != nil {
		return nil, err
	}
	x, err := compileTo(f.Args[1], st.Field(1).Type)
	if err != nil {
		return nil, err
	}
	return &pairNode{y: y, x: x, typ: st}, nil
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
			nulls := array.MakeArrayOfNull(mem, g.typ.Field(i).Type, a.Len())
			a.Release()
			a = nulls
		}
		kids[i] = a
	}
	data := array.NewData(g.typ, in.n, []*memory.Buffer{nil}, []arrow.ArrayData{kids[0].Data(), kids[1].Data()}, 0, 0)
	defer data.Release()
	return array.MakeFromData(data), nil
}
