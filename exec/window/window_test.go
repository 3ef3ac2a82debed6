package window_test

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/quiverdb/quiver/exec"
	"github.com/quiverdb/quiver/exec/execop"
	"github.com/quiverdb/quiver/exec/exectest"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
)

// The operator is checked through exectest (batch sizes 1, 7 and the
// default over random input splits, early Close, cancellation, the checked
// allocator) on a small hand-computed case, and on random inputs against
// a row-at-a-time reference written here from the SQL definitions: each
// row's partition, its sort position, and its frame as the rows that pass
// a membership test, rather than the operator's moving bounds.

var (
	i64    = arrow.PrimitiveTypes.Int64
	f64    = arrow.PrimitiveTypes.Float64
	dec    = &arrow.Decimal128Type{Precision: 10, Scale: 2}
	dec38  = &arrow.Decimal128Type{Precision: 38, Scale: 2}
	schema = arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: i64}, {Name: "g", Type: i64, Nullable: true}, {Name: "o", Type: i64, Nullable: true},
		{Name: "v", Type: i64, Nullable: true}, {Name: "d", Type: dec, Nullable: true},
	}, nil)
)

func col(i int) physical.Expr {
	return &physical.Column{Index: i, Name: schema.Field(i).Name, Type: schema.Field(i).Type}
}

func lit(v int64) physical.Expr { return &physical.Literal{Type: i64, Value: v} }

// plan is a Window over the scans hash-partitioned on g and sorted, as the
// planner lays it out.
func plan(scan physical.Plan, part bool, order []physical.SortKey, funcs []physical.WindowFuncExpr) physical.Plan {
	var in physical.Plan = scan
	var keys []physical.SortKey
	var partBy []physical.Expr
	if part {
		partBy = []physical.Expr{col(1)}
		keys = append(keys, physical.SortKey{Expr: col(1), Asc: true})
		in = &physical.Repartition{Input: in, Keys: partBy, N: 3}
	}
	keys = append(keys, order...)
	in = &physical.Sort{Input: in, Keys: keys, Fetch: -1, PreservePartitioning: part}
	return &physical.Window{Input: in, PartitionBy: partBy, OrderBy: order, Funcs: funcs}
}

var (
	unboundedFrame = physical.WindowFrame{Unit: physical.FrameRows, Start: physical.FrameBound{Kind: physical.UnboundedPreceding}, End: physical.FrameBound{Kind: physical.UnboundedFollowing}}
	runningFrame   = physical.WindowFrame{Unit: physical.FrameRange, Start: physical.FrameBound{Kind: physical.UnboundedPreceding}, End: physical.FrameBound{Kind: physical.CurrentRow}}
)

func TestWindowSmall(t *testing.T) {
	rows := `[
		{"id": 1, "g": 1, "o": 1, "v": 10, "d": "1.50"},
		{"id": 2, "g": 1, "o": 2, "v": null, "d": "2.25"},
		{"id": 3, "g": 1, "o": 2, "v": 30, "d": null},
		{"id": 4, "g": 2, "o": 5, "v": 4, "d": "0.10"},
		{"id": 5, "g": null, "o": null, "v": 7, "d": "1.00"},
		{"id": 6, "g": null, "o": 3, "v": null, "d": "2.00"}
	]`
	order := []physical.SortKey{{Expr: col(2), Asc: true}}
	sliding := physical.WindowFrame{Unit: physical.FrameRows, Start: physical.FrameBound{Kind: physical.Preceding, Offset: 1}, End: physical.FrameBound{Kind: physical.CurrentRow}}
	funcs := []physical.WindowFuncExpr{
		{Func: physical.WinRank, Type: i64, Name: "rank"},
		{Func: physical.WinDenseRank, Type: i64, Name: "dense_rank"},
		{Func: physical.WinAggregate, Agg: physical.AggSum, Args: []physical.Expr{col(3)}, Frame: runningFrame, Type: i64, Name: "running"},
		{Func: physical.WinAggregate, Agg: physical.AggCount, Frame: unboundedFrame, Type: i64, Name: "count"},
		{Func: physical.WinAggregate, Agg: physical.AggSum, Args: []physical.Expr{col(4)}, Frame: unboundedFrame, Type: dec38, Name: "dsum"},
		{Func: physical.WinAggregate, Agg: physical.AggMax, Args: []physical.Expr{col(3)}, Frame: sliding, Type: i64, Name: "slidemax"},
		{Func: physical.WinLag, Args: []physical.Expr{col(3), lit(1), lit(-1)}, Type: i64, Name: "lag"},
	}
	// Partition 1 ordered by o: 1 | 2, 2 (peers, in input order 2, 3).
	// NULL partition: o = 3, then NULL (NULLs last).
	want := `[
		{"id": 1, "g": 1, "o": 1, "v": 10, "d": "1.50", "rank": 1, "dense_rank": 1, "running": 10, "count": 3, "dsum": "3.75", "slidemax": 10, "lag": -1},
		{"id": 2, "g": 1, "o": 2, "v": null, "d": "2.25", "rank": 2, "dense_rank": 2, "running": 40, "count": 3, "dsum": "3.75", "slidemax": 10, "lag": 10},
		{"id": 3, "g": 1, "o": 2, "v": 30, "d": null, "rank": 2, "dense_rank": 2, "running": 40, "count": 3, "dsum": "3.75", "slidemax": 30, "lag": null},
		{"id": 4, "g": 2, "o": 5, "v": 4, "d": "0.10", "rank": 1, "dense_rank": 1, "running": 4, "count": 1, "dsum": "0.10", "slidemax": 4, "lag": -1},
		{"id": 6, "g": null, "o": 3, "v": null, "d": "2.00", "rank": 1, "dense_rank": 1, "running": null, "count": 2, "dsum": "3.00", "slidemax": null, "lag": -1},
		{"id": 5, "g": null, "o": null, "v": 7, "d": "1.00", "rank": 2, "dense_rank": 2, "running": 7, "count": 2, "dsum": "3.00", "slidemax": 7, "lag": null}
	]`
	// One input partition keeps the peers' input order (2 before 3)
	// through the stable sort, which the lag and sliding max depend on.
	exectest.Run(t, exectest.Case{
		Name:   "small",
		Inputs: []exectest.Input{{Name: "t", Schema: schema, Rows: rows, Partitions: 1}},
		Plan:   func(s []physical.Plan) physical.Plan { return plan(s[0], true, order, funcs) },
		Want:   want,
	})
}

// ---- the reference ------------------------------------------------------------------

type row struct {
	id      int64
	g, o, v *int64
	d       *int64 // hundredths
}

func randomRows(r *rand.Rand, n int) []row {
	opt := func(p int, hi int64, lo int64) *int64 {
		if r.IntN(p) == 0 {
			return nil
		}
		x := lo + r.Int64N(hi-lo)
		return &x
	}
	out := make([]row, n)
	for i := range out {
		out[i] = row{id: int64(i), g: opt(8, 4, 0), o: opt(6, 12, -3), v: opt(5, 100, -50), d: opt(5, 100000, -100000)}
	}
	return out
}

func rowsJSON(rs []row) string {
	out := make([]map[string]any, len(rs))
	for i, r := range rs {
		m := map[string]any{"id": r.id, "g": r.g, "o": r.o, "v": r.v, "d": nil}
		if r.d != nil {
			m["d"] = centsString(big.NewInt(*r.d))
		}
		out[i] = m
	}
	b, _ := json.Marshal(out)
	return string(b)
}

func centsString(c *big.Int) string {
	neg := c.Sign() < 0
	a := new(big.Int).Abs(c)
	s := fmt.Sprintf("%03d", a)
	s = s[:len(s)-2] + "." + s[len(s)-2:]
	if neg {
		s = "-" + s
	}
	return s
}

// spec is one random window: its ORDER BY (over o, with id appended when
// unique), and functions.
type spec struct {
	part       bool
	asc        bool
	nullsFirst bool
	byID       bool // ORDER BY o, id: every row its own peer group
	funcs      []physical.WindowFuncExpr
}

func (s spec) order() []physical.SortKey {
	keys := []physical.SortKey{{Expr: col(2), Asc: s.asc, NullsFirst: s.nullsFirst}}
	if s.byID {
		keys = append(keys, physical.SortKey{Expr: col(0), Asc: true})
	}
	return keys
}

// cmpO orders two o values as the spec sorts them.
func (s spec) cmpO(a, b *int64) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil || b == nil:
		if (a == nil) == s.nullsFirst {
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

func eq(a, b *int64) bool { return (a == nil && b == nil) || (a != nil && b != nil && *a == *b) }

// reference computes the expected output rows (as JSON objects) of s over rows.
func reference(s spec, rows []row) string {
	var out []map[string]any
	for _, r := range rows {
		// The partition, in sort order.
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
		peer := func(i, j int) bool { return eq(p[i].o, p[j].o) && (!s.byID || i == j) }
		// group[i]: the index of row i's peer group.
		group := make([]int, len(p))
		for i := 1; i < len(p); i++ {
			group[i] = group[i-1]
			if !peer(i-1, i) {
				group[i]++
			}
		}
		m := map[string]any{"id": r.id, "g": r.g, "o": r.o, "v": r.v, "d": nil}
		if r.d != nil {
			m["d"] = centsString(big.NewInt(*r.d))
		}
		for _, f := range s.funcs {
			var frame []int
			for i := range p {
				if inFrame(s, f.Frame, p, group, pos, i) {
					frame = append(frame, i)
				}
			}
			m[f.Name] = refValue(f, p, group, pos, frame)
		}
		out = append(out, m)
	}
	b, _ := json.Marshal(out)
	return string(b)
}

// inFrame reports whether row i of the sorted partition p is in row pos's frame.
func inFrame(s spec, fr physical.WindowFrame, p []row, group []int, pos, i int) bool {
	return !beforeStart(s, fr.Unit, fr.Start, p, group, pos, i) && !afterEnd(s, fr.Unit, fr.End, p, group, pos, i)
}

// beforeStart: row i sorts before the frame's start bound b of row pos.
func beforeStart(s spec, u physical.FrameUnit, b physical.FrameBound, p []row, group []int, pos, i int) bool {
	switch b.Kind {
	case physical.UnboundedPreceding:
		return false
	case physical.UnboundedFollowing:
		return true
	}
	off := b.Offset
	if b.Kind == physical.Preceding {
		off = -off
	} else if b.Kind == physical.CurrentRow {
		off = 0
	}
	switch u {
	case physical.FrameRows:
		return int64(i) < int64(pos)+off
	case physical.FrameGroups:
		return int64(group[i]) < int64(group[pos])+off
	}
	if b.Kind == physical.CurrentRow || p[pos].o == nil {
		return group[i] < group[pos]
	}
	return s.cmpO(p[i].o, shifted(s, *p[pos].o, off)) < 0
}

// afterEnd: row i sorts after the frame's end bound b of row pos.
func afterEnd(s spec, u physical.FrameUnit, b physical.FrameBound, p []row, group []int, pos, i int) bool {
	switch b.Kind {
	case physical.UnboundedPreceding:
		return true
	case physical.UnboundedFollowing:
		return false
	}
	off := b.Offset
	if b.Kind == physical.Preceding {
		off = -off
	} else if b.Kind == physical.CurrentRow {
		off = 0
	}
	switch u {
	case physical.FrameRows:
		return int64(i) > int64(pos)+off
	case physical.FrameGroups:
		return int64(group[i]) > int64(group[pos])+off
	}
	if b.Kind == physical.CurrentRow || p[pos].o == nil {
		return group[i] > group[pos]
	}
	return s.cmpO(p[i].o, shifted(s, *p[pos].o, off)) > 0
}

// shifted is the key off rows "later" in sort order than v.
func shifted(s spec, v, off int64) *int64 {
	if !s.asc {
		off = -off
	}
	x := v + off
	return &x
}

func refValue(f physical.WindowFuncExpr, p []row, group []int, pos int, frame []int) any {
	n := len(p)
	switch f.Func {
	case physical.WinRowNumber:
		return pos + 1
	case physical.WinRank:
		return slices.Index(group, group[pos]) + 1
	case physical.WinDenseRank:
		return group[pos] + 1
	case physical.WinPercentRank:
		if n == 1 {
			return 0.0
		}
		return float64(slices.Index(group, group[pos])) / float64(n-1)
	case physical.WinCumeDist:
		last := 0
		for i := range p {
			if group[i] <= group[pos] {
				last = i + 1
			}
		}
		return float64(last) / float64(n)
	case physical.WinNtile:
		// Deal rows to buckets: the first n%k buckets take one row more.
		k := f.Args[0].(*physical.Literal).Value.(int64)
		bucket, left := int64(1), int64(0)
		for i := 0; i <= pos; i++ {
			if left == 0 {
				if i > 0 {
					bucket++
				}
				left = int64(n) / k
				if bucket <= int64(n)%k {
					left++
				}
			}
			left--
		}
		return bucket
	case physical.WinLag, physical.WinLead:
		off := f.Args[1].(*physical.Literal).Value.(int64)
		if f.Func == physical.WinLag {
			off = -off
		}
		if f.IgnoreNulls && off != 0 {
			// Step row by row, counting only the non-NULL values.
			step, left := 1, off
			if off < 0 {
				step, left = -1, -off
			}
			for t := pos + step; t >= 0 && t < n; t += step {
				if p[t].v != nil {
					if left--; left == 0 {
						return p[t].v
					}
				}
			}
			return f.Args[2].(*physical.Literal).Value
		}
		if t := pos + int(off); t >= 0 && t < n {
			return p[t].v
		}
		return f.Args[2].(*physical.Literal).Value
	case physical.WinFirstValue, physical.WinLastValue, physical.WinNthValue:
		if f.IgnoreNulls {
			var kept []int
			for _, i := range frame {
				if p[i].v != nil {
					kept = append(kept, i)
				}
			}
			frame = kept
		}
		k := 0
		switch f.Func {
		case physical.WinLastValue:
			k = len(frame) - 1
		case physical.WinNthValue:
			k = int(f.Args[1].(*physical.Literal).Value.(int64)) - 1
		}
		if k < 0 || k >= len(frame) {
			return nil
		}
		return p[frame[k]].v
	}
	// Aggregates over v (ints) or d (decimals, by column 4).
	useD := len(f.Args) > 0 && f.Args[0].(*physical.Column).Index == 4
	var vals []int64
	for _, i := range frame {
		x := p[i].v
		if useD {
			x = p[i].d
		}
		if len(f.Args) == 0 || x != nil {
			if x == nil {
				vals = append(vals, 0)
			} else {
				vals = append(vals, *x)
			}
		}
	}
	if f.Distinct {
		slices.Sort(vals)
		vals = slices.Compact(vals)
	}
	if f.Agg == physical.AggCount {
		return len(vals)
	}
	if len(vals) == 0 {
		return nil
	}
	sum := new(big.Int)
	for _, x := range vals {
		sum.Add(sum, big.NewInt(x))
	}
	switch f.Agg {
	case physical.AggSum:
		if useD {
			return centsString(sum)
		}
		return sum.Int64()
	case physical.AggAvg:
		if useD {
			// Decimal to double as the aggregates convert (arrow-go's rounding).
			return decimal128.FromBigInt(sum).ToFloat64(2) / float64(len(vals))
		}
		s, _ := new(big.Float).SetInt(sum).Float64()
		return s / float64(len(vals))
	case physical.AggMin, physical.AggMax:
		best := vals[0]
		for _, x := range vals {
			if (f.Agg == physical.AggMin && x < best) || (f.Agg == physical.AggMax && x > best) {
				best = x
			}
		}
		if useD {
			return centsString(big.NewInt(best))
		}
		return best
	}
	panic("unreachable")
}

// ---- random specs -------------------------------------------------------------------

func randomFrame(r *rand.Rand, unit physical.FrameUnit) physical.WindowFrame {
	bound := func() physical.FrameBound {
		return physical.FrameBound{Kind: physical.BoundKind(r.IntN(5)), Offset: r.Int64N(4)}
	}
	for {
		f := physical.WindowFrame{Unit: unit, Start: bound(), End: bound()}
		if f.Start.Kind != physical.UnboundedFollowing && f.End.Kind != physical.UnboundedPreceding && f.Start.Kind <= f.End.Kind {
			return f
		}
	}
}

func randomSpec(r *rand.Rand) spec {
	s := spec{part: r.IntN(4) != 0, asc: r.IntN(2) == 0, nullsFirst: r.IntN(2) == 0, byID: r.IntN(2) == 0}
	if s.byID {
		// Unique order: every function is deterministic.
		s.funcs = append(s.funcs,
			physical.WindowFuncExpr{Func: physical.WinRowNumber, Type: i64},
			physical.WindowFuncExpr{Func: physical.WinNtile, Args: []physical.Expr{lit(1 + r.Int64N(5))}, Type: i64},
			physical.WindowFuncExpr{Func: physical.WinLag, Args: []physical.Expr{col(3), lit(r.Int64N(3)), lit(-7)}, Type: i64},
			physical.WindowFuncExpr{Func: physical.WinLead, Args: []physical.Expr{col(3), lit(1 + r.Int64N(3)), &physical.Literal{Type: i64}}, Type: i64},
		)
		unit := physical.FrameRows
		if r.IntN(2) == 0 {
			unit = physical.FrameGroups
		}
		for _, fn := range []physical.WindowFunc{physical.WinFirstValue, physical.WinLastValue, physical.WinNthValue} {
			f := physical.WindowFuncExpr{Func: fn, Args: []physical.Expr{col(3)}, Frame: randomFrame(r, unit), Type: i64}
			if fn == physical.WinNthValue {
				f.Args = append(f.Args, lit(1+r.Int64N(3)))
			}
			s.funcs = append(s.funcs, f)
		}
	} else {
		s.funcs = append(s.funcs,
			physical.WindowFuncExpr{Func: physical.WinRank, Type: i64},
			physical.WindowFuncExpr{Func: physical.WinDenseRank, Type: i64},
			physical.WindowFuncExpr{Func: physical.WinPercentRank, Type: f64},
			physical.WindowFuncExpr{Func: physical.WinCumeDist, Type: f64},
		)
	}
	// Aggregates over peer-closed frames are deterministic either way.
	for range 6 {
		unit := physical.FrameUnit(r.IntN(3))
		switch {
		case !s.byID && unit == physical.FrameRows:
			unit = physical.FrameRange // ROWS would split peers: nondeterministic
		case s.byID && unit == physical.FrameRange:
			unit = physical.FrameRows // RANGE offsets need one ORDER BY key
		}
		f := physical.WindowFuncExpr{Func: physical.WinAggregate, Agg: physical.AggFunc(r.IntN(5)), Frame: randomFrame(r, unit)}
		arg := 3
		if r.IntN(3) == 0 {
			arg = 4
		}
		if !(f.Agg == physical.AggCount && r.IntN(3) == 0) {
			f.Args = []physical.Expr{col(arg)}
		}
		switch {
		case f.Agg == physical.AggCount:
			f.Type = i64
		case f.Agg == physical.AggAvg:
			f.Type = f64
		case arg == 4 && f.Agg == physical.AggSum:
			f.Type = dec38
		case arg == 4:
			f.Type = dec
		default:
			f.Type = i64
		}
		s.funcs = append(s.funcs, f)
	}
	for i := range s.funcs {
		s.funcs[i].Name = fmt.Sprintf("f%d", i)
	}
	return s
}

func describe(s spec) string {
	var b strings.Builder
	fmt.Fprintf(&b, "part=%v asc=%v nullsFirst=%v byID=%v:", s.part, s.asc, s.nullsFirst, s.byID)
	for _, f := range s.funcs {
		b.WriteString(" " + f.String())
	}
	return b.String()
}

func TestWindowRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for k := range 40 {
		rows := randomRows(r, 1+r.IntN(60+k*5))
		s := randomSpec(r)
		t.Logf("case %d: %s", k, describe(s))
		exectest.Run(t, exectest.Case{
			Name:   fmt.Sprintf("random%d", k),
			Inputs: []exectest.Input{{Name: "t", Schema: schema, Rows: rowsJSON(rows), Partitions: 1 + r.IntN(3)}},
			Plan:   func(sc []physical.Plan) physical.Plan { return plan(sc[0], s.part, s.order(), s.funcs) },
			Want:   reference(s, rows),
		})
	}
}

// TestWindowRandomModifiers is TestWindowRandom with IGNORE NULLS on the
// value functions and DISTINCT on whole-partition aggregates, at random.
func TestWindowRandomModifiers(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for k := range 30 {
		rows := randomRows(r, 1+r.IntN(60+k*5))
		s := randomSpec(r)
		for i := range s.funcs {
			f := &s.funcs[i]
			switch f.Func {
			case physical.WinLag, physical.WinLead, physical.WinFirstValue, physical.WinLastValue, physical.WinNthValue:
				f.IgnoreNulls = r.IntN(3) != 0
			case physical.WinAggregate:
				if len(f.Args) > 0 && r.IntN(2) == 0 {
					f.Distinct, f.Frame = true, unboundedFrame
				}
			}
		}
		t.Logf("case %d: %s", k, describe(s))
		exectest.Run(t, exectest.Case{
			Name:   fmt.Sprintf("modifiers%d", k),
			Inputs: []exectest.Input{{Name: "t", Schema: schema, Rows: rowsJSON(rows), Partitions: 1 + r.IntN(3)}},
			Plan:   func(sc []physical.Plan) physical.Plan { return plan(sc[0], s.part, s.order(), s.funcs) },
			Want:   reference(s, rows),
		})
	}
}

// Over a memory limit the operator fails with a resources error and
// leaves nothing allocated.
// memLimit lets the sort below through (about 265 KB) but not the
// window's scratch reservation for 5000 rows.
var memLimit int64 = 400 << 10

func TestWindowMemoryLimit(t *testing.T) {
	mem := exectest.Allocator(t)
	rows := randomRows(rand.New(rand.NewPCG(1, 2)), 5000)
	rec, _, err := array.RecordFromJSON(mem, schema, strings.NewReader(rowsJSON(rows)))
	if err != nil {
		t.Fatal(err)
	}
	tables := exectest.Tables{"t": {{rec}}}
	defer tables.Release()
	tc := exec.NewTaskContext(execop.NewAccountingAllocator(mem, memLimit), 0)
	tc.MemoryTables = tables.Lookup
	p := plan(exectest.MemoryScan("t", schema, 1), false, []physical.SortKey{{Expr: col(2), Asc: true}},
		[]physical.WindowFuncExpr{{Func: physical.WinRank, Type: i64, Name: "r"}})
	ctx := context.Background()
	op, err := exec.Execute(ctx, tc, p)
	if err != nil {
		t.Fatal(err)
	}
	defer op.Close()
	if err := op.Open(ctx); err != nil {
		t.Fatal(err)
	}
	for {
		b, err := op.Next(ctx)
		if err == nil {
			b.Release()
			continue
		}
		if qerr.KindOf(err) != qerr.Resources {
			t.Fatalf("want a resources error, got %v", err)
		}
		break
	}
}
