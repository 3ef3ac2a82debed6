package sort

import (
	"bytes"
	"cmp"
	"context"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver/exec/kernel"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
	"github.com/quiverdb/quiver/temporal"
)

// SortKeyCol is one sort key column of one batch with typed access to its
// values, chosen once per column (newSortKeyCol) so that comparisons never
// box a value. cmp compares row i of this column with row j of o, which is
// the same key of the same or another batch (same concrete type); neither
// row is NULL.
type SortKeyCol interface {
	cmp(i int, o SortKeyCol, j int) int
	isNull(i int) bool
}

// nullBits gives NULL tests over an array's validity bitmap.
type nullBits struct {
	valid []byte // nil: no NULLs
	off   int
}

func newNullBits(a arrow.Array) nullBits {
	if a.NullN() == 0 {
		return nullBits{}
	}
	return nullBits{valid: a.NullBitmapBytes(), off: a.Data().Offset()}
}

func (n nullBits) isNull(i int) bool {
	return n.valid != nil && !bitutil.BitIsSet(n.valid, n.off+i)
}

type orderedKey[T cmp.Ordered] struct {
	nullBits
	vals []T
}

func (k *orderedKey[T]) cmp(i int, o SortKeyCol, j int) int {
	return cmp.Compare(k.vals[i], o.(*orderedKey[T]).vals[j])
}

// floatKey orders NaN above every other value (as PostgreSQL does).
type floatKey[T float32 | float64] struct {
	nullBits
	vals []T
}

func (k *floatKey[T]) cmp(i int, o SortKeyCol, j int) int {
	a, b := k.vals[i], o.(*floatKey[T]).vals[j]
	an, bn := math.IsNaN(float64(a)), math.IsNaN(float64(b))
	switch {
	case an || bn:
		if an && bn {
			return 0
		}
		if an {
			return 1
		}
		return -1
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

type boolKey struct {
	nullBits
	bits []byte
	off  int
}

func (k *boolKey) cmp(i int, o SortKeyCol, j int) int {
	ob := o.(*boolKey)
	a, b := bitutil.BitIsSet(k.bits, k.off+i), bitutil.BitIsSet(ob.bits, ob.off+j)
	switch {
	case a == b:
		return 0
	case b:
		return -1
	}
	return 1
}

type bytesKey[O int32 | int64] struct {
	nullBits
	offs []O
	data []byte
}

func (k *bytesKey[O]) cmp(i int, o SortKeyCol, j int) int {
	ob := o.(*bytesKey[O])
	return bytes.Compare(k.data[k.offs[i]:k.offs[i+1]], ob.data[ob.offs[j]:ob.offs[j+1]])
}

type decimalKey struct {
	nullBits
	vals []decimal128.Num
}

func (k *decimalKey) cmp(i int, o SortKeyCol, j int) int {
	return k.vals[i].Cmp(o.(*decimalKey).vals[j])
}

// intervalKey orders intervals by length (a month as 30 days, a day as 24
// hours), as comparisons do.
type intervalKey struct {
	nullBits
	vals []arrow.MonthDayNanoInterval
}

func (k *intervalKey) cmp(i int, o SortKeyCol, j int) int {
	return temporal.CompareIntervals(k.vals[i], o.(*intervalKey).vals[j])
}

// newSortKeyCol returns typed access to a's values.
func newSortKeyCol(a arrow.Array) (SortKeyCol, error) {
	nb := newNullBits(a)
	d := a.Data()
	switch a.DataType().ID() {
	case arrow.INT8:
		return &orderedKey[int8]{nb, arrow.GetValues[int8](d, 1)}, nil
	case arrow.INT16:
		return &orderedKey[int16]{nb, arrow.GetValues[int16](d, 1)}, nil
	case arrow.INT32, arrow.DATE32, arrow.TIME32:
		return &orderedKey[int32]{nb, arrow.GetValues[int32](d, 1)}, nil
	case arrow.INT64, arrow.DATE64, arrow.TIMESTAMP, arrow.TIME64, arrow.DURATION:
		return &orderedKey[int64]{nb, arrow.GetValues[int64](d, 1)}, nil
	case arrow.UINT8:
		return &orderedKey[uint8]{nb, arrow.GetValues[uint8](d, 1)}, nil
	case arrow.UINT16:
		return &orderedKey[uint16]{nb, arrow.GetValues[uint16](d, 1)}, nil
	case arrow.UINT32:
		return &orderedKey[uint32]{nb, arrow.GetValues[uint32](d, 1)}, nil
	case arrow.UINT64:
		return &orderedKey[uint64]{nb, arrow.GetValues[uint64](d, 1)}, nil
	case arrow.FLOAT32:
		return &floatKey[float32]{nb, arrow.GetValues[float32](d, 1)}, nil
	case arrow.FLOAT64:
		return &floatKey[float64]{nb, arrow.GetValues[float64](d, 1)}, nil
	case arrow.BOOL:
		var bits []byte
		if buf := d.Buffers()[1]; buf != nil {
			bits = buf.Bytes()
		}
		return &boolKey{nb, bits, d.Offset()}, nil
	case arrow.STRING, arrow.BINARY:
		return &bytesKey[int32]{nb, arrow.GetOffsets[int32](d, 1), valueBytes(d)}, nil
	case arrow.LARGE_STRING, arrow.LARGE_BINARY:
		return &bytesKey[int64]{nb, arrow.GetOffsets[int64](d, 1), valueBytes(d)}, nil
	case arrow.DECIMAL128:
		return &decimalKey{nb, a.(*array.Decimal128).Values()}, nil
	case arrow.INTERVAL_MONTH_DAY_NANO:
		return &intervalKey{nb, arrow.GetValues[arrow.MonthDayNanoInterval](d, 1)}, nil
	case arrow.NULL:
		return &orderedKey[int8]{nullBits{valid: make([]byte, bitutil.BytesForBits(int64(a.Len())))}, nil}, nil
	}
	return nil, qerr.NotImplementedf("exec: sorting by a column of type %s is not supported", a.DataType())
}

func valueBytes(d arrow.ArrayData) []byte {
	if b := d.Buffers()[2]; b != nil {
		return b.Bytes()
	}
	return nil
}

// SortSpec is the direction and NULL placement of each key.
type SortSpec struct {
	desc       []bool
	nullsFirst []bool
}

func NewSortSpec(keys []physical.SortKey) SortSpec {
	s := SortSpec{desc: make([]bool, len(keys)), nullsFirst: make([]bool, len(keys))}
	for i, k := range keys {
		s.desc[i], s.nullsFirst[i] = !k.Asc, k.NullsFirst
	}
	return s
}

// Compare orders row i of keys a against row j of keys b.
func (s SortSpec) Compare(a []SortKeyCol, i int, b []SortKeyCol, j int) int {
	return s.compareKeys(a, i, b, j, 0, len(a))
}

// compareKeys orders row i of keys a against row j of keys b on the keys
// lo..hi-1 only.
func (s SortSpec) compareKeys(a []SortKeyCol, i int, b []SortKeyCol, j int, lo, hi int) int {
	for k := lo; k < hi; k++ {
		ka, kb := a[k], b[k]
		an, bn := ka.isNull(i), kb.isNull(j)
		if an || bn {
			if an && bn {
				continue
			}
			if an == s.nullsFirst[k] {
				return -1
			}
			return 1
		}
		if c := ka.cmp(i, kb, j); c != 0 {
			if s.desc[k] {
				return -c
			}
			return c
		}
	}
	return 0
}

// SortKeyExprs evaluates sort key expressions over batches. Plain columns
// are taken directly.
type SortKeyExprs struct {
	cols []int
	evs  []kernel.ExprEvaluator
}

func CompileSortKeys(keys []physical.SortKey) (*SortKeyExprs, error) {
	s := &SortKeyExprs{cols: make([]int, len(keys)), evs: make([]kernel.ExprEvaluator, len(keys))}
	for i, k := range keys {
		if c, ok := k.Expr.(*physical.Column); ok {
			s.cols[i] = c.Index
			continue
		}
		ev, err := kernel.CompileEval(k.Expr)
		if err != nil {
			return nil, err
		}
		s.cols[i], s.evs[i] = -1, ev
	}
	return s, nil
}

// Eval returns the key arrays of b (the caller releases them) and typed
// access to them (valid while the arrays live).
func (s *SortKeyExprs) Eval(ctx context.Context, mem memory.Allocator, b arrow.RecordBatch) ([]arrow.Array, []SortKeyCol, error) {
	arrs := make([]arrow.Array, len(s.cols))
	keys := make([]SortKeyCol, len(s.cols))
	for i, c := range s.cols {
		var a arrow.Array
		if c >= 0 {
			a = b.Column(c)
			a.Retain()
		} else {
			var err error
			if a, err = s.evs[i].Eval(ctx, mem, b); err != nil {
				kernel.ReleaseArrays(arrs)
				return nil, nil, err
			}
		}
		arrs[i] = a
		k, err := newSortKeyCol(a)
		if err != nil {
			kernel.ReleaseArrays(arrs)
			return nil, nil, err
		}
		keys[i] = k
	}
	return arrs, keys, nil
}
