package scan

import (
	"bytes"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/quiverdb/quiver/exec/execop"
	"github.com/quiverdb/quiver/physical"
)

// pruneTerm is one conjunct `column op literal` of a scan predicate, with
// the literal normalised to a statBound of the column's kind.
type pruneTerm struct {
	col int // output column
	op  physical.BinaryOp
	lit statBound
}

type boundKind uint8

const (
	boundInt boundKind = iota + 1
	boundFloat
	boundBytes
	boundDecimal
)

// statBound is a comparable value: a literal, or a row group's min or max.
type statBound struct {
	kind  boundKind
	i     int64
	f     float64
	b     []byte
	d     decimal128.Num
	scale int32
}

// pruneTerms extracts the usable conjuncts of pred (an AND tree); anything
// else is ignored, which only means less pruning.
func pruneTerms(pred physical.Expr, schema *arrow.Schema) []pruneTerm {
	var out []pruneTerm
	var walk func(physical.Expr)
	walk = func(e physical.Expr) {
		b, ok := e.(*physical.Binary)
		if !ok {
			return
		}
		if b.Op == physical.OpAnd {
			walk(b.Left)
			walk(b.Right)
			return
		}
		col, op, lit, ok := physical.ColumnVsLiteral(b)
		if !ok || col.Index < 0 || col.Index >= schema.NumFields() {
			return
		}
		v, ok := literalBound(lit)
		if !ok {
			return
		}
		out = append(out, pruneTerm{col: col.Index, op: op, lit: v})
	}
	walk(pred)
	return out
}

func literalBound(l *physical.Literal) (statBound, bool) {
	switch v := l.Value.(type) {
	case int32:
		return statBound{kind: boundInt, i: int64(v)}, true
	case int64:
		return statBound{kind: boundInt, i: v}, true
	case arrow.Date32:
		return statBound{kind: boundInt, i: int64(v)}, true
	case float64:
		if math.IsNaN(v) {
			return statBound{}, false
		}
		return statBound{kind: boundFloat, f: v}, true
	case string:
		return statBound{kind: boundBytes, b: []byte(v)}, true
	case decimal128.Num:
		dt, ok := l.Type.(*arrow.Decimal128Type)
		if !ok {
			return statBound{}, false
		}
		return statBound{kind: boundDecimal, d: v, scale: dt.Scale}, true
	}
	return statBound{}, false
}

// compareBounds returns -1, 0 or 1 comparing a and b, and false when they
// are not comparable (then nothing may be pruned).
func compareBounds(a, b statBound) (int, bool) {
	switch {
	case a.kind == boundInt && b.kind == boundInt:
		return cmp3(a.i, b.i), true
	case a.kind == boundFloat && b.kind == boundFloat:
		return cmp3(a.f, b.f), true
	case a.kind == boundInt && b.kind == boundFloat:
		return cmp3(float64(a.i), b.f), true
	case a.kind == boundFloat && b.kind == boundInt:
		return cmp3(a.f, float64(b.i)), true
	case a.kind == boundBytes && b.kind == boundBytes:
		return bytes.Compare(a.b, b.b), true
	case a.kind == boundDecimal && b.kind == boundDecimal:
		s := max(a.scale, b.scale)
		x, err1 := a.d.Rescale(a.scale, s)
		y, err2 := b.d.Rescale(b.scale, s)
		if err1 != nil || err2 != nil {
			return 0, false
		}
		return x.Cmp(y), true
	}
	return 0, false
}

func cmp3[T int64 | float64](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// canSkip reports whether a row group of rows rows provably has no row
// where every prune term holds, given each output column's statistics.
func (s *scanOp) canSkip(rows int64, stats func(col int) metadata.TypedStatistics) bool {
	if rows == 0 {
		return true
	}
	for _, t := range s.prune {
		st := stats(t.col)
		if st == nil {
			continue
		}
		if st.HasNullCount() && st.NullCount() == rows {
			return true // all NULL: no comparison is true
		}
		if !st.HasMinMax() {
			continue
		}
		lo, hi, ok := statBounds(st, s.schema.Field(t.col).Type)
		if !ok {
			continue
		}
		if termImpossible(t, lo, hi) {
			return true
		}
	}
	return false
}

// termImpossible reports whether no value v in [lo, hi] satisfies v op lit.
func termImpossible(t pruneTerm, lo, hi statBound) bool {
	cLo, ok1 := compareBounds(lo, t.lit)
	cHi, ok2 := compareBounds(hi, t.lit)
	if !ok1 || !ok2 {
		return false
	}
	switch t.op {
	case physical.OpEq:
		return cLo > 0 || cHi < 0
	case physical.OpLt:
		return cLo >= 0
	case physical.OpLtEq:
		return cLo > 0
	case physical.OpGt:
		return cHi <= 0
	case physical.OpGtEq:
		return cHi < 0
	}
	return false
}

// statBounds converts a column chunk's min and max to bounds of the
// column's Arrow type.
func statBounds(st metadata.TypedStatistics, typ arrow.DataType) (lo, hi statBound, ok bool) {
	mk := func(i1, i2 int64) (statBound, statBound, bool) {
		switch t := typ.(type) {
		case *arrow.Decimal128Type:
			return statBound{kind: boundDecimal, d: decimal128.FromI64(i1), scale: t.Scale},
				statBound{kind: boundDecimal, d: decimal128.FromI64(i2), scale: t.Scale}, true
		case *arrow.Int8Type, *arrow.Int16Type, *arrow.Int32Type, *arrow.Int64Type, *arrow.Date32Type:
			return statBound{kind: boundInt, i: i1}, statBound{kind: boundInt, i: i2}, true
		}
		return statBound{}, statBound{}, false
	}
	switch s := st.(type) {
	case *metadata.Int32Statistics:
		return mk(int64(s.Min()), int64(s.Max()))
	case *metadata.Int64Statistics:
		return mk(s.Min(), s.Max())
	case *metadata.Float64Statistics:
		if math.IsNaN(s.Min()) || math.IsNaN(s.Max()) {
			return lo, hi, false
		}
		return statBound{kind: boundFloat, f: s.Min()}, statBound{kind: boundFloat, f: s.Max()}, true
	case *metadata.Float32Statistics:
		mn, mx := float64(s.Min()), float64(s.Max())
		if math.IsNaN(mn) || math.IsNaN(mx) {
			return lo, hi, false
		}
		return statBound{kind: boundFloat, f: mn}, statBound{kind: boundFloat, f: mx}, true
	case *metadata.ByteArrayStatistics:
		switch typ.ID() {
		case arrow.STRING, arrow.LARGE_STRING, arrow.BINARY, arrow.LARGE_BINARY:
			return statBound{kind: boundBytes, b: s.Min()}, statBound{kind: boundBytes, b: s.Max()}, true
		}
	}
	return lo, hi, false
}

// outsideRanges reports whether a row group's statistics show that none of
// its rows has a key inside one of ranges, so no row of it meets the build
// side of the join that published that range.
func (s *scanOp) outsideRanges(ranges []execop.KeyRange, stats func(col int) metadata.TypedStatistics) bool {
	for _, r := range ranges {
		if r.Col < 0 || r.Col >= s.schema.NumFields() {
			continue // a hive partition column: not in the file
		}
		if r.Empty {
			return true
		}
		st := stats(r.Col)
		if st == nil || !st.HasMinMax() {
			continue
		}
		lo, hi, ok := statBounds(st, s.schema.Field(r.Col).Type)
		if !ok || lo.kind != boundInt || hi.kind != boundInt {
			continue
		}
		if hi.i < r.Min || lo.i > r.Max {
			return true
		}
	}
	return false
}
