package logical

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver/qerr"
)

// ---- RecursiveQuery ---------------------------------------------------------

// RecursiveQuery is a WITH RECURSIVE common table expression: Static (the
// non-recursive term) runs once, then Recursive runs again and again, each
// time over the rows the previous run added, read through the WorkTable
// named Name, until a run adds none. The output is every row added, in
// that order. With Distinct (UNION) a row already added is not added
// again, so each run only sees rows new to the whole result (PostgreSQL's
// semantics); without (UNION ALL) every row a run produces is added.
//
// The schema is Static's; Recursive produces the same column types (the
// SQL lowering casts it to them).
type RecursiveQuery struct {
	Name              string
	Static, Recursive Plan
	Distinct          bool
	schema            *Schema
}

// NewRecursiveQuery checks that the two terms agree in arity and types.
func NewRecursiveQuery(name string, static, recursive Plan, distinct bool) (*RecursiveQuery, error) {
	s, r := static.Schema(), recursive.Schema()
	if s.Len() != r.Len() {
		return nil, qerr.Planf("recursive query %q: the non-recursive term has %d columns, the recursive term %d", name, s.Len(), r.Len())
	}
	for i := range s.Fields {
		if !arrow.TypeEqual(s.Field(i).Type, r.Field(i).Type) {
			return nil, qerr.Planf("recursive query %q: column %d (%s) has type %s in the non-recursive term but %s in the recursive term",
				name, i+1, s.Field(i).Name, TypeString(s.Field(i).Type), TypeString(r.Field(i).Type))
		}
	}
	// Static's names and types; a column is nullable when either term's is.
	fs := append([]Field(nil), s.Fields...)
	for i := range fs {
		fs[i].Nullable = fs[i].Nullable || r.Field(i).Nullable
	}
	return &RecursiveQuery{Name: name, Static: static, Recursive: recursive, Distinct: distinct, schema: &Schema{Fields: fs}}, nil
}

func (*RecursiveQuery) isPlan() {}

func (q *RecursiveQuery) Schema() *Schema  { return q.schema }
func (q *RecursiveQuery) Children() []Plan { return []Plan{q.Static, q.Recursive} }
func (q *RecursiveQuery) WithChildren(c []Plan) (Plan, error) {
	if err := wantChildren(q, c, 2); err != nil {
		return nil, err
	}
	return NewRecursiveQuery(q.Name, c[0], c[1], q.Distinct)
}
func (q *RecursiveQuery) Exprs() []Expr                  { return nil }
func (q *RecursiveQuery) WithExprs([]Expr) (Plan, error) { return q, nil }
func (q *RecursiveQuery) String() string {
	op := "UNION ALL"
	if q.Distinct {
		op = "UNION"
	}
	return fmt.Sprintf("RecursiveQuery: %s (%s)", q.Name, op)
}

// ---- WorkTable --------------------------------------------------------------

// WorkTable reads, inside the recursive term of the RecursiveQuery named
// Name, the rows that query's previous run added. Its schema is the
// query's (unqualified; a SubqueryAlias names it).
type WorkTable struct {
	Name   string
	schema *Schema
}

// NewWorkTable is the working table of recursive query name, whose rows
// have schema s.
func NewWorkTable(name string, s *Schema) *WorkTable {
	return &WorkTable{Name: name, schema: s.WithQualifier("")}
}

func (*WorkTable) isPlan()                               {}
func (w *WorkTable) Schema() *Schema                     { return w.schema }
func (w *WorkTable) Children() []Plan                    { return nil }
func (w *WorkTable) WithChildren(c []Plan) (Plan, error) { return w, wantChildren(w, c, 0) }
func (w *WorkTable) Exprs() []Expr                       { return nil }
func (w *WorkTable) WithExprs([]Expr) (Plan, error)      { return w, nil }
func (w *WorkTable) String() string                      { return "WorkTable: " + w.Name }
