package physical

import (
	"reflect"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

// TestStatsOf: filters and exchanges keep a scan's statistics, plain
// columns keep them through projections and aggregates while computed
// ones lose them, an outer join's padded side may hold NULLs, a union
// widens the bounds, and VALUES bounds its literals.
func TestStatsOf(t *testing.T) {
	i64, str := arrow.PrimitiveTypes.Int64, arrow.BinaryTypes.String
	schema := arrow.NewSchema([]arrow.Field{{Name: "k", Type: i64}, {Name: "s", Type: str}}, nil)
	k := ColumnStats{Bounded: true, Lo: 1, Hi: 9, NoNulls: true, Distinct: 9}
	s := ColumnStats{LongestAtLeast: 12}
	scan := &Scan{Table: "t", Format: FormatParquet, FileSchema: schema, Partitions: [][]string{{"f"}}, Fetch: -1,
		Stats: &PlanStats{Rows: 100, Cols: []ColumnStats{k, s}}}
	colK := &Column{Index: 0, Name: "k", Type: i64}
	colS := &Column{Index: 1, Name: "s", Type: str}
	filter := &Filter{Input: &Repartition{Input: scan, N: 2}, Predicate: &Binary{Op: OpGt, Left: colK, Right: &Literal{Type: i64, Value: int64(3)}, Type: arrow.FixedWidthTypes.Boolean}}
	proj := &Projection{Input: filter, Exprs: []Expr{colS, &Binary{Op: OpAdd, Left: colK, Right: colK, Type: i64}, colK}, Names: []string{"s", "k2", "k"}}
	st := StatsOf(proj)
	narrowed := k
	narrowed.Lo = 4 // k > 3
	if st.Rows != 100 || st.Cols[0] != s || st.Cols[1] != (ColumnStats{}) || st.Cols[2] != narrowed {
		t.Errorf("projection over a filter: %+v", st)
	}
	agg := &HashAggregate{Input: scan, Mode: AggSingle, GroupBy: []Expr{colK}, GroupNames: []string{"k"}}
	if st := StatsOf(agg); st.Cols[0] != k || st.Rows != 100 {
		t.Errorf("aggregate: %+v", st)
	}
	for _, c := range []struct {
		typ        JoinType
		left, rght bool // NoNulls kept
	}{{InnerJoin, true, true}, {LeftJoin, true, false}, {RightJoin, false, true}, {FullJoin, false, false}} {
		j := &HashJoin{Left: scan, Right: scan, Type: c.typ, On: []JoinOn{{Left: colK, Right: colK}}}
		st := StatsOf(j)
		if len(st.Cols) != 4 || !st.Cols[0].Bounded || !st.Cols[2].Bounded || st.Cols[0].NoNulls != c.left || st.Cols[2].NoNulls != c.rght || st.Rows != -1 {
			t.Errorf("%s join: %+v", c.typ, st)
		}
	}
	other := &Scan{Table: "u", Format: FormatParquet, FileSchema: schema, Partitions: [][]string{{"g"}}, Fetch: -1,
		Stats: &PlanStats{Rows: 5, Cols: []ColumnStats{{Bounded: true, Lo: -4, Hi: 2, NoNulls: true, Distinct: 7}, {}}}}
	if st := StatsOf(&Union{Inputs: []Plan{scan, other}}); st.Rows != 105 || st.Cols[0] != (ColumnStats{Bounded: true, Lo: -4, Hi: 9, NoNulls: true, Distinct: 16}) || st.Cols[1] != s {
		t.Errorf("union: %+v", st)
	}
	if st := StatsOf(&Limit{Input: scan, Fetch: 7}); st.Rows != 7 {
		t.Errorf("limit: %+v", st)
	}
	noStats := &Scan{Table: "t", Format: FormatCSV, FileSchema: schema, Partitions: [][]string{{"f"}}, Fetch: -1}
	if st := StatsOf(noStats); st.Rows != -1 || st.Cols[0] != (ColumnStats{}) {
		t.Errorf("scan without statistics: %+v", st)
	}

	lit := func(v any) *Literal { return &Literal{Type: i64, Value: v} }
	slit := func(v string) *Literal { return &Literal{Type: str, Value: v} }
	vals := &Values{OutSchema: schema, Rows: [][]*Literal{{lit(int64(5)), slit("ab")}, {lit(nil), slit("abcdefghij")}, {lit(int64(-2)), slit("")}}}
	st = StatsOf(vals)
	if st.Rows != 3 || st.Cols[0] != (ColumnStats{Bounded: true, Lo: -2, Hi: 5, Distinct: 3}) || st.Cols[1] != (ColumnStats{NoNulls: true, LongestAtLeast: 10, Distinct: 3}) {
		t.Errorf("values: %+v", st)
	}
}

// TestKeyStats: a hash repartition's partitions each hold a share of the
// rows; other inputs the whole bound.
func TestKeyStats(t *testing.T) {
	i64 := arrow.PrimitiveTypes.Int64
	schema := arrow.NewSchema([]arrow.Field{{Name: "k", Type: i64}}, nil)
	k := ColumnStats{Bounded: true, Lo: 1, Hi: 9, NoNulls: true}
	scan := &Scan{Table: "t", Format: FormatParquet, FileSchema: schema, Partitions: [][]string{{"f"}}, Fetch: -1,
		Stats: &PlanStats{Rows: 100, Cols: []ColumnStats{k}}}
	col := &Column{Index: 0, Name: "k", Type: i64}
	for _, c := range []struct {
		in   Plan
		rows int64
	}{{scan, 100}, {&Repartition{Input: scan, N: 3}, 100}, {&Repartition{Input: scan, Keys: []Expr{col}, N: 3}, 34}} {
		cols, rows := KeyStats(c.in, []Expr{col})
		if rows != c.rows || len(cols) != 1 || cols[0] != k {
			t.Errorf("%s: %v %d, want %d rows", c.in, cols, rows, c.rows)
		}
	}
}

// TestFilterNarrows: comparisons of a signed integer column with a
// literal of its type narrow a filter's bounds and rule out NULLs; half a
// range does not bound an unbounded column, and other comparisons change
// nothing.
func TestFilterNarrows(t *testing.T) {
	i64, u64, d32 := arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Uint64, arrow.FixedWidthTypes.Date32
	schema := arrow.NewSchema([]arrow.Field{{Name: "k", Type: i64}, {Name: "u", Type: u64}, {Name: "d", Type: d32}}, nil)
	scan := &Scan{Table: "t", Format: FormatParquet, FileSchema: schema, Partitions: [][]string{{"f"}}, Fetch: -1,
		Stats: &PlanStats{Rows: 100, Cols: []ColumnStats{{Bounded: true, Lo: 1, Hi: 1000}, {Bounded: true, Lo: 0, Hi: 9}, {}}}}
	k := &Column{Index: 0, Name: "k", Type: i64}
	u := &Column{Index: 1, Name: "u", Type: u64}
	d := &Column{Index: 2, Name: "d", Type: d32}
	cmp := func(op BinaryOp, l, r Expr) Expr {
		return &Binary{Op: op, Left: l, Right: r, Type: arrow.FixedWidthTypes.Boolean}
	}
	and := func(a, b Expr) Expr { return cmp(OpAnd, a, b) }
	i := func(v int64) *Literal { return &Literal{Type: i64, Value: v} }
	cases := []struct {
		name string
		pred Expr
		want []ColumnStats
	}{
		{"k > 10 and 500 >= k", and(cmp(OpGt, k, i(10)), cmp(OpGtEq, i(500), k)),
			[]ColumnStats{{Bounded: true, Lo: 11, Hi: 500, NoNulls: true}, {Bounded: true, Hi: 9}, {}}},
		{"k < 0", cmp(OpLt, k, i(0)), []ColumnStats{{Bounded: true, NoNulls: true}, {Bounded: true, Hi: 9}, {}}},
		{"d = date", cmp(OpEq, d, &Literal{Type: d32, Value: arrow.Date32(9000)}),
			[]ColumnStats{{Bounded: true, Lo: 1, Hi: 1000}, {Bounded: true, Hi: 9}, {Bounded: true, Lo: 9000, Hi: 9000, NoNulls: true}}},
		{"d < date", cmp(OpLt, d, &Literal{Type: d32, Value: arrow.Date32(9000)}),
			[]ColumnStats{{Bounded: true, Lo: 1, Hi: 1000}, {Bounded: true, Hi: 9}, {NoNulls: true}}},
		{"unsigned", cmp(OpLt, u, &Literal{Type: u64, Value: uint64(5)}), []ColumnStats{{Bounded: true, Lo: 1, Hi: 1000}, {Bounded: true, Hi: 9}, {}}},
		{"k = k", cmp(OpEq, k, k), []ColumnStats{{Bounded: true, Lo: 1, Hi: 1000}, {Bounded: true, Hi: 9}, {}}},
	}
	for _, c := range cases {
		st := StatsOf(&Filter{Input: scan, Predicate: c.pred})
		for j, w := range c.want {
			if st.Cols[j] != w {
				t.Errorf("%s: column %d %+v, want %+v", c.name, j, st.Cols[j], w)
			}
		}
	}
	if scan.Stats.Cols[0] != (ColumnStats{Bounded: true, Lo: 1, Hi: 1000}) {
		t.Errorf("the scan's statistics changed: %+v", scan.Stats.Cols[0])
	}
}

// TestCacheReaderStats: a cache read's statistics are its files' together;
// empty files add nothing, and one file without statistics leaves the
// columns unknown (the rows stay summed).
func TestCacheReaderStats(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{{Name: "k", Type: arrow.PrimitiveTypes.Int64}, {Name: "s", Type: arrow.BinaryTypes.String}}, nil)
	loc := func(rows int64, st ...ColumnStats) PartitionLocation {
		return PartitionLocation{JobID: "j", Rows: rows, Stats: st}
	}
	a := []ColumnStats{{Bounded: true, Lo: 3, Hi: 9, NoNulls: true, Distinct: 4}, {LongestAtLeast: 5}}
	b := []ColumnStats{{Bounded: true, Lo: -2, Hi: 4, Distinct: 6}, {NoNulls: true, LongestAtLeast: 8}}
	empty := []ColumnStats{{Bounded: true}, {NoNulls: true}}
	c := &CacheReader{OutSchema: schema, Locations: [][]PartitionLocation{{loc(10, a...)}, {loc(0, empty...), loc(7, b...)}}}
	st := StatsOf(c)
	want := []ColumnStats{{Bounded: true, Lo: -2, Hi: 9, Distinct: 10}, {LongestAtLeast: 8}}
	if st.Rows != 17 || !reflect.DeepEqual(st.Cols, want) {
		t.Fatalf("stats %+v, want 17 rows and %+v", st, want)
	}
	c.Locations = append(c.Locations, []PartitionLocation{loc(3)})
	if st := StatsOf(c); st.Rows != 20 || st.Cols[0] != (ColumnStats{}) || st.Cols[1] != (ColumnStats{}) {
		t.Fatalf("with a file without statistics: %+v", st)
	}
	c.Locations = [][]PartitionLocation{{loc(0, empty...)}}
	if st := StatsOf(c); st.Rows != 0 || st.Cols[0] != (ColumnStats{NoNulls: true}) {
		t.Fatalf("no rows: %+v", st)
	}
	cols, ok := DecodeColumnStats(EncodeColumnStats(append(a, b...)))
	if !ok || !reflect.DeepEqual(cols, append(a, b...)) {
		t.Fatalf("encoded statistics came back as %+v, %v", cols, ok)
	}
	if _, ok := DecodeColumnStats([]byte{2, 1}); ok {
		t.Fatal("truncated statistics decoded")
	}
}
