package eval

import (
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver/exec/filemap"
	"github.com/quiverdb/quiver/physical"
)

// Tests of a string column against constants on file dictionary codes. A
// string column read as decoded from a cache file has one dictionary for
// the whole file and an int32 code per row (filemap.DictCodes); a
// comparison with a constant or an IN list of constants is then decided
// once per dictionary value, and each row only looks its code up, instead
// of comparing its bytes. A value absent from a file's dictionary matches
// no row of it. NULL rows have meaningless codes: their bits are set or
// not, and the caller's validity (the column's) makes them NULL.

// dictCodes finds an array's file dictionary codes (a variable for tests
// that give arrays codes without a file).
var dictCodes = filemap.DictCodes

// dictRows counts the rows tested on codes (DictCompareRows).
var dictRows atomic.Int64

// DictCompareRows is the number of rows comparisons and IN lists have
// tested on file dictionary codes since the process started (for tests and
// profiles).
func DictCompareRows() int64 { return dictRows.Load() }

// dictVerdict is one constant test decided for every value of one
// dictionary: either the code that alone matches (eq; -1 when none does)
// or, when hit is non-nil, whether each code matches.
type dictVerdict struct {
	dict *filemap.Dict
	eq   int32
	hit  []bool
}

// dictTest remembers the verdict for the last dictionary seen, so a file's
// batches decide it once; it is safe for concurrent use.
type dictTest struct {
	last atomic.Pointer[dictVerdict]
}

// cmpVerdict decides `value op s` for each of dict's values (op is =, <,
// <=, > or >=).
func cmpVerdict(dict *filemap.Dict, op physical.BinaryOp, s string) *dictVerdict {
	v := &dictVerdict{dict: dict, eq: -1}
	if op == physical.OpEq {
		for i, x := range dict.Values {
			if x == s {
				v.eq = int32(i)
				break
			}
		}
		return v
	}
	v.hit = make([]bool, len(dict.Values))
	for i, x := range dict.Values {
		switch op {
		case physical.OpLt:
			v.hit[i] = x < s
		case physical.OpLtEq:
			v.hit[i] = x <= s
		case physical.OpGt:
			v.hit[i] = x > s
		case physical.OpGtEq:
			v.hit[i] = x >= s
		}
	}
	return v
}

// setVerdict decides membership in set for each of dict's values.
func setVerdict(dict *filemap.Dict, set *inSet[string]) *dictVerdict {
	v := &dictVerdict{dict: dict, eq: -1, hit: make([]bool, len(dict.Values))}
	for i, x := range dict.Values {
		v.hit[i] = set.has(x)
	}
	return v
}

// codesOf returns a's dictionary and codes when a has file dictionary
// codes, and the verdict remembered for that dictionary (nil when it is
// not the last one seen).
func (t *dictTest) codesOf(a arrow.Array) (*filemap.Dict, []int32, *dictVerdict, bool) {
	if a.DataType().ID() != arrow.STRING {
		return nil, nil, nil, false
	}
	dict, codes, ok := dictCodes(a)
	if !ok {
		return nil, nil, nil, false
	}
	v := t.last.Load()
	if v != nil && v.dict != dict {
		v = nil
	}
	return dict, codes, v, true
}

// markCmp sets bit i of bm (zeroed) where row i of a compares op to s,
// deciding on codes; ok is false when a has no codes (the caller compares
// the strings).
func (t *dictTest) markCmp(a arrow.Array, op physical.BinaryOp, s string, bm []byte) (ok bool) {
	dict, codes, v, ok := t.codesOf(a)
	if !ok {
		return false
	}
	if v == nil {
		v = cmpVerdict(dict, op, s)
		t.last.Store(v)
	}
	markCodes(v, codes[:a.Len()], bm)
	return true
}

// markIn sets bit i of bm (zeroed) where row i of a is in set, deciding on
// codes; ok is false when a has no codes.
func (t *dictTest) markIn(a arrow.Array, set *inSet[string], bm []byte) (ok bool) {
	dict, codes, v, ok := t.codesOf(a)
	if !ok {
		return false
	}
	if v == nil {
		v = setVerdict(dict, set)
		t.last.Store(v)
	}
	markCodes(v, codes[:a.Len()], bm)
	return true
}

// markCodes sets the bits of the rows whose codes v accepts, eight rows to
// a stored byte.
func markCodes(v *dictVerdict, codes []int32, bm []byte) {
	n := len(codes)
	dictRows.Add(int64(n))
	if v.hit == nil {
		if v.eq < 0 {
			return // the constant is not in this file: no row matches
		}
		eq := v.eq
		for base := 0; base < n; base += 8 {
			var acc byte
			for bit, c := range codes[base:min(base+8, n)] {
				acc |= b2u(c == eq) << uint(bit)
			}
			bm[base>>3] |= acc
		}
		return
	}
	hit := v.hit
	if len(hit) == 0 {
		return // every row is NULL
	}
	for base := 0; base < n; base += 8 {
		var acc byte
		for bit, c := range codes[base:min(base+8, n)] {
			acc |= b2u(hit[c]) << uint(bit)
		}
		bm[base>>3] |= acc
	}
}
