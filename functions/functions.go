package functions

import (
	"fmt"
	"sort"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver/qerr"
)

// Kind is whether a function is applied per row, per group, or per row
// over its window (OVER (...)).
type Kind int

// Kinds of functions.
const (
	Scalar Kind = iota
	Aggregate
	Window // only with OVER (...); every aggregate may be used so too
)

func (k Kind) String() string {
	switch k {
	case Aggregate:
		return "aggregate"
	case Window:
		return "window"
	}
	return "scalar"
}

// Arg is what one argument is coerced to before the kernel runs.
type Arg int

// Argument classes.
const (
	AnyArg      Arg = iota // taken as it is
	Text                   // Utf8 (NULL is cast)
	Int                    // Int64 (from any integer type or NULL)
	Float                  // Float64 (from any numeric type or NULL)
	Number                 // any numeric type as it is (NULL becomes Int64)
	Date                   // Date32 (a string constant is read as a date)
	Bool                   // Boolean
	Same                   // all Same arguments of a call share one common type
	Display                // any type, rendered as text
	Temporal               // a date, timestamp, time or interval as it is (a string constant is read as a timestamp)
	Timestamp              // a timestamp (a date becomes its midnight, a string constant is read as a timestamp)
	IntervalArg            // an interval (a string constant is read as one)
)

var argNames = [...]string{"any", "text", "bigint", "double", "numeric", "date", "boolean", "T", "any", "temporal", "timestamp", "interval"}

func (a Arg) String() string { return argNames[a] }

// Sig is one accepted argument list. With Variadic, the last argument may
// repeat (at least once); Optional trailing arguments may be left out.
type Sig struct {
	Args     []Arg
	Optional int
	Variadic bool
}

// Accepts reports whether a call with n arguments matches s.
func (s Sig) Accepts(n int) bool {
	if s.Variadic {
		return n >= len(s.Args)-s.Optional
	}
	return n >= len(s.Args)-s.Optional && n <= len(s.Args)
}

// At is the class of argument i of a call matching s.
func (s Sig) At(i int) Arg {
	if i >= len(s.Args) {
		return s.Args[len(s.Args)-1]
	}
	return s.Args[i]
}

// Ret is the rule for a result type, over the coerced argument types:
// Fixed when set, else Rule when set, else the type of argument Arg.
type Ret struct {
	Fixed arrow.DataType
	Rule  func(args []arrow.DataType) (arrow.DataType, error)
	Arg   int
	Desc  string // the rule in words, for Rule
}

// Func is one built-in function.
type Func struct {
	Name    string
	Aliases []string
	Kind    Kind
	Sigs    []Sig
	Ret     Ret
	// NullOnValid: the result may be NULL where no argument is (nullif,
	// regexp_match, try_cast); otherwise it is NULL only where an
	// argument is.
	NullOnValid bool
	// Volatile: each row gets its own value even without arguments
	// (random); such a call is never folded to a constant.
	Volatile bool
	// Lowered: the SQL front end rewrites calls into other expressions
	// (mod into %, year into date_part), so there is no kernel of this name.
	Lowered bool
	Doc     string
}

// Match returns the signature a call with n arguments uses, or a planning
// error in the user's terms.
func (f *Func) Match(n int) (Sig, error) {
	for _, s := range f.Sigs {
		if s.Accepts(n) {
			return s, nil
		}
	}
	want := make([]string, len(f.Sigs))
	for i, s := range f.Sigs {
		want[i] = f.signature(s)
	}
	return Sig{}, qerr.Planf("function %q does not take %d argument%s (it takes %s)", f.Name, n, plural(n), strings.Join(want, " or "))
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// ResultType is the result type over coerced argument types.
func (f *Func) ResultType(args []arrow.DataType) (arrow.DataType, error) {
	switch {
	case f.Ret.Fixed != nil:
		return f.Ret.Fixed, nil
	case f.Ret.Rule != nil:
		return f.Ret.Rule(args)
	case f.Ret.Arg < len(args):
		return args[f.Ret.Arg], nil
	}
	return nil, qerr.Internalf("functions: %s has no result rule for %d arguments", f.Name, len(args))
}

// Signatures renders each signature as name(args) → result.
func (f *Func) Signatures() []string {
	out := make([]string, len(f.Sigs))
	for i, s := range f.Sigs {
		out[i] = f.signature(s) + " → " + f.retString(s)
	}
	return out
}

func (f *Func) signature(s Sig) string {
	var b strings.Builder
	b.WriteString(f.Name)
	b.WriteByte('(')
	req := len(s.Args) - s.Optional
	for i, a := range s.Args {
		if i == req && s.Optional > 0 {
			b.WriteByte('[')
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(a.String())
	}
	if s.Variadic {
		b.WriteString(", ...")
	}
	if s.Optional > 0 {
		b.WriteByte(']')
	}
	b.WriteByte(')')
	return b.String()
}

func (f *Func) retString(s Sig) string {
	switch {
	case f.Ret.Fixed != nil:
		return typeName(f.Ret.Fixed)
	case f.Ret.Desc != "":
		return f.Ret.Desc
	case f.Ret.Arg < len(s.Args) && s.Args[f.Ret.Arg] == Same:
		return "T"
	}
	return fmt.Sprintf("type of argument %d", f.Ret.Arg+1)
}

func typeName(t arrow.DataType) string {
	switch t.ID() {
	case arrow.STRING:
		return "text"
	case arrow.INT64:
		return "bigint"
	case arrow.INT32:
		return "integer"
	case arrow.FLOAT64:
		return "double"
	case arrow.BOOL:
		return "boolean"
	case arrow.DATE32:
		return "date"
	case arrow.TIMESTAMP:
		return "timestamp"
	case arrow.TIME64:
		return "time"
	case arrow.INTERVAL_MONTH_DAY_NANO:
		return "interval"
	}
	return t.String()
}

var (
	byName = map[string]*Func{}
	all    []*Func
)

func register(fs ...*Func) {
	for _, f := range fs {
		for _, n := range append([]string{f.Name}, f.Aliases...) {
			if _, dup := byName[n]; dup {
				panic("functions: " + n + " registered twice")
			}
			byName[n] = f
		}
		all = append(all, f)
	}
}

// Lookup finds a function by lower-case name or alias.
func Lookup(name string) (*Func, bool) {
	f, ok := byName[name]
	return f, ok
}

// All returns every function, sorted by name.
func All() []*Func {
	out := append([]*Func(nil), all...)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Unknown is the planning error for a name that is not a function, with a
// suggestion when one name is a single edit away.
func Unknown(name string) error {
	best := ""
	for n := range byName {
		if editDistance(n, name) == 1 && (best == "" || n < best) {
			best = n
		}
	}
	if best != "" {
		return qerr.Planf("unknown function %q (did you mean %s?)", name, best)
	}
	return qerr.Planf("unknown function %q", name)
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := prev[j-1]
			if a[i-1] != b[j-1] {
				c++
			}
			cur[j] = min(c, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
