package exec_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver/exec"
	"github.com/quiverdb/quiver/exec/execop"
	"github.com/quiverdb/quiver/exec/exectest"
	"github.com/quiverdb/quiver/physical"
)

var recSchema = arrow.NewSchema([]arrow.Field{{Name: "n", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil)

func recCol() *physical.Column {
	return &physical.Column{Index: 0, Name: "n", Type: arrow.PrimitiveTypes.Int64}
}

func recLit(v any) *physical.Literal {
	return &physical.Literal{Type: arrow.PrimitiveTypes.Int64, Value: v}
}

func recBin(op physical.BinaryOp, l, r physical.Expr, t arrow.DataType) *physical.Binary {
	return &physical.Binary{Op: op, Left: l, Right: r, Type: t}
}

// recursive builds WITH RECURSIVE t(n) AS (static UNION [ALL] SELECT step(n) FROM t [WHERE n < below]).
func recursive(static physical.Plan, step physical.Expr, below any, distinct bool, maxDepth int64) *physical.RecursiveQuery {
	var rec physical.Plan = &physical.WorkTable{Name: "t", OutSchema: recSchema}
	if below != nil {
		rec = &physical.Filter{Input: rec, Predicate: recBin(physical.OpLt, recCol(), recLit(below), arrow.FixedWidthTypes.Boolean)}
	}
	rec = &physical.Projection{Input: rec, Exprs: []physical.Expr{step}, Names: []string{"n"}}
	if static.OutputPartitions() > 1 {
		static = &physical.Coalesce{Input: static}
	}
	return &physical.RecursiveQuery{Name: "t", Static: static, Recursive: rec, Distinct: distinct, MaxDepth: maxDepth, OutSchema: recSchema}
}

func oneRow(v int64) physical.Plan {
	return &physical.Values{OutSchema: recSchema, Rows: [][]*physical.Literal{{recLit(v)}}}
}

func TestRecursiveQuery(t *testing.T) {
	plus1 := recBin(physical.OpAdd, recCol(), recLit(int64(1)), arrow.PrimitiveTypes.Int64)
	// n % 3 + 1 walks 1 → 2 → 3 → 1: a cycle only UNION ends.
	cycle := recBin(physical.OpAdd, recBin(physical.OpMod, recCol(), recLit(int64(3)), arrow.PrimitiveTypes.Int64), recLit(int64(1)), arrow.PrimitiveTypes.Int64)
	startRows := `[{"n": 5}, {"n": 1}, {"n": 5}, {"n": null}, {"n": 2}, {"n": null}, {"n": 40}]`
	for _, c := range []exectest.Case{
		{
			Name: "count-union-all",
			Plan: func([]physical.Plan) physical.Plan { return recursive(oneRow(1), plus1, int64(12), false, 100) },
			Want: `[{"n":1},{"n":2},{"n":3},{"n":4},{"n":5},{"n":6},{"n":7},{"n":8},{"n":9},{"n":10},{"n":11},{"n":12}]`,
		},
		{
			Name: "cycle-union",
			Plan: func([]physical.Plan) physical.Plan { return recursive(oneRow(1), cycle, nil, true, 100) },
			Want: `[{"n":1},{"n":2},{"n":3}]`,
		},
		{
			// Many starting rows over three partitions, with duplicates and
			// NULLs (equal under UNION): each start counts up to 6.
			Name:   "multi-start-union",
			Inputs: []exectest.Input{{Name: "s", Schema: recSchema, Rows: startRows, Partitions: 3}},
			Plan:   func(s []physical.Plan) physical.Plan { return recursive(s[0], plus1, int64(6), true, 100) },
			Want:   `[{"n":5},{"n":1},{"n":null},{"n":2},{"n":40},{"n":6},{"n":3},{"n":4}]`,
		},
		{
			Name:   "multi-start-union-all",
			Inputs: []exectest.Input{{Name: "s", Schema: recSchema, Rows: startRows, Partitions: 3}},
			Plan:   func(s []physical.Plan) physical.Plan { return recursive(s[0], plus1, int64(3), false, 100) },
			// 5, 5, 40, NULL, NULL stop at once; 1 → 2 → 3; 2 → 3.
			Want: `[{"n":5},{"n":1},{"n":5},{"n":null},{"n":2},{"n":null},{"n":40},{"n":2},{"n":3},{"n":3}]`,
		},
		{
			Name: "empty-static",
			Plan: func([]physical.Plan) physical.Plan {
				return recursive(&physical.Empty{OutSchema: recSchema}, plus1, int64(5), false, 100)
			},
			Want: `[]`,
		},
	} {
		exectest.Run(t, c)
	}
}

// TestRecursiveQueryDepth: a recursion past MaxDepth runs fails naming
// the query, and one that ends exactly at the limit succeeds.
func TestRecursiveQueryDepth(t *testing.T) {
	plus1 := recBin(physical.OpAdd, recCol(), recLit(int64(1)), arrow.PrimitiveTypes.Int64)
	run := func(p physical.Plan) (int, error) {
		mem := exectest.Allocator(t)
		tc := exec.NewTaskContext(execop.NewAccountingAllocator(mem, 0), 0)
		op, err := exec.Execute(context.Background(), tc, p)
		if err != nil {
			return 0, err
		}
		defer op.Close()
		if err := op.Open(context.Background()); err != nil {
			return 0, err
		}
		rows := 0
		for {
			b, err := op.Next(context.Background())
			if errors.Is(err, io.EOF) {
				return rows, nil
			}
			if err != nil {
				return rows, err
			}
			rows += int(b.NumRows())
			b.Release()
		}
	}
	// Unbounded: the error names the query and the limit.
	_, err := run(recursive(oneRow(1), plus1, nil, false, 50))
	if err == nil || !strings.Contains(err.Error(), `recursive query "t" did not end within 50 iterations`) {
		t.Fatalf("want the depth error, got %v", err)
	}
	// 1..6: five runs add a row, the sixth adds none.
	n, err := run(recursive(oneRow(1), plus1, int64(6), false, 5))
	if err != nil || n != 6 {
		t.Fatalf("ending at the limit: %d rows, %v; want 6 rows", n, err)
	}
	if _, err := run(recursive(oneRow(1), plus1, int64(7), false, 5)); err == nil {
		t.Fatal("one run past the limit: want an error")
	}
	// MaxDepth 0: no limit.
	if n, err := run(recursive(oneRow(1), plus1, int64(3000), false, 0)); err != nil || n != 3000 {
		t.Fatalf("no limit: %d rows, %v; want 3000", n, err)
	}
}
