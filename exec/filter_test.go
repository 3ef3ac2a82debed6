package exec_test

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver/exec"
	"github.com/quiverdb/quiver/exec/execop"
	"github.com/quiverdb/quiver/exec/exectest"
	"github.com/quiverdb/quiver/physical"
)

func opBin(op physical.BinaryOp, l, r physical.Expr, t arrow.DataType) *physical.Binary {
	return &physical.Binary{Op: op, Left: l, Right: r, Type: t}
}

func i64Lit(v int64) *physical.Literal {
	return &physical.Literal{Type: arrow.PrimitiveTypes.Int64, Value: v}
}

func TestFilterProjection(t *testing.T) {
	boolT := arrow.FixedWidthTypes.Boolean
	exectest.Run(t, exectest.Case{
		Name: "filter", Inputs: abInput(3), Async: true,
		Plan: func(s []physical.Plan) physical.Plan {
			return &physical.Filter{Input: s[0], Predicate: opBin(physical.OpGtEq, colA, i64Lit(3), boolT)}
		},
		Want: `[{"a": 3, "b": "x"}, {"a": 3, "b": "a"}, {"a": 5, "b": "q"}, {"a": 4, "b": "x"}, {"a": 7, "b": "d"}]`,
	})
	exectest.Run(t, exectest.Case{
		Name: "filter-none", Inputs: abInput(2),
		Plan: func(s []physical.Plan) physical.Plan {
			return &physical.Filter{Input: s[0], Predicate: opBin(physical.OpGt, colA, i64Lit(100), boolT)}
		},
		Want: `[]`,
	})
	exectest.Run(t, exectest.Case{
		Name: "projection", Inputs: abInput(2),
		Plan: func(s []physical.Plan) physical.Plan {
			return &physical.Projection{Input: s[0],
				Exprs: []physical.Expr{colB, opBin(physical.OpAdd, colA, i64Lit(10), arrow.PrimitiveTypes.Int64)},
				Names: []string{"b", "a10"}}
		},
		Want: `[{"b":"x","a10":13},{"b":"y","a10":null},{"b":null,"a10":11},{"b":"x","a10":12},{"b":"a","a10":13},{"b":"z","a10":11},
			{"b":null,"a10":null},{"b":"q","a10":15},{"b":"x","a10":14},{"b":"b","a10":12},{"b":"c","a10":10},{"b":"d","a10":17}]`,
	})
	// A computed sort key goes through eval.
	exectest.Run(t, exectest.Case{
		Name: "sort-computed-key", Inputs: abInput(2), Order: exectest.Ordered,
		Plan: func(s []physical.Plan) physical.Plan {
			neg := &physical.Negative{Expr: colA}
			return &physical.Sort{Input: &physical.Filter{Input: s[0], Predicate: &physical.IsNull{Expr: colA, Negated: true}},
				Keys: []physical.SortKey{{Expr: neg, Asc: true}, {Expr: colB, Asc: true}}, Fetch: 3}
		},
		Want: `[{"a": 7, "b": "d"}, {"a": 5, "b": "q"}, {"a": 4, "b": "x"}]`,
	})
}

func BenchmarkFilter(b *testing.B) {
	schema := lineitemSchema(b)
	idx := schema.FieldIndices("l_quantity")[0]
	mem := memory_(b)
	scan := &physical.Scan{Table: "lineitem", Format: physical.FormatParquet, FileSchema: schema,
		Partitions: [][]string{{lineitemPath}}, Fetch: -1}
	q := &physical.Column{Index: idx, Name: "l_quantity", Type: schema.Field(idx).Type}
	lit := &physical.Literal{Type: q.Type, Value: nil}
	_ = lit
	plan := &physical.Filter{Input: scan, Predicate: &physical.IsNull{Expr: q, Negated: true}}
	b.ReportAllocs()
	for b.Loop() {
		tc := exec.NewTaskContext(mem, 0)
		bs, err := execop.CollectAll(context.Background(), tc, plan)
		if err != nil {
			b.Fatal(err)
		}
		for _, x := range bs {
			x.Release()
		}
	}
}
