package filemap

import (
	"runtime"
	"sync"
	"sync/atomic"
	"weak"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// Codes of gathered arrays. A filter's output column is a gather of some
// rows of a coded column (a decoded file's, or another gather's): it has
// the same dictionary, and its codes are the gathered rows' codes. DeriveGather
// records that relation; DictCodes gathers the codes on the first request,
// so a gather nobody asks about costs one map entry. An entry is found by
// a weak pointer to the gathered array's data, so it never keeps the
// array alive and an array made later at the same address is not taken
// for it; a cleanup drops the entry once the array is collected. The
// gathered codes live on the Go heap outside the dictionary budget, as
// long as the array they belong to.

// derivedCol is one gathered column.
type derivedCol struct {
	src   arrow.Array // the column gathered from (its codes found by DictCodes)
	sel   []int32     // the rows of src taken, in order (shared by a batch's columns)
	once  sync.Once
	dict  *Dict // nil when src has no codes
	codes []int32
}

var derived struct {
	mu sync.RWMutex
	m  map[weak.Pointer[array.Data]]*derivedCol
}

// derivedLive is the number of entries in derived.m: DictCodes looks there
// only when some exist.
var derivedLive atomic.Int64

// derivedRows counts the rows whose codes were gathered (DerivedCodeRows).
var derivedRows atomic.Int64

// DerivedCodeRows is the number of rows of gathered arrays that got their
// codes from the arrays they were gathered from, since the process started
// (for tests and profiles).
func DerivedCodeRows() int64 { return derivedRows.Load() }

// DeriveGather records, for each string column i of out that was gathered
// as rows sel of src[i] (out[i] row r is src[i] row sel[r]) from a column
// with dictionary codes (or that may get them), that out[i]'s codes are
// those rows' codes. sel is copied; src and out are parallel. A column of
// out that is src's own array (nothing gathered) is left alone.
func DeriveGather(src, out []arrow.Array, sel []int32) {
	var shared []int32
	for i, o := range out {
		if i >= len(src) || o == nil || src[i] == nil || o.DataType().ID() != arrow.STRING || o.Len() != len(sel) {
			continue
		}
		od, ok := o.Data().(*array.Data)
		if !ok || o.Data() == src[i].Data() || !mayHaveCodes(src[i]) {
			continue
		}
		if shared == nil {
			shared = append([]int32(nil), sel...)
		}
		addDerived(od, &derivedCol{src: src[i], sel: shared})
	}
}

// mayHaveCodes reports whether arr is a decoded file's string column or a
// recorded gather, without building a dictionary.
func mayHaveCodes(arr arrow.Array) bool {
	dicts.mu.RLock()
	_, ok := dicts.m[arr.Data()]
	dicts.mu.RUnlock()
	if ok {
		return true
	}
	return findDerived(arr) != nil
}

func addDerived(d *array.Data, col *derivedCol) {
	wp := weak.Make(d)
	derived.mu.Lock()
	if derived.m == nil {
		derived.m = map[weak.Pointer[array.Data]]*derivedCol{}
	}
	if _, dup := derived.m[wp]; dup {
		derived.mu.Unlock()
		return
	}
	derived.m[wp] = col
	derived.mu.Unlock()
	derivedLive.Add(1)
	runtime.AddCleanup(d, dropDerived, wp)
}

// dropDerived forgets a collected array's entry.
func dropDerived(wp weak.Pointer[array.Data]) {
	derived.mu.Lock()
	if _, ok := derived.m[wp]; ok {
		delete(derived.m, wp)
		derivedLive.Add(-1)
	}
	derived.mu.Unlock()
}

// findDerived returns arr's gather entry, nil if it has none.
func findDerived(arr arrow.Array) *derivedCol {
	if derivedLive.Load() == 0 {
		return nil
	}
	d, ok := arr.Data().(*array.Data)
	if !ok {
		return nil
	}
	wp := weak.Make(d)
	derived.mu.RLock()
	col := derived.m[wp]
	derived.mu.RUnlock()
	return col
}

// codesOf returns the gathered column's dictionary and codes, gathering them
// on the first call; nil when its source has none.
func (c *derivedCol) codesOf() (*Dict, []int32) {
	c.once.Do(func() {
		dict, src, ok := DictCodes(c.src)
		if !ok {
			return
		}
		codes := make([]int32, len(c.sel))
		for r, s := range c.sel {
			codes[r] = src[s]
		}
		c.dict, c.codes = dict, codes
		c.src, c.sel = nil, nil // no longer needed: let the source go
		derivedRows.Add(int64(len(codes)))
	})
	return c.dict, c.codes
}
