package quiver_test

// Fast paths proven through SQL (issue 17). Each test below runs SQL
// through the public API over data built so that one of the engine's
// layout switches happens in the middle of the query — after the fast
// layout has been chosen and has already handled some batches — and checks
// the answer against a reference computed in Go from the same rows (and,
// where one exists, against the same question asked so that the fast path
// cannot run).
//
// The sessions run locally (WithLocalExecution), with one target partition
// and a small quiver.batch_size: a memory table registered with
// RegisterRecords, or an Arrow IPC file, is one partition, so the
// aggregate runs in Single mode over one hash table that sees the batches
// in the order the rows were generated, and "mid-query" is a known batch.
// EXPLAIN ANALYZE's output_batches of the scan shows that the rows really
// arrived in several batches. The hash tables' layout switches are
// crossed over Arrow IPC files, which give no value ranges (with them the
// layout would be chosen once from the statistics, see
// TestLayoutFromStats), and EXPLAIN ANALYZE's hash_tables figures show
// the switch. The DISTINCT and few-group layouts keep no metric and print
// nothing in EXPLAIN, so whether one was in use is not observable from
// outside; those tests rely on the data's shape, whose arithmetic against
// the switch conditions is spelled out in each comment.

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/quiverdb/quiver"
	"github.com/quiverdb/quiver/format"
	"github.com/quiverdb/quiver/qerr"
	"go.uber.org/goleak"
)

// ---- helpers ----

// fpCol is a column of a generated table.
type fpCol struct {
	name string
	typ  arrow.DataType
}

// fpSession is a local session of one target partition whose allocator
// is checked for leaks when the test ends, with quiver.batch_size set by
// SQL.
func fpSession(t *testing.T, batch int, partitions int) *quiver.Session {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	s, err := quiver.NewSession(context.Background(), quiver.WithLocalExecution(), quiver.WithAllocator(mem), quiver.WithTargetPartitions(partitions))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.Close()
		mem.AssertSize(t, 0)
	})
	sqlRows(t, s, fmt.Sprintf("SET quiver.batch_size = %d", batch))
	return s
}

// fpBatches builds rows (one []any per row, nil for NULL) as record
// batches of chunk rows.
func fpBatches(t *testing.T, cols []fpCol, rows [][]any, chunk int) (*arrow.Schema, []arrow.RecordBatch) {
	t.Helper()
	fields := make([]arrow.Field, len(cols))
	for i, c := range cols {
		fields[i] = arrow.Field{Name: c.name, Type: c.typ, Nullable: true}
	}
	schema := arrow.NewSchema(fields, nil)
	var batches []arrow.RecordBatch
	for start := 0; start < len(rows); start += chunk {
		b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		for _, row := range rows[start:min(len(rows), start+chunk)] {
			for c, v := range row {
				fpAppend(t, b.Field(c), v)
			}
		}
		batches = append(batches, b.NewRecordBatch())
		b.Release()
	}
	return schema, batches
}

// fpRegister registers rows as a memory table (one partition) of batches
// of chunk rows.
func fpRegister(t *testing.T, s *quiver.Session, name string, cols []fpCol, rows [][]any, chunk int) {
	t.Helper()
	schema, batches := fpBatches(t, cols, rows, chunk)
	defer release(batches)
	if err := s.RegisterRecords(name, schema, batches); err != nil {
		t.Fatal(err)
	}
}

// fpRegisterNoStats registers rows as table name read from an Arrow IPC
// file of batches of chunk rows (one partition, batches in order): a
// source whose metadata holds no value ranges, so the hash tables' first
// layout is chosen by the key types and the data's switches are the
// safety net's (exec/hashtable/choose.go).
func fpRegisterNoStats(t *testing.T, s *quiver.Session, name string, cols []fpCol, rows [][]any, chunk int) {
	t.Helper()
	schema, batches := fpBatches(t, cols, rows, chunk)
	defer release(batches)
	path := filepath.Join(t.TempDir(), name+".arrow")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := ipc.NewFileWriter(f, ipc.WithSchema(schema))
	if err != nil {
		f.Close()
		t.Fatal(err)
	}
	for _, b := range batches {
		if err := w.Write(b); err != nil {
			w.Close()
			f.Close()
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		f.Close()
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	sqlRows(t, s, fmt.Sprintf("CREATE EXTERNAL TABLE %s STORED AS ARROW LOCATION '%s'", name, path))
}

// fpTablesRE is an EXPLAIN ANALYZE line's hash-table figures.
var fpTablesRE = regexp.MustCompile(`hash_tables=\[([^\]]*)\]`)

// fpTables is the hash-table figures (physical.TableFigures) of the first
// line of q's EXPLAIN ANALYZE that contains node and has them, as name →
// count.
func fpTables(t *testing.T, s *quiver.Session, q, node string) map[string]int {
	t.Helper()
	rows := sqlRows(t, s, "EXPLAIN ANALYZE "+q)
	var text strings.Builder
	for _, r := range rows { // one plan locally, a stage's per row on a cluster
		text.WriteString(strings.Join(r, "\n") + "\n")
	}
	for _, line := range strings.Split(text.String(), "\n") {
		if !strings.Contains(line, node) {
			continue
		}
		m := fpTablesRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		out := map[string]int{}
		for _, kv := range strings.Split(m[1], ", ") {
			k, v, _ := strings.Cut(kv, "=")
			out[k], _ = strconv.Atoi(v)
		}
		return out
	}
	t.Fatalf("EXPLAIN ANALYZE %s: no %q line with hash_tables:\n%s", q, node, text.String())
	return nil
}

func fpAppend(t *testing.T, b array.Builder, v any) {
	if v == nil {
		b.AppendNull()
		return
	}
	switch b := b.(type) {
	case *array.Int8Builder:
		b.Append(v.(int8))
	case *array.Int32Builder:
		b.Append(v.(int32))
	case *array.Int64Builder:
		b.Append(v.(int64))
	case *array.Uint64Builder:
		b.Append(v.(uint64))
	case *array.Float64Builder:
		b.Append(v.(float64))
	case *array.BooleanBuilder:
		b.Append(v.(bool))
	case *array.StringBuilder:
		b.Append(v.(string))
	case *array.Date32Builder:
		b.Append(v.(arrow.Date32))
	case *array.Decimal128Builder:
		b.Append(v.(decimal128.Num))
	default:
		t.Fatalf("fpAppend: no case for %T", b)
	}
}

// fpText renders a value as the engine renders a cell (NULL as "").
func fpText(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	case arrow.Date32:
		return v.FormattedString()
	case bool:
		return strconv.FormatBool(v)
	case float64:
		return format.Float(v)
	case decimal128.Num:
		return v.ToString(2) // every decimal of these tests has scale 2
	}
	return fmt.Sprint(v)
}

// fpKey is a map key for a tuple of values that tells NULL from "".
func fpKey(vals ...any) string {
	var b strings.Builder
	for _, v := range vals {
		if v == nil {
			b.WriteString("\x01NULL")
		} else {
			b.WriteString("\x02" + fpText(v))
		}
		b.WriteByte(0)
	}
	return b.String()
}

// fpSame compares two results as multisets of rows (the queries leave
// row order to the engine unless they sort).
func fpSame(t *testing.T, what string, got, want [][]string) {
	t.Helper()
	sorted := func(rows [][]string) []string {
		out := make([]string, len(rows))
		for i, r := range rows {
			out[i] = strings.Join(r, "|")
		}
		slices.Sort(out)
		return out
	}
	fpSameOrdered(t, what, sorted(got), sorted(want))
}

// fpSameOrdered compares rendered rows in order, reporting the first
// differences.
func fpSameOrdered(t *testing.T, what string, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d rows, want %d", what, len(got), len(want))
	}
	bad := 0
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			if bad < 5 {
				t.Errorf("%s: row %d is %q, want %q", what, i, got[i], want[i])
			}
			bad++
		}
	}
	if bad > 5 {
		t.Errorf("%s: %d rows differ in all", what, bad)
	}
}

func fpJoin(rows [][]string) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = strings.Join(r, "|")
	}
	return out
}

var fpBatchesRE = regexp.MustCompile(`output_batches=(\d+)`)

// fpScanBatches runs EXPLAIN ANALYZE q and returns the output_batches of
// the plan line that contains scan (e.g. "MemoryScan: t").
func fpScanBatches(t *testing.T, s *quiver.Session, q, scan string) int {
	t.Helper()
	rows := sqlRows(t, s, "EXPLAIN ANALYZE "+q)
	for _, line := range strings.Split(rows[0][1], "\n") {
		if strings.Contains(line, scan) {
			if m := fpBatchesRE.FindStringSubmatch(line); m != nil {
				n, _ := strconv.Atoi(m[1])
				return n
			}
		}
	}
	t.Fatalf("EXPLAIN ANALYZE %s: no %q line with output_batches:\n%s", q, scan, rows[0][1])
	return 0
}

// fpWriteParquet writes batches (and releases them) to a new Parquet file
// at path.
func fpWriteParquet(t *testing.T, path string, schema *arrow.Schema, batches []arrow.RecordBatch, props *parquet.WriterProperties) {
	t.Helper()
	defer release(batches)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := pqarrow.NewFileWriter(schema, f, props, pqarrow.DefaultWriterProps())
	if err != nil {
		f.Close()
		t.Fatal(err)
	}
	for _, b := range batches {
		if err := w.WriteBuffered(b); err != nil {
			w.Close()
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// fpExplain is the physical plan of q.
func fpExplain(t *testing.T, s *quiver.Session, q string) string {
	t.Helper()
	for _, r := range sqlRows(t, s, "EXPLAIN "+q) {
		if r[0] == "physical_plan" {
			return r[1]
		}
	}
	t.Fatalf("EXPLAIN %s: no physical plan", q)
	return ""
}

// fpGroup accumulates one group of a reference aggregate.
type fpGroup struct {
	key []any
	n   int64
	nv  int64
	sum int64
	min int64
	max int64
}

// fpGroupCount is the reference of
// SELECT <keys>, count(*), count(v), sum(v), min(i), max(i) ... GROUP BY <keys>
// over rows whose columns keyCols are the keys, v is column vCol (int64
// or nil) and i column iCol (int64, never NULL).
func fpGroupCount(rows [][]any, keyCols []int, vCol, iCol int) [][]string {
	groups := map[string]*fpGroup{}
	var order []string
	for _, r := range rows {
		key := make([]any, len(keyCols))
		for k, c := range keyCols {
			key[k] = r[c]
		}
		id := fpKey(key...)
		g := groups[id]
		if g == nil {
			g = &fpGroup{key: key, min: math.MaxInt64, max: math.MinInt64}
			groups[id] = g
			order = append(order, id)
		}
		g.n++
		if v := r[vCol]; v != nil {
			g.nv++
			g.sum += v.(int64)
		}
		i := r[iCol].(int64)
		g.min, g.max = min(g.min, i), max(g.max, i)
	}
	var out [][]string
	for _, id := range order {
		g := groups[id]
		var row []string
		for _, k := range g.key {
			row = append(row, fpText(k))
		}
		sum := ""
		if g.nv > 0 {
			sum = strconv.FormatInt(g.sum, 10)
		}
		row = append(row, strconv.FormatInt(g.n, 10), strconv.FormatInt(g.nv, 10), sum, strconv.FormatInt(g.min, 10), strconv.FormatInt(g.max, 10))
		out = append(out, row)
	}
	return out
}

// fpJoinCount is the reference of an inner equi-join's count(*) between
// all rows and the rows with i < cut on keyCols (a NULL key matches
// nothing).
func fpJoinCount(rows [][]any, keyCols []int, iCol int, cut int64) int64 {
	all, early := map[string]int64{}, map[string]int64{}
	for _, r := range rows {
		key := make([]any, len(keyCols))
		null := false
		for k, c := range keyCols {
			key[k] = r[c]
			null = null || r[c] == nil
		}
		if null {
			continue
		}
		id := fpKey(key...)
		all[id]++
		if r[iCol].(int64) < cut {
			early[id]++
		}
	}
	var n int64
	for id, c := range early {
		n += c * all[id]
	}
	return n
}

// fpGroupingCase is one data shape for the hash table's layouts: rows of
// (i, v, keys...) whose keys switch layout at row switchAt.
type fpGroupingCase struct {
	name     string
	keys     []fpCol
	switchAt int
	rows     int
	key      func(i int) []any // the key columns of row i
}

// fpRunGrouping registers c's rows as table t (batches of 100 rows, read
// in batches of 64) and checks, against Go references, a GROUP BY over the
// keys, the same GROUP BY forced onto the generic layout, and a join on
// the keys whose build side holds only the rows before the switch (its
// table stays in the fast layout while the probe rows bring keys from
// after the switch).
func fpRunGrouping(t *testing.T, c fpGroupingCase) {
	const batch = 64
	s := fpSession(t, batch, 1)
	cols := append([]fpCol{{"i", arrow.PrimitiveTypes.Int64}, {"v", arrow.PrimitiveTypes.Int64}}, c.keys...)
	rows := make([][]any, c.rows)
	for i := range rows {
		var v any = int64(i%13 - 6)
		if i%11 == 0 {
			v = nil
		}
		rows[i] = append([]any{int64(i), v}, c.key(i)...)
	}
	fpRegisterNoStats(t, s, "t", cols, rows, 100)
	var names []string
	keyCols := make([]int, len(c.keys))
	for k, kc := range c.keys {
		names = append(names, kc.name)
		keyCols[k] = 2 + k
	}
	keys := strings.Join(names, ", ")
	q := "SELECT " + keys + ", count(*), count(v), sum(v), min(i), max(i) FROM t GROUP BY " + keys
	if plan := fpExplain(t, s, q); !strings.Contains(plan, "mode=Single") {
		t.Fatalf("the aggregate is not one Single-mode table:\n%s", plan)
	}
	// The switch falls after the first batches: the table was built in
	// the fast layout from several batches before the data crossed.
	if n := fpScanBatches(t, s, q, "ArrowScan: t"); n < c.rows/batch || c.switchAt < 2*batch || c.switchAt >= c.rows-batch {
		t.Fatalf("scan gave %d batches for %d rows switching at row %d: the switch is not mid-query", n, c.rows, c.switchAt)
	}
	// Without statistics the types chose the layout, and the data moved
	// the table on.
	if f := fpTables(t, s, q, "HashAggregateExec"); f["by_stats"] != 0 || f["layout_changes"] < 1 {
		t.Fatalf("the aggregate's hash table: %v, want a layout chosen by the key types that changed", f)
	}
	want := fpGroupCount(rows, keyCols, 1, 0)
	fpSame(t, q, sqlRows(t, s, q), want)
	// The generic path: one more grouping key of type Double (always 0)
	// makes the keys neither integer-like nor packable, nor laid out as
	// records (floats are not), so the table hashes and compares the key
	// columns from the first row.
	gq := "SELECT " + keys + ", count(*), count(v), sum(v), min(i), max(i) FROM (SELECT *, CAST(i % 1 AS DOUBLE) AS z FROM t) u GROUP BY " + keys + ", z"
	if plan := fpExplain(t, s, gq); !strings.Contains(plan, "z@") {
		t.Fatalf("the generic query does not group by z:\n%s", plan)
	}
	fpSame(t, gq, sqlRows(t, s, gq), want)

	var on []string
	for _, n := range names {
		on = append(on, "a."+n+" = b."+n)
	}
	jq := fmt.Sprintf("SELECT count(*) FROM t a JOIN (SELECT %s FROM t WHERE i < %d) b ON %s", keys, c.switchAt, strings.Join(on, " AND "))
	joined := fpJoinCount(rows, keyCols, 0, int64(c.switchAt))
	if got := sqlRows(t, s, jq); got[0][0] != strconv.FormatInt(joined, 10) {
		t.Errorf("%s: %v, want %d", jq, got, joined)
	}
}

// ---- the hash table's layouts ----

// TestFastPathDirectToHashed crosses the integer hash table's move from the
// direct layout (an array indexed by the key) to hashed slots
// (exec/hashtable/direct.go: coverDirect reports false when the window
// would pass directMax values or the allocated pages pass
// directLimit(keys); lookupIntsIn (table.go) then calls toHashed). In
// most cases the first 600 rows (nine batches and more) hold keys in one
// 65536-value page; later rows bring keys that need a second page while
// the table holds a few hundred keys (directLimit is then one page), or
// a window wider than directMax, next to the old keys, with NULL keys
// before and after the move. The ends of the int64 range, unsigned keys
// past MaxInt64 and Int32 keys have cases of their own.
func TestFastPathDirectToHashed(t *testing.T) {
	i64, i32, u64 := arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Uint64
	narrow := func(i int) any {
		if i%97 == 5 {
			return nil
		}
		return int64(i / 3 % 200)
	}
	cases := []fpGroupingCase{
		{name: "second page", keys: []fpCol{{"k", i64}}, rows: 1200, switchAt: 600, key: func(i int) []any {
			if i < 600 || i%2 == 1 {
				return []any{narrow(i)}
			}
			return []any{int64(5_000_000 + i%50)}
		}},
		{name: "window past directMax", keys: []fpCol{{"k", i64}}, rows: 1200, switchAt: 600, key: func(i int) []any {
			if i < 600 || i%2 == 1 {
				return []any{narrow(i)}
			}
			return []any{int64(1<<40 + i%50)}
		}},
		{name: "int64 extremes and negatives", keys: []fpCol{{"k", i64}}, rows: 1200, switchAt: 600, key: func(i int) []any {
			switch {
			case i < 600:
				return []any{narrow(i)}
			case i%3 == 0:
				return []any{int64(math.MinInt64 + i%4)}
			case i%3 == 1:
				return []any{int64(math.MaxInt64 - i%4)}
			}
			return []any{int64(i%200 - 100)}
		}},
		// Every key new and 1000 apart: the first page holds 66 keys, and
		// at the second batch of 64 rows directLimit(128 keys) is still
		// one page, so the table turns hashed on the table's second batch
		// (switchAt is where the reference join's build side stops).
		{name: "sparse keys outgrow the page budget", keys: []fpCol{{"k", i64}}, rows: 1200, switchAt: 128, key: func(i int) []any {
			return []any{int64(i) * 1000}
		}},
		// Keys at the very top of the int64 range: the window's last page
		// ends at MaxInt64. After 512 keys in that page a second page is
		// within the budget (directLimit(576) is two pages), so the table
		// stays direct across the page boundary; at row 900 keys near
		// MinInt64 make it hashed.
		{name: "top of the int64 range", keys: []fpCol{{"k", i64}}, rows: 1200, switchAt: 900, key: func(i int) []any {
			switch {
			case i < 512:
				return []any{int64(math.MaxInt64 - i)}
			case i < 900 || i%2 == 0:
				return []any{int64(math.MaxInt64 - 65536 - i%300)}
			}
			return []any{int64(math.MinInt64 + i%50)}
		}},
		// The same at the bottom of the range, then keys near MaxInt64.
		{name: "bottom of the int64 range", keys: []fpCol{{"k", i64}}, rows: 1200, switchAt: 900, key: func(i int) []any {
			switch {
			case i < 512:
				return []any{int64(math.MinInt64 + i)}
			case i < 900 || i%2 == 0:
				return []any{int64(math.MinInt64 + 65536 + i%300)}
			}
			return []any{int64(math.MaxInt64 - i%50)}
		}},
		// Uint64 keys compare as their int64 bit pattern: values with the
		// high bit set are negative int64s, far below the window.
		{name: "uint64 past MaxInt64", keys: []fpCol{{"k", u64}}, rows: 1200, switchAt: 600, key: func(i int) []any {
			switch {
			case i%97 == 5:
				return []any{nil}
			case i < 600 || i%3 == 0:
				return []any{uint64(i / 3 % 200)}
			case i%3 == 1:
				return []any{uint64(1)<<63 + uint64(i%50)}
			}
			return []any{math.MaxUint64 - uint64(i%7)}
		}},
		{name: "int32 down to MinInt32", keys: []fpCol{{"k", i32}}, rows: 1200, switchAt: 600, key: func(i int) []any {
			if i%97 == 5 {
				return []any{nil}
			}
			if i < 600 || i%2 == 1 {
				return []any{int32(i / 3 % 200)}
			}
			return []any{int32(math.MinInt32 + i%50)}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { fpRunGrouping(t, c) })
	}
}

// TestFastPathPackedRepack crosses the packed layout's re-packs and its
// fall back to the generic layout (exec/hashtable/packed.go:
// lookupPacked). The fields are chosen at the first insert from the first
// batch's ranges, with one bit of headroom; a later value outside its
// field (anyOutside) re-packs (repack, fields at least doubled, the
// integer table rebuilt with ids unchanged), and a NULL key (anyNull), a
// string longer than maxCodeLen (7) bytes or fields wider than 63 bits in
// all (chooseFields) fall back for good to the generic layout (toGeneric).
func TestFastPathPackedRepack(t *testing.T) {
	i8, i32, i64 := arrow.PrimitiveTypes.Int8, arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int64
	str, d32 := arrow.BinaryTypes.String, arrow.FixedWidthTypes.Date32
	cases := []fpGroupingCase{
		// From row 600 b's largest value doubles every 32 rows, more than
		// the headroom of a re-pack, so each later batch re-packs again.
		{name: "repack upwards", keys: []fpCol{{"a", i32}, {"b", i64}}, rows: 1200, switchAt: 600, key: func(i int) []any {
			if i < 600 || i%2 == 0 {
				return []any{int32(i % 4), int64(i / 7 % 10)}
			}
			return []any{int32(i%4 + i%3*1000), int64(1)<<((i-600)/32+5) + int64(i%7)}
		}},
		// Keys below the fields' bases, farther at every batch: the
		// re-packs keep room below.
		{name: "repack downwards", keys: []fpCol{{"a", i32}, {"b", i64}}, rows: 1200, switchAt: 600, key: func(i int) []any {
			if i < 600 || i%2 == 0 {
				return []any{int32(i % 4), int64(i / 7 % 10)}
			}
			return []any{int32(-100 - i%5), -(int64(1) << ((i-600)/32 + 5)) - int64(i%7)}
		}},
		// 41 + 31 bits of fields: no packing fits, the table goes generic.
		{name: "fields past 63 bits", keys: []fpCol{{"a", i64}, {"b", i64}}, rows: 1200, switchAt: 600, key: func(i int) []any {
			if i < 600 || i%2 == 0 {
				return []any{int64(i % 4), int64(i / 7 % 10)}
			}
			return []any{int64(1<<40 + i%3), int64(1<<30 + i%5)}
		}},
		{name: "NULL keys after packing", keys: []fpCol{{"a", i32}, {"b", i64}}, rows: 1200, switchAt: 600, key: func(i int) []any {
			var a, b any = int32(i % 4), int64(i / 7 % 10)
			if i >= 600 && i%7 == 0 {
				a = nil
			}
			if i >= 600 && i%11 == 0 {
				b = nil
			}
			return []any{a, b}
		}},
		// Short strings are packed by their code; at row 600 strings of
		// 8-24 bytes have none (generic layout with records), and at row
		// 900 strings over 24 bytes end the records too (see
		// TestFastPathRecordsOverflow).
		{name: "string codes then long strings", keys: []fpCol{{"s", str}, {"a", i32}}, rows: 1200, switchAt: 600, key: func(i int) []any {
			flags := []string{"A", "N", "R", "", "NO"}
			switch {
			case i < 600 || i%2 == 0:
				return []any{flags[i%5], int32(i % 3)}
			case i < 900:
				return []any{"flag-long-" + strconv.Itoa(i%5), int32(i % 3)}
			}
			return []any{strings.Repeat("x", 30) + strconv.Itoa(i%4), int32(i % 3)}
		}},
		// Three columns of three types; the date and the Int8 widen.
		{name: "int8, date and string", keys: []fpCol{{"a", i8}, {"d", d32}, {"s", str}}, rows: 1200, switchAt: 600, key: func(i int) []any {
			if i < 600 || i%2 == 0 {
				return []any{int8(i%5 - 2), arrow.Date32(18000 + i%30), []string{"O", "F"}[i%2]}
			}
			return []any{int8([]int{-128, 127, 0}[i%3]), arrow.Date32(18000 + i*50), []string{"O", "F", "P"}[i%3]}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { fpRunGrouping(t, c) })
	}
}

// TestFastPathRecordsOverflow crosses the generic layout's move from
// fixed-width key records to key columns (exec/hashtable/table.go:
// lookup, where keyRecords.encode (records.go) reports false for a
// string longer than recordStringBytes (24) and dropRecords rehashes the
// stored keys from the columns). Bool and decimal keys are not packable,
// so those tables start generic with records; a single string key starts
// packed and meets both later switches. The first rows include "",
// NULL and strings of exactly 24 bytes; after the switch come 25-byte
// strings equal to those in their first 24 bytes, and long strings.
func TestFastPathRecordsOverflow(t *testing.T) {
	str, boolean := arrow.BinaryTypes.String, arrow.FixedWidthTypes.Boolean
	dec := &arrow.Decimal128Type{Precision: 20, Scale: 2}
	p24 := []string{strings.Repeat("a", 24), strings.Repeat("b", 23) + "c", "short", ""}
	early := func(i int) any {
		if i%17 == 3 {
			return nil
		}
		return p24[i%4]
	}
	late := func(i int) any {
		switch i % 4 {
		case 0:
			return p24[0] + "X" // 25 bytes, its first 24 those of an early key
		case 1:
			return p24[1] + "Y" + strings.Repeat("z", 100)
		}
		return early(i)
	}
	cases := []fpGroupingCase{
		{name: "string and bool", keys: []fpCol{{"s", str}, {"f", boolean}}, rows: 1200, switchAt: 600, key: func(i int) []any {
			if i < 600 {
				return []any{early(i), i%3 == 0}
			}
			return []any{late(i), i%3 == 0}
		}},
		{name: "decimal and string", keys: []fpCol{{"d", dec}, {"s", str}}, rows: 1200, switchAt: 600, key: func(i int) []any {
			d := decimal128.FromI64(int64(i%6-3) * 1_000_000_007)
			if i < 600 {
				return []any{d, early(i)}
			}
			return []any{d, late(i)}
		}},
		// packed (codes) → generic with records at row 300 → columns at 700.
		{name: "single string key", keys: []fpCol{{"s", str}}, rows: 1200, switchAt: 300, key: func(i int) []any {
			switch {
			case i < 300:
				return []any{[]string{"A", "", "NO", "1234567"}[i%4]}
			case i < 700 || i%2 == 0:
				return []any{early(i)}
			}
			return []any{late(i)}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { fpRunGrouping(t, c) })
	}
}

// ---- aggregates ----

// TestFastPathDistinctBitmapToHash crosses COUNT/SUM(DISTINCT) over an
// integer argument from its paged bitmap per group to the hashed set of
// (group, value) pairs (exec/aggregate/distinct.go: distinctIntAcc.update;
// the conditions are in distinct_direct.go: setGroups fails past
// dirMaxPtrs (2^18) group×page pointers, cover fails when the window would
// need more pages than that, alloc fails past dirLimit(pairs) pages,
// at least 4096, and then the move happens mid-batch). The same counts
// are asked of the generic DISTINCT path (a string argument, distinctAcc
// over a hash table) in the same query, and computed in Go.
func TestFastPathDistinctBitmapToHash(t *testing.T) {
	type distinctCase struct {
		name  string
		rows  int
		batch int
		sum   bool // sums fit an int64
		row   func(i int) (g int64, v any)
	}
	cases := []distinctCase{
		// Five groups over values below 5000, then (from row 1500, in the
		// sixth batch) values 2^40 away: cover fails, and the whole batch
		// goes to the hashed set.
		{name: "window too wide", rows: 3000, batch: 256, sum: true, row: func(i int) (int64, any) {
			if i%31 == 7 {
				return int64(i % 5), nil
			}
			if i < 1500 || i%2 == 0 {
				return int64(i % 5), int64(i * 7 % 5000)
			}
			return int64(i % 5), int64(1<<40 + i%700)
		}},
		// Two groups, every value on its own 4096-value page, each value
		// once in each group (rows 2j and 2j+1): the 4097th page is wanted
		// at row 4096, in the middle of the fifth batch of 1000 rows, so
		// alloc fails there and the rest of the batch is inserted into the
		// hashed set.
		{name: "pages run out mid-batch", rows: 6000, batch: 1000, sum: true, row: func(i int) (int64, any) {
			return int64(i % 2), int64(i/2) * 4096
		}},
		// Group 0 spans 64 pages in the first batch; once more than 4096
		// groups exist, groups × 64 pages pass dirMaxPtrs and setGroups
		// fails (the batch from row 8000, the 33rd).
		{name: "too many groups", rows: 10000, batch: 256, sum: true, row: func(i int) (int64, any) {
			switch i {
			case 0:
				return 0, int64(0)
			case 1:
				return 0, int64(64*4096 - 1)
			}
			return int64(i / 2), int64(i % 2 * 100)
		}},
		// Values at the top of the int64 range first (the window ends at
		// the last page), then at the bottom: cover fails. Sums overflow,
		// so only counts are asked.
		{name: "int64 extremes", rows: 2000, batch: 128, row: func(i int) (int64, any) {
			if i < 1000 || i%2 == 0 {
				return int64(i % 3), int64(math.MaxInt64 - i%300)
			}
			return int64(i % 3), int64(math.MinInt64 + i%300)
		}},
		// The first batches are all NULL (nothing to lay out), then
		// values, then far values.
		{name: "NULL batches first", rows: 2000, batch: 128, sum: true, row: func(i int) (int64, any) {
			switch {
			case i < 300:
				return int64(i % 4), nil
			case i < 1200 || i%3 != 0:
				return int64(i % 4), int64(i % 97)
			}
			return int64(i % 4), int64(-(1 << 35) - i%50)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := fpSession(t, c.batch, 1)
			rows := make([][]any, c.rows)
			type set = map[int64]bool
			sets := map[int64]set{}
			for i := range rows {
				g, v := c.row(i)
				rows[i] = []any{g, v}
				if sets[g] == nil {
					sets[g] = set{}
				}
				if v != nil {
					sets[g][v.(int64)] = true
				}
			}
			fpRegister(t, s, "t", []fpCol{{"g", arrow.PrimitiveTypes.Int64}, {"v", arrow.PrimitiveTypes.Int64}}, rows, 1000)
			aggs := "count(DISTINCT v), count(DISTINCT CAST(v AS VARCHAR))"
			if c.sum {
				aggs += ", sum(DISTINCT v)"
			}
			q := "SELECT g, " + aggs + " FROM t GROUP BY g"
			if n := fpScanBatches(t, s, q, "MemoryScan: t"); n < c.rows/c.batch {
				t.Fatalf("scan gave %d batches, want at least %d", n, c.rows/c.batch)
			}
			var want [][]string
			for g, vs := range sets {
				row := []string{strconv.FormatInt(g, 10), strconv.Itoa(len(vs)), strconv.Itoa(len(vs))}
				if c.sum {
					sum := ""
					if len(vs) > 0 {
						var n int64
						for v := range vs {
							n += v
						}
						sum = strconv.FormatInt(n, 10)
					}
					row = append(row, sum)
				}
				want = append(want, row)
			}
			fpSame(t, q, sqlRows(t, s, q), want)
		})
	}
	t.Run("by sets over two partitions", func(t *testing.T) { fpDistinctBySets(t) })
}

// fpDistinctBySets crosses the same switch in the two-phase DISTINCT by
// sets (exec/aggregate/distinct_sets.go: distinctSetAcc dedupes with a
// distinctIntAcc in the Partial phase and again when the Final phase
// merges the lists). The physical planner runs DISTINCT by sets over
// several partitions when the input is estimated at DistinctSetsRows
// (500 000) rows or more, so the table is a Parquet file of 520 000 rows
// in eight row groups, which two scan partitions split four and four.
// Each partition reads two row groups of 3000 groups with narrow values
// (below 4000: one bitmap page a group), then two of 3000 other groups
// where every other value lies 2^40 away: each Partial table switches
// (cover fails) after 130 000 rows. The Partial phases emit the narrow
// groups' lists first (groups leave in first-seen order), in batches of
// 2048, so the Final phase's merge too starts with narrow values only and
// meets the far ones batches later.
func fpDistinctBySets(t *testing.T) {
	const rows, rowGroup = 520_000, 65_000
	s := fpSession(t, 2048, 2)
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "g", Type: arrow.PrimitiveTypes.Int32},
		{Name: "v", Type: arrow.PrimitiveTypes.Int64},
	}, nil)
	sets := map[int32]map[int64]bool{}
	var batches []arrow.RecordBatch
	for start := 0; start < rows; start += rowGroup {
		gb, vb := array.NewInt32Builder(memory.DefaultAllocator), array.NewInt64Builder(memory.DefaultAllocator)
		for i := start; i < start+rowGroup; i++ {
			run := int64(i / 5) // runs of five rows of one pair
			g, v := int32(run%3000), run*7919%4000
			if i/rowGroup%4 >= 2 {
				g += 3000
				if run%2 == 0 {
					v += 1 << 40
				}
			}
			gb.Append(g)
			vb.Append(v)
			if sets[g] == nil {
				sets[g] = map[int64]bool{}
			}
			sets[g][v] = true
		}
		gc, vc := gb.NewArray(), vb.NewArray()
		batches = append(batches, array.NewRecordBatch(schema, []arrow.Array{gc, vc}, int64(gc.Len())))
		gb.Release()
		vb.Release()
		gc.Release()
		vc.Release()
	}
	path := filepath.Join(t.TempDir(), "sets.parquet")
	fpWriteParquet(t, path, schema, batches, parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(rowGroup)))
	if err := s.RegisterParquet(context.Background(), "t", path); err != nil {
		t.Fatal(err)
	}
	q := "SELECT g, count(DISTINCT v), sum(DISTINCT v) FROM t GROUP BY g"
	if plan := fpExplain(t, s, q); !strings.Contains(plan, "by sets") || !strings.Contains(plan, "ParquetScan: t partitions=2") {
		t.Fatalf("the plan does not run DISTINCT by sets over two scan partitions:\n%s", plan)
	}
	var want [][]string
	for g, vs := range sets {
		var sum int64
		for v := range vs {
			sum += v
		}
		want = append(want, []string{strconv.Itoa(int(g)), strconv.Itoa(len(vs)), strconv.FormatInt(sum, 10)})
	}
	fpSame(t, q, sqlRows(t, s, q), want)
}

// TestFastPathFewGroups crosses the few-group accumulation loops
// (exec/aggregate/few_groups.go: countFew and addDecimalsFew, taken by
// countAcc.update and addDecimals in accumulators.go while the aggregate
// has at most fewGroups (16) groups and the batch's argument has no NULLs)
// to the general per-row loops: first 16 groups for several batches, then
// new groups, then batches with NULL arguments, then batches that touch
// only old groups. Decimal values near ±3·10^18 (unscaled) make the
// lanes' 64-bit low words carry into the high words, both ways. The
// reference sums are big.Ints.
func TestFastPathFewGroups(t *testing.T) {
	dec := &arrow.Decimal128Type{Precision: 38, Scale: 2}
	type fewCase struct {
		name string
		rows int
		row  func(i int) (g int64, d any)
	}
	const e15, e18 = int64(1e15), int64(1e18)
	val := func(i int) any { return decimal128.FromI64(int64(i%7-3)*3*e15 + int64(i)) }
	big18 := func(i int) any { return decimal128.FromI64(int64(i%7-3)*3*e18 + int64(i)) }
	cases := []fewCase{
		{name: "16 groups then 40", rows: 2000, row: func(i int) (int64, any) {
			switch {
			case i < 800:
				return int64(i % 16), big18(i)
			case i < 1200:
				return int64(i % 40), big18(i)
			case i < 1600:
				if i%5 == 0 {
					return int64(i % 40), nil
				}
				return int64(i % 40), big18(i)
			}
			return int64(i % 3), big18(i)
		}},
		// One group more than the lanes hold arrives alone, at row 1000.
		{name: "the 17th group", rows: 1600, row: func(i int) (int64, any) {
			if i >= 1000 && i%50 == 0 {
				return 16, val(i)
			}
			return int64(i % 16), val(i)
		}},
		// Few groups throughout; batches with NULLs take the general loop
		// in between few-group batches.
		{name: "NULL batches between", rows: 1600, row: func(i int) (int64, any) {
			if i/200%2 == 1 && i%9 == 0 {
				return int64(i % 5), nil
			}
			return int64(i % 5), big18(i)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			const batch = 100
			s := fpSession(t, batch, 1)
			rows := make([][]any, c.rows)
			type acc struct {
				n, nd int64
				sum   big.Int
			}
			groups := map[int64]*acc{}
			var total acc
			for i := range rows {
				g, d := c.row(i)
				rows[i] = []any{g, d}
				a := groups[g]
				if a == nil {
					a = &acc{}
					groups[g] = a
				}
				for _, a := range []*acc{a, &total} {
					a.n++
					if d != nil {
						a.nd++
						a.sum.Add(&a.sum, d.(decimal128.Num).BigInt())
					}
				}
			}
			fpRegister(t, s, "t", []fpCol{{"g", arrow.PrimitiveTypes.Int64}, {"d", dec}}, rows, 400)
			render := func(a *acc) []string {
				sum := ""
				if a.nd > 0 {
					sum = decimal128.FromBigInt(&a.sum).ToString(2)
				}
				return []string{strconv.FormatInt(a.n, 10), strconv.FormatInt(a.nd, 10), sum}
			}
			q := "SELECT g, count(*), count(d), sum(d) FROM t GROUP BY g"
			if n := fpScanBatches(t, s, q, "MemoryScan: t"); n < c.rows/batch {
				t.Fatalf("scan gave %d batches, want at least %d", n, c.rows/batch)
			}
			var want [][]string
			for g, a := range groups {
				want = append(want, append([]string{strconv.FormatInt(g, 10)}, render(a)...))
			}
			fpSame(t, q, sqlRows(t, s, q), want)
			// Without GROUP BY: one group, the few-group loops throughout
			// except for batches with NULLs.
			q = "SELECT count(*), count(d), sum(d) FROM t"
			fpSame(t, q, sqlRows(t, s, q), [][]string{render(&total)})
		})
	}
}

// ---- joins ----

// TestFastPathRightSemiAnti crosses the physical planner's choice of the
// build side of a semi or anti join (physical/planner/planner.go, in the
// join planning: semiSwap when estimate(right) < estimate(left)/2, and for
// NOT IN only with one key and no filter), by running the same queries
// with a right table of 499 rows (RightSemi/RightAnti: the subquery's rows
// are built and the outer rows probe) and of 500 rows (LeftSemi/LeftAnti)
// against an outer table of 1000 rows. EXPLAIN shows the choice; the rows
// are checked against Go. Keys repeat and include NULLs on both sides, and
// the filter compares columns of both sides.
func TestFastPathRightSemiAnti(t *testing.T) {
	const outer = 1000
	lrows := make([][]any, outer)
	for i := range lrows {
		var k any = int64(i % 300)
		if i%37 == 0 {
			k = nil
		}
		lrows[i] = []any{int64(i), k, int64(i % 10)}
	}
	cols := []fpCol{{"i", arrow.PrimitiveTypes.Int64}, {"k", arrow.PrimitiveTypes.Int64}, {"v", arrow.PrimitiveTypes.Int64}}
	// small and big are the join types the plan shows with the smaller
	// and the larger right table.
	type query struct {
		name, sql, small, big string
		keep                  func(l []any, r [][]any) bool
	}
	// match reports whether some right row has l's key (and passes f).
	match := func(l []any, r [][]any, f func(l, r []any) bool) bool {
		if l[1] == nil {
			return false
		}
		for _, x := range r {
			if x[1] != nil && x[1].(int64) == l[1].(int64) && (f == nil || f(l, x)) {
				return true
			}
		}
		return false
	}
	greater := func(l, r []any) bool { return r[2].(int64) > l[2].(int64) }
	queries := []query{
		// Without a filter the optimizer's semi_to_inner_join rule
		// (logical/optimizer/semi_to_inner.go, the same estimate test)
		// makes a small right side an inner join with its distinct keys.
		{"IN", "SELECT i, k FROM l WHERE k IN (SELECT k FROM r)", "Inner", "LeftSemi",
			func(l []any, r [][]any) bool { return match(l, r, nil) }},
		{"EXISTS with filter", "SELECT i, k FROM l WHERE EXISTS (SELECT 1 FROM r WHERE r.k = l.k AND r.v > l.v)", "RightSemi", "LeftSemi",
			func(l []any, r [][]any) bool { return match(l, r, greater) }},
		{"NOT EXISTS", "SELECT i, k FROM l WHERE NOT EXISTS (SELECT 1 FROM r WHERE r.k = l.k)", "RightAnti", "LeftAnti",
			func(l []any, r [][]any) bool { return !match(l, r, nil) }},
		{"NOT EXISTS with filter", "SELECT i, k FROM l WHERE NOT EXISTS (SELECT 1 FROM r WHERE r.k = l.k AND r.v > l.v)", "RightAnti", "LeftAnti",
			func(l []any, r [][]any) bool { return !match(l, r, greater) }},
		// NOT IN is null-aware: a NULL outer key, or any NULL in the
		// subquery, leaves the row out.
		{"NOT IN", "SELECT i, k FROM l WHERE k NOT IN (SELECT k FROM r)", "RightAnti", "LeftAnti",
			func(l []any, r [][]any) bool {
				if l[1] == nil {
					return false
				}
				for _, x := range r {
					if x[1] == nil {
						return false
					}
				}
				return !match(l, r, nil)
			}},
		// An empty subquery: NOT IN is true for every row, NULL keys
		// included. The filter's estimate keeps the right side under half
		// the left at both sizes, so the build side is always the empty
		// one here.
		{"NOT IN an empty subquery", "SELECT i, k FROM l WHERE k NOT IN (SELECT k FROM r WHERE k > 100000)", "RightAnti", "RightAnti",
			func([]any, [][]any) bool { return true }},
	}
	for _, size := range []int{outer/2 - 1, outer / 2} {
		for _, rnull := range []bool{false, true} {
			t.Run(fmt.Sprintf("right %d rows, NULL keys %v", size, rnull), func(t *testing.T) {
				s := fpSession(t, 64, 1)
				fpRegister(t, s, "l", cols, lrows, 100)
				rrows := make([][]any, size)
				for i := range rrows {
					var k any = int64(i*7%450 + 50) // keys 50..499: some outer keys, some not
					if rnull && i%41 == 40 {
						k = nil
					}
					rrows[i] = []any{int64(i), k, int64(i % 12)}
				}
				fpRegister(t, s, "r", cols, rrows, 100)
				for _, q := range queries {
					plan := fpExplain(t, s, q.sql)
					join := "join_type=" + q.big
					if size < outer/2 {
						join = "join_type=" + q.small
					}
					if !strings.Contains(plan, join) {
						t.Errorf("%s: plan lacks %s:\n%s", q.name, join, plan)
					}
					var want [][]string
					for _, l := range lrows {
						if q.keep(l, rrows) {
							want = append(want, []string{fpText(l[0]), fpText(l[1])})
						}
					}
					fpSame(t, q.name, sqlRows(t, s, q.sql), want)
				}
			})
		}
	}
}

// ---- sort ----

// TestFastPathTopK crosses the top-k sort's switches (exec/sort/sort.go:
// consume compacts the buffered rows once they pass max(2·fetch,
// batch_size); sortBuffered selects with a heap (selectTop) when more than
// 4·fetch rows are buffered and sorts stably otherwise; once fetch rows
// are kept, dropBeyondTop filters every later batch against the worst kept
// row). Rows arrive in batches of 50 with many ties, NULLs and a key that
// first falls and then rises, so kept rows keep being displaced, for
// fetches from 1 past the row count. Each answer must equal the same
// ORDER BY without LIMIT (a full stable sort), cut in Go, and that full
// sort must equal Go's stable sort of the rows; EXPLAIN shows TopK. The
// same runs over four partitions merged.
func TestFastPathTopK(t *testing.T) {
	const n, batch = 2000, 50
	rows := make([][]any, n)
	for i := range rows {
		var k any = int64((n-i)/7%40 + i/900*3) // falling runs of ties, then higher
		if i%23 == 0 {
			k = nil
		}
		rows[i] = []any{int64(i), k, fmt.Sprintf("s%03d", i*37%101)}
	}
	cols := []fpCol{{"i", arrow.PrimitiveTypes.Int64}, {"k", arrow.PrimitiveTypes.Int64}, {"s", arrow.BinaryTypes.String}}
	cmpK := func(a, b any, desc, nullsFirst bool) int {
		switch {
		case a == nil && b == nil:
			return 0
		case a == nil:
			return map[bool]int{true: -1, false: 1}[nullsFirst]
		case b == nil:
			return map[bool]int{true: 1, false: -1}[nullsFirst]
		}
		c := cmp.Compare(a.(int64), b.(int64))
		if desc {
			c = -c
		}
		return c
	}
	orders := []struct {
		by  string
		cmp func(a, b []any) int
	}{
		{"k ASC NULLS LAST", func(a, b []any) int { return cmpK(a[1], b[1], false, false) }},
		{"k DESC NULLS FIRST", func(a, b []any) int { return cmpK(a[1], b[1], true, true) }},
		{"s DESC, k ASC NULLS FIRST", func(a, b []any) int {
			if c := strings.Compare(b[2].(string), a[2].(string)); c != 0 {
				return c
			}
			return cmpK(a[1], b[1], false, true)
		}},
	}
	check := func(t *testing.T, s *quiver.Session) {
		for _, o := range orders {
			full := "SELECT i, k, s FROM t ORDER BY " + o.by
			sorted := slices.Clone(rows)
			slices.SortStableFunc(sorted, o.cmp)
			var want []string
			for _, r := range sorted {
				want = append(want, fpText(r[0])+"|"+fpText(r[1])+"|"+fpText(r[2]))
			}
			all := fpJoin(sqlRows(t, s, full))
			fpSameOrdered(t, full, all, want)
			for _, f := range []struct{ fetch, offset int }{{1, 0}, {7, 0}, {24, 0}, {25, 3}, {50, 0}, {120, 0}, {499, 0}, {600, 10}, {1999, 0}, {2000, 0}, {5000, 0}, {0, 0}} {
				q := fmt.Sprintf("%s LIMIT %d OFFSET %d", full, f.fetch, f.offset)
				if f.fetch > 0 {
					if plan := fpExplain(t, s, q); !strings.Contains(plan, "TopK(fetch=") {
						t.Errorf("%s: the plan has no top-k sort:\n%s", q, plan)
					}
				}
				lo, hi := min(f.offset, n), min(f.offset+f.fetch, n)
				fpSameOrdered(t, q, fpJoin(sqlRows(t, s, q)), all[lo:hi])
			}
		}
	}
	t.Run("one partition", func(t *testing.T) {
		s := fpSession(t, batch, 1)
		fpRegister(t, s, "t", cols, rows, 300)
		check(t, s)
	})
	// Four scan partitions of two 250-row row groups each: each keeps its
	// own top-k (SortExec with preserve_partitioning) and the merge takes
	// the first rows; ties go to the lower partition (exec/merge.go), which
	// holds the earlier rows, so Go's stable sort is still the reference.
	t.Run("four partitions", func(t *testing.T) {
		schema, batches := fpBatches(t, cols, rows, 250)
		path := filepath.Join(t.TempDir(), "t.parquet")
		fpWriteParquet(t, path, schema, batches, parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(250)))
		s := fpSession(t, batch, 4)
		if err := s.RegisterParquet(context.Background(), "t", path); err != nil {
			t.Fatal(err)
		}
		if plan := fpExplain(t, s, "SELECT i FROM t ORDER BY k LIMIT 5"); !strings.Contains(plan, "SortPreservingMergeExec") || !strings.Contains(plan, "partitions=4") {
			t.Fatalf("not a merge of four sorted partitions:\n%s", plan)
		}
		check(t, s)
	})
}

// ---- scan ----

// TestFastPathParquetHelper crosses the Parquet direct decoder's
// single-partition helper (exec/scan/parquet/direct.go: planHelp gives
// about half the columns' decoding to a helper goroutine when
// helpEnabled is on, the scan is its table's only partition, it reads at
// least two columns and GOMAXPROCS ≥ 2; nextDirect then decodes runs of
// helpBatches (8) batches, cut at each row group's end). The file has
// six row groups of 1000 rows and a last one of 537, small data pages, and
// a string column whose dictionary overflows its page limit, so chunks
// switch from dictionary to PLAIN pages mid-chunk; with batches of 64 a
// run of 8 batches ends inside each row group and the row group's last
// batch is short. With target_partitions 1 the file is one partition (the
// plan says partitions=1, the helper's condition); with 4 it is split by
// row groups and no scan is helped. Both must return exactly the rows
// written, checked in Go; a LIMIT stops the scan while the helper may be
// a run ahead, after which the checked allocator and goleak show that
// nothing is left behind. Whether the helper ran is not observable from
// outside; the conditions above are.
func TestFastPathParquetHelper(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		// The helper needs a second P to be worth starting (planHelp).
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	}
	leaks := goleak.IgnoreCurrent()
	const total = 6537
	cols := []fpCol{
		{"id", arrow.PrimitiveTypes.Int64},
		{"a", arrow.PrimitiveTypes.Int32},
		{"b", arrow.PrimitiveTypes.Float64},
		{"s", arrow.BinaryTypes.String},
		{"d", arrow.FixedWidthTypes.Date32},
		{"m", &arrow.Decimal128Type{Precision: 12, Scale: 2}},
	}
	rows := make([][]any, total)
	for i := range rows {
		var a, s any = int32(i*31%1000 - 500), fmt.Sprintf("value-%05d-%s", i*7919%5000, strings.Repeat("q", i%13))
		if i%9 == 4 {
			a = nil
		}
		if i%29 == 3 {
			s = nil
		}
		rows[i] = []any{int64(i), a, float64(i) / 8, s, arrow.Date32(19000 + i%400), decimal128.FromI64(int64(i*1013%100000 - 50000))}
	}
	schema, batches := fpBatches(t, cols, rows, 700)
	path := filepath.Join(t.TempDir(), "t.parquet")
	fpWriteParquet(t, path, schema, batches, parquet.NewWriterProperties(
		parquet.WithMaxRowGroupLength(1000),
		parquet.WithDataPageSize(2048),
		parquet.WithDictionaryDefault(true),
		parquet.WithDictionaryPageSizeLimit(4096),
		parquet.WithStoreDecimalAsInteger(true),
		parquet.WithCompression(compress.Codecs.Snappy),
	))

	renderRow := func(r []any, idx ...int) string {
		out := make([]string, len(idx))
		for k, c := range idx {
			if m, ok := r[c].(decimal128.Num); ok {
				out[k] = m.ToString(2)
			} else {
				out[k] = fpText(r[c])
			}
		}
		return strings.Join(out, "|")
	}
	wantRows := func(keep func(i int) bool, idx ...int) []string {
		var out []string
		for i, r := range rows {
			if keep(i) {
				out = append(out, renderRow(r, idx...))
			}
		}
		return out
	}
	all := func(int) bool { return true }
	for _, parts := range []int{1, 4} {
		t.Run(fmt.Sprintf("target_partitions=%d", parts), func(t *testing.T) {
			s := fpSession(t, 64, parts)
			if err := s.RegisterParquet(context.Background(), "t", path); err != nil {
				t.Fatal(err)
			}
			q := "SELECT id, a, b, s, d, m FROM t"
			if plan := fpExplain(t, s, q); !strings.Contains(plan, fmt.Sprintf("ParquetScan: t partitions=%d", parts)) {
				t.Fatalf("the scan is not %d partitions:\n%s", parts, plan)
			}
			if n := fpScanBatches(t, s, q, "ParquetScan: t"); n < total/64 {
				t.Fatalf("scan gave %d batches, want at least %d", n, total/64)
			}
			order := ""
			if parts > 1 {
				order = " ORDER BY id" // several partitions interleave
			}
			fpSameOrdered(t, q, fpJoin(sqlRows(t, s, q+order)), wantRows(all, 0, 1, 2, 3, 4, 5))
			// Columns in another order than the file's, two of them.
			q = "SELECT s, id FROM t"
			fpSameOrdered(t, q, fpJoin(sqlRows(t, s, q+order)), wantRows(all, 3, 0))
			// One column twice: decoded once, output twice.
			q = "SELECT a, id, a AS a2 FROM t"
			fpSameOrdered(t, q, fpJoin(sqlRows(t, s, q+order)), wantRows(all, 1, 0, 1))
			// Row groups pruned by the predicate: the scan starts at the
			// third row group and stops after the fourth.
			q = "SELECT id, a, s FROM t WHERE id >= 2500 AND id < 3700"
			fpSameOrdered(t, q, fpJoin(sqlRows(t, s, q+order)), wantRows(func(i int) bool { return i >= 2500 && i < 3700 }, 0, 1, 3))
			q = "SELECT count(*), count(a), sum(a), count(s), min(s), max(s), sum(m) FROM t"
			var cnt, cntA, sumA, cntS int64
			var sumM int64
			lo, hi := "", ""
			for _, r := range rows {
				cnt++
				if r[1] != nil {
					cntA++
					sumA += int64(r[1].(int32))
				}
				if r[3] != nil {
					v := r[3].(string)
					if cntS == 0 || v < lo {
						lo = v
					}
					if cntS == 0 || v > hi {
						hi = v
					}
					cntS++
				}
				sumM += r[5].(decimal128.Num).BigInt().Int64()
			}
			want := fmt.Sprintf("%d|%d|%d|%d|%s|%s|%s", cnt, cntA, sumA, cntS, lo, hi, decimal128.FromI64(sumM).ToString(2))
			fpSameOrdered(t, q, fpJoin(sqlRows(t, s, q)), []string{want})
		})
	}
	// LIMIT stops a single-partition scan mid-run; everything is released
	// (the session's checked allocator, at cleanup) and no helper is left.
	t.Run("LIMIT stops the helper", func(t *testing.T) {
		s := fpSession(t, 64, 1)
		if err := s.RegisterParquet(context.Background(), "t", path); err != nil {
			t.Fatal(err)
		}
		for _, limit := range []int{1, 70, 700, 1500} {
			q := fmt.Sprintf("SELECT id, s, a FROM t LIMIT %d", limit)
			fpSameOrdered(t, q, fpJoin(sqlRows(t, s, q)), wantRows(func(i int) bool { return i < limit }, 0, 3, 1))
		}
	})
	// A memory limit hit while the scan or its helper decodes (the helper
	// recovers its panic and reports it) fails the query as out of
	// resources; larger limits let it finish with the right rows. Either
	// way the checked allocator (at cleanup) and goleak (below) show that
	// nothing is left behind.
	t.Run("memory limit while decoding", func(t *testing.T) {
		for _, limit := range []string{"16KB", "48KB", "96KB", "192KB", "384KB"} {
			t.Run(limit, func(t *testing.T) {
				s := fpSession(t, 64, 1)
				if err := s.RegisterParquet(context.Background(), "t", path); err != nil {
					t.Fatal(err)
				}
				sqlRows(t, s, "SET quiver.memory_limit = '"+limit+"'")
				q := "SELECT id, a, b, s, d, m FROM t WHERE id >= 5000"
				ctx := context.Background()
				df, err := s.SQL(ctx, q)
				if err != nil {
					t.Fatal(err)
				}
				batches, err := df.Collect(ctx)
				got := fpJoin(render(nil, batches))
				release(batches)
				switch {
				case qerr.Is(err, qerr.Resources):
					t.Logf("%s: %v", limit, err)
				case err != nil:
					t.Fatalf("%s: %v (kind %v), want a resources-exhausted error or the rows", q, err, qerr.KindOf(err))
				default:
					fpSameOrdered(t, q, got, wantRows(func(i int) bool { return i >= 5000 }, 0, 1, 2, 3, 4, 5))
				}
			})
		}
	})
	goleak.VerifyNone(t, leaks)
}
