package quiver

import (
	"strings"

	"github.com/quiverdb/quiver/logical"
)

// Call applies a built-in function by name, as SQL would: any scalar or
// aggregate function SHOW FUNCTIONS lists, under its name or an alias
// (Call("upper", Col("name")), Call("date_trunc", Lit("month"), Col("day")),
// Call("bool_and", Col("ok"))). An unknown name or a wrong number of
// arguments is reported by the DataFrame method that uses the result.
func Call(name string, args ...Expr) Expr {
	les := make([]logical.Expr, len(args))
	for i, a := range args {
		if a.err != nil {
			return a
		}
		les[i] = a.e
	}
	e, err := logical.Call(strings.ToLower(strings.TrimSpace(name)), les)
	if err != nil {
		return Expr{err: err}
	}
	return Expr{e: e}
}
