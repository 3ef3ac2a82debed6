package exec_test

import (
	"testing"

	"github.com/quiverdb/quiver/exec/exectest"
	"github.com/quiverdb/quiver/physical"
)

func TestNestedLoopJoin(t *testing.T) {
	l := `[{"lk":1,"lv":"a"},{"lk":null,"lv":"n"}]`
	r3 := `[{"rk":2,"rv":20,"ok":true},{"rk":3,"rv":30,"ok":null},{"rk":4,"rv":40,"ok":false}]`
	r4 := `[{"rk":3,"rv":30,"ok":null},{"rk":4,"rv":40,"ok":false}]`
	r5 := `[{"rk":4,"rv":40,"ok":false}]`
	cases := []struct {
		name   string
		typ    physical.JoinType
		left   string
		right  string
		filter bool
		want   string
	}{
		{"cross", physical.InnerJoin, l, r5, false, `[{"lk":1,"lv":"a","rk":4,"rv":40,"ok":false},{"lk":null,"lv":"n","rk":4,"rv":40,"ok":false}]`},
		{"cross-3", physical.InnerJoin, l, r3, false, `[
		 {"lk":1,"lv":"a","rk":2,"rv":20,"ok":true},{"lk":1,"lv":"a","rk":3,"rv":30,"ok":null},{"lk":1,"lv":"a","rk":4,"rv":40,"ok":false},
		 {"lk":null,"lv":"n","rk":2,"rv":20,"ok":true},{"lk":null,"lv":"n","rk":3,"rv":30,"ok":null},{"lk":null,"lv":"n","rk":4,"rv":40,"ok":false}]`},
		{"inner", physical.InnerJoin, l, r3, true, `[{"lk":1,"lv":"a","rk":2,"rv":20,"ok":true},{"lk":null,"lv":"n","rk":2,"rv":20,"ok":true}]`},
		{"left", physical.LeftJoin, l, r4, true, `[{"lk":1,"lv":"a","rk":null,"rv":null,"ok":null},{"lk":null,"lv":"n","rk":null,"rv":null,"ok":null}]`},
		{"right", physical.RightJoin, l, r3, true, `[{"lk":1,"lv":"a","rk":2,"rv":20,"ok":true},{"lk":null,"lv":"n","rk":2,"rv":20,"ok":true},
		 {"lk":null,"lv":null,"rk":3,"rv":30,"ok":null},{"lk":null,"lv":null,"rk":4,"rv":40,"ok":false}]`},
		{"full-empty-left", physical.FullJoin, `[]`, r5, true, `[{"lk":null,"lv":null,"rk":4,"rv":40,"ok":false}]`},
		{"semi", physical.SemiJoin, l, r3, true, l},
		{"anti", physical.AntiJoin, l, r4, true, l},
		{"anti-some", physical.AntiJoin, l, r3, true, `[]`},
		{"mark-null", physical.MarkJoin, l, r4, true, `[{"lk":1,"lv":"a","m":null},{"lk":null,"lv":"n","m":null}]`},
		{"mark-false", physical.MarkJoin, l, r5, true, `[{"lk":1,"lv":"a","m":false},{"lk":null,"lv":"n","m":false}]`},
		{"mark-true", physical.MarkJoin, l, r3, true, `[{"lk":1,"lv":"a","m":true},{"lk":null,"lv":"n","m":true}]`},
		{"mark-empty", physical.MarkJoin, l, `[]`, true, `[{"lk":1,"lv":"a","m":false},{"lk":null,"lv":"n","m":false}]`},
	}
	for _, c := range cases {
		for _, parts := range []int{1, 3} {
			exectest.Run(t, exectest.Case{
				Name:  c.name,
				Async: parts == 3,
				Inputs: []exectest.Input{
					{Name: "l", Schema: leftSchema, Rows: c.left, Partitions: 2},
					{Name: "r", Schema: rightSchema, Rows: c.right, Partitions: parts},
				},
				Plan: func(s []physical.Plan) physical.Plan {
					j := &physical.NestedLoopJoin{Left: s[0], Right: s[1], Type: c.typ, MarkName: "m"}
					if c.filter {
						j.Filter = col(4, "ok", boolT)
					}
					return j
				},
				Want: c.want,
			})
		}
	}
}
