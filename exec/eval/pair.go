package eval

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
)

// pairNode is physical.PairFunc: an aggregate's arguments as one struct
// array whose children are the arrays as evaluated (no copy); the struct
// itself has no NULLs, the aggregate reads the children's.
type pairNode struct {
	kids []node
	typ  *arrow.StructType
}

func compilePair(f *physical.ScalarFunc) (node, error) {
	st, ok := f.Type.(*arrow.StructType)
	if len(f.Args) < 1 || !ok || st.NumFields() != len(f.Args) {
		return nil, qerr.Internalf("eval: malformed %s over %d arguments of type %s", physical.PairFunc, len(f.Args), f.Type)
	}
	p := &pairNode{typ: st, kids: make([]node, len(f.Args))}
	for i, a := range f.Args {
		n, err := compileTo(a, st.Field(i).Type)
		if err != nil {
			return nil, err
		}
		p.kids[i] = n
	}
	return p, nil
}

func (g *pairNode) eval(ctx context.Context, mem memory.Allocator, in *input) (arrow.Array, error) {
	kids := make([]arrow.Array, len(g.kids))
	defer func() {
		for _, k := range kids {
			if k != nil {
				k.Release()
			}
		}
	}()
	for i, n := range g.kids {
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
	data := make([]arrow.ArrayData, len(kids))
	for i, k := range kids {
		data[i] = k.Data()
	}
	d := array.NewData(g.typ, in.n, []*memory.Buffer{nil}, data, 0, 0)
	defer d.Release()
	return array.MakeFromData(d), nil
}
