package exec_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/quiverdb/quiver/exec/exectest"
	"github.com/quiverdb/quiver/physical"
)

// The join fast paths (unique build keys, key-only Semi/Anti/Mark, skipping
// matched build rows, filters over only the columns they reference,
// zero-copy output of contiguous rows) are checked against a row-at-a-time
// reference of the join semantics over random inputs; exectest.Run varies
// batch sizes and input splits.

var (
	refLeftSchema  = schemaOf(fld("lk", i64), fld("lv", str), fld("ln", i32))
	refRightSchema = schemaOf(fld("rk", i64), fld("rv", i32), fld("rs", str))
)

type refRow struct {
	k    *int64
	n    *int32
	text string
}

// refInputs returns random left and right rows. unique: left keys are
// distinct; cover: every right key is a non-NULL left key (so with unique
// left keys every probe row has exactly one match).
func refInputs(r *rand.Rand, unique, cover bool) (left, right []refRow) {
	nl, nr := 1+r.IntN(40), r.IntN(60)
	keys := r.Perm(nl * 2)
	for i := range nl {
		var k int64
		if unique {
			k = int64(keys[i])
		} else {
			k = int64(r.IntN(nl/2 + 1))
		}
		row := refRow{k: &k, text: fmt.Sprintf("l%d", i)}
		if !cover && r.IntN(8) == 0 {
			row.k = nil
		}
		if r.IntN(6) != 0 {
			n := int32(r.IntN(100))
			row.n = &n
		}
		left = append(left, row)
	}
	for i := range nr {
		var row refRow
		if cover {
			row.k = left[r.IntN(nl)].k
		} else if r.IntN(10) != 0 {
			k := int64(r.IntN(nl * 2))
			row.k = &k
		}
		if r.IntN(6) != 0 {
			n := int32(r.IntN(100))
			row.n = &n
		}
		row.text = fmt.Sprintf("r%d", i)
		right = append(right, row)
	}
	return left, right
}

func refJSON(rows []refRow, k, n, s string) string {
	out := make([]map[string]any, len(rows))
	for i, row := range rows {
		m := map[string]any{k: nil, n: nil, s: row.text}
		if row.k != nil {
			m[k] = *row.k
		}
		if row.n != nil {
			m[n] = *row.n
		}
		out[i] = m
	}
	b, _ := json.Marshal(out)
	return string(b)
}

// refJoin is the reference: every (left, right) pair is compared; the
// filter (if any) is `rv > ln`, NULL when either is. nested: no keys.
func refJoin(typ physical.JoinType, left, right []refRow, filter, nested, nullAware bool) string {
	// truth of a pair: 1 TRUE, 0 FALSE, -1 NULL; keyEq false: not a candidate
	pair := func(l, r refRow) (cand bool, t int) {
		if !nested && (l.k == nil || r.k == nil || *l.k != *r.k) {
			return false, 0
		}
		if !filter {
			return true, 1
		}
		if l.n == nil || r.n == nil {
			return true, -1
		}
		if *r.n > *l.n {
			return true, 1
		}
		return true, 0
	}
	var out []map[string]any
	lm := func(l refRow, m map[string]any) map[string]any {
		m["lk"], m["lv"], m["ln"] = nil, l.text, nil
		if l.k != nil {
			m["lk"] = *l.k
		}
		if l.n != nil {
			m["ln"] = *l.n
		}
		return m
	}
	rm := func(r refRow, m map[string]any) map[string]any {
		m["rk"], m["rv"], m["rs"] = nil, nil, r.text
		if r.k != nil {
			m["rk"] = *r.k
		}
		if r.n != nil {
			m["rv"] = *r.n
		}
		return m
	}
	nullRight := func(m map[string]any) map[string]any {
		m["rk"], m["rv"], m["rs"] = nil, nil, nil
		return m
	}
	nullLeft := func(m map[string]any) map[string]any {
		m["lk"], m["lv"], m["ln"] = nil, nil, nil
		return m
	}
	rightNullKey := false
	for _, r := range right {
		rightNullKey = rightNullKey || r.k == nil
	}
	rMatched := make([]bool, len(right))
	for _, l := range left {
		matched, nullPair := false, false
		for ri, r := range right {
			cand, t := pair(l, r)
			if !cand {
				continue
			}
			if t == -1 {
				nullPair = true
			}
			if t != 1 {
				continue
			}
			matched = true
			rMatched[ri] = true
			switch typ {
			case physical.InnerJoin, physical.LeftJoin, physical.RightJoin, physical.FullJoin:
				out = append(out, rm(r, lm(l, map[string]any{})))
			}
		}
		mark := any(false)
		switch {
		case matched:
			mark = true
		case len(right) == 0:
		case nullPair:
			mark = nil
		case nested:
		case rightNullKey || l.k == nil:
			mark = nil
		}
		switch typ {
		case physical.LeftJoin, physical.FullJoin:
			if !matched {
				out = append(out, nullRight(lm(l, map[string]any{})))
			}
		case physical.SemiJoin:
			if matched {
				out = append(out, lm(l, map[string]any{}))
			}
		case physical.AntiJoin:
			if !matched && (!nullAware || mark == false) {
				out = append(out, lm(l, map[string]any{}))
			}
		case physical.MarkJoin:
			out = append(out, lm(l, map[string]any{"m": mark}))
		}
	}
	if typ == physical.RightJoin || typ == physical.FullJoin {
		for ri, r := range right {
			if !rMatched[ri] {
				out = append(out, rm(r, nullLeft(map[string]any{})))
			}
		}
	}
	if out == nil {
		return "[]"
	}
	b, _ := json.Marshal(out)
	return string(b)
}

func refFilter() physical.Expr {
	// left has 3 columns: rv is column 4, ln column 2
	return &physical.Binary{Op: physical.OpGt, Left: col(4, "rv", i32), Right: col(2, "ln", i32), Type: boolT}
}

func TestHashJoinAgainstReference(t *testing.T) {
	types := []physical.JoinType{physical.InnerJoin, physical.LeftJoin, physical.RightJoin, physical.FullJoin,
		physical.SemiJoin, physical.AntiJoin, physical.MarkJoin}
	for seed := range 3 {
		for _, shape := range []struct {
			name          string
			unique, cover bool
		}{{"dup", false, false}, {"unique", true, false}, {"unique-cover", true, true}, {"dup-cover", false, true}} {
			r := rand.New(rand.NewPCG(uint64(seed), 7))
			left, right := refInputs(r, shape.unique, shape.cover)
			lj, rj := refJSON(left, "lk", "ln", "lv"), refJSON(right, "rk", "rv", "rs")
			inputs := []exectest.Input{
				{Name: "l", Schema: refLeftSchema, Rows: lj, Partitions: 2},
				{Name: "r", Schema: refRightSchema, Rows: rj, Partitions: 2},
			}
			for _, typ := range types {
				for _, filter := range []bool{false, true} {
					for _, nullAware := range []bool{false, true} {
						if nullAware && typ != physical.AntiJoin {
							continue
						}
						if typ == physical.SemiJoin || (typ == physical.AntiJoin && !(nullAware && filter)) {
							// The same rows from the probe side: build on r, probe with l.
							rtyp := map[physical.JoinType]physical.JoinType{physical.SemiJoin: physical.RightSemiJoin, physical.AntiJoin: physical.RightAntiJoin}[typ]
							exectest.Run(t, exectest.Case{
								Name:   fmt.Sprintf("%s/seed=%d/%s/filter=%v/nullaware=%v", shape.name, seed, rtyp, filter, nullAware),
								Inputs: inputs,
								Plan: func(s []physical.Plan) physical.Plan {
									j := &physical.HashJoin{Left: s[1], Right: s[0], Mode: physical.CollectLeft, Type: rtyp,
										On:        []physical.JoinOn{{Left: col(0, "rk", i64), Right: col(0, "lk", i64)}},
										NullAware: nullAware}
									if filter {
										// r has 3 columns: rv is column 1, ln column 3+2
										j.Filter = &physical.Binary{Op: physical.OpGt, Left: col(1, "rv", i32), Right: col(5, "ln", i32), Type: boolT}
									}
									return j
								},
								Want: refJoin(typ, left, right, filter, false, nullAware),
							})
						}
						exectest.Run(t, exectest.Case{
							Name:   fmt.Sprintf("%s/seed=%d/%s/filter=%v/nullaware=%v", shape.name, seed, typ, filter, nullAware),
							Inputs: inputs,
							Plan: func(s []physical.Plan) physical.Plan {
								j := &physical.HashJoin{Left: s[0], Right: s[1], Mode: physical.CollectLeft, Type: typ,
									On:        []physical.JoinOn{{Left: col(0, "lk", i64), Right: col(0, "rk", i64)}},
									NullAware: nullAware, MarkName: "m"}
								if filter {
									j.Filter = refFilter()
								}
								return j
							},
							Want: refJoin(typ, left, right, filter, false, nullAware),
						})
					}
				}
			}
		}
	}
}

func TestNestedLoopJoinAgainstReference(t *testing.T) {
	types := []physical.JoinType{physical.InnerJoin, physical.LeftJoin, physical.RightJoin, physical.FullJoin,
		physical.SemiJoin, physical.AntiJoin, physical.MarkJoin}
	for seed := range 2 {
		r := rand.New(rand.NewPCG(uint64(seed), 11))
		left, right := refInputs(r, false, false)
		left, right = left[:min(len(left), 12)], right[:min(len(right), 12)]
		lj, rj := refJSON(left, "lk", "ln", "lv"), refJSON(right, "rk", "rv", "rs")
		for _, typ := range types {
			for _, filter := range []bool{false, true} {
				if !filter && typ == physical.MarkJoin {
					continue // a mark join always has a condition
				}
				exectest.Run(t, exectest.Case{
					Name: fmt.Sprintf("seed=%d/%s/filter=%v", seed, typ, filter),
					Inputs: []exectest.Input{
						{Name: "l", Schema: refLeftSchema, Rows: lj, Partitions: 2},
						{Name: "r", Schema: refRightSchema, Rows: rj, Partitions: 3},
					},
					Plan: func(s []physical.Plan) physical.Plan {
						j := &physical.NestedLoopJoin{Left: s[0], Right: s[1], Type: typ, MarkName: "m"}
						if filter {
							j.Filter = refFilter()
						}
						return j
					},
					Want: refJoin(typ, left, right, filter, true, false),
				})
			}
		}
	}
}

// A filter that reads no column evaluates over a batch with no columns.
func TestHashJoinConstantFilter(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	left, right := refInputs(r, false, false)
	lj, rj := refJSON(left, "lk", "ln", "lv"), refJSON(right, "rk", "rv", "rs")
	for _, v := range []bool{false, true} {
		for _, typ := range []physical.JoinType{physical.InnerJoin, physical.SemiJoin, physical.AntiJoin} {
			want := refJoin(typ, left, right, false, false, false)
			if !v {
				want = refJoin(typ, left, nil, false, false, false)
			}
			exectest.Run(t, exectest.Case{
				Name: fmt.Sprintf("%s/%v", typ, v),
				Inputs: []exectest.Input{
					{Name: "l", Schema: refLeftSchema, Rows: lj, Partitions: 1},
					{Name: "r", Schema: refRightSchema, Rows: rj, Partitions: 2},
				},
				Plan: func(s []physical.Plan) physical.Plan {
					return &physical.HashJoin{Left: s[0], Right: s[1], Mode: physical.CollectLeft, Type: typ,
						On:     []physical.JoinOn{{Left: col(0, "lk", i64), Right: col(0, "rk", i64)}},
						Filter: &physical.Literal{Type: boolT, Value: v}}
				},
				Want: want,
			})
		}
	}
}
