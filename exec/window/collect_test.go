package window_test

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver/exec/exectest"
	"github.com/quiverdb/quiver/physical"
)

// array_agg and string_agg over frames: random windows against the
// reference's frames (membership tests), the values collected in window
// order or sorted by the call's own keys; and a hand-computed string_agg.

var i64List = arrow.ListOf(i64)

// collectReference is reference's output for array_agg functions: the
// frame's v values in window order, or ordered by d (desc: NULLs first,
// as PostgreSQL's DESC) then id when the function has ORDER BY keys.
func collectReference(s spec, rows []row) string {
	var out []map[string]any
	for _, r := range rows {
		var p []row
		for _, x := range rows {
			if !s.part || eq(x.g, r.g) {
				p = append(p, x)
			}
		}
		slices.SortStableFunc(p, func(a, b row) int {
			if c := s.cmpO(a.o, b.o); c != 0 || !s.byID {
				return c
			}
			return cmp.Compare(a.id, b.id)
		})
		pos := slices.IndexFunc(p, func(x row) bool { return x.id == r.id })
		group := make([]int, len(p))
		for i := 1; i < len(p); i++ {
			group[i] = group[i-1]
			if !(eq(p[i-1].o, p[i].o) && !s.byID) {
				group[i]++
			}
		}
		m := map[string]any{"id": r.id, "g": r.g, "o": r.o, "v": r.v, "d": nil}
		if r.d != nil {
			m["d"] = centsString(big.NewInt(*r.d))
		}
		for _, f := range s.funcs {
			var frame []row
			for i := range p {
				if inFrame(s, f.Frame, p, group, pos, i) {
					frame = append(frame, p[i])
				}
			}
			if len(f.Order) > 0 {
				slices.SortStableFunc(frame, func(a, b row) int {
					switch {
					case a.d == nil && b.d == nil:
					case a.d == nil:
						return -1
					case b.d == nil:
						return 1
					case *a.d != *b.d:
						return -cmp.Compare(*a.d, *b.d)
					}
					return cmp.Compare(a.id, b.id)
				})
			}
			if len(frame) == 0 {
				m[f.Name] = nil
				continue
			}
			vs := make([]*int64, len(frame))
			for i, x := range frame {
				vs[i] = x.v
			}
			m[f.Name] = vs
		}
		out = append(out, m)
	}
	b, _ := json.Marshal(out)
	return string(b)
}

func TestWindowArrayAggRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	for k := range 25 {
		rows := randomRows(r, 1+r.IntN(40+k*3))
		// A unique window order (or ORDER BY inside) keeps every list
		// deterministic; RANGE and GROUPS frames over o, ROWS over o, id.
		s := spec{part: r.IntN(3) != 0, asc: r.IntN(2) == 0, nullsFirst: r.IntN(2) == 0, byID: true}
		for i := range 3 {
			unit := physical.FrameRows
			ordered := r.IntN(2) == 0
			f := physical.WindowFuncExpr{Func: physical.WinAggregate, Agg: physical.AggArrayAgg, Args: []physical.Expr{col(3)},
				Frame: randomFrame(r, unit), Type: i64List, Name: fmt.Sprintf("f%d", i)}
			if ordered {
				f.Args = append(f.Args, col(4), col(0))
				f.Order = []physical.AggOrder{{Desc: true, NullsFirst: true}, {}}
			}
			s.funcs = append(s.funcs, f)
		}
		t.Logf("case %d: %s", k, describe(s))
		exectest.Run(t, exectest.Case{
			Name:   fmt.Sprintf("arrayagg%d", k),
			Inputs: []exectest.Input{{Name: "t", Schema: schema, Rows: rowsJSON(rows), Partitions: 1 + r.IntN(3)}},
			Plan:   func(sc []physical.Plan) physical.Plan { return plan(sc[0], s.part, s.order(), s.funcs) },
			Want:   collectReference(s, rows),
		})
	}
}

func TestWindowStringAgg(t *testing.T) {
	str := arrow.BinaryTypes.String
	sc := arrow.NewSchema([]arrow.Field{{Name: "id", Type: i64}, {Name: "s", Type: str, Nullable: true}, {Name: "sep", Type: str, Nullable: true}}, nil)
	c := func(i int) physical.Expr {
		return &physical.Column{Index: i, Name: sc.Field(i).Name, Type: sc.Field(i).Type}
	}
	rows := `[
		{"id": 1, "s": "a", "sep": "+"},
		{"id": 2, "s": "b", "sep": "-"},
		{"id": 3, "s": null, "sep": "!"},
		{"id": 4, "s": "c", "sep": null},
		{"id": 5, "s": "d", "sep": "/"}
	]`
	order := []physical.SortKey{{Expr: c(0), Asc: true}}
	frame := physical.WindowFrame{Unit: physical.FrameRows, Start: physical.FrameBound{Kind: physical.Preceding, Offset: 2}, End: physical.FrameBound{Kind: physical.CurrentRow}}
	funcs := []physical.WindowFuncExpr{
		{Func: physical.WinAggregate, Agg: physical.AggStringAgg, Args: []physical.Expr{c(1), c(2)}, Frame: frame, Type: str, Name: "w"},
		{Func: physical.WinAggregate, Agg: physical.AggStringAgg, Args: []physical.Expr{c(1), c(2), c(1)}, Order: []physical.AggOrder{{Desc: true, NullsFirst: true}},
			Frame: unboundedFrame, Type: str, Name: "desc"},
	}
	// Window order: a, a-b, a-b (NULL skipped), b (the NULL separator
	// adds nothing) then c: "bc", c/d. By s DESC over everything: d, c, b,
	// a each after its own separator: d + (c's NULL) c + "-b" + "+a".
	want := `[
		{"id": 1, "s": "a", "sep": "+", "w": "a", "desc": "dc-b+a"},
		{"id": 2, "s": "b", "sep": "-", "w": "a-b", "desc": "dc-b+a"},
		{"id": 3, "s": null, "sep": "!", "w": "a-b", "desc": "dc-b+a"},
		{"id": 4, "s": "c", "sep": null, "w": "bc", "desc": "dc-b+a"},
		{"id": 5, "s": "d", "sep": "/", "w": "c/d", "desc": "dc-b+a"}
	]`
	exectest.Run(t, exectest.Case{
		Name:   "string_agg",
		Inputs: []exectest.Input{{Name: "t", Schema: sc, Rows: rows, Partitions: 2}},
		Plan: func(s []physical.Plan) physical.Plan {
			in := &physical.Sort{Input: s[0], Keys: order, Fetch: -1}
			return &physical.Window{Input: in, OrderBy: order, Funcs: funcs}
		},
		Want: want,
	})
}
