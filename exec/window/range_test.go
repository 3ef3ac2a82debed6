package window_test

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math/big"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver/exec/exectest"
	"github.com/quiverdb/quiver/physical"
)

// RANGE frames with interval and fractional offsets, over DATE, TIMESTAMP,
// DOUBLE and DECIMAL keys, against a reference that tests each row of the
// partition for membership with exact arithmetic (big.Rat) and its own
// month arithmetic (time.Date, the day clamped to the month's end). The
// random offsets keep key ± offset monotonic in the key (months only over
// dates), where the operator's forward-only cursors and membership agree;
// TestWindowRangeMonthsNotMonotonic covers the other case.

// keyKind is the ORDER BY key's type in one case.
type keyKind int

const (
	keyDate keyKind = iota
	keyTimestamp
	keyFloat
	keyDecimal
)

var keyTypes = map[keyKind]arrow.DataType{
	keyDate: arrow.FixedWidthTypes.Date32, keyTimestamp: &arrow.TimestampType{Unit: arrow.Microsecond},
	keyFloat: f64, keyDecimal: dec,
}

// rkRow is one input row; k is days, microseconds, a float or cents.
type rkRow struct {
	id   int64
	g, v *int64
	k    *float64
}

type rangeSpec struct {
	kind             keyKind
	part, asc, nulls bool // nulls: NULLS FIRST
	frame            physical.WindowFrame
}

const microsPerDay = 86_400_000_000

func randomRangeRows(r *rand.Rand, kind keyKind, n int) []rkRow {
	out := make([]rkRow, n)
	for i := range out {
		x := rkRow{id: int64(i)}
		if r.IntN(6) != 0 {
			g := r.Int64N(3)
			x.g = &g
		}
		if r.IntN(5) != 0 {
			v := r.Int64N(100) - 50
			x.v = &v
		}
		if r.IntN(7) != 0 {
			var k float64
			day := float64(19716 + r.IntN(110)) // 2023-12-24 .. 2024-04-11, around month ends and a leap day
			switch kind {
			case keyDate:
				k = day
			case keyTimestamp:
				k = day*microsPerDay + float64(r.IntN(48))*1_800_000_000
			case keyFloat:
				k = float64(r.IntN(25)-12) / 4
			case keyDecimal:
				k = float64(r.IntN(601) - 300)
			}
			x.k = &k
		}
		out[i] = x
	}
	return out
}

// randomRangeBound is a bound whose offset suits kind.
func randomRangeBound(r *rand.Rand, kind keyKind) physical.FrameBound {
	b := physical.FrameBound{Kind: physical.BoundKind(r.IntN(5))}
	if b.Kind != physical.Preceding && b.Kind != physical.Following {
		return b
	}
	switch kind {
	case keyDate:
		switch r.IntN(3) {
		case 0:
			b.Offset = r.Int64N(20)
		case 1:
			b.IsInterval, b.Interval = true, arrow.MonthDayNanoInterval{Months: int32(r.IntN(3)), Days: int32(r.IntN(10))}
		default:
			b.IsInterval, b.Interval = true, arrow.MonthDayNanoInterval{Days: int32(r.IntN(5)), Nanoseconds: int64(r.IntN(48)) * 1_800_000_000_000}
		}
	case keyTimestamp:
		b.IsInterval, b.Interval = true, arrow.MonthDayNanoInterval{Days: int32(r.IntN(4)), Nanoseconds: int64(r.IntN(60)) * 1_800_000_000_000}
	case keyFloat:
		b.Offset, b.Scale = r.Int64N(300), 2 // hundredths; keys are quarters
		if b.Offset%25 != 0 {
			b.Offset -= b.Offset % 25 // exact in binary, so float sums are exact
		}
	case keyDecimal:
		b.Offset, b.Scale = r.Int64N(3000), int32(r.IntN(4))
	}
	return b
}

func randomRangeSpec(r *rand.Rand) rangeSpec {
	s := rangeSpec{kind: keyKind(r.IntN(4)), part: r.IntN(3) != 0, asc: r.IntN(2) == 0, nulls: r.IntN(2) == 0}
	for {
		f := physical.WindowFrame{Unit: physical.FrameRange, Start: randomRangeBound(r, s.kind), End: randomRangeBound(r, s.kind)}
		if f.Start.Kind != physical.UnboundedFollowing && f.End.Kind != physical.UnboundedPreceding && f.Start.Kind <= f.End.Kind {
			s.frame = f
			return s
		}
	}
}

// rat is a key as an exact number (days for dates, cents for decimals).
func rat(k float64) *big.Rat { return new(big.Rat).SetFloat64(k) }

// addMonths adds m months to a day number, clamping to the month's end.
func addMonths(days int64, m int) int64 {
	t := time.Unix(days*86400, 0).UTC()
	y, mo := t.Year(), int(t.Month())-1+m
	y += mo / 12
	mo %= 12
	if mo < 0 {
		mo += 12
		y--
	}
	last := time.Date(y, time.Month(mo+2), 0, 0, 0, 0, 0, time.UTC).Day()
	d := min(t.Day(), last)
	return time.Date(y, time.Month(mo+1), d, 0, 0, 0, 0, time.UTC).Unix() / 86400
}

// target is the key at bound b of a row with key k (sign +1: toward
// larger keys), in the reference's exact units: microseconds for an
// interval bound, else the key's own.
func (s rangeSpec) target(k float64, b physical.FrameBound, sign int) *big.Rat {
	if b.IsInterval {
		us := int64(k)
		if s.kind == keyDate {
			us = addMonths(int64(k), sign*int(b.Interval.Months)) * microsPerDay
		} else {
			d := us / microsPerDay
			us = addMonths(d, sign*int(b.Interval.Months))*microsPerDay + us%microsPerDay
		}
		us += int64(sign) * (int64(b.Interval.Days)*microsPerDay + b.Interval.Nanoseconds/1000)
		return new(big.Rat).SetInt64(us)
	}
	off := new(big.Rat).SetFrac(big.NewInt(b.Offset), new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(b.Scale)), nil))
	if s.kind == keyDecimal {
		off.Mul(off, big.NewRat(100, 1)) // keys are cents
	}
	if sign < 0 {
		off.Neg(off)
	}
	return off.Add(rat(k), off)
}

// keyIn is k in the units target uses for bound b.
func (s rangeSpec) keyIn(k float64, b physical.FrameBound) *big.Rat {
	if b.IsInterval && s.kind == keyDate {
		return new(big.Rat).SetInt64(int64(k) * microsPerDay)
	}
	return rat(k)
}

// cmpSort orders key a against the exact value t in sort order (a nil
// key where NULLs sort).
func (s rangeSpec) cmpSort(a *float64, t *big.Rat, b physical.FrameBound) int {
	if a == nil {
		if s.nulls {
			return -1
		}
		return 1
	}
	c := s.keyIn(*a, b).Cmp(t)
	if !s.asc {
		c = -c
	}
	return c
}

func (s rangeSpec) cmpKeys(a, b *float64) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil || b == nil:
		if (a == nil) == s.nulls {
			return -1
		}
		return 1
	}
	c := cmp.Compare(*a, *b)
	if !s.asc {
		c = -c
	}
	return c
}

// inRangeFrame reports whether x is in the frame of row cur.
func (s rangeSpec) inRangeFrame(cur, x rkRow) bool {
	before := s.cmpKeys(x.k, cur.k) < 0
	after := s.cmpKeys(x.k, cur.k) > 0
	check := func(b physical.FrameBound, isEnd bool) bool {
		switch {
		case b.Kind == physical.UnboundedPreceding || b.Kind == physical.UnboundedFollowing:
			return true
		case b.Kind == physical.CurrentRow || cur.k == nil:
			// A NULL key's offset bounds are its peer group's ends.
			if isEnd {
				return !after
			}
			return !before
		}
		sign := 1
		if b.Kind == physical.Preceding {
			sign = -1
		}
		if !s.asc {
			sign = -sign
		}
		c := s.cmpSort(x.k, s.target(*cur.k, b, sign), b)
		if isEnd {
			return c <= 0
		}
		return c >= 0
	}
	return check(s.frame.Start, false) && check(s.frame.End, true)
}

func keyJSON(kind keyKind, k *float64) any {
	switch {
	case k == nil:
		return nil
	case kind == keyDecimal:
		return centsString(big.NewInt(int64(*k)))
	case kind == keyFloat:
		return *k
	}
	return int64(*k)
}

func rangeRowsJSON(kind keyKind, rows []rkRow, extra func(rkRow, map[string]any)) string {
	out := make([]map[string]any, len(rows))
	for i, r := range rows {
		m := map[string]any{"id": r.id, "g": r.g, "k": keyJSON(kind, r.k), "v": r.v}
		if extra != nil {
			extra(r, m)
		}
		out[i] = m
	}
	b, _ := json.Marshal(out)
	return string(b)
}

func rangeSchema(kind keyKind) *arrow.Schema {
	return arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: i64}, {Name: "g", Type: i64, Nullable: true},
		{Name: "k", Type: keyTypes[kind], Nullable: true}, {Name: "v", Type: i64, Nullable: true},
	}, nil)
}

func rangePlan(s rangeSpec, scan physical.Plan) physical.Plan {
	sc := rangeSchema(s.kind)
	c := func(i int) physical.Expr {
		return &physical.Column{Index: i, Name: sc.Field(i).Name, Type: sc.Field(i).Type}
	}
	var in physical.Plan = scan
	var keys []physical.SortKey
	var partBy []physical.Expr
	if s.part {
		partBy = []physical.Expr{c(1)}
		keys = append(keys, physical.SortKey{Expr: c(1), Asc: true})
		in = &physical.Repartition{Input: in, Keys: partBy, N: 3}
	}
	order := []physical.SortKey{{Expr: c(2), Asc: s.asc, NullsFirst: s.nulls}}
	keys = append(keys, order...)
	in = &physical.Sort{Input: in, Keys: keys, Fetch: -1, PreservePartitioning: s.part}
	funcs := []physical.WindowFuncExpr{
		{Func: physical.WinAggregate, Agg: physical.AggCount, Frame: s.frame, Type: i64, Name: "n"},
		{Func: physical.WinAggregate, Agg: physical.AggSum, Args: []physical.Expr{c(3)}, Frame: s.frame, Type: i64, Name: "sum"},
		{Func: physical.WinAggregate, Agg: physical.AggMin, Args: []physical.Expr{c(0)}, Frame: s.frame, Type: i64, Name: "lo"},
		{Func: physical.WinAggregate, Agg: physical.AggMax, Args: []physical.Expr{c(0)}, Frame: s.frame, Type: i64, Name: "hi"},
	}
	return &physical.Window{Input: in, PartitionBy: partBy, OrderBy: order, Funcs: funcs}
}

func rangeReference(s rangeSpec, rows []rkRow) string {
	return rangeRowsJSON(s.kind, rows, func(cur rkRow, m map[string]any) {
		var n int
		var sum *int64
		var lo, hi *int64
		for _, x := range rows {
			if s.part && !eq(x.g, cur.g) || !s.inRangeFrame(cur, x) {
				continue
			}
			n++
			if x.v != nil {
				v := *x.v
				if sum != nil {
					v += *sum
				}
				sum = &v
			}
			id := x.id
			if lo == nil || id < *lo {
				lo = &id
			}
			if hi == nil || id > *hi {
				h := id
				hi = &h
			}
		}
		m["n"], m["sum"], m["lo"], m["hi"] = n, sum, lo, hi
	})
}

func TestWindowRangeOffsetsRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	for k := range 40 {
		s := randomRangeSpec(r)
		rows := randomRangeRows(r, s.kind, 1+r.IntN(50+k*4))
		t.Logf("case %d: kind=%d part=%v asc=%v nullsFirst=%v %s", k, s.kind, s.part, s.asc, s.nulls, s.frame)
		exectest.Run(t, exectest.Case{
			Name:   fmt.Sprintf("range%d", k),
			Inputs: []exectest.Input{{Name: "t", Schema: rangeSchema(s.kind), Rows: rangeRowsJSON(s.kind, rows, nil), Partitions: 1 + r.IntN(3)}},
			Plan:   func(sc []physical.Plan) physical.Plan { return rangePlan(s, sc[0]) },
			Want:   rangeReference(s, rows),
		})
	}
}

// Over a TIMESTAMP key, t - 1 month is not monotonic in t (2024-03-30
// 10:00 gives 02-29 10:00, 2024-03-31 09:00 gives 02-29 09:00): the frame
// start stays where the earlier row left it, as PostgreSQL's does, so the
// last row's frame leaves out 2024-02-29 09:30.
func TestWindowRangeMonthsNotMonotonic(t *testing.T) {
	s := rangeSpec{kind: keyTimestamp, asc: true, frame: physical.WindowFrame{Unit: physical.FrameRange,
		Start: physical.FrameBound{Kind: physical.Preceding, IsInterval: true, Interval: arrow.MonthDayNanoInterval{Months: 1}},
		End:   physical.FrameBound{Kind: physical.CurrentRow}}}
	ts := func(v string) float64 {
		tm, err := time.Parse("2006-01-02 15:04", v)
		if err != nil {
			t.Fatal(err)
		}
		return float64(tm.UnixMicro())
	}
	var rows []rkRow
	for i, v := range []string{"2024-02-29 09:30", "2024-03-01 09:00", "2024-03-30 10:00", "2024-03-31 09:00"} {
		k := ts(v)
		rows = append(rows, rkRow{id: int64(i + 1), k: &k})
	}
	counts := []int{1, 2, 2, 3} // by membership the last would be 4
	want := rangeRowsJSON(s.kind, rows, func(x rkRow, m map[string]any) {
		n := counts[x.id-1]
		lo := x.id - int64(n) + 1
		m["n"], m["sum"], m["lo"], m["hi"] = n, nil, lo, x.id
	})
	exectest.Run(t, exectest.Case{
		Name:   "months",
		Inputs: []exectest.Input{{Name: "t", Schema: rangeSchema(s.kind), Rows: rangeRowsJSON(s.kind, rows, nil), Partitions: 1}},
		Plan:   func(sc []physical.Plan) physical.Plan { return rangePlan(s, sc[0]) },
		Want:   want,
	})
}
