package physical

import (
	"encoding/binary"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
)

// ColumnStats is what a plan knows of one output column's values before
// it runs, from file footers, memory tables and literals. Every field is a
// guarantee, never an estimate: the zero value knows nothing. The hash
// tables choose their layout from it (exec/hashtable).
type ColumnStats struct {
	// Bounded: every non-NULL value lies in [Lo, Hi], compared as its
	// int64 bit pattern (integer-like columns only).
	Bounded bool
	Lo, Hi  int64
	// NoNulls: the column holds no NULL.
	NoNulls bool
	// LongestAtLeast (strings): some value is at least this many bytes
	// long; 0 when unknown.
	LongestAtLeast int
	// Distinct is an upper bound of the distinct non-NULL values; 0 when
	// unknown.
	Distinct int64
}

// PlanStats are a plan's ColumnStats (one per output column) and an upper
// bound of its output rows over all partitions (-1: unknown).
type PlanStats struct {
	Rows int64
	Cols []ColumnStats
}

// Union is the stats of the rows of s and o together.
func (s ColumnStats) Union(o ColumnStats) ColumnStats {
	out := ColumnStats{NoNulls: s.NoNulls && o.NoNulls, LongestAtLeast: max(s.LongestAtLeast, o.LongestAtLeast)}
	if s.Bounded && o.Bounded {
		out.Bounded, out.Lo, out.Hi = true, min(s.Lo, o.Lo), max(s.Hi, o.Hi)
	}
	if s.Distinct > 0 && o.Distinct > 0 {
		out.Distinct = s.Distinct + o.Distinct
	}
	return out
}

// unknownStats knows nothing of n columns.
func unknownStats(n int) PlanStats { return PlanStats{Rows: -1, Cols: make([]ColumnStats, n)} }

// StatsOf computes what p knows of its output before running, bottom-up:
// scans carry their table's statistics (Scan.Stats), VALUES
// its literals'; filters, sorts, limits and exchanges keep them (a filter's
// bounds still hold for the rows it keeps, and its comparisons of a
// column with a literal narrow them); projections and aggregates keep
// them for plain columns and lose them for computed ones; a join keeps each
// side's (a side an outer join pads may then hold NULLs). Anything else
// knows nothing.
func StatsOf(p Plan) PlanStats {
	switch n := p.(type) {
	case *Scan:
		st := unknownStats(n.Schema().NumFields())
		if n.Stats != nil && len(n.Stats.Cols) == len(st.Cols) {
			st.Rows = n.Stats.Rows
			copy(st.Cols, n.Stats.Cols)
		}
		if n.Fetch >= 0 {
			st.Rows = capRows(st.Rows, n.Fetch*int64(n.OutputPartitions()))
		}
		return st
	case *CacheReader:
		return cacheStats(n)
	case *Values:
		return valuesStats(n)
	case *Empty:
		st := unknownStats(n.OutSchema.NumFields())
		st.Rows = 0
		if n.ProduceOneRow {
			st.Rows = 1
		}
		return st
	case *Filter:
		st := StatsOf(n.Input)
		narrow(st.Cols, n.Predicate)
		return st
	case *Sort:
		st := StatsOf(n.Input)
		if n.Fetch >= 0 {
			st.Rows = capRows(st.Rows, n.Fetch*int64(n.OutputPartitions()))
		}
		return st
	case *SortPreservingMerge:
		return StatsOf(n.Input)
	case *Limit:
		st := StatsOf(n.Input)
		if n.Fetch >= 0 {
			st.Rows = capRows(st.Rows, n.Fetch)
		}
		return st
	case *LocalLimit:
		st := StatsOf(n.Input)
		if n.Fetch >= 0 {
			st.Rows = capRows(st.Rows, n.Fetch*int64(n.OutputPartitions()))
		}
		return st
	case *Repartition:
		return StatsOf(n.Input)
	case *Coalesce:
		return StatsOf(n.Input)
	case *Projection:
		in := StatsOf(n.Input)
		return PlanStats{Rows: in.Rows, Cols: ExprStats(in, n.Exprs)}
	case *HashAggregate:
		in := StatsOf(n.Input)
		st := unknownStats(n.Schema().NumFields())
		st.Rows = in.Rows
		copy(st.Cols, ExprStats(in, n.GroupBy))
		return st
	case *Window:
		in := StatsOf(n.Input)
		st := unknownStats(n.Schema().NumFields())
		st.Rows = in.Rows
		copy(st.Cols, in.Cols)
		return st
	case *Union:
		var st PlanStats
		for i, c := range n.Inputs {
			s := StatsOf(c)
			if i == 0 {
				st = s
				continue
			}
			st.Rows = addRows(st.Rows, s.Rows)
			for j := range st.Cols {
				if j < len(s.Cols) {
					st.Cols[j] = st.Cols[j].Union(s.Cols[j])
				}
			}
		}
		return st
	case *HashJoin:
		return joinStats(n.Left, n.Right, n.Type, n.Schema())
	case *NestedLoopJoin:
		return joinStats(n.Left, n.Right, n.Type, n.Schema())
	}
	return unknownStats(p.Schema().NumFields())
}

// KeyStats is what input guarantees of keys (expressions over it) and
// the rows one of its partitions may hold: the whole input's bound, but a
// hash repartition's share (rows / N) when input spreads the keys over N
// partitions, where each partition's table holds a share of them spread
// over the whole range (only the layouts' memory policy reads this row
// figure, so a share is as good as a bound).
func KeyStats(input Plan, keys []Expr) ([]ColumnStats, int64) {
	st := StatsOf(input)
	rows := st.Rows
	if r, ok := input.(*Repartition); ok && len(r.Keys) > 0 && r.N > 1 && rows > 0 {
		rows = (rows + int64(r.N) - 1) / int64(r.N)
	}
	return ExprStats(st, keys), rows
}

// ExprStats is what in (the stats of exprs' input) says of each of exprs:
// a plain column's stats, a literal's, nothing for anything computed.
func ExprStats(in PlanStats, exprs []Expr) []ColumnStats {
	out := make([]ColumnStats, len(exprs))
	for i, e := range exprs {
		switch x := e.(type) {
		case *Column:
			if x.Index >= 0 && x.Index < len(in.Cols) {
				out[i] = in.Cols[x.Index]
			}
		case *Literal:
			out[i] = literalStats(x)
		}
	}
	return out
}

// joinStats is a join's: each side's columns as they are, except that an
// outer join may pad a side with NULLs; the rows are unbounded but for
// semi and anti joins, which output at most their probe or build rows.
func joinStats(left, right Plan, t JoinType, schema *arrow.Schema) PlanStats {
	l, r := StatsOf(left), StatsOf(right)
	st := unknownStats(schema.NumFields())
	padL := t == RightJoin || t == FullJoin
	padR := t == LeftJoin || t == FullJoin
	var cols []ColumnStats
	switch t {
	case SemiJoin, AntiJoin:
		cols, st.Rows = l.Cols, l.Rows
	case RightSemiJoin, RightAntiJoin:
		cols, st.Rows = r.Cols, r.Rows
	case MarkJoin:
		cols = l.Cols
		st.Rows = l.Rows
	default:
		for _, c := range l.Cols {
			if padL {
				c.NoNulls = false
			}
			cols = append(cols, c)
		}
		for _, c := range r.Cols {
			if padR {
				c.NoNulls = false
			}
			cols = append(cols, c)
		}
	}
	copy(st.Cols, cols)
	return st
}

// valuesStats derives a VALUES node's stats from its literals.
func valuesStats(v *Values) PlanStats {
	st := PlanStats{Rows: int64(len(v.Rows)), Cols: make([]ColumnStats, v.OutSchema.NumFields())}
	for c := range st.Cols {
		acc := ColumnStats{Bounded: true, Lo: math.MaxInt64, Hi: math.MinInt64, NoNulls: true, Distinct: int64(len(v.Rows))}
		for _, row := range v.Rows {
			if c >= len(row) {
				acc = ColumnStats{}
				break
			}
			s := literalStats(row[c])
			acc.NoNulls = acc.NoNulls && s.NoNulls
			acc.LongestAtLeast = max(acc.LongestAtLeast, s.LongestAtLeast)
			if row[c].Value == nil {
				continue
			}
			if acc.Bounded && s.Bounded {
				acc.Lo, acc.Hi = min(acc.Lo, s.Lo), max(acc.Hi, s.Hi)
			} else {
				acc.Bounded = false
			}
		}
		if len(v.Rows) == 0 {
			acc = ColumnStats{}
		}
		if !acc.Bounded || acc.Lo > acc.Hi { // unbounded, or only NULLs
			acc.Lo, acc.Hi = 0, 0
		}
		st.Cols[c] = acc
	}
	return st
}

// literalStats is what a literal says of itself: its value as the bounds
// of an integer-like literal, its length for a string.
func literalStats(l *Literal) ColumnStats {
	if l == nil || l.Value == nil {
		return ColumnStats{Bounded: true, Lo: 0, Hi: 0} // NULL: no value to bound
	}
	s := ColumnStats{NoNulls: true, Distinct: 1}
	switch x := l.Value.(type) {
	case string:
		s.LongestAtLeast = len(x)
	case []byte:
		s.LongestAtLeast = len(x)
	default:
		if v, ok := l.Int64(); ok {
			s.Bounded, s.Lo, s.Hi = true, v, v
		}
	}
	return s
}

func capRows(rows, limit int64) int64 {
	if limit < 0 {
		return rows
	}
	if rows < 0 {
		return limit
	}
	return min(rows, limit)
}

func addRows(a, b int64) int64 {
	if a < 0 || b < 0 || a > math.MaxInt64-b {
		return -1
	}
	return a + b
}

// narrow tightens cols (a copy the caller owns) by the conjuncts of pred of
// the form `column op literal` (or `literal op column`) over a signed
// integer-like column and a literal of its very type: the rows a filter
// keeps satisfy them, so their values lie within, and none is NULL.
func narrow(cols []ColumnStats, pred Expr) {
	b, ok := pred.(*Binary)
	if !ok {
		return
	}
	if b.Op == OpAnd {
		narrow(cols, b.Left)
		narrow(cols, b.Right)
		return
	}
	op := b.Op
	col, cok := b.Left.(*Column)
	lit, lok := b.Right.(*Literal)
	if !cok || !lok {
		col, cok = b.Right.(*Column)
		lit, lok = b.Left.(*Literal)
		switch op {
		case OpLt:
			op = OpGt
		case OpLtEq:
			op = OpGtEq
		case OpGt:
			op = OpLt
		case OpGtEq:
			op = OpLtEq
		}
	}
	if !cok || !lok || col.Index < 0 || col.Index >= len(cols) || lit.Value == nil || !signedIntLike(col.Type) || !arrow.TypeEqual(col.Type, lit.Type) {
		return
	}
	ls := literalStats(lit)
	if !ls.Bounded {
		return
	}
	v := ls.Lo
	lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
	switch op {
	case OpEq:
		lo, hi = v, v
	case OpLt:
		if v == math.MinInt64 {
			return
		}
		hi = v - 1
	case OpLtEq:
		hi = v
	case OpGt:
		if v == math.MaxInt64 {
			return
		}
		lo = v + 1
	case OpGtEq:
		lo = v
	default:
		return
	}
	c := &cols[col.Index]
	c.NoNulls = true // a comparison with NULL keeps no row
	switch {
	case c.Bounded:
		c.Lo, c.Hi = max(c.Lo, lo), min(c.Hi, hi)
	case op == OpEq:
		c.Bounded, c.Lo, c.Hi = true, lo, hi
	default:
		return // half a range bounds nothing a layout can use
	}
	if c.Lo > c.Hi { // no row passes
		c.Lo, c.Hi = 0, 0
	}
}

// signedIntLike reports whether dt's values order as their int64 value.
func signedIntLike(dt arrow.DataType) bool {
	switch dt.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.DATE32, arrow.DATE64:
		return true
	}
	return false
}

// cacheStats is what a cache entry's writer recorded of its files
// (PartitionLocation.Stats): the rows summed, and each column's stats over
// the non-empty files (a file without stats leaves the columns unknown).
func cacheStats(c *CacheReader) PlanStats {
	st := unknownStats(c.OutSchema.NumFields())
	var rows int64
	var cols []ColumnStats
	known := true
	for _, part := range c.Locations {
		for _, l := range part {
			rows += l.Rows
			if l.Rows == 0 {
				continue
			}
			if len(l.Stats) != len(st.Cols) {
				known = false
				continue
			}
			if cols == nil {
				cols = append([]ColumnStats(nil), l.Stats...)
				continue
			}
			for i := range cols {
				cols[i] = cols[i].Union(l.Stats[i])
			}
		}
	}
	st.Rows = rows
	switch {
	case !known:
	case cols == nil: // no rows at all
		for i := range st.Cols {
			st.Cols[i] = ColumnStats{NoNulls: true}
		}
	default:
		copy(st.Cols, cols)
	}
	return st
}

// EncodeColumnStats is the compact form of cols a shuffle writer's stats
// batch carries (ShuffleWriteStatsSchema's col_stats): per column a flags
// byte and varints.
func EncodeColumnStats(cols []ColumnStats) []byte {
	out := binary.AppendUvarint(nil, uint64(len(cols)))
	for _, c := range cols {
		var flags byte
		if c.Bounded {
			flags |= 1
		}
		if c.NoNulls {
			flags |= 2
		}
		out = append(out, flags)
		out = binary.AppendVarint(out, c.Lo)
		out = binary.AppendVarint(out, c.Hi)
		out = binary.AppendUvarint(out, uint64(max(c.LongestAtLeast, 0)))
		out = binary.AppendUvarint(out, uint64(max(c.Distinct, 0)))
	}
	return out
}

// DecodeColumnStats reverses EncodeColumnStats; ok is false for bytes it
// did not make.
func DecodeColumnStats(b []byte) (cols []ColumnStats, ok bool) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)) {
		return nil, false
	}
	b = b[k:]
	cols = make([]ColumnStats, n)
	for i := range cols {
		if len(b) == 0 {
			return nil, false
		}
		c := &cols[i]
		c.Bounded, c.NoNulls = b[0]&1 != 0, b[0]&2 != 0
		b = b[1:]
		var vals [4]uint64
		for j := range vals {
			var k int
			if j < 2 {
				var v int64
				v, k = binary.Varint(b)
				vals[j] = uint64(v)
			} else {
				vals[j], k = binary.Uvarint(b)
			}
			if k <= 0 {
				return nil, false
			}
			b = b[k:]
		}
		if vals[2] > math.MaxInt32 || vals[3] > math.MaxInt64 {
			return nil, false
		}
		c.Lo, c.Hi, c.LongestAtLeast, c.Distinct = int64(vals[0]), int64(vals[1]), int(vals[2]), int64(vals[3])
	}
	return cols, len(b) == 0
}
