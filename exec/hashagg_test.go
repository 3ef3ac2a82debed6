package exec_test

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver/exec/exectest"
	"github.com/quiverdb/quiver/physical"
)

var (
	i64   = arrow.PrimitiveTypes.Int64
	i32   = arrow.PrimitiveTypes.Int32
	f64   = arrow.PrimitiveTypes.Float64
	str   = arrow.BinaryTypes.String
	date  = arrow.FixedWidthTypes.Date32
	boolT = arrow.FixedWidthTypes.Boolean
	dec   = &arrow.Decimal128Type{Precision: 10, Scale: 2}
	dec38 = &arrow.Decimal128Type{Precision: 38, Scale: 2}
)

func col(i int, name string, t arrow.DataType) *physical.Column {
	return &physical.Column{Index: i, Name: name, Type: t}
}

func schemaOf(fs ...arrow.Field) *arrow.Schema { return arrow.NewSchema(fs, nil) }

func fld(name string, t arrow.DataType) arrow.Field {
	return arrow.Field{Name: name, Type: t, Nullable: true}
}

// aggInput: k group key (with NULLs), v int64, d decimal, f float, s string,
// dt date, b bool.
var aggSchema = schemaOf(fld("k", str), fld("v", i64), fld("d", dec), fld("f", f64),
	fld("s", str), fld("dt", date), fld("b", boolT), fld("i", i32))

const aggRows = `[
 {"k":"a","v":1,"d":"1.50","f":0.5,"s":"x","dt":"2020-01-02","b":true,"i":1},
 {"k":"a","v":2,"d":"2.25","f":1.5,"s":"y","dt":"2020-01-01","b":false,"i":1},
 {"k":"a","v":null,"d":null,"f":null,"s":null,"dt":null,"b":null,"i":2},
 {"k":"b","v":5,"d":"-1.00","f":2.0,"s":"zz","dt":"2021-06-30","b":true,"i":3},
 {"k":null,"v":7,"d":"0.10","f":4.0,"s":"","dt":"1999-12-31","b":false,"i":3},
 {"k":null,"v":7,"d":"0.10","f":4.0,"s":"q","dt":"1999-12-31","b":false,"i":4},
 {"k":"c","v":null,"d":null,"f":null,"s":null,"dt":null,"b":null,"i":null},
 {"k":"a","v":2,"d":"0.00","f":0.0,"s":"a","dt":"2020-01-03","b":true,"i":1}
]`

func aggs() []physical.AggregateExpr {
	v, d, f, s, dt, b, i := col(1, "v", i64), col(2, "d", dec), col(3, "f", f64), col(4, "s", str), col(5, "dt", date), col(6, "b", boolT), col(7, "i", i32)
	return []physical.AggregateExpr{
		{Func: physical.AggCount, Type: i64, Name: "cnt_star"},
		{Func: physical.AggCount, Arg: v, Type: i64, Name: "cnt_v"},
		{Func: physical.AggSum, Arg: v, Type: i64, Name: "sum_v"},
		{Func: physical.AggSum, Arg: d, Type: dec38, Name: "sum_d"},
		{Func: physical.AggSum, Arg: f, Type: f64, Name: "sum_f"},
		{Func: physical.AggSum, Arg: i, Type: i64, Name: "sum_i"},
		{Func: physical.AggAvg, Arg: d, Type: f64, Name: "avg_d"},
		{Func: physical.AggAvg, Arg: v, Type: f64, Name: "avg_v"},
		{Func: physical.AggMin, Arg: s, Type: str, Name: "min_s"},
		{Func: physical.AggMax, Arg: s, Type: str, Name: "max_s"},
		{Func: physical.AggMin, Arg: dt, Type: date, Name: "min_dt"},
		{Func: physical.AggMax, Arg: d, Type: dec, Name: "max_d"},
		{Func: physical.AggMin, Arg: b, Type: boolT, Name: "min_b"},
		{Func: physical.AggMax, Arg: f, Type: f64, Name: "max_f"},
	}
}

const aggWant = `[
 {"k":"a","cnt_star":4,"cnt_v":3,"sum_v":5,"sum_d":"3.75","sum_f":2.0,"sum_i":5,"avg_d":1.25,"avg_v":1.6666666666666667,"min_s":"a","max_s":"y","min_dt":"2020-01-01","max_d":"2.25","min_b":false,"max_f":1.5},
 {"k":"b","cnt_star":1,"cnt_v":1,"sum_v":5,"sum_d":"-1.00","sum_f":2.0,"sum_i":3,"avg_d":-1.0,"avg_v":5.0,"min_s":"zz","max_s":"zz","min_dt":"2021-06-30","max_d":"-1.00","min_b":true,"max_f":2.0},
 {"k":null,"cnt_star":2,"cnt_v":2,"sum_v":14,"sum_d":"0.20","sum_f":8.0,"sum_i":7,"avg_d":0.1,"avg_v":7.0,"min_s":"","max_s":"q","min_dt":"1999-12-31","max_d":"0.10","min_b":false,"max_f":4.0},
 {"k":"c","cnt_star":1,"cnt_v":0,"sum_v":null,"sum_d":null,"sum_f":null,"sum_i":null,"avg_d":null,"avg_v":null,"min_s":null,"max_s":null,"min_dt":null,"max_d":null,"min_b":null,"max_f":null}
]`

const aggWantNoGroups = `[
 {"cnt_star":8,"cnt_v":6,"sum_v":24,"sum_d":"2.95","sum_f":12.0,"sum_i":15,"avg_d":0.4916666666666667,"avg_v":4.0,"min_s":"","max_s":"zz","min_dt":"1999-12-31","max_d":"2.25","min_b":false,"max_f":4.0}
]`

const aggWantEmpty = `[
 {"cnt_star":0,"cnt_v":0,"sum_v":null,"sum_d":null,"sum_f":null,"sum_i":null,"avg_d":null,"avg_v":null,"min_s":null,"max_s":null,"min_dt":null,"max_d":null,"min_b":null,"max_f":null}
]`

// single builds a Single aggregate; twoPhase builds Partial → Coalesce →
// Final over the same input, which must give the same answer.
func single(groupBy bool) func([]physical.Plan) physical.Plan {
	return func(s []physical.Plan) physical.Plan {
		n := &physical.HashAggregate{Input: s[0], Mode: physical.AggSingle, Aggs: aggs()}
		if groupBy {
			n.GroupBy, n.GroupNames = []physical.Expr{col(0, "k", str)}, []string{"k"}
		}
		return n
	}
}

func twoPhase(groupBy bool, repartition bool) func([]physical.Plan) physical.Plan {
	return func(s []physical.Plan) physical.Plan {
		p := &physical.HashAggregate{Input: s[0], Mode: physical.AggPartial, Aggs: aggs()}
		f := &physical.HashAggregate{Mode: physical.AggFinal, Aggs: aggs()}
		if groupBy {
			p.GroupBy, p.GroupNames = []physical.Expr{col(0, "k", str)}, []string{"k"}
			f.GroupBy, f.GroupNames = []physical.Expr{col(0, "k", str)}, []string{"k"}
		}
		if repartition && groupBy {
			f.Input = &physical.Repartition{Input: p, Keys: []physical.Expr{col(0, "k", str)}, N: 3}
		} else {
			f.Input = &physical.Coalesce{Input: p}
		}
		return f
	}
}

func TestHashAggregate(t *testing.T) {
	in := func(parts int) []exectest.Input {
		return []exectest.Input{{Name: "t", Schema: aggSchema, Rows: aggRows, Partitions: parts}}
	}
	empty := []exectest.Input{{Name: "t", Schema: aggSchema, Rows: `[]`, Partitions: 2}}
	empty1 := []exectest.Input{{Name: "t", Schema: aggSchema, Rows: `[]`, Partitions: 1}}
	for _, c := range []exectest.Case{
		{Name: "single-groups", Inputs: in(1), Plan: single(true), Want: aggWant},
		{Name: "single-nogroups", Inputs: in(1), Plan: single(false), Want: aggWantNoGroups},
		{Name: "single-empty-nogroups", Inputs: empty1, Plan: single(false), Want: aggWantEmpty},
		{Name: "single-empty-groups", Inputs: empty1, Plan: single(true), Want: `[]`},
		{Name: "twophase-groups", Inputs: in(3), Plan: twoPhase(true, false), Want: aggWant},
		{Name: "twophase-groups-repartition", Inputs: in(3), Plan: twoPhase(true, true), Want: aggWant, Async: true},
		{Name: "twophase-nogroups", Inputs: in(3), Plan: twoPhase(false, false), Want: aggWantNoGroups},
		{Name: "twophase-empty-nogroups", Inputs: empty, Plan: twoPhase(false, false), Want: aggWantEmpty},
		{Name: "twophase-empty-groups", Inputs: empty, Plan: twoPhase(true, false), Want: `[]`},
	} {
		exectest.Run(t, c)
	}
}

func TestHashAggregateDistinctAndMultiKey(t *testing.T) {
	sc := schemaOf(fld("a", i32), fld("b", date), fld("v", i64), fld("d", dec))
	rows := `[
	 {"a":1,"b":"2020-01-01","v":1,"d":"1.00"},
	 {"a":1,"b":"2020-01-01","v":1,"d":"1.00"},
	 {"a":1,"b":"2020-01-01","v":2,"d":"2.00"},
	 {"a":1,"b":"2020-01-02","v":null,"d":null},
	 {"a":null,"b":"2020-01-01","v":3,"d":"3.00"},
	 {"a":null,"b":"2020-01-01","v":3,"d":"3.00"},
	 {"a":2,"b":null,"v":4,"d":"1.00"}
	]`
	plan := func(s []physical.Plan) physical.Plan {
		v, d := col(2, "v", i64), col(3, "d", dec)
		return &physical.HashAggregate{Input: s[0], Mode: physical.AggSingle,
			GroupBy: []physical.Expr{col(0, "a", i32), col(1, "b", date)}, GroupNames: []string{"a", "b"},
			Aggs: []physical.AggregateExpr{
				{Func: physical.AggCount, Arg: v, Distinct: true, Type: i64, Name: "cd"},
				{Func: physical.AggSum, Arg: d, Distinct: true, Type: dec38, Name: "sd"},
				{Func: physical.AggAvg, Arg: v, Distinct: true, Type: f64, Name: "ad"},
				{Func: physical.AggCount, Arg: v, Type: i64, Name: "c"},
			}}
	}
	exectest.Run(t, exectest.Case{Name: "distinct", Plan: plan,
		Inputs: []exectest.Input{{Name: "t", Schema: sc, Rows: rows, Partitions: 1}},
		Want: `[
		 {"a":1,"b":"2020-01-01","cd":2,"sd":"3.00","ad":1.5,"c":3},
		 {"a":1,"b":"2020-01-02","cd":0,"sd":null,"ad":null,"c":0},
		 {"a":null,"b":"2020-01-01","cd":1,"sd":"3.00","ad":3.0,"c":2},
		 {"a":2,"b":null,"cd":1,"sd":"1.00","ad":4.0,"c":1}
		]`})
}

// DISTINCT by sets: Partial per partition passes each group's set of
// values (rows of one pair spread over partitions), Final unites them;
// with groups, without, and with a date argument.
func TestHashAggregateDistinctBySets(t *testing.T) {
	sc := schemaOf(fld("a", i32), fld("b", date), fld("v", i64))
	rows := `[
	 {"a":1,"b":"2020-01-01","v":1}, {"a":1,"b":"2020-01-01","v":1}, {"a":1,"b":"2020-01-01","v":2},
	 {"a":1,"b":"2020-01-02","v":null}, {"a":null,"b":"2020-01-01","v":3}, {"a":null,"b":"2020-01-01","v":3},
	 {"a":2,"b":null,"v":4}, {"a":1,"b":"2020-01-03","v":2}, {"a":1,"b":"2020-01-01","v":-5},
	 {"a":2,"b":"2020-01-01","v":4}, {"a":2,"b":"2020-01-01","v":1}, {"a":1,"b":"2020-01-01","v":2}
	]`
	aggs := func() []physical.AggregateExpr {
		v, b := col(2, "v", i64), col(1, "b", date)
		return []physical.AggregateExpr{
			{Func: physical.AggCount, Arg: v, Distinct: true, SetState: true, Type: i64, Name: "cd"},
			{Func: physical.AggSum, Arg: v, Distinct: true, SetState: true, Type: i64, Name: "sd"},
			{Func: physical.AggCount, Arg: b, Distinct: true, SetState: true, Type: i64, Name: "db"},
			{Func: physical.AggAvg, Arg: v, Distinct: true, SetState: true, Type: f64, Name: "ad"},
			{Func: physical.AggCount, Arg: v, Type: i64, Name: "c"},
		}
	}
	twoPhase := func(groups bool) func(s []physical.Plan) physical.Plan {
		return func(s []physical.Plan) physical.Plan {
			var gb, fg []physical.Expr
			var names []string
			if groups {
				gb, fg, names = []physical.Expr{col(0, "a", i32)}, []physical.Expr{col(0, "a", i32)}, []string{"a"}
			}
			partial := &physical.HashAggregate{Input: s[0], Mode: physical.AggPartial, GroupBy: gb, GroupNames: names, Aggs: aggs()}
			var mid physical.Plan = &physical.Coalesce{Input: partial}
			if groups {
				mid = &physical.Repartition{Input: partial, Keys: fg, N: 2}
			}
			return &physical.HashAggregate{Input: mid, Mode: physical.AggFinal, GroupBy: fg, GroupNames: names, Aggs: aggs()}
		}
	}
	in := []exectest.Input{{Name: "t", Schema: sc, Rows: rows, Partitions: 3}}
	exectest.Run(t, exectest.Case{Name: "groups", Plan: twoPhase(true), Inputs: in, Async: true,
		Want: `[
		 {"a":1,"cd":3,"sd":-2,"db":3,"ad":-0.6666666666666666,"c":6},
		 {"a":null,"cd":1,"sd":3,"db":1,"ad":3.0,"c":2},
		 {"a":2,"cd":2,"sd":5,"db":1,"ad":2.5,"c":3}
		]`})
	exectest.Run(t, exectest.Case{Name: "nogroups", Plan: twoPhase(false), Inputs: in,
		Want: `[{"cd":5,"sd":5,"db":3,"ad":1.0,"c":11}]`})
	empty := []exectest.Input{{Name: "t", Schema: sc, Rows: `[]`, Partitions: 2}}
	exectest.Run(t, exectest.Case{Name: "empty-nogroups", Plan: twoPhase(false), Inputs: empty,
		Want: `[{"cd":0,"sd":null,"db":0,"ad":null,"c":0}]`})
}
