package sql

import (
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/quiverdb/quiver/logical"
	"github.com/quiverdb/quiver/qerr"
)

// WITH RECURSIVE: a CTE that names itself is `non-recursive term UNION
// [ALL] recursive term`, lowered to a logical.RecursiveQuery whose
// recursive term reads the rows of the previous iteration through a
// logical.WorkTable bound to the CTE's name while it is planned. A CTE of
// a WITH RECURSIVE that does not name itself is an ordinary CTE.

// recursiveCTE lowers one self-referencing CTE.
func (b *builder) recursiveCTE(cte *ast.CommonTableExpression, outer *scope) (logical.Plan, error) {
	name := cte.Name.O
	stmt, ok := cte.Query.Query.(*ast.SetOprStmt)
	if !ok || stmt.SelectList == nil || len(stmt.SelectList.Selects) < 2 {
		return nil, qerr.Planf("recursive query %q must have the form non-recursive term UNION [ALL] recursive term", name)
	}
	if stmt.OrderBy != nil || stmt.Limit != nil {
		return nil, qerr.NotImplementedf("sql: ORDER BY or LIMIT on recursive query %q is not supported", name)
	}
	if stmt.With != nil || stmt.SelectList.With != nil {
		return nil, qerr.NotImplementedf("sql: a WITH clause inside recursive query %q is not supported", name)
	}
	items := stmt.SelectList.Selects
	last := items[len(items)-1]
	var op *ast.SetOprType
	switch n := last.(type) {
	case *ast.SelectStmt:
		op = n.AfterSetOperator
	case *ast.SetOprSelectList:
		op = n.AfterSetOperator
	}
	if op == nil || (*op != ast.Union && *op != ast.UnionAll) {
		return nil, qerr.Planf("recursive query %q must have the form non-recursive term UNION [ALL] recursive term", name)
	}
	for _, it := range items[:len(items)-1] {
		if refersTo(it, cte.Name.L) > 0 {
			return nil, qerr.Planf("recursive query %q: the non-recursive term must not refer to %q", name, name)
		}
	}
	if n := refersTo(last, cte.Name.L); n != 1 {
		return nil, qerr.Planf("recursive query %q: the recursive term must refer to %q exactly once, not %d times", name, name, n)
	}
	var static logical.Plan
	var err error
	if len(items) == 2 {
		static, err = b.resultSet(items[0], outer)
	} else {
		static, err = b.setOprList(&ast.SetOprSelectList{Selects: items[:len(items)-1]}, outer)
	}
	if err != nil {
		return nil, err
	}
	if len(cte.ColNameList) > 0 {
		if static, err = renameColumns(static, cte.ColNameList, name); err != nil {
			return nil, err
		}
	}
	ss := static.Schema()
	// The working table: the static term's columns, any of which the
	// recursive term may make NULL.
	wfs := append([]logical.Field(nil), ss.Fields...)
	for i := range wfs {
		wfs[i].Nullable = true
	}
	work := logical.NewWorkTable(name, &logical.Schema{Fields: wfs})
	b.ctes = append(b.ctes, map[string]cteDef{cte.Name.L: {name: cte.Name.O, plan: work}})
	rec, err := b.resultSet(last, outer)
	b.ctes = b.ctes[:len(b.ctes)-1]
	if err != nil {
		return nil, err
	}
	if rec, err = conformTo(rec, ss, name); err != nil {
		return nil, err
	}
	return logical.NewRecursiveQuery(name, static, rec, *op == ast.Union)
}

// conformTo casts rec's columns to the types of s and names them as s
// does (the recursive term's rows join the non-recursive term's).
func conformTo(rec logical.Plan, s *logical.Schema, name string) (logical.Plan, error) {
	rs := rec.Schema()
	if rs.Len() != s.Len() {
		return nil, qerr.Planf("recursive query %q: the non-recursive term has %d columns, the recursive term %d", name, s.Len(), rs.Len())
	}
	exprs := make([]logical.Expr, s.Len())
	for i := range exprs {
		var e logical.Expr = outCol(rs, i)
		want, got := s.Field(i).Type, rs.Field(i).Type
		if !sameType(want, got) {
			if !logical.CanCast(got, want) {
				return nil, qerr.Planf("recursive query %q: column %d (%s) has type %s in the non-recursive term but %s in the recursive term",
					name, i+1, s.Field(i).Name, logical.TypeString(want), logical.TypeString(got))
			}
			e = logical.CastTo(e, want)
		}
		exprs[i] = &logical.Alias{Expr: e, Name: s.Field(i).Name}
	}
	return logical.NewProjection(rec, exprs)
}

// refersTo counts the references to table name (unqualified) in n.
func refersTo(n ast.Node, name string) int {
	v := &tableRefCounter{name: name}
	n.Accept(v)
	return v.n
}

type tableRefCounter struct {
	name string
	n    int
}

func (v *tableRefCounter) Enter(n ast.Node) (ast.Node, bool) {
	if t, ok := n.(*ast.TableName); ok && t.Schema.L == "" && t.Name.L == v.name {
		v.n++
	}
	return n, false
}

func (v *tableRefCounter) Leave(n ast.Node) (ast.Node, bool) { return n, true }
