package shuffle

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/quiverdb/quiver/physical"
)

// A pinned (cache) file is written with what its writer saw of its rows
// (docs/design/cache-files.md, "Statistics and zone maps"): per column of
// the whole file the physical.ColumnStats the planner reads, and per
// written batch a zone (min, max and NULL count of each integer-like and
// string column) kept in a sidecar file next to the data, which a cache
// read with a filter uses to skip batches that cannot match.

// ZonesSuffix names a data file's zone-map sidecar: path + ZonesSuffix.
const ZonesSuffix = ".zones"

// zoneStringBytes is how much of a string bound a zone keeps; a longer
// minimum is cut (a prefix is still a lower bound) and a longer maximum is
// cut and rounded up (see roundUp), or left unbounded when it cannot be.
const zoneStringBytes = 16

// distinctLimit bounds the exact distinct count a file's integer column
// keeps; past it the column's distinct count is unknown.
const distinctLimit = 4096

// zoneKind is how a column's values are bounded in zones.
type zoneKind uint8

const (
	zoneNone   zoneKind = iota // not bounded (floats, decimals, nested, ...)
	zoneInt                    // as int64 (integers, dates, times, timestamps)
	zoneString                 // as bytes
)

// kindOf is the zone kind of dt. Unsigned 64-bit values are not bounded:
// their int64 bit pattern does not order them.
func kindOf(dt arrow.DataType) zoneKind {
	switch dt.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.UINT8, arrow.UINT16, arrow.UINT32,
		arrow.DATE32, arrow.DATE64, arrow.TIMESTAMP, arrow.TIME32, arrow.TIME64:
		return zoneInt
	case arrow.STRING:
		return zoneString
	}
	return zoneNone
}

// zone is what one batch holds of one column. Has is false when the batch
// has no non-NULL value of it (or the kind is not bounded).
type zone struct {
	Has    bool
	Lo, Hi int64  // zoneInt
	SLo    []byte // zoneString: a lower bound of every value
	SHi    []byte // zoneString: an upper bound of every value, when HiOK
	HiOK   bool
	Nulls  int64
}

// colCollector folds a file's batches into its column's ColumnStats.
type colCollector struct {
	kind     zoneKind
	rows     int64
	nulls    int64
	has      bool
	lo, hi   int64
	longest  int
	set      intSet
	overflow bool
}

// statsCollector is what a pinned writer learns of one file as it writes it.
type statsCollector struct {
	cols  []colCollector
	zones [][]zone // per written batch, per column
}

func newStatsCollector(schema *arrow.Schema) *statsCollector {
	s := &statsCollector{cols: make([]colCollector, schema.NumFields())}
	for i, f := range schema.Fields() {
		s.cols[i].kind = kindOf(f.Type)
	}
	return s
}

// add records batch b (about to be written as the file's next batch).
func (s *statsCollector) add(b arrow.RecordBatch) {
	zs := make([]zone, len(s.cols))
	for i := range s.cols {
		c := &s.cols[i]
		a := b.Column(i)
		z := &zs[i]
		z.Nulls = int64(a.NullN())
		c.rows += int64(a.Len())
		c.nulls += z.Nulls
		switch c.kind {
		case zoneInt:
			intZone(a, z)
			if z.Has {
				if !c.has {
					c.lo, c.hi, c.has = z.Lo, z.Hi, true
				}
				c.lo, c.hi = min(c.lo, z.Lo), max(c.hi, z.Hi)
			}
			if !c.overflow {
				c.overflow = !c.addDistinct(a)
			}
		case zoneString:
			c.longest = max(c.longest, stringZone(a, z))
		}
	}
	s.zones = append(s.zones, zs)
}

// kinds lists each column's zone kind.
func (s *statsCollector) kinds() []zoneKind {
	out := make([]zoneKind, len(s.cols))
	for i, c := range s.cols {
		out[i] = c.kind
	}
	return out
}

// stats is the file's ColumnStats, one per column.
func (s *statsCollector) stats() []physical.ColumnStats {
	out := make([]physical.ColumnStats, len(s.cols))
	for i, c := range s.cols {
		cs := physical.ColumnStats{NoNulls: c.nulls == 0, LongestAtLeast: c.longest}
		if c.kind == zoneInt {
			cs.Bounded = true
			if c.has {
				cs.Lo, cs.Hi = c.lo, c.hi
			}
			if !c.overflow {
				cs.Distinct = int64(c.set.n)
			}
		}
		out[i] = cs
	}
	return out
}

// addDistinct adds a's non-NULL values to c's exact set; false once the
// set passes distinctLimit (it is then dropped).
func (c *colCollector) addDistinct(a arrow.Array) bool {
	ok := true
	forEachInt(a, func(v int64) {
		if ok && !c.set.add(v) {
			ok = false
		}
	})
	if !ok {
		c.set = intSet{}
	}
	return ok
}

// intSet is an exact set of int64 by open addressing, up to distinctLimit
// values.
type intSet struct {
	slots   []int64
	used    []bool
	n       int
	zeroSet bool
}

// add inserts v; false when the set would pass distinctLimit.
func (s *intSet) add(v int64) bool {
	if len(s.slots) == 0 {
		s.slots, s.used = make([]int64, 64), make([]bool, 64)
	}
	mask := uint64(len(s.slots) - 1)
	for i := (uint64(v) * 0x9E3779B97F4A7C15) >> 40 & mask; ; i = (i + 1) & mask {
		if !s.used[i] {
			if s.n >= distinctLimit {
				return false
			}
			s.used[i], s.slots[i] = true, v
			s.n++
			if s.n*2 > len(s.slots) {
				s.grow()
			}
			return true
		}
		if s.slots[i] == v {
			return true
		}
	}
}

func (s *intSet) grow() {
	old, oldUsed := s.slots, s.used
	s.slots, s.used, s.n = make([]int64, 2*len(old)), make([]bool, 2*len(old)), 0
	for i, u := range oldUsed {
		if u {
			s.add(old[i])
		}
	}
}

// forEachInt calls f with every non-NULL value of a (an integer-like
// array) as int64.
func forEachInt(a arrow.Array, f func(int64)) {
	switch a := a.(type) {
	case *array.Int8:
		eachValid(a, a.Int8Values(), f)
	case *array.Int16:
		eachValid(a, a.Int16Values(), f)
	case *array.Int32:
		eachValid(a, a.Int32Values(), f)
	case *array.Int64:
		eachValid(a, a.Int64Values(), f)
	case *array.Uint8:
		eachValid(a, a.Uint8Values(), f)
	case *array.Uint16:
		eachValid(a, a.Uint16Values(), f)
	case *array.Uint32:
		eachValid(a, a.Uint32Values(), f)
	case *array.Date32:
		eachValid(a, a.Date32Values(), f)
	case *array.Date64:
		eachValid(a, a.Date64Values(), f)
	case *array.Timestamp:
		eachValid(a, a.TimestampValues(), f)
	case *array.Time32:
		eachValid(a, a.Time32Values(), f)
	case *array.Time64:
		eachValid(a, a.Time64Values(), f)
	}
}

type intLike interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32
}

func eachValid[T intLike](a arrow.Array, vals []T, f func(int64)) {
	if a.NullN() == 0 {
		for _, v := range vals {
			f(int64(v))
		}
		return
	}
	for i, v := range vals {
		if a.IsValid(i) {
			f(int64(v))
		}
	}
}

// intZone sets z's range from a's non-NULL values.
func intZone(a arrow.Array, z *zone) {
	switch a := a.(type) {
	case *array.Int8:
		minMax(a, a.Int8Values(), z)
	case *array.Int16:
		minMax(a, a.Int16Values(), z)
	case *array.Int32:
		minMax(a, a.Int32Values(), z)
	case *array.Int64:
		minMax(a, a.Int64Values(), z)
	case *array.Uint8:
		minMax(a, a.Uint8Values(), z)
	case *array.Uint16:
		minMax(a, a.Uint16Values(), z)
	case *array.Uint32:
		minMax(a, a.Uint32Values(), z)
	case *array.Date32:
		minMax(a, a.Date32Values(), z)
	case *array.Date64:
		minMax(a, a.Date64Values(), z)
	case *array.Timestamp:
		minMax(a, a.TimestampValues(), z)
	case *array.Time32:
		minMax(a, a.Time32Values(), z)
	case *array.Time64:
		minMax(a, a.Time64Values(), z)
	}
}

func minMax[T intLike](a arrow.Array, vals []T, z *zone) {
	lo, hi, has := int64(math.MaxInt64), int64(math.MinInt64), false
	if a.NullN() == 0 {
		for _, v := range vals {
			lo, hi = min(lo, int64(v)), max(hi, int64(v))
		}
		has = len(vals) > 0
	} else {
		for i, v := range vals {
			if a.IsValid(i) {
				lo, hi, has = min(lo, int64(v)), max(hi, int64(v)), true
			}
		}
	}
	if !has {
		lo, hi = 0, 0
	}
	z.Has, z.Lo, z.Hi = has, lo, hi
}

// stringZone sets z's bounds from a's non-NULL values and returns the
// longest value's length.
func stringZone(a arrow.Array, z *zone) int {
	sa, ok := a.(*array.String)
	if !ok {
		return 0
	}
	var lo, hi []byte
	longest := 0
	for i := range a.Len() {
		if a.IsNull(i) {
			continue
		}
		v := unsafeBytes(sa.Value(i))
		longest = max(longest, len(v))
		if lo == nil || bytes.Compare(v, lo) < 0 {
			lo = v
		}
		if hi == nil || bytes.Compare(v, hi) > 0 {
			hi = v
		}
	}
	if lo == nil {
		return longest
	}
	z.Has = true
	z.SLo = bytes.Clone(lo[:min(len(lo), zoneStringBytes)])
	if len(hi) <= zoneStringBytes {
		z.SHi, z.HiOK = bytes.Clone(hi), true
	} else {
		z.SHi, z.HiOK = roundUp(hi[:zoneStringBytes])
	}
	return longest
}

// roundUp is the smallest string of at most len(p) bytes greater than
// every string that starts with p: p with its last byte below 0xff
// incremented and what follows dropped; ok is false when p is all 0xff.
func roundUp(p []byte) ([]byte, bool) {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] < 0xff {
			out := bytes.Clone(p[:i+1])
			out[i]++
			return out, true
		}
	}
	return nil, false
}

// encodeZones is the sidecar's bytes: a magic, the data file's size (a
// sidecar that does not match its data file is not used), the column
// kinds, then per batch per column a flags byte, the NULL count and the
// bounds.
func encodeZones(dataBytes int64, kinds []zoneKind, zones [][]zone) []byte {
	out := append([]byte(nil), zonesMagic...)
	out = binary.AppendUvarint(out, uint64(dataBytes))
	out = binary.AppendUvarint(out, uint64(len(kinds)))
	for _, k := range kinds {
		out = append(out, byte(k))
	}
	out = binary.AppendUvarint(out, uint64(len(zones)))
	for _, zs := range zones {
		for i, z := range zs {
			var flags byte
			if z.Has {
				flags |= 1
			}
			if z.HiOK {
				flags |= 2
			}
			out = append(out, flags)
			out = binary.AppendUvarint(out, uint64(z.Nulls))
			if !z.Has {
				continue
			}
			switch kinds[i] {
			case zoneInt:
				out = binary.AppendVarint(out, z.Lo)
				out = binary.AppendVarint(out, z.Hi)
			case zoneString:
				out = binary.AppendUvarint(out, uint64(len(z.SLo)))
				out = append(out, z.SLo...)
				out = binary.AppendUvarint(out, uint64(len(z.SHi)))
				out = append(out, z.SHi...)
			}
		}
	}
	return out
}

var zonesMagic = []byte("QZM1")

var errBadZones = errors.New("not a zone-map sidecar")

// decodeZones reverses encodeZones.
func decodeZones(b []byte) (dataBytes int64, kinds []zoneKind, zones [][]zone, err error) {
	if !bytes.HasPrefix(b, zonesMagic) {
		return 0, nil, nil, errBadZones
	}
	b = b[len(zonesMagic):]
	uv := func() uint64 {
		v, k := binary.Uvarint(b)
		if k <= 0 {
			err = errBadZones
			return 0
		}
		b = b[k:]
		return v
	}
	sv := func() int64 {
		v, k := binary.Varint(b)
		if k <= 0 {
			err = errBadZones
			return 0
		}
		b = b[k:]
		return v
	}
	bs := func() []byte {
		n := uv()
		if err != nil || n > uint64(len(b)) {
			err = errBadZones
			return nil
		}
		v := b[:n:n]
		b = b[n:]
		return v
	}
	db := uv()
	if err != nil || db > math.MaxInt64 {
		return 0, nil, nil, errBadZones
	}
	dataBytes = int64(db)
	nc := uv()
	if err != nil || nc > uint64(len(b)) {
		return 0, nil, nil, errBadZones
	}
	kinds = make([]zoneKind, nc)
	for i := range kinds {
		kinds[i] = zoneKind(b[i])
	}
	b = b[nc:]
	nb := uv()
	if err != nil || nb > uint64(len(b)) {
		return 0, nil, nil, errBadZones
	}
	zones = make([][]zone, nb)
	for j := range zones {
		zs := make([]zone, nc)
		for i := range zs {
			if len(b) == 0 {
				return 0, nil, nil, errBadZones
			}
			z := &zs[i]
			z.Has, z.HiOK = b[0]&1 != 0, b[0]&2 != 0
			b = b[1:]
			z.Nulls = int64(uv())
			if z.Has {
				switch kinds[i] {
				case zoneInt:
					z.Lo, z.Hi = sv(), sv()
				case zoneString:
					z.SLo, z.SHi = bs(), bs()
				}
			}
			if err != nil {
				return 0, nil, nil, err
			}
		}
		zones[j] = zs
	}
	if len(b) != 0 {
		return 0, nil, nil, errBadZones
	}
	return dataBytes, kinds, zones, nil
}

// readZones reads the sidecar of the data file at path; nil zones when
// there is none or it does not decode (the batches are then all read).
func readZones(path string, ncols int) ([]zoneKind, [][]zone) {
	b, err := os.ReadFile(path + ZonesSuffix)
	if err != nil {
		return nil, nil
	}
	size, kinds, zones, err := decodeZones(b)
	if err != nil || len(kinds) != ncols {
		return nil, nil
	}
	if fi, err := os.Stat(path); err != nil || fi.Size() != size {
		return nil, nil // not this data file's
	}
	return kinds, zones
}

// unsafeBytes views s's bytes without copying; the caller never writes
// them and clones what it keeps.
func unsafeBytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// zoneTerm is one conjunct of a cache read's pruning hint
// (physical.CacheReader.Predicate) a zone can rule out: col op lits[0], col
// IN lits, or col IS NULL.
type zoneTerm struct {
	col    int
	op     physical.BinaryOp // OpEq..OpGtEq; OpEq with several lits is IN
	isNull bool
	ints   []int64
	strs   []string
}

// zoneTerms extracts the conjuncts of pred (an AND tree) that zones of
// schema's columns can decide; the rest are ignored, which only means
// fewer skips.
func zoneTerms(pred physical.Expr, schema *arrow.Schema) []zoneTerm {
	var out []zoneTerm
	var walk func(physical.Expr)
	walk = func(e physical.Expr) {
		switch e := e.(type) {
		case *physical.Binary:
			if e.Op == physical.OpAnd {
				walk(e.Left)
				walk(e.Right)
				return
			}
			col, op, lit, ok := physical.ColumnVsLiteral(e)
			if !ok || col.Index < 0 || col.Index >= schema.NumFields() {
				return
			}
			t := zoneTerm{col: col.Index, op: op}
			if t.addLit(schema.Field(col.Index).Type, lit) {
				out = append(out, t)
			}
		case *physical.InList:
			col, ok := e.Expr.(*physical.Column)
			if e.Negated || !ok || col.Index < 0 || col.Index >= schema.NumFields() || len(e.List) == 0 {
				return
			}
			t := zoneTerm{col: col.Index, op: physical.OpEq}
			for _, x := range e.List {
				lit, ok := x.(*physical.Literal)
				if !ok || !t.addLit(schema.Field(col.Index).Type, lit) {
					return
				}
			}
			out = append(out, t)
		case *physical.IsNull:
			col, ok := e.Expr.(*physical.Column)
			if !e.Negated && ok && col.Index >= 0 && col.Index < schema.NumFields() {
				out = append(out, zoneTerm{col: col.Index, isNull: true})
			}
		}
	}
	walk(pred)
	return out
}

// addLit adds lit's value to t when it is a non-NULL value comparable with
// a column of type dt: any integer with an integer column, a date, time or
// timestamp only of the column's very type (units differ).
func (t *zoneTerm) addLit(dt arrow.DataType, lit *physical.Literal) bool {
	switch kindOf(dt) {
	case zoneInt:
		switch dt.ID() {
		case arrow.DATE32, arrow.DATE64, arrow.TIMESTAMP, arrow.TIME32, arrow.TIME64:
			if lit.Type == nil || !arrow.TypeEqual(lit.Type, dt) {
				return false
			}
		}
		v, ok := lit.Int64()
		if !ok {
			return false
		}
		t.ints = append(t.ints, v)
		return true
	case zoneString:
		s, ok := lit.Value.(string)
		if ok {
			t.strs = append(t.strs, s)
		}
		return ok
	}
	return false
}

// skip reports whether no row of a batch with zones zs can satisfy every
// term: a comparison is never true of NULL, so a batch without values
// rules out every comparison.
func skip(terms []zoneTerm, kinds []zoneKind, zs []zone) bool {
	for _, t := range terms {
		if t.col >= len(zs) {
			continue
		}
		z := zs[t.col]
		if t.isNull {
			if z.Nulls == 0 {
				return true
			}
			continue
		}
		if !z.Has {
			if kinds[t.col] != zoneNone {
				return true
			}
			continue
		}
		if kinds[t.col] == zoneInt && !anyInt(t, z) || kinds[t.col] == zoneString && !anyString(t, z) {
			return true
		}
	}
	return false
}

// anyInt reports whether some value in [z.Lo, z.Hi] may satisfy t.
func anyInt(t zoneTerm, z zone) bool {
	for _, v := range t.ints {
		switch t.op {
		case physical.OpEq:
			if v >= z.Lo && v <= z.Hi {
				return true
			}
		case physical.OpLt:
			return z.Lo < v
		case physical.OpLtEq:
			return z.Lo <= v
		case physical.OpGt:
			return z.Hi > v
		case physical.OpGtEq:
			return z.Hi >= v
		default:
			return true
		}
	}
	return false
}

// anyString reports whether some value between z's bounds may satisfy t;
// an unknown upper bound rules nothing out from above.
func anyString(t zoneTerm, z zone) bool {
	lo := string(z.SLo)
	hi := string(z.SHi)
	for _, v := range t.strs {
		switch t.op {
		case physical.OpEq:
			if v >= lo && (!z.HiOK || v <= hi) {
				return true
			}
		case physical.OpLt:
			return lo < v
		case physical.OpLtEq:
			return lo <= v
		case physical.OpGt:
			return !z.HiOK || hi > v
		case physical.OpGtEq:
			return !z.HiOK || hi >= v
		default:
			return true
		}
	}
	return false
}
