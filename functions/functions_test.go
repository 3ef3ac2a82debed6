package functions

import (
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver/qerr"
)

func TestRegistry(t *testing.T) {
	seen := map[string]bool{}
	for _, f := range All() {
		if f.Doc == "" || len(f.Sigs) == 0 {
			t.Errorf("%s has no description or no signature", f.Name)
		}
		for _, n := range append([]string{f.Name}, f.Aliases...) {
			if n != strings.ToLower(n) || seen[n] {
				t.Errorf("name %q is not lower case or is registered twice", n)
			}
			seen[n] = true
			if g, ok := Lookup(n); !ok || g != f {
				t.Errorf("Lookup(%q) does not find %s", n, f.Name)
			}
		}
	}
	if _, ok := Lookup("no_such_function"); ok {
		t.Error("Lookup found an unknown name")
	}
}

func TestMatchAndSignatures(t *testing.T) {
	lpad, _ := Lookup("lpad")
	for n, ok := range map[int]bool{1: false, 2: true, 3: true, 4: false} {
		_, err := lpad.Match(n)
		if (err == nil) != ok {
			t.Errorf("lpad with %d arguments: %v", n, err)
		}
		if err != nil && (!qerr.Is(err, qerr.Plan) || !strings.Contains(err.Error(), "lpad(text, bigint[, text])")) {
			t.Errorf("lpad arity error %q does not show the signature", err)
		}
	}
	concat, _ := Lookup("concat_ws")
	if _, err := concat.Match(1); err == nil {
		t.Error("concat_ws takes at least a separator and one value")
	}
	if s, err := concat.Match(5); err != nil || s.At(4) != Display || s.At(0) != Text {
		t.Errorf("concat_ws variadic signature: %v %v", s, err)
	}
	if got := lpad.Signatures(); len(got) != 1 || got[0] != "lpad(text, bigint[, text]) → text" {
		t.Errorf("lpad signatures: %q", got)
	}
	coalesce, _ := Lookup("coalesce")
	if got := coalesce.Signatures()[0]; got != "coalesce(T, ...) → T" {
		t.Errorf("coalesce signature: %q", got)
	}
	ceil, _ := Lookup("ceil")
	rt, err := ceil.ResultType([]arrow.DataType{&arrow.Decimal128Type{Precision: 10, Scale: 2}})
	if err != nil || !arrow.TypeEqual(rt, &arrow.Decimal128Type{Precision: 9, Scale: 0}) {
		t.Errorf("ceil(DECIMAL(10, 2)) is %v (%v), want DECIMAL(9, 0)", rt, err)
	}
	if rt, _ := ceil.ResultType([]arrow.DataType{arrow.PrimitiveTypes.Int32}); !arrow.TypeEqual(rt, arrow.PrimitiveTypes.Int32) {
		t.Errorf("ceil(Int32) is %v", rt)
	}
}

func TestUnknownSuggests(t *testing.T) {
	if err := Unknown("uper"); !strings.Contains(err.Error(), `unknown function "uper" (did you mean upper?)`) {
		t.Errorf("Unknown(uper) = %v", err)
	}
	if err := Unknown("zzzzzz"); strings.Contains(err.Error(), "did you mean") || !qerr.Is(err, qerr.Plan) {
		t.Errorf("Unknown(zzzzzz) = %v", err)
	}
}
