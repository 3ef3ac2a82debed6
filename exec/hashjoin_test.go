package exec_test

import (
	"fmt"
	"testing"

	"github.com/quiverdb/quiver/exec"
	"github.com/quiverdb/quiver/exec/exectest"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
)

var (
	leftSchema  = schemaOf(fld("lk", i64), fld("lv", str))
	rightSchema = schemaOf(fld("rk", i64), fld("rv", i32), fld("ok", boolT))
)

const (
	leftRows = `[{"lk":1,"lv":"a"},{"lk":2,"lv":"b"},{"lk":2,"lv":"b2"},{"lk":3,"lv":"c"},
	 {"lk":null,"lv":"n"},{"lk":5,"lv":"e"}]`
	rightRows = `[{"rk":2,"rv":20,"ok":true},{"rk":2,"rv":21,"ok":false},{"rk":3,"rv":30,"ok":null},
	 {"rk":4,"rv":40,"ok":true},{"rk":null,"rv":99,"ok":true},{"rk":1,"rv":10,"ok":true}]`
	rightNoNull = `[{"rk":2,"rv":20,"ok":true},{"rk":3,"rv":30,"ok":null},{"rk":1,"rv":10,"ok":true}]`
)

type joinCase struct {
	name      string
	typ       physical.JoinType
	right     string
	filter    bool
	nullAware bool
	want      string
}

func TestHashJoin(t *testing.T) {
	cases := []joinCase{
		{"inner", physical.InnerJoin, rightRows, false, false, `[
		 {"lk":1,"lv":"a","rk":1,"rv":10,"ok":true},{"lk":2,"lv":"b","rk":2,"rv":20,"ok":true},
		 {"lk":2,"lv":"b","rk":2,"rv":21,"ok":false},{"lk":2,"lv":"b2","rk":2,"rv":20,"ok":true},
		 {"lk":2,"lv":"b2","rk":2,"rv":21,"ok":false},{"lk":3,"lv":"c","rk":3,"rv":30,"ok":null}]`},
		{"left", physical.LeftJoin, rightRows, false, false, `[
		 {"lk":1,"lv":"a","rk":1,"rv":10,"ok":true},{"lk":2,"lv":"b","rk":2,"rv":20,"ok":true},
		 {"lk":2,"lv":"b","rk":2,"rv":21,"ok":false},{"lk":2,"lv":"b2","rk":2,"rv":20,"ok":true},
		 {"lk":2,"lv":"b2","rk":2,"rv":21,"ok":false},{"lk":3,"lv":"c","rk":3,"rv":30,"ok":null},
		 {"lk":null,"lv":"n","rk":null,"rv":null,"ok":null},{"lk":5,"lv":"e","rk":null,"rv":null,"ok":null}]`},
		{"right", physical.RightJoin, rightRows, false, false, `[
		 {"lk":1,"lv":"a","rk":1,"rv":10,"ok":true},{"lk":2,"lv":"b","rk":2,"rv":20,"ok":true},
		 {"lk":2,"lv":"b","rk":2,"rv":21,"ok":false},{"lk":2,"lv":"b2","rk":2,"rv":20,"ok":true},
		 {"lk":2,"lv":"b2","rk":2,"rv":21,"ok":false},{"lk":3,"lv":"c","rk":3,"rv":30,"ok":null},
		 {"lk":null,"lv":null,"rk":4,"rv":40,"ok":true},{"lk":null,"lv":null,"rk":null,"rv":99,"ok":true}]`},
		{"full", physical.FullJoin, rightRows, false, false, `[
		 {"lk":1,"lv":"a","rk":1,"rv":10,"ok":true},{"lk":2,"lv":"b","rk":2,"rv":20,"ok":true},
		 {"lk":2,"lv":"b","rk":2,"rv":21,"ok":false},{"lk":2,"lv":"b2","rk":2,"rv":20,"ok":true},
		 {"lk":2,"lv":"b2","rk":2,"rv":21,"ok":false},{"lk":3,"lv":"c","rk":3,"rv":30,"ok":null},
		 {"lk":null,"lv":"n","rk":null,"rv":null,"ok":null},{"lk":5,"lv":"e","rk":null,"rv":null,"ok":null},
		 {"lk":null,"lv":null,"rk":4,"rv":40,"ok":true},{"lk":null,"lv":null,"rk":null,"rv":99,"ok":true}]`},
		{"semi", physical.SemiJoin, rightRows, false, false,
			`[{"lk":1,"lv":"a"},{"lk":2,"lv":"b"},{"lk":2,"lv":"b2"},{"lk":3,"lv":"c"}]`},
		{"anti", physical.AntiJoin, rightRows, false, false, `[{"lk":null,"lv":"n"},{"lk":5,"lv":"e"}]`},
		{"anti-nullaware-right-null", physical.AntiJoin, rightRows, false, true, `[]`},
		{"anti-nullaware", physical.AntiJoin, rightNoNull, false, true, `[{"lk":5,"lv":"e"}]`},
		{"anti-nullaware-empty", physical.AntiJoin, `[]`, false, true, leftRows},
		{"mark-right-null", physical.MarkJoin, rightRows, false, false, `[
		 {"lk":1,"lv":"a","m":true},{"lk":2,"lv":"b","m":true},{"lk":2,"lv":"b2","m":true},
		 {"lk":3,"lv":"c","m":true},{"lk":null,"lv":"n","m":null},{"lk":5,"lv":"e","m":null}]`},
		{"mark", physical.MarkJoin, rightNoNull, false, false, `[
		 {"lk":1,"lv":"a","m":true},{"lk":2,"lv":"b","m":true},{"lk":2,"lv":"b2","m":true},
		 {"lk":3,"lv":"c","m":true},{"lk":null,"lv":"n","m":null},{"lk":5,"lv":"e","m":false}]`},
		{"mark-empty", physical.MarkJoin, `[]`, false, false, `[
		 {"lk":1,"lv":"a","m":false},{"lk":2,"lv":"b","m":false},{"lk":2,"lv":"b2","m":false},
		 {"lk":3,"lv":"c","m":false},{"lk":null,"lv":"n","m":false},{"lk":5,"lv":"e","m":false}]`},
		{"inner-empty-right", physical.InnerJoin, `[]`, false, false, `[]`},
		{"inner-filter", physical.InnerJoin, rightRows, true, false, `[
		 {"lk":1,"lv":"a","rk":1,"rv":10,"ok":true},{"lk":2,"lv":"b","rk":2,"rv":20,"ok":true},
		 {"lk":2,"lv":"b2","rk":2,"rv":20,"ok":true}]`},
		{"left-filter", physical.LeftJoin, rightRows, true, false, `[
		 {"lk":1,"lv":"a","rk":1,"rv":10,"ok":true},{"lk":2,"lv":"b","rk":2,"rv":20,"ok":true},
		 {"lk":2,"lv":"b2","rk":2,"rv":20,"ok":true},{"lk":3,"lv":"c","rk":null,"rv":null,"ok":null},
		 {"lk":null,"lv":"n","rk":null,"rv":null,"ok":null},{"lk":5,"lv":"e","rk":null,"rv":null,"ok":null}]`},
		{"right-filter", physical.RightJoin, rightRows, true, false, `[
		 {"lk":1,"lv":"a","rk":1,"rv":10,"ok":true},{"lk":2,"lv":"b","rk":2,"rv":20,"ok":true},
		 {"lk":2,"lv":"b2","rk":2,"rv":20,"ok":true},{"lk":null,"lv":null,"rk":2,"rv":21,"ok":false},
		 {"lk":null,"lv":null,"rk":3,"rv":30,"ok":null},{"lk":null,"lv":null,"rk":4,"rv":40,"ok":true},
		 {"lk":null,"lv":null,"rk":null,"rv":99,"ok":true}]`},
		{"semi-filter", physical.SemiJoin, rightRows, true, false, `[{"lk":1,"lv":"a"},{"lk":2,"lv":"b"},{"lk":2,"lv":"b2"}]`},
		{"anti-filter", physical.AntiJoin, rightRows, true, false, `[{"lk":3,"lv":"c"},{"lk":null,"lv":"n"},{"lk":5,"lv":"e"}]`},
		{"mark-filter", physical.MarkJoin, rightNoNull, true, false, `[
		 {"lk":1,"lv":"a","m":true},{"lk":2,"lv":"b","m":true},{"lk":2,"lv":"b2","m":true},
		 {"lk":3,"lv":"c","m":null},{"lk":null,"lv":"n","m":null},{"lk":5,"lv":"e","m":false}]`},
	}
	for _, mode := range []physical.JoinMode{physical.CollectLeft, physical.Partitioned} {
		for _, c := range cases {
			if mode == physical.Partitioned && (c.nullAware || c.typ == physical.MarkJoin) {
				continue // needs CollectLeft (tested to fail below)
			}
			for _, parts := range []int{1, 3} {
				exectest.Run(t, exectest.Case{
					Name:  fmt.Sprintf("%s/%s/parts=%d", mode, c.name, parts),
					Async: parts == 3,
					Inputs: []exectest.Input{
						{Name: "l", Schema: leftSchema, Rows: leftRows, Partitions: 2},
						{Name: "r", Schema: rightSchema, Rows: c.right, Partitions: parts},
					},
					Plan: hashJoinPlan(mode, c, parts),
					Want: c.want,
				})
			}
		}
	}
}

func hashJoinPlan(mode physical.JoinMode, c joinCase, parts int) func([]physical.Plan) physical.Plan {
	return func(s []physical.Plan) physical.Plan {
		l, r := s[0], s[1]
		lk, rk := col(0, "lk", i64), col(0, "rk", i64)
		if mode == physical.Partitioned {
			l = &physical.Repartition{Input: l, Keys: []physical.Expr{lk}, N: parts}
			r = &physical.Repartition{Input: r, Keys: []physical.Expr{rk}, N: parts}
		}
		j := &physical.HashJoin{Left: l, Right: r, Mode: mode, Type: c.typ,
			On: []physical.JoinOn{{Left: lk, Right: rk}}, NullAware: c.nullAware, MarkName: "m"}
		if c.filter {
			j.Filter = col(4, "ok", boolT) // left has 2 columns: right's "ok" is column 4
		}
		return j
	}
}

func TestHashJoinMultiKeyStrings(t *testing.T) {
	ls := schemaOf(fld("a", str), fld("b", dec))
	rs := schemaOf(fld("c", str), fld("d", dec), fld("x", i32))
	plan := func(s []physical.Plan) physical.Plan {
		return &physical.HashJoin{Left: s[0], Right: s[1], Mode: physical.CollectLeft, Type: physical.InnerJoin,
			On: []physical.JoinOn{{Left: col(0, "a", str), Right: col(0, "c", str)}, {Left: col(1, "b", dec), Right: col(1, "d", dec)}}}
	}
	exectest.Run(t, exectest.Case{Name: "multikey", Plan: plan,
		Inputs: []exectest.Input{
			{Name: "l", Schema: ls, Partitions: 1, Rows: `[{"a":"x","b":"1.00"},{"a":"x","b":"2.00"},{"a":"","b":"1.00"},{"a":null,"b":"1.00"},{"a":"long string value over 8","b":"3.50"}]`},
			{Name: "r", Schema: rs, Partitions: 2, Rows: `[{"c":"x","d":"1.00","x":1},{"c":"x","d":"3.00","x":2},{"c":"","d":"1.00","x":3},{"c":null,"d":"1.00","x":4},{"c":"long string value over 8","d":"3.50","x":5},{"c":"long string value over 9","d":"3.50","x":6}]`},
		},
		Want: `[{"a":"x","b":"1.00","c":"x","d":"1.00","x":1},{"a":"","b":"1.00","c":"","d":"1.00","x":3},
		 {"a":"long string value over 8","b":"3.50","c":"long string value over 8","d":"3.50","x":5}]`})
}

func TestHashJoinPartitionedNullAwareUnsupported(t *testing.T) {
	mem := exectest.Allocator(t)
	l := exectest.MemoryScan("l", leftSchema, 1)
	r := exectest.MemoryScan("r", rightSchema, 1)
	j := &physical.HashJoin{Left: l, Right: r, Mode: physical.Partitioned, Type: physical.AntiJoin, NullAware: true,
		On: []physical.JoinOn{{Left: col(0, "lk", i64), Right: col(0, "rk", i64)}}}
	tc := exec.NewTaskContext(mem, 0)
	op, err := exec.Build(tc, j, 0)
	if err == nil {
		op.Close()
		t.Fatal("partitioned null-aware anti join: want an error")
	}
	if qerr.KindOf(err) != qerr.KindOf(qerr.NotImplementedf("x")) {
		t.Fatalf("want a NotImplemented error, got %v", err)
	}
}

// TestHashJoinRightSemiAnti runs RightSemi and RightAnti joins that build
// on "r" and probe with "l": each must give exactly the rows of the
// SemiJoin or AntiJoin case that builds on "l" and probes with "r", NULL
// keys, a filter and NOT IN's null-awareness included.
func TestHashJoinRightSemiAnti(t *testing.T) {
	semi := `[{"lk":1,"lv":"a"},{"lk":2,"lv":"b"},{"lk":2,"lv":"b2"},{"lk":3,"lv":"c"}]`
	cases := []joinCase{
		{"semi", physical.RightSemiJoin, rightRows, false, false, semi},
		{"semi-empty", physical.RightSemiJoin, `[]`, false, false, `[]`},
		{"anti", physical.RightAntiJoin, rightRows, false, false, `[{"lk":null,"lv":"n"},{"lk":5,"lv":"e"}]`},
		{"anti-empty", physical.RightAntiJoin, `[]`, false, false, leftRows},
		{"anti-nullaware-build-null", physical.RightAntiJoin, rightRows, false, true, `[]`},
		{"anti-nullaware", physical.RightAntiJoin, rightNoNull, false, true, `[{"lk":5,"lv":"e"}]`},
		{"anti-nullaware-empty", physical.RightAntiJoin, `[]`, false, true, leftRows},
		{"semi-filter", physical.RightSemiJoin, rightRows, true, false, `[{"lk":1,"lv":"a"},{"lk":2,"lv":"b"},{"lk":2,"lv":"b2"}]`},
		{"anti-filter", physical.RightAntiJoin, rightRows, true, false, `[{"lk":3,"lv":"c"},{"lk":null,"lv":"n"},{"lk":5,"lv":"e"}]`},
	}
	for _, mode := range []physical.JoinMode{physical.CollectLeft, physical.Partitioned} {
		for _, c := range cases {
			if mode == physical.Partitioned && c.nullAware {
				continue
			}
			for _, parts := range []int{1, 3} {
				exectest.Run(t, exectest.Case{
					Name:  fmt.Sprintf("%s/%s/parts=%d", mode, c.name, parts),
					Async: parts == 3,
					Inputs: []exectest.Input{
						{Name: "l", Schema: leftSchema, Rows: leftRows, Partitions: parts},
						{Name: "r", Schema: rightSchema, Rows: c.right, Partitions: 2},
					},
					Plan: func(s []physical.Plan) physical.Plan {
						build, probe := s[1], s[0]
						bk, pk := col(0, "rk", i64), col(0, "lk", i64)
						if mode == physical.Partitioned {
							build = &physical.Repartition{Input: build, Keys: []physical.Expr{bk}, N: parts}
							probe = &physical.Repartition{Input: probe, Keys: []physical.Expr{pk}, N: parts}
						}
						j := &physical.HashJoin{Left: build, Right: probe, Mode: mode, Type: c.typ,
							On: []physical.JoinOn{{Left: bk, Right: pk}}, NullAware: c.nullAware}
						if c.filter {
							j.Filter = col(2, "ok", boolT) // the build side's "ok"
						}
						return j
					},
					Want: c.want,
				})
			}
		}
	}
}
