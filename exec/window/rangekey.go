package window

import (
	"math"
	"math/big"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
	"github.com/quiverdb/quiver/temporal"
)

// RANGE frames with offsets. Each bound of each row is found by a cursor
// that only moves forward through the partition's non-NULL rows, as in
// PostgreSQL: the bound of a row is the first row (frame start) or the
// first row past the last one (frame end) whose key is not before (not
// after) key ± offset in sort order. Where key ± offset is not monotonic
// in the key (a timestamp minus months, clamped at month ends), the
// cursor stays where an earlier row left it, as PostgreSQL's does.

// rangeKey is the single ORDER BY key of RANGE frames with offsets, read
// once in the representations its offsets are added in.
type rangeKey struct {
	valid  []bool // nil: no NULLs
	desc   bool
	ints   []int64          // integer keys and DATE keys (days)
	floats []float64        // float and UINT64 keys
	decs   []decimal128.Num // DECIMAL keys, at scale
	scale  int32
	micros []int64        // TIMESTAMP keys, and DATE keys when an offset is an interval
	zone   *time.Location // a TIMESTAMPTZ key's zone: interval offsets count months and days on its calendar
}

// newRangeKey reads a; micros asks for a DATE key as microseconds too.
func newRangeKey(a arrow.Array, desc, micros bool) (*rangeKey, error) {
	k := &rangeKey{desc: desc}
	n := a.Len()
	if a.NullN() > 0 {
		k.valid = make([]bool, n)
		for i := range k.valid {
			k.valid[i] = a.IsValid(i)
		}
	}
	d := a.Data()
	switch dt := a.DataType().(type) {
	case *arrow.Decimal128Type:
		k.decs, k.scale = a.(*array.Decimal128).Values(), dt.Scale
	case *arrow.TimestampType:
		vals := arrow.GetValues[int64](d, 1)
		k.micros = make([]int64, n)
		for i, v := range vals {
			k.micros[i] = temporal.ToMicros(v, dt.Unit)
		}
		if dt.TimeZone != "" {
			loc, ok := temporal.LoadZone(dt.TimeZone)
			if !ok {
				return nil, qerr.Execf("window RANGE key: unknown time zone %q", dt.TimeZone)
			}
			k.zone = loc
		}
	case *arrow.Date32Type:
		days := arrow.GetValues[int32](d, 1)
		k.ints = widen[int32, int64](days)
		if micros {
			k.micros = make([]int64, n)
			for i, v := range days {
				k.micros[i] = int64(v) * temporal.MicrosPerDay
			}
		}
	default:
		if a.DataType().ID() != arrow.UINT64 {
			if ints, ok := intValues(a); ok {
				k.ints = ints
				return k, nil
			}
		}
		fl, ok := floatValues(a)
		if !ok {
			return nil, qerr.NotImplementedf("exec: RANGE offsets over %s are not supported", a.DataType())
		}
		k.floats = fl
	}
	return k, nil
}

// nonNull is the rows [a, b) of partition [ps, pe) whose RANGE key is not
// NULL (the NULLs sort together at one end).
func (l *layout) nonNull(ps, pe int32) (int32, int32) {
	if l.key == nil || l.key.valid == nil {
		return ps, pe
	}
	a, b := ps, pe
	for a < b && !l.key.valid[a] {
		a++
	}
	for b > a && !l.key.valid[b-1] {
		b--
	}
	return a, b
}

// rangeBounds writes one bound of a RANGE frame for the rows of partition
// [ps, pe), whose non-NULL keys are rows [a, b): the frame's first row
// (isEnd false) or one past its last (isEnd true). A row with a NULL key
// has its NULL peers as the offset bounds' rows.
func (l *layout) rangeBounds(bd physical.FrameBound, ps, pe, a, b int32, isEnd bool, out []int32) {
	switch bd.Kind {
	case physical.UnboundedPreceding:
		fill(out[ps:pe], ps)
		return
	case physical.UnboundedFollowing:
		fill(out[ps:pe], pe)
		return
	case physical.CurrentRow:
		for r := ps; r < pe; r++ {
			g := l.groupOf[r]
			if isEnd {
				out[r] = l.groupStart[g+1]
			} else {
				out[r] = l.groupStart[g]
			}
		}
		return
	}
	// sign is +1 when the bound lies toward larger keys.
	sign := 1
	if bd.Kind == physical.Preceding {
		sign = -1
	}
	k := l.key
	if k.desc {
		sign = -sign
	}
	switch {
	case bd.IsInterval:
		iv := bd.Interval
		add := func(v int64) int64 { return temporal.AddToTimestamp(v, iv, sign) }
		if loc := k.zone; loc != nil {
			add = func(v int64) int64 { return temporal.AddToTimestampTZ(v, iv, sign, loc) }
		}
		cursor(l, k.micros, ps, pe, a, b, isEnd, out, add, cmpOrdered[int64])
	case k.decs != nil:
		off := decimalOffset(bd, k.scale)
		if sign < 0 {
			off = off.Negate()
		}
		cursor(l, k.decs, ps, pe, a, b, isEnd, out, func(v decimal128.Num) decimal128.Num { return addSaturating(v, off) }, decimal128.Num.Cmp)
	case k.floats != nil:
		off := float64(bd.Offset) / math.Pow10(int(bd.Scale)) * float64(sign)
		cursor(l, k.floats, ps, pe, a, b, isEnd, out, func(v float64) float64 { return v + off }, cmpFloat)
	default:
		off := bd.Offset
		cursor(l, k.ints, ps, pe, a, b, isEnd, out, func(v int64) int64 { return addInt(v, off, sign) }, cmpOrdered[int64])
	}
}

// cursor finds each row's bound with one forward cursor over [a, b):
// target maps a key to its bound's key; cmp orders keys ascending.
func cursor[K any](l *layout, keys []K, ps, pe, a, b int32, isEnd bool, out []int32, target func(K) K, cmp func(x, y K) int) {
	desc := l.key.desc
	valid := l.key.valid
	at := ps
	for r := ps; r < pe; r++ {
		if valid != nil && !valid[r] {
			g := l.groupOf[r]
			v := l.groupStart[g]
			if isEnd {
				v = l.groupStart[g+1]
			}
			out[r] = v
			at = max(at, v)
			continue
		}
		at = max(at, a)
		t := target(keys[r])
		for at < b {
			c := cmp(keys[at], t)
			if desc {
				c = -c
			}
			// Past the start: the first key not before t; past the
			// end: the first key after t.
			if c > 0 || (c == 0 && !isEnd) {
				break
			}
			at++
		}
		out[r] = at
	}
}

func fill(s []int32, v int32) {
	for i := range s {
		s[i] = v
	}
}

func cmpOrdered[T int64 | float64](x, y T) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

// cmpFloat orders NaN above every other value, as the sort does.
func cmpFloat(x, y float64) int {
	xn, yn := math.IsNaN(x), math.IsNaN(y)
	switch {
	case xn && yn:
		return 0
	case xn:
		return 1
	case yn:
		return -1
	}
	return cmpOrdered(x, y)
}

// addInt is v + sign*off, saturating at int64's ends (past them no key
// lies, so the bound is all rows or none either way).
func addInt(v, off int64, sign int) int64 {
	if sign > 0 {
		if v > math.MaxInt64-off {
			return math.MaxInt64
		}
		return v + off
	}
	if v < math.MinInt64+off {
		return math.MinInt64
	}
	return v - off
}

var (
	maxNum = decimal128.New(math.MaxInt64, math.MaxUint64)
	minNum = decimal128.New(math.MinInt64, 0)
)

// addSaturating is v + off, saturating at 128 bits (beyond every
// DECIMAL(38) key).
func addSaturating(v, off decimal128.Num) decimal128.Num {
	s := v.Add(off)
	if v.Sign() == off.Sign() && s.Sign() != v.Sign() && v.Sign() != 0 {
		if v.Sign() > 0 {
			return maxNum
		}
		return minNum
	}
	return s
}

// decimalOffset is bd's offset at the key's scale, truncated: for keys
// of that scale, key ≥ base − x exactly when key ≥ base − trunc(x), so
// the frames are PostgreSQL's exact ones. checkFunc has made sure it fits.
func decimalOffset(bd physical.FrameBound, scale int32) decimal128.Num {
	n, _ := scaledOffset(bd, scale)
	return n
}

// scaledOffset is decimalOffset, with ok false when it has more than 38
// digits.
func scaledOffset(bd physical.FrameBound, scale int32) (decimal128.Num, bool) {
	v := big.NewInt(bd.Offset)
	if d := int64(scale) - int64(bd.Scale); d >= 0 {
		v.Mul(v, new(big.Int).Exp(big.NewInt(10), big.NewInt(d), nil))
	} else {
		v.Quo(v, new(big.Int).Exp(big.NewInt(10), big.NewInt(-d), nil))
	}
	n := decimal128.FromBigInt(v)
	return n, v.BitLen() < 127 && n.FitsInPrecision(38)
}
