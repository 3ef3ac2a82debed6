package planner

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver/physical"
)

// TestCacheHint: a filter over a cache read hands it its predicate; through
// a projection of columns only the column-vs-literal conjuncts go, their
// columns moved to the cache's positions; anything else gets no hint.
func TestCacheHint(t *testing.T) {
	i64 := arrow.PrimitiveTypes.Int64
	schema := arrow.NewSchema([]arrow.Field{{Name: "a", Type: i64}, {Name: "b", Type: i64}, {Name: "c", Type: i64}}, nil)
	reader := &physical.CacheReader{Name: "t", OutSchema: schema}
	col := func(i int, name string) *physical.Column { return &physical.Column{Index: i, Name: name, Type: i64} }
	lit := &physical.Literal{Type: i64, Value: int64(5)}
	cmp := func(op physical.BinaryOp, l, r physical.Expr) *physical.Binary {
		return &physical.Binary{Op: op, Left: l, Right: r, Type: arrow.FixedWidthTypes.Boolean}
	}

	pred := cmp(physical.OpLt, col(0, "a"), lit)
	got, ok := withCacheHint(reader, pred).(*physical.CacheReader)
	if !ok || got.Predicate != physical.Expr(pred) || reader.Predicate != nil {
		t.Fatalf("direct: %#v (the resolver's reader must stay as it was: %v)", got, reader.Predicate)
	}

	// SELECT c, a + 1, a FROM t WHERE c > 5 AND (a + 1) < 5 AND 5 <= a AND c IN (5)
	proj := &physical.Projection{Input: reader, Exprs: []physical.Expr{col(2, "c"), cmp(physical.OpAdd, col(0, "a"), lit), col(0, "a")}, Names: []string{"c", "x", "a"}}
	pred2 := cmp(physical.OpAnd, cmp(physical.OpAnd, cmp(physical.OpGt, col(0, "c"), lit), cmp(physical.OpLt, col(1, "x"), lit)),
		cmp(physical.OpAnd, cmp(physical.OpLtEq, lit, col(2, "a")), &physical.InList{Expr: col(0, "c"), List: []physical.Expr{lit}}))
	p, ok := withCacheHint(proj, pred2).(*physical.Projection)
	if !ok {
		t.Fatal("the projection was not kept")
	}
	hint := p.Input.(*physical.CacheReader).Predicate
	want := cmp(physical.OpAnd, cmp(physical.OpAnd, cmp(physical.OpGt, col(2, "c"), lit), cmp(physical.OpLtEq, lit, col(0, "a"))),
		&physical.InList{Expr: col(2, "c"), List: []physical.Expr{lit}})
	if hint == nil || hint.String() != want.String() || hint.(*physical.Binary).Left.(*physical.Binary).Left.(*physical.Binary).Left.(*physical.Column).Index != 2 {
		t.Fatalf("hint through the projection %v, want %v", hint, want)
	}

	if got := withCacheHint(proj, cmp(physical.OpLt, col(1, "x"), lit)); got != physical.Plan(proj) {
		t.Fatalf("a computed column made a hint: %v", got)
	}
	filter := &physical.Filter{Input: reader, Predicate: pred}
	if got := withCacheHint(filter, pred); got != physical.Plan(filter) {
		t.Fatal("a plan that is no cache read changed")
	}
}
