package eval

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"regexp"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver/physical"
)

// A tiny, obviously-correct row-at-a-time reference evaluator over Go
// values, for the differential test. It supports the grammar genInt /
// genBool produce: Int64 columns a and b, Utf8 column s, Boolean column c.

var errRef = errors.New("reference error")

func refEval(e physical.Expr, row []any) (any, error) {
	switch e := e.(type) {
	case *physical.Column:
		return row[e.Index], nil
	case *physical.Literal:
		return e.Value, nil
	case *physical.Negative:
		v, err := refEval(e.Expr, row)
		if err != nil || v == nil {
			return nil, err
		}
		return -v.(int64), nil
	case *physical.Not:
		v, err := refEval(e.Expr, row)
		if err != nil || v == nil {
			return nil, err
		}
		return !v.(bool), nil
	case *physical.IsNull:
		v, err := refEval(e.Expr, row)
		if err != nil {
			return nil, err
		}
		return (v == nil) != e.Negated, nil
	case *physical.Binary:
		l, err := refEval(e.Left, row)
		if err != nil {
			return nil, err
		}
		r, err := refEval(e.Right, row)
		if err != nil {
			return nil, err
		}
		switch e.Op {
		case physical.OpAnd:
			if l == false || r == false {
				return false, nil
			}
			if l == nil || r == nil {
				return nil, nil
			}
			return true, nil
		case physical.OpOr:
			if l == true || r == true {
				return true, nil
			}
			if l == nil || r == nil {
				return nil, nil
			}
			return false, nil
		}
		if l == nil || r == nil {
			return nil, nil
		}
		if ls, ok := l.(string); ok {
			rs := r.(string)
			switch e.Op {
			case physical.OpEq:
				return ls == rs, nil
			case physical.OpNotEq:
				return ls != rs, nil
			case physical.OpLt:
				return ls < rs, nil
			case physical.OpLtEq:
				return ls <= rs, nil
			case physical.OpGt:
				return ls > rs, nil
			case physical.OpGtEq:
				return ls >= rs, nil
			case physical.OpConcat:
				return ls + rs, nil
			}
		}
		a, b := l.(int64), r.(int64)
		switch e.Op {
		case physical.OpEq:
			return a == b, nil
		case physical.OpNotEq:
			return a != b, nil
		case physical.OpLt:
			return a < b, nil
		case physical.OpLtEq:
			return a <= b, nil
		case physical.OpGt:
			return a > b, nil
		case physical.OpGtEq:
			return a >= b, nil
		case physical.OpAdd:
			return a + b, nil
		case physical.OpSub:
			return a - b, nil
		case physical.OpMul:
			return a * b, nil
		case physical.OpDiv:
			if b == 0 {
				return nil, errRef
			}
			return a / b, nil
		case physical.OpMod:
			if b == 0 {
				return nil, errRef
			}
			return a % b, nil
		}
	case *physical.Case:
		for _, w := range e.Whens {
			c, err := refEval(w.Cond, row)
			if err != nil {
				return nil, err
			}
			if c == true {
				return refEval(w.Then, row)
			}
		}
		if e.Else == nil {
			return nil, nil
		}
		return refEval(e.Else, row)
	case *physical.InList:
		v, err := refEval(e.Expr, row)
		if err != nil {
			return nil, err
		}
		// Every item is evaluated (no short-circuit), as the vectorised
		// OR chain does for non-constant lists.
		items := make([]any, len(e.List))
		for i, it := range e.List {
			if items[i], err = refEval(it, row); err != nil {
				return nil, err
			}
		}
		sawNull := v == nil
		for _, x := range items {
			if x == nil {
				sawNull = true
			} else if v != nil && x == v {
				return !e.Negated, nil
			}
		}
		if sawNull {
			return nil, nil
		}
		return e.Negated, nil
	case *physical.Like:
		v, err := refEval(e.Expr, row)
		if err != nil {
			return nil, err
		}
		p, err := refEval(e.Pattern, row)
		if err != nil || v == nil || p == nil {
			return nil, err
		}
		return refLike(v.(string), p.(string)) != e.Negated, nil
	case *physical.ScalarFunc:
		if e.Name == "coalesce" {
			// lazy, as in PostgreSQL: stop at the first non-NULL argument
			for _, a := range e.Args {
				v, err := refEval(a, row)
				if err != nil || v != nil {
					return v, err
				}
			}
			return nil, nil
		}
		args := make([]any, len(e.Args))
		for i, a := range e.Args {
			v, err := refEval(a, row)
			if err != nil {
				return nil, err
			}
			args[i] = v
		}
		switch e.Name {
		case "coalesce":
			for _, a := range args {
				if a != nil {
					return a, nil
				}
			}
			return nil, nil // (lazy: handled before the arguments are evaluated)
		case "abs":
			if args[0] == nil {
				return nil, nil
			}
			if x := args[0].(int64); x < 0 {
				return -x, nil
			}
			return args[0], nil
		case "upper":
			if args[0] == nil {
				return nil, nil
			}
			return strings.ToUpper(args[0].(string)), nil
		case "length":
			if args[0] == nil {
				return nil, nil
			}
			return int64(len([]rune(args[0].(string)))), nil
		case "nullif":
			if args[0] != nil && args[1] != nil && args[0] == args[1] {
				return nil, nil
			}
			return args[0], nil
		}
	}
	panic(fmt.Sprintf("reference: unsupported %T %s", e, e))
}

// refLike translates the pattern to an anchored regexp (slow, obviously right).
func refLike(s, p string) bool {
	var b strings.Builder
	b.WriteString("^(?s:")
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case c == '\\' && i+1 < len(p):
			i++
			b.WriteString(regexp.QuoteMeta(p[i : i+1]))
		case c == '%':
			b.WriteString(".*")
		case c == '_':
			b.WriteString(".")
		default:
			b.WriteString(regexp.QuoteMeta(p[i : i+1]))
		}
	}
	b.WriteString(")$")
	return regexp.MustCompile(b.String()).MatchString(s)
}

// The random expression grammar.
type gen struct {
	r *rand.Rand
}

var (
	ga = col(0, "a", tI64)
	gb = col(1, "b", tI64)
	gs = col(2, "s", tStr)
	gc = col(3, "c", tBool)
)

func (g *gen) intLit() physical.Expr {
	if g.r.Intn(8) == 0 {
		return lit(tI64, nil)
	}
	return lit(tI64, int64(g.r.Intn(11)-5))
}

func (g *gen) genInt(depth int) physical.Expr {
	if depth <= 0 {
		switch g.r.Intn(3) {
		case 0:
			return ga
		case 1:
			return gb
		}
		return g.intLit()
	}
	d := depth - 1
	switch g.r.Intn(9) {
	case 0, 1:
		ops := []physical.BinaryOp{physical.OpAdd, physical.OpSub, physical.OpMul, physical.OpDiv, physical.OpMod}
		return bin(ops[g.r.Intn(len(ops))], g.genInt(d), g.genInt(d), tI64)
	case 2:
		return &physical.Negative{Expr: g.genInt(d)}
	case 3:
		w := []physical.When{{Cond: g.genBool(d), Then: g.genInt(d)}}
		if g.r.Intn(2) == 0 {
			w = append(w, physical.When{Cond: g.genBool(d), Then: g.genInt(d)})
		}
		var els physical.Expr
		if g.r.Intn(3) > 0 {
			els = g.genInt(d)
		}
		return &physical.Case{Whens: w, Else: els, Type: tI64}
	case 4:
		return fn("coalesce", tI64, g.genInt(d), g.genInt(d))
	case 5:
		return fn("abs", tI64, g.genInt(d))
	case 6:
		return fn("nullif", tI64, g.genInt(d), g.genInt(d))
	case 7:
		return fn("length", tI64, g.genStr(d))
	}
	return g.genInt(0)
}

func (g *gen) genStr(depth int) physical.Expr {
	switch g.r.Intn(4) {
	case 0:
		if depth > 0 {
			return fn("upper", tStr, g.genStr(depth-1))
		}
	case 1:
		if depth > 0 {
			return bin(physical.OpConcat, g.genStr(depth-1), lit(tStr, "x"), tStr)
		}
	case 2:
		return lit(tStr, []string{"ab", "", "b%"}[g.r.Intn(3)])
	}
	return gs
}

var likePatterns = []string{"%", "a%", "%b", "%a%", "_b%", "a_", "%a%b%", "", `\%%`, "ab", "%é%"}

func (g *gen) genBool(depth int) physical.Expr {
	if depth <= 0 {
		if g.r.Intn(2) == 0 {
			return gc
		}
		return bin(physical.OpLt, ga, g.intLit(), tBool)
	}
	d := depth - 1
	switch g.r.Intn(8) {
	case 0, 1:
		ops := []physical.BinaryOp{physical.OpEq, physical.OpNotEq, physical.OpLt, physical.OpLtEq, physical.OpGt, physical.OpGtEq}
		return bin(ops[g.r.Intn(len(ops))], g.genInt(d), g.genInt(d), tBool)
	case 2:
		return bin(physical.OpAnd, g.genBool(d), g.genBool(d), tBool)
	case 3:
		return bin(physical.OpOr, g.genBool(d), g.genBool(d), tBool)
	case 4:
		return &physical.Not{Expr: g.genBool(d)}
	case 5:
		return &physical.IsNull{Expr: g.genInt(d), Negated: g.r.Intn(2) == 0}
	case 6:
		list := []physical.Expr{g.intLit(), g.intLit()}
		if g.r.Intn(3) == 0 {
			list = append(list, g.genInt(d))
		}
		return &physical.InList{Expr: g.genInt(d), List: list, Negated: g.r.Intn(2) == 0}
	case 7:
		var pat physical.Expr = lit(tStr, likePatterns[g.r.Intn(len(likePatterns))])
		if g.r.Intn(4) == 0 {
			pat = g.genStr(d)
		}
		return &physical.Like{Expr: g.genStr(d), Pattern: pat, Negated: g.r.Intn(2) == 0}
	}
	return g.genBool(0)
}

var genSchema = arrow.NewSchema([]arrow.Field{
	{Name: "a", Type: tI64, Nullable: true},
	{Name: "b", Type: tI64, Nullable: true},
	{Name: "s", Type: tStr, Nullable: true},
	{Name: "c", Type: tBool, Nullable: true},
}, nil)

func (g *gen) batch(mem memory.Allocator) (arrow.RecordBatch, [][]any) {
	n := g.r.Intn(20)
	rows := make([][]any, n)
	strs := []string{"", "a", "ab", "ba", "abc", "%x", "é", "aéb"}
	cols := make([][]any, 4)
	for i := range rows {
		row := make([]any, 4)
		if g.r.Intn(5) > 0 {
			row[0] = int64(g.r.Intn(11) - 5)
		}
		if g.r.Intn(5) > 0 {
			row[1] = int64(g.r.Intn(11) - 5)
		}
		if g.r.Intn(5) > 0 {
			row[2] = strs[g.r.Intn(len(strs))]
		}
		if g.r.Intn(5) > 0 {
			row[3] = g.r.Intn(2) == 0
		}
		rows[i] = row
		for k := range cols {
			cols[k] = append(cols[k], row[k])
		}
	}
	arrs := make([]arrow.Array, 4)
	for k := range arrs {
		arrs[k] = buildArray(mem, genSchema.Field(k).Type, cols[k])
	}
	rec := array.NewRecordBatch(genSchema, arrs, int64(n))
	for _, a := range arrs {
		a.Release()
	}
	return rec, rows
}

// checkSeed generates one expression and batch from seed and compares the
// vectorised result with the reference, row by row; both must agree on
// whether evaluation fails.
func checkSeed(t *testing.T, mem memory.Allocator, seed int64) {
	g := &gen{r: rand.New(rand.NewSource(seed))}
	var e physical.Expr
	if g.r.Intn(2) == 0 {
		e = g.genInt(3)
	} else {
		e = g.genBool(3)
	}
	rec, rows := g.batch(mem)
	defer func() { rec.Release() }()
	// Slice off a row now and then to exercise offsets.
	if rec.NumRows() > 2 && g.r.Intn(3) == 0 {
		sl := rec.NewSlice(1, rec.NumRows())
		rec.Release()
		rec, rows = sl, rows[1:]
	}
	ev, err := Compile(e)
	if err != nil {
		t.Fatalf("seed %d: compile %s: %v", seed, e, err)
	}
	out, verr := ev.Eval(context.Background(), mem, rec)
	want := make([]any, len(rows))
	var rerr error
	for i, row := range rows {
		if want[i], rerr = refEval(e, row); rerr != nil {
			break
		}
	}
	if (verr != nil) != (rerr != nil) {
		if out != nil {
			out.Release()
		}
		t.Fatalf("seed %d: %s: vectorised error %v, reference error %v", seed, e, verr, rerr)
	}
	if verr != nil {
		return
	}
	defer out.Release()
	for i := range rows {
		if got := rowValue(out, i); got != want[i] {
			t.Fatalf("seed %d: %s row %d %v: got %v want %v", seed, e, i, rows[i], got, want[i])
		}
	}
	// A predicate's selection agrees with its values.
	if e.DataType().ID() == arrow.BOOL {
		sel, err := ev.EvalSelection(context.Background(), mem, rec, nil)
		if err != nil {
			t.Fatalf("seed %d: selection: %v", seed, err)
		}
		k := 0
		for i := range rows {
			if want[i] == true {
				if k >= len(sel) || sel[k] != int32(i) {
					t.Fatalf("seed %d: %s: selection %v misses row %d", seed, e, sel, i)
				}
				k++
			}
		}
		if k != len(sel) {
			t.Fatalf("seed %d: %s: selection %v has extra rows", seed, e, sel)
		}
	}
}

func TestDifferential(t *testing.T) {
	mem := checkedMem(t)
	n := 3000
	if testing.Short() {
		n = 300
	}
	for seed := int64(0); seed < int64(n); seed++ {
		checkSeed(t, mem, seed)
	}
}

func FuzzExpr(f *testing.F) {
	for _, s := range []int64{0, 1, 42, 1234567, -9} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, seed int64) {
		mem := checkedMem(t)
		checkSeed(t, mem, seed)
	})
}
