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
