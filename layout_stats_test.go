package quiver_test

// The hash tables' layout chosen once from the keys' statistics, proven
// through SQL: each case writes a Parquet file (row groups of 500 rows,
// whose footers give every integer column's range and every string
// column's smallest and largest value), groups and joins by its keys, and
// checks through EXPLAIN ANALYZE's hash_tables figures that the statistics
// chose the expected layout and that the table never changed it, against
// a Go reference and the same question asked over the generic layout.

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/quiverdb/quiver"
)

// lsCase is a table (i, v, keys...) of rows rows whose key statistics
// choose layout.
type lsCase struct {
	name   string
	keys   []fpCol
	rows   int
	key    func(i int) []any
	layout string
	// typeLayout and typeChanges are what the key types choose without
	// statistics (the same rows from an Arrow IPC file), and whether the
	// data then moves that table on: the switch the statistics spare.
	typeLayout  string
	typeChanges bool
}

// lsRegister writes c's rows as table t (Parquet) and u (Arrow IPC, no
// statistics) and returns them.
func lsRegister(t *testing.T, s *quiver.Session, c lsCase) [][]any {
	cols := append([]fpCol{{"i", arrow.PrimitiveTypes.Int64}, {"v", arrow.PrimitiveTypes.Int64}}, c.keys...)
	rows := make([][]any, c.rows)
	for i := range rows {
		var v any = int64(i%13 - 6)
		if i%11 == 0 {
			v = nil
		}
		rows[i] = append([]any{int64(i), v}, c.key(i)...)
	}
	schema, batches := fpBatches(t, cols, rows, 500)
	path := filepath.Join(t.TempDir(), "t.parquet")
	fpWriteParquet(t, path, schema, batches, parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(500), parquet.WithStats(true)))
	if err := s.RegisterParquet(t.Context(), "t", path); err != nil {
		t.Fatal(err)
	}
	fpRegisterNoStats(t, s, "u", cols, rows, 500)
	return rows
}

// lsCheckTables fails unless the figures show one table of layout chosen
// by statistics that never changed.
func lsCheckTables(t *testing.T, what string, f map[string]int, layout string) {
	t.Helper()
	if f[layout] != 1 || f["by_stats"] != 1 || f["layout_changes"] != 0 || len(f) != 3 {
		t.Errorf("%s: hash tables %v, want one %s table chosen by statistics, unchanged", what, f, layout)
	}
}

func lsRun(t *testing.T, c lsCase) {
	s := fpSession(t, 128, 1)
	rows := lsRegister(t, s, c)
	var names, on []string
	keyCols := make([]int, len(c.keys))
	for k, kc := range c.keys {
		names = append(names, kc.name)
		on = append(on, "a."+kc.name+" = b."+kc.name)
		keyCols[k] = 2 + k
	}
	keys := strings.Join(names, ", ")
	want := fpGroupCount(rows, keyCols, 1, 0)
	q := "SELECT " + keys + ", count(*), count(v), sum(v), min(i), max(i) FROM %s GROUP BY " + keys
	if plan := fpExplain(t, s, fmt.Sprintf(q, "t")); !strings.Contains(plan, "mode=Single") {
		t.Fatalf("the aggregate is not one Single-mode table:\n%s", plan)
	}
	fpSame(t, c.name, sqlRows(t, s, fmt.Sprintf(q, "t")), want)
	lsCheckTables(t, "GROUP BY over Parquet", fpTables(t, s, fmt.Sprintf(q, "t"), "HashAggregateExec"), c.layout)

	// The same rows without statistics: the types choose.
	fpSame(t, c.name+" (no statistics)", sqlRows(t, s, fmt.Sprintf(q, "u")), want)
	f := fpTables(t, s, fmt.Sprintf(q, "u"), "HashAggregateExec")
	if f[c.typeLayout] != 1 || f["by_stats"] != 0 || (f["layout_changes"] > 0) != c.typeChanges {
		t.Errorf("GROUP BY without statistics: hash tables %v, want one %s table chosen by the types, changed: %v", f, c.typeLayout, c.typeChanges)
	}

	// The generic path: a DOUBLE key (always 0) makes the keys neither
	// integer-like nor packable.
	gq := "SELECT " + keys + ", count(*), count(v), sum(v), min(i), max(i) FROM (SELECT *, CAST(i % 1 AS DOUBLE) AS z FROM t) w GROUP BY " + keys + ", z"
	fpSame(t, c.name+" (generic)", sqlRows(t, s, gq), want)
	if f := fpTables(t, s, gq, "HashAggregateExec"); f["generic"] != 1 {
		t.Errorf("the generic query's hash tables: %v", f)
	}

	// A join whose build side is the filtered table: the filter keeps the
	// table's bounds, so the statistics choose the build side's layout.
	const cut = 700
	jq := fmt.Sprintf("SELECT count(*) FROM t a JOIN (SELECT %s FROM t WHERE i < %d) b ON %s", keys, cut, strings.Join(on, " AND "))
	joined := fpJoinCount(rows, keyCols, 0, cut)
	if got := sqlRows(t, s, jq); got[0][0] != strconv.FormatInt(joined, 10) {
		t.Errorf("%s: %v, want %d", jq, got, joined)
	}
	lsCheckTables(t, "join build over Parquet", fpTables(t, s, jq, "HashJoinExec"), c.layout)
}

// TestLayoutFromStats: the keys' statistics choose each layout once.
func TestLayoutFromStats(t *testing.T) {
	i32, i64, str := arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int64, arrow.BinaryTypes.String
	cases := []lsCase{
		// 300 keys 2000 apart over [10^6, 1.6·10^6): ten pages of the
		// direct array, which 3000 rows' worth of keys may use. Without
		// statistics the first batch's keys already need more pages than
		// its 128 keys may, and the table turns hashed.
		{name: "small range: direct", keys: []fpCol{{"k", i64}}, rows: 3000, layout: "direct", typeLayout: "direct", typeChanges: true,
			key: func(i int) []any { return []any{int64(1_000_000 + (i*7%300)*2000)} }},
		// Keys 10^9 apart: far too wide a range for the direct array.
		{name: "wide range: hashed", keys: []fpCol{{"k", i64}}, rows: 3000, layout: "hashed", typeLayout: "direct", typeChanges: true,
			key: func(i int) []any { return []any{int64(i%500) * 1_000_000_000} }},
		// Two small ranges pack into 6 + 12 bits; without statistics
		// the first batch's ranges choose the fields and later rows
		// outgrow them.
		{name: "two small keys: packed", keys: []fpCol{{"a", i32}, {"b", i64}}, rows: 3000, layout: "packed", typeLayout: "packed", typeChanges: true,
			key: func(i int) []any { return []any{int32(i % 50), int64(-1_000_000 + i%7*(i/4))} }},
		// The footers' smallest and largest names are 18 bytes long:
		// no string code can hold them. Without statistics the table
		// starts packed and leaves at the first batch.
		{name: "long strings: generic", keys: []fpCol{{"s", str}, {"a", i32}}, rows: 3000, layout: "generic", typeLayout: "packed", typeChanges: true,
			key: func(i int) []any { return []any{fmt.Sprintf("Customer#%09d", i%40), int32(i % 3)} }},
		// Names of 30 bytes and more: too long for a key record too, so
		// the generic layout starts without records; without statistics
		// the table starts packed, turns generic and drops its records.
		{name: "strings past a record: generic", keys: []fpCol{{"s", str}, {"a", i32}}, rows: 3000, layout: "generic", typeLayout: "packed", typeChanges: true,
			key: func(i int) []any { return []any{fmt.Sprintf("Customer#%09d, Street %09d", i%40, i%40), int32(i % 3)} }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { lsRun(t, c) })
	}
}

// TestLayoutFromValues: a VALUES list's literals bound its keys, and a
// GROUP BY over them chooses the direct layout from them.
func TestLayoutFromValues(t *testing.T) {
	s := fpSession(t, 128, 1)
	q := "SELECT k, count(*) FROM (VALUES (3), (70000), (3), (100000)) v(k) GROUP BY k ORDER BY k"
	fpSame(t, q, sqlRows(t, s, q), [][]string{{"3", "2"}, {"70000", "1"}, {"100000", "1"}})
	lsCheckTables(t, q, fpTables(t, s, q, "HashAggregateExec"), "direct")
}

// TestLayoutFromStatsStandalone: on the standalone cluster the scan's
// statistics travel to the executor with the plan, and the task metrics
// bring the tables' figures back to EXPLAIN ANALYZE.
func TestLayoutFromStatsStandalone(t *testing.T) {
	s, err := quiver.NewSession(t.Context(), quiver.WithTargetPartitions(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	sqlRows(t, s, "SET quiver.batch_size = 128")
	c := lsCase{keys: []fpCol{{"k", arrow.PrimitiveTypes.Int64}}, rows: 3000,
		key: func(i int) []any { return []any{int64(1_000_000 + (i*7%300)*2000)} }}
	rows := lsRegister(t, s, c)
	q := "SELECT k, count(*), count(v), sum(v), min(i), max(i) FROM t GROUP BY k"
	fpSame(t, q, sqlRows(t, s, q), fpGroupCount(rows, []int{2}, 1, 0))
	lsCheckTables(t, "GROUP BY on the standalone cluster", fpTables(t, s, q, "HashAggregateExec"), "direct")
	jq := "SELECT count(*) FROM t a JOIN (SELECT k FROM t WHERE i < 700) b ON a.k = b.k"
	lsCheckTables(t, "join on the standalone cluster", fpTables(t, s, jq, "HashJoinExec"), "direct")
}
