package filemap

import (
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// Dictionary codes of decoded cache files. A string column of a decoded
// file gets, on the first request, one dictionary for the whole file (its
// distinct values) and a code per row, when its distinct values are at most
// the dictionary limit; the codes of every batch index that one dictionary.
// An operator that groups by such a column (the partial hash aggregate)
// then groups on small integers and turns codes back into strings only for
// its output groups. The codes are found by the identity of the decoded
// array, so an array made from it (a filter's gather, a slice) has none and
// its reader takes the general path.

// DefaultDictLimit is the most distinct values a file's column may have to
// get a dictionary.
const DefaultDictLimit = 1 << 18

var dictLimit atomic.Int64

func init() { dictLimit.Store(DefaultDictLimit) }

// SetDictLimit sets the dictionary limit of the files whose dictionaries
// are built from now on (for tests that cross it) and returns a function
// that restores the limit before.
func SetDictLimit(n int) (restore func()) {
	old := dictLimit.Swap(int64(n))
	return func() { dictLimit.Store(old) }
}

// Dict is the dictionary of one string column of one decoded file: code i
// stands for Values[i]. Its pointer identifies it: every batch of the
// column has the same one.
type Dict struct {
	Values []string
}

// dictColumn is one string column of a decoded file, its dictionary built
// on first use.
type dictColumn struct {
	once   sync.Once
	arrays []*array.String // the column's array in each batch
	dict   *Dict           // nil when the column has more distinct values than the limit
	codes  [][]int32       // per batch, beside arrays
}

// build makes the dictionary and the codes, or gives up (dict nil) once the
// distinct values pass limit.
func (c *dictColumn) build(limit int) {
	ids := map[string]int32{}
	d := &Dict{}
	codes := make([][]int32, len(c.arrays))
	// Rows often repeat the row before (the columns a join copied from one
	// order or customer to its lines): those skip the map.
	prev, prevID, havePrev := "", int32(0), false
	for bi, a := range c.arrays {
		cs := make([]int32, a.Len())
		for r := range cs {
			if a.IsNull(r) {
				continue // NULL rows are known by the array's validity
			}
			v := a.Value(r)
			if havePrev && v == prev {
				cs[r] = prevID
				continue
			}
			id, ok := ids[v]
			if !ok {
				if len(d.Values) >= limit {
					return
				}
				v = string([]byte(v)) // not a view of the mapping, which may go first
				id = int32(len(d.Values))
				ids[v] = id
				d.Values = append(d.Values, v)
			}
			cs[r] = id
			prev, prevID, havePrev = v, id, true
		}
		codes[bi] = cs
	}
	c.dict, c.codes = d, codes
}

// dictRef places one decoded array in its column.
type dictRef struct {
	col   *dictColumn
	batch int
}

// dicts maps each string array of a live decoded file to its column.
var dicts struct {
	mu sync.RWMutex
	m  map[arrow.ArrayData]dictRef
}

// registerDicts records d's string columns for DictCodes; unregisterDicts
// drops them before d's batches are released.
func registerDicts(d *DecodedFile) {
	if len(d.Batches) == 0 {
		return
	}
	dicts.mu.Lock()
	defer dicts.mu.Unlock()
	if dicts.m == nil {
		dicts.m = map[arrow.ArrayData]dictRef{}
	}
	for ci, f := range d.Schema.Fields() {
		if f.Type.ID() != arrow.STRING {
			continue
		}
		col := &dictColumn{}
		for _, b := range d.Batches {
			a, ok := b.Column(ci).(*array.String)
			if !ok {
				col = nil
				break
			}
			col.arrays = append(col.arrays, a)
		}
		if col == nil {
			continue
		}
		for bi, a := range col.arrays {
			d.dictKeys = append(d.dictKeys, a.Data())
			dicts.m[a.Data()] = dictRef{col: col, batch: bi}
		}
	}
}

func unregisterDicts(d *DecodedFile) {
	if len(d.dictKeys) == 0 {
		return
	}
	dicts.mu.Lock()
	defer dicts.mu.Unlock()
	for _, k := range d.dictKeys {
		delete(dicts.m, k)
	}
	d.dictKeys = nil
}

// DictCodes returns the dictionary of arr's column and arr's codes (one per
// row; a NULL row's code is meaningless) when arr is a string column of a
// decoded cache file, as decoded, whose file has at most the dictionary
// limit of distinct values in it. The first call for a column builds its
// dictionary. Safe for concurrent use; the result is valid while the
// caller holds arr.
func DictCodes(arr arrow.Array) (*Dict, []int32, bool) {
	if arr == nil || arr.DataType().ID() != arrow.STRING {
		return nil, nil, false
	}
	dicts.mu.RLock()
	ref, ok := dicts.m[arr.Data()]
	dicts.mu.RUnlock()
	if !ok {
		return nil, nil, false
	}
	c := ref.col
	c.once.Do(func() { c.build(int(dictLimit.Load())) })
	if c.dict == nil {
		return nil, nil, false
	}
	return c.dict, c.codes[ref.batch], true
}
