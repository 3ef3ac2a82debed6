package shuffle

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver/physical"
)

var zoneSchema = arrow.NewSchema([]arrow.Field{
	{Name: "i", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
	{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "f", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
}, nil)

// zoneBatch is a batch of zoneSchema; a nil pointer is NULL.
func zoneBatch(t *testing.T, is []*int32, ss []*string) arrow.RecordBatch {
	t.Helper()
	b := array.NewRecordBuilder(memory.DefaultAllocator, zoneSchema)
	defer b.Release()
	for r := range is {
		if is[r] == nil {
			b.Field(0).AppendNull()
		} else {
			b.Field(0).(*array.Int32Builder).Append(*is[r])
		}
		if ss[r] == nil {
			b.Field(1).AppendNull()
		} else {
			b.Field(1).(*array.StringBuilder).Append(*ss[r])
		}
		b.Field(2).(*array.Float64Builder).Append(1.5)
	}
	return b.NewRecordBatch()
}

func p[T any](v T) *T { return &v }

func TestRoundUp(t *testing.T) {
	for _, c := range []struct {
		in   string
		want string
		ok   bool
	}{
		{"abc", "abd", true},
		{"ab\xff", "ac", true},
		{"\xff\xff", "", false},
		{"a\xff\xff", "b", true},
	} {
		got, ok := roundUp([]byte(c.in))
		if ok != c.ok || string(got) != c.want {
			t.Errorf("roundUp(%q) = %q, %v; want %q, %v", c.in, got, ok, c.want, c.ok)
		}
		if ok && !(string(got) > c.in+"\xff\xff\xff") {
			t.Errorf("roundUp(%q) = %q is no upper bound of its extensions", c.in, got)
		}
	}
}

// TestZonesCollectAndSkip: a file's stats and zones from its batches, the
// sidecar round trip, and which terms rule a batch out.
func TestZonesCollectAndSkip(t *testing.T) {
	long := strings.Repeat("m", zoneStringBytes) + "zz"
	b1 := zoneBatch(t, []*int32{p(int32(5)), nil, p(int32(-3))}, []*string{p("apple"), p(long), nil})
	defer b1.Release()
	b2 := zoneBatch(t, []*int32{nil, nil}, []*string{p("pear"), p("pear")})
	defer b2.Release()
	sc := newStatsCollector(zoneSchema)
	sc.add(b1)
	sc.add(b2)

	want := []physical.ColumnStats{
		{Bounded: true, Lo: -3, Hi: 5, Distinct: 2},
		{LongestAtLeast: len(long)},
		{NoNulls: true},
	}
	if got := sc.stats(); !reflect.DeepEqual(got, want) {
		t.Fatalf("stats %+v, want %+v", got, want)
	}
	z := sc.zones
	if !z[0][0].Has || z[0][0].Lo != -3 || z[0][0].Hi != 5 || z[0][0].Nulls != 1 || z[1][0].Has || z[1][0].Nulls != 2 {
		t.Fatalf("int zones %+v %+v", z[0][0], z[1][0])
	}
	// The long maximum is cut and rounded up; the minimum is exact.
	if s := z[0][1]; !s.HiOK || string(s.SLo) != "apple" || !(string(s.SHi) > long) || len(s.SHi) > zoneStringBytes {
		t.Fatalf("string zone %+v", s)
	}

	size, kinds, zones, err := decodeZones(encodeZones(12345, sc.kinds(), sc.zones))
	if err != nil || size != 12345 || !reflect.DeepEqual(kinds, []zoneKind{zoneInt, zoneString, zoneNone}) || len(zones) != 2 {
		t.Fatalf("decode: %v %v %d", err, kinds, len(zones))
	}
	for j := range zones {
		for c := range zones[j] {
			a, b := zones[j][c], sc.zones[j][c]
			if a.Has != b.Has || a.HiOK != b.HiOK || a.Nulls != b.Nulls || a.Lo != b.Lo || a.Hi != b.Hi || !bytes.Equal(a.SLo, b.SLo) || !bytes.Equal(a.SHi, b.SHi) {
				t.Fatalf("zone %d/%d: %+v, want %+v", j, c, a, b)
			}
		}
	}
	if _, _, _, err := decodeZones([]byte("QZM1\x05\x05")); err == nil {
		t.Fatal("a truncated sidecar decoded")
	}

	i := &physical.Column{Index: 0, Type: arrow.PrimitiveTypes.Int32}
	s := &physical.Column{Index: 1, Type: arrow.BinaryTypes.String}
	f := &physical.Column{Index: 2, Type: arrow.PrimitiveTypes.Float64}
	il := func(v int32) *physical.Literal { return &physical.Literal{Type: arrow.PrimitiveTypes.Int32, Value: v} }
	sl := func(v string) *physical.Literal { return &physical.Literal{Type: arrow.BinaryTypes.String, Value: v} }
	cmp := func(op physical.BinaryOp, l, r physical.Expr) physical.Expr {
		return &physical.Binary{Op: op, Left: l, Right: r, Type: arrow.FixedWidthTypes.Boolean}
	}
	and := func(l, r physical.Expr) physical.Expr { return cmp(physical.OpAnd, l, r) }
	for _, c := range []struct {
		name   string
		pred   physical.Expr
		skip1  bool // batch 1: i in [-3, 5], one NULL; s in [apple, mmm..zz], one NULL
		skip2  bool // batch 2: i all NULL; s = pear
		ignore bool // no term
	}{
		{"i = 5", cmp(physical.OpEq, i, il(5)), false, true, false},
		{"i = 6", cmp(physical.OpEq, i, il(6)), true, true, false},
		{"i < -3", cmp(physical.OpLt, i, il(-3)), true, true, false},
		{"i <= -3", cmp(physical.OpLtEq, i, il(-3)), false, true, false},
		{"i > 5", cmp(physical.OpGt, i, il(5)), true, true, false},
		{"5 > i", cmp(physical.OpGt, il(5), i), false, true, false},
		{"i >= 5", cmp(physical.OpGtEq, i, il(5)), false, true, false},
		{"i IN (7, 9)", &physical.InList{Expr: i, List: []physical.Expr{il(7), il(9)}}, true, true, false},
		{"i IN (7, 0)", &physical.InList{Expr: i, List: []physical.Expr{il(7), il(0)}}, false, true, false},
		{"i NOT IN (7)", &physical.InList{Expr: i, List: []physical.Expr{il(7)}, Negated: true}, false, false, true},
		{"i IS NULL", &physical.IsNull{Expr: i}, false, false, false},
		{"s IS NULL", &physical.IsNull{Expr: s}, false, true, false},
		{"i != 5", cmp(physical.OpNotEq, i, il(5)), false, false, true},
		{"f > 2", cmp(physical.OpGt, f, &physical.Literal{Type: arrow.PrimitiveTypes.Float64, Value: 2.0}), false, false, true},
		{"s = pear", cmp(physical.OpEq, s, sl("pear")), true, false, false},
		{"s = mmm..zz", cmp(physical.OpEq, s, sl(long)), false, true, false},
		{"s > mmm..zz", cmp(physical.OpGt, s, sl(long)), false, false, false},
		{"s > pear", cmp(physical.OpGt, s, sl("pear")), true, true, false},
		{"s < apple", cmp(physical.OpLt, s, sl("apple")), true, true, false},
		{"s >= apple AND i > 100", and(cmp(physical.OpGtEq, s, sl("apple")), cmp(physical.OpGt, i, il(100))), true, true, false},
		{"i > 100 OR s = pear", &physical.Binary{Op: physical.OpOr, Left: cmp(physical.OpGt, i, il(100)), Right: cmp(physical.OpEq, s, sl("pear"))}, false, false, true},
	} {
		terms := zoneTerms(c.pred, zoneSchema)
		if (len(terms) == 0) != c.ignore {
			t.Errorf("%s: terms %+v", c.name, terms)
			continue
		}
		if got := skip(terms, kinds, zones[0]); got != c.skip1 {
			t.Errorf("%s: batch 1 skipped %v, want %v", c.name, got, c.skip1)
		}
		if got := skip(terms, kinds, zones[1]); got != c.skip2 {
			t.Errorf("%s: batch 2 skipped %v, want %v", c.name, got, c.skip2)
		}
	}
}

// TestIntSetBound: the exact distinct count gives up past distinctLimit.
func TestIntSetBound(t *testing.T) {
	var s intSet
	for v := range int64(distinctLimit) {
		if !s.add(v*1_000_003-math.MaxInt32) || !s.add(v*1_000_003-math.MaxInt32) {
			t.Fatalf("value %d refused", v)
		}
	}
	if s.n != distinctLimit {
		t.Fatalf("%d values, want %d", s.n, distinctLimit)
	}
	if s.add(-1) {
		t.Fatal("a value past the limit was taken")
	}
}

// TestZoneTermsTemporal: a date or timestamp literal is a term only of a
// column of its very type (a timestamp's unit decides what its number
// means).
func TestZoneTermsTemporal(t *testing.T) {
	ms, us := &arrow.TimestampType{Unit: arrow.Millisecond}, &arrow.TimestampType{Unit: arrow.Microsecond}
	schema := arrow.NewSchema([]arrow.Field{{Name: "d", Type: arrow.FixedWidthTypes.Date32}, {Name: "ts", Type: ms}}, nil)
	cmp := func(c int, dt arrow.DataType, lit *physical.Literal) physical.Expr {
		return &physical.Binary{Op: physical.OpLt, Left: &physical.Column{Index: c, Type: dt}, Right: lit, Type: arrow.FixedWidthTypes.Boolean}
	}
	if n := len(zoneTerms(cmp(0, arrow.FixedWidthTypes.Date32, &physical.Literal{Type: arrow.FixedWidthTypes.Date32, Value: arrow.Date32(7)}), schema)); n != 1 {
		t.Fatalf("date < date: %d terms", n)
	}
	if n := len(zoneTerms(cmp(1, ms, &physical.Literal{Type: ms, Value: arrow.Timestamp(7)}), schema)); n != 1 {
		t.Fatalf("ts(ms) < ts(ms): %d terms", n)
	}
	if n := len(zoneTerms(cmp(1, ms, &physical.Literal{Type: us, Value: arrow.Timestamp(7)}), schema)); n != 0 {
		t.Fatalf("ts(ms) < ts(us): %d terms, want none", n)
	}
}

// TestReadZonesChecksItsFile: a sidecar is used only beside the data file
// it was written for (its size), and a missing one means no zones.
func TestReadZonesChecksItsFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "data-0.arrow")
	if err := os.WriteFile(path, make([]byte, 100), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, z := readZones(path, 1); z != nil {
		t.Fatal("zones without a sidecar")
	}
	zs := [][]zone{{{Has: true, Lo: 1, Hi: 2}}}
	for size, want := range map[int64]bool{100: true, 101: false} {
		if err := os.WriteFile(path+ZonesSuffix, encodeZones(size, []zoneKind{zoneInt}, zs), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, z := readZones(path, 1); (z != nil) != want {
			t.Errorf("sidecar for %d bytes beside 100: zones %v", size, z)
		}
		if _, z := readZones(path, 2); z != nil {
			t.Errorf("zones of 1 column for a schema of 2")
		}
	}
}
