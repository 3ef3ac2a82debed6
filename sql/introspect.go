package sql

import (
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver/functions"
	"github.com/quiverdb/quiver/logical"
	"github.com/quiverdb/quiver/qerr"
)

// Introspection as queries over inline tables: SHOW FUNCTIONS and the
// information_schema tables are planned as VALUES built from the functions
// registry and the catalog when the statement is planned, so they filter,
// join and sort like any table.

// infoSchemaName is the schema of the introspection tables; every table and
// view of the catalog is in schema "main" of catalog "quiver".
const infoSchemaName = "information_schema"

func str(s string) logical.Expr { return logical.Lit(s) }

func inline(cols []logical.Field, rows [][]logical.Expr, alias string) (logical.Plan, error) {
	v, err := logical.NewValues(logical.NewSchema(cols...), rows)
	if err != nil {
		return nil, err
	}
	return logical.NewSubqueryAlias(v, alias), nil
}

func textCol(name string) logical.Field { return logical.Field{Name: name, Type: logical.String} }

// showFunctions is SHOW FUNCTIONS: one row per signature of every function
// whose name is LIKE pattern (all when it is empty).
func showFunctions(pattern string) (logical.Plan, error) {
	cols := []logical.Field{textCol("function_name"), textCol("kind"), textCol("signature"), textCol("aliases"), textCol("description")}
	var rows [][]logical.Expr
	for _, f := range functions.All() {
		for _, s := range f.Signatures() {
			rows = append(rows, []logical.Expr{str(f.Name), str(f.Kind.String()), str(s), str(strings.Join(f.Aliases, ", ")), str(f.Doc)})
		}
	}
	lp, err := inline(cols, rows, "functions")
	if err != nil || pattern == "" {
		return lp, err
	}
	pred, err := logical.Coerce(&logical.Like{Expr: logical.Col("function_name"), Pattern: str(pattern)}, lp.Schema())
	if err != nil {
		return nil, err
	}
	return logical.NewFilter(lp, pred)
}

// infoSchema plans information_schema.tables or information_schema.columns.
func (b *builder) infoSchema(table, alias string) (logical.Plan, error) {
	if alias == "" {
		alias = table
	}
	names, isView := b.p.cat.Names()
	switch table {
	case "tables":
		cols := []logical.Field{textCol("table_catalog"), textCol("table_schema"), textCol("table_name"), textCol("table_type")}
		rows := make([][]logical.Expr, len(names))
		for i, n := range names {
			kind := "BASE TABLE"
			if isView[i] {
				kind = "VIEW"
			}
			rows[i] = []logical.Expr{str("quiver"), str("main"), str(n), str(kind)}
		}
		return inline(cols, rows, alias)
	case "columns":
		cols := []logical.Field{textCol("table_catalog"), textCol("table_schema"), textCol("table_name"), textCol("column_name"),
			{Name: "ordinal_position", Type: logical.Int64}, textCol("data_type"), textCol("is_nullable")}
		var rows [][]logical.Expr
		for i, n := range names {
			var schema *arrow.Schema
			if isView[i] {
				if v, ok := b.p.cat.View(n); ok {
					schema = v.Schema
				}
			} else if t, ok := b.p.cat.Table(n); ok {
				schema = t.Schema
			}
			if schema == nil {
				continue // dropped meanwhile
			}
			for k, f := range schema.Fields() {
				rows = append(rows, []logical.Expr{str("quiver"), str("main"), str(n), str(f.Name), logical.Lit(int64(k + 1)),
					str(logical.TypeString(f.Type)), str(map[bool]string{true: "YES", false: "NO"}[f.Nullable])})
			}
		}
		return inline(cols, rows, alias)
	}
	return nil, qerr.Planf("table \"%s.%s\" not found (information_schema has tables and columns)", infoSchemaName, table)
}
