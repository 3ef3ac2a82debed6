package logical

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver/functions"
)

// TestCallCoversRegistry: every function of the registry builds through
// Call with arguments of its first signature: aggregates to aggregate
// expressions, lowered functions to something other than a call of their
// own name, the rest to a ScalarFunc of the canonical name; window
// functions are refused without OVER.
func TestCallCoversRegistry(t *testing.T) {
	for _, f := range functions.All() {
		sig := f.Sigs[0]
		args := make([]Expr, len(sig.Args)-sig.Optional)
		for i := range args {
			args[i] = Lit(0.5)
		}
		e, err := Call(f.Name, args)
		if f.Kind == functions.Window {
			// Window functions are planned with their OVER clause; a bare
			// call is refused.
			if err == nil {
				t.Errorf("Call(%s) without OVER built %s", f.Name, e)
			}
			continue
		}
		if err != nil {
			t.Errorf("Call(%s): %v", f.Name, err)
			continue
		}
		switch x := e.(type) {
		case *AggExpr:
			if f.Kind != functions.Aggregate {
				t.Errorf("scalar %s built an aggregate", f.Name)
			}
		case *ScalarFunc:
			if f.Kind == functions.Aggregate || (x.Name == f.Name) == f.Lowered {
				t.Errorf("%s built %s", f.Name, e)
			}
		default:
			if !f.Lowered {
				t.Errorf("%s built %T", f.Name, e)
			}
		}
		for _, a := range f.Aliases {
			ae, err := Call(a, args)
			if l, ok := e.(*Literal); ok && err == nil {
				// A clock (now, current_date) reads the time at each call:
				// the alias must build a constant of the same type.
				if al, ok := ae.(*Literal); ok && arrow.TypeEqual(al.Type, l.Type) {
					continue
				}
			}
			if err != nil || ae.String() != e.String() {
				t.Errorf("alias %s of %s builds %v (%v), not %s", a, f.Name, ae, err, e)
			}
		}
	}
}
