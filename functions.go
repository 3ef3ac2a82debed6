package quiver

import (
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver/functions"
	"github.com/quiverdb/quiver/logical"
	"github.com/quiverdb/quiver/qerr"
)

//go:generate go run ./internal/fngen

// Fn applies a built-in function by name, as SQL would: any function SHOW
// FUNCTIONS lists, under its name or an alias (Fn("upper", Col("name")),
// Fn("date_trunc", Lit("month"), Col("day")), Fn("bool_and", Col("ok"))).
// Each also has a Go function of its own (Upper, DateTrunc, BoolAnd; see
// functions_gen.go); a window function needs Over. An unknown name or a
// wrong number of arguments is reported by the DataFrame method that uses
// the result.
func Fn(name string, args ...Expr) Expr {
	les := make([]logical.Expr, len(args))
	for i, a := range args {
		if a.err != nil {
			return a
		}
		les[i] = a.e
	}
	name = strings.ToLower(strings.TrimSpace(name))
	if f, ok := functions.Lookup(name); ok && f.Kind == functions.Window {
		return windowCall(f, args)
	}
	e, err := logical.Call(name, les)
	if err != nil {
		return Expr{err: err}
	}
	return Expr{e: e}
}

// windowCall is Fn of a window function: it awaits Over. LAG and LEAD get
// the SQL defaults of the arguments left out (offset 1, default NULL).
func windowCall(f *functions.Func, args []Expr) Expr {
	if _, err := f.Match(len(args)); err != nil {
		return Expr{err: err}
	}
	wf, ok := logical.ParseWindowFunc(f.Name)
	if !ok {
		return Expr{err: qerr.Internalf("window function %s has no logical form", f.Name)}
	}
	if wf == logical.WinLag || wf == logical.WinLead {
		if len(args) < 2 {
			args = append(args, Lit(1))
		}
		if len(args) < 3 {
			args = append(args, Lit(nil))
		}
	}
	return windowFunc(wf, args...)
}

// TryCast converts x to type t like Cast, giving NULL where a value does
// not convert instead of failing the query (SQL's TRY_CAST).
func (x Expr) TryCast(t arrow.DataType) Expr {
	if x.err != nil {
		return x
	}
	return Expr{e: &logical.ScalarFunc{Name: "try_cast", Args: []logical.Expr{x.e, &logical.Literal{Type: t}}}}
}

// OrderBy orders the values array_agg or string_agg collects, as SQL's
// ORDER BY inside the call: ArrayAgg(Col("name")).OrderBy(Col("id").Desc())
// is array_agg(name ORDER BY id DESC). Without it the order is not set.
// On any other expression it is an error, reported by the DataFrame
// method that uses the result.
func (x Expr) OrderBy(keys ...SortKey) Expr {
	if x.err != nil {
		return x
	}
	e, name := x.e, ""
	if al, ok := e.(*logical.Alias); ok {
		e, name = al.Expr, al.Name
	}
	a, ok := e.(*logical.AggExpr)
	if !ok || (a.Func != logical.AggArrayAgg && a.Func != logical.AggStringAgg) {
		return Expr{err: qerr.Planf("OrderBy applies to array_agg and string_agg, not %s", x)}
	}
	if len(a.Order) > 0 {
		return Expr{err: qerr.Planf("OrderBy: %s is already ordered", x)}
	}
	if len(keys) == 0 {
		return x
	}
	n := *a
	n.Args = append([]logical.Expr(nil), a.Args[:a.NumArgs()]...)
	for _, k := range keys {
		if k.expr.err != nil {
			return k.expr
		}
		n.Args = append(n.Args, k.expr.e)
		n.Order = append(n.Order, logical.AggOrder{Desc: !k.asc, NullsFirst: k.nullsFirst})
	}
	if a.Filter {
		n.Args = append(n.Args, a.Args[len(a.Args)-1])
	}
	if name != "" {
		return Expr{e: &logical.Alias{Expr: &n, Name: name}}
	}
	return Expr{e: &n}
}
