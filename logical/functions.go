package logical

import (
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver/functions"
	"github.com/quiverdb/quiver/qerr"
)

// FuncType returns the result type of scalar function name over argument
// types, or a planning error for an unknown function or bad arguments. The
// functions, their signatures and result rules are those of the functions
// registry; GROUPING(...) is typed here (the SQL lowering turns each call
// into a column of the aggregate).
func FuncType(name string, args []arrow.DataType) (arrow.DataType, error) {
	if name == "grouping" {
		if len(args) == 0 {
			return nil, qerr.Planf("function grouping takes at least one argument")
		}
		return Int32, nil
	}
	f, err := scalarFunc(name)
	if err != nil {
		return nil, err
	}
	if _, err := f.Match(len(args)); err != nil {
		return nil, err
	}
	return f.ResultType(args)
}

func scalarFunc(name string) (*functions.Func, error) {
	f, ok := functions.Lookup(name)
	if !ok {
		return nil, functions.Unknown(name)
	}
	if f.Kind != functions.Scalar {
		return nil, functions.ErrWrongKind(f, "here (only in a SELECT list, HAVING or ORDER BY of a grouped query)")
	}
	return f, nil
}

// function coerces a call's arguments to its signature's classes.
func (c *coercer) function(f *ScalarFunc) (Expr, error) {
	args, ts, err := c.exprs(f.Args)
	if err != nil {
		return nil, err
	}
	if f.Name == "grouping" {
		return &ScalarFunc{Name: f.Name, Args: args}, nil
	}
	fn, err := scalarFunc(f.Name)
	if err != nil {
		return nil, err
	}
	sig, err := fn.Match(len(args))
	if err != nil {
		return nil, err
	}
	bad := func(i int) error {
		return qerr.Planf("function %s does not accept %s as argument %d", fn.Name, TypeString(ts[i]), i+1)
	}
	var same []int
	for i := range args {
		t := ts[i]
		switch sig.At(i) {
		case functions.Text:
			switch {
			case t.ID() == arrow.STRING:
			case t.ID() == arrow.NULL || t.ID() == arrow.LARGE_STRING:
				args[i] = CastTo(args[i], String)
			default:
				return nil, bad(i)
			}
		case functions.Display:
			args[i] = toString(args[i], t)
		case functions.Int:
			switch {
			case t.ID() == arrow.INT64:
			case IsInteger(t) || t.ID() == arrow.NULL:
				args[i] = CastTo(args[i], Int64)
			default:
				return nil, bad(i)
			}
		case functions.Float:
			switch {
			case t.ID() == arrow.FLOAT64:
			case IsNumeric(t) || t.ID() == arrow.NULL:
				args[i] = CastTo(args[i], Float64)
			default:
				return nil, bad(i)
			}
		case functions.Number:
			switch {
			case IsNumeric(t):
			case t.ID() == arrow.NULL:
				args[i] = CastTo(args[i], Int64)
			default:
				return nil, bad(i)
			}
		case functions.Bool:
			switch {
			case t.ID() == arrow.BOOL:
			case t.ID() == arrow.NULL:
				args[i] = CastTo(args[i], Bool)
			default:
				return nil, bad(i)
			}
		case functions.Date:
			switch {
			case t.ID() == arrow.DATE32:
			case t.ID() == arrow.NULL:
				args[i] = CastTo(args[i], Date)
			case IsString(t):
				lit, ok := args[i].(*Literal)
				if !ok {
					return nil, bad(i)
				}
				d, ok := foldLiteral(lit, Date)
				if !ok {
					return nil, qerr.Planf("function %s: %s is not a date", fn.Name, lit)
				}
				args[i] = d
			default:
				return nil, bad(i)
			}
		case functions.Temporal, functions.Timestamp, functions.IntervalArg:
			a, err := temporalArg(fn.Name, sig.At(i), args[i], t)
			if err != nil {
				return nil, err
			}
			if a == nil {
				return nil, bad(i)
			}
			args[i] = a
		case functions.Same:
			same = append(same, i)
		}
	}
	if len(same) > 0 {
		es := make([]Expr, len(same))
		sts := make([]arrow.DataType, len(same))
		for k, i := range same {
			es[k], sts[k] = args[i], ts[i]
		}
		if es, err = unifyAll(fn.Name, es, sts, false); err != nil {
			return nil, err
		}
		for k, i := range same {
			args[i] = es[k]
		}
	}
	n := &ScalarFunc{Name: fn.Name, Args: args}
	if _, _, err := n.DataType(c.s); err != nil {
		return nil, err
	}
	return n, nil
}

// funcNullable reports whether a call's result may be NULL, given whether
// any argument may be.
func funcNullable(f *ScalarFunc, s *Schema, argsNullable bool) bool {
	switch f.Name {
	case "coalesce", "ifnull":
		_, last, _ := f.Args[len(f.Args)-1].DataType(s)
		return last
	case "greatest", "least":
		// NULL only when every argument is.
		for _, a := range f.Args {
			if _, n, _ := a.DataType(s); !n {
				return false
			}
		}
		return len(f.Args) > 0
	}
	if fn, ok := functions.Lookup(f.Name); ok && fn.NullOnValid {
		return true
	}
	return argsNullable
}

// Call builds a call of the registry's function name (or alias) over args:
// a ScalarFunc under the canonical name, an AggExpr for an aggregate, or,
// for the functions the registry marks as lowered, the expression they
// stand for (mod is %, year(d) is date_part('year', d), current_date is
// today's date). SQL and the DataFrame API both build calls here.
func Call(name string, args []Expr) (Expr, error) {
	f, ok := functions.Lookup(name)
	if !ok {
		return nil, functions.Unknown(name)
	}
	if f.Kind == functions.Window {
		return nil, qerr.Planf("%s is a window function: it needs OVER (...)", f.Name)
	}
	if _, err := f.Match(len(args)); err != nil {
		return nil, err
	}
	if f.Kind == functions.Aggregate {
		if f.Name == "median" {
			return &AggExpr{Func: AggPercentileCont, Args: []Expr{args[0], Lit(0.5)}}, nil
		}
		if f.Name == "approx_distinct" {
			// Counted exactly: an exact answer is within any error bound.
			return &AggExpr{Func: AggCount, Args: args, Distinct: true}, nil
		}
		fn, ok := ParseAggFunc(f.Name)
		if !ok {
			return nil, qerr.Internalf("logical: aggregate %s has no AggFunc", f.Name)
		}
		if len(args) == 0 {
			return &AggExpr{Func: fn}, nil
		}
		return &AggExpr{Func: fn, Args: args}, nil
	}
	if !f.Lowered {
		return &ScalarFunc{Name: f.Name, Args: args}, nil
	}
	switch f.Name {
	case "mod":
		return &Binary{Op: OpMod, Left: args[0], Right: args[1]}, nil
	case "if":
		return &Case{Whens: []When{{Cond: args[0], Then: args[1]}}, Else: args[2]}, nil
	case "year", "month", "day", "quarter", "hour", "minute", "second", "week":
		return &ScalarFunc{Name: "date_part", Args: []Expr{Lit(f.Name), args[0]}}, nil
	case "dayofweek", "dayofyear":
		return &ScalarFunc{Name: "date_part", Args: []Expr{Lit(map[string]string{"dayofweek": "dow", "dayofyear": "doy"}[f.Name]), args[0]}}, nil
	case "current_date":
		return &Literal{Type: Date, Value: arrow.Date32FromTime(time.Now().UTC())}, nil
	case "now":
		return &Literal{Type: TimestampUTC, Value: arrow.Timestamp(time.Now().UnixMicro())}, nil
	}
	return nil, qerr.Internalf("logical: function %s is marked lowered but has no lowering", f.Name)
}
