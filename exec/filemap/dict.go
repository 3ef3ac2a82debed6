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
// its output groups, and a comparison with constants decides once per
// dictionary value instead of once per row. The codes are found by the identity of the decoded
// array, so an array made from it (a slice, a projection's copy) has none
// and its reader takes the general path; a filter's gather, recorded by
// DeriveGather, has its rows' codes (derived.go).

// DefaultDictLimit is the most distinct values a file's column may have to
// get a dictionary.
const DefaultDictLimit = 1 << 18

// DefaultDictBudget is the most bytes the process's dictionaries and codes
// may hold at once. The codes live on the Go heap, outside every task's
// memory limit, so they get a budget of their own: a column that would
// pass it first evicts the codes of the columns used longest ago (their
// next use builds them again), and gets none when that is not enough (its
// readers compare the strings). Codes a running operator still holds stay
// alive until it lets them go, briefly outside the budget.
const DefaultDictBudget = 512 << 20

// budget is the bytes held by built columns, under its lock with the list
// of built columns to evict from.
var budget struct {
	mu    sync.Mutex
	limit int64
	used  int64
	built map[*dictColumn]struct{}
}

// evictions counts the columns whose codes the budget dropped (DictEvictions).
var evictions atomic.Int64

// DictEvictions is the number of columns whose codes were dropped to fit
// the budget since the process started (for tests).
func DictEvictions() int64 { return evictions.Load() }

// useClock orders the columns' uses for eviction.
var useClock atomic.Int64

func init() { budget.limit = DefaultDictBudget }

// SetDictBudget sets the bytes all dictionaries may hold (for tests that
// pass it) and returns a function that restores the budget before.
func SetDictBudget(n int64) (restore func()) {
	budget.mu.Lock()
	old := budget.limit
	budget.limit = n
	budget.mu.Unlock()
	return func() {
		budget.mu.Lock()
		budget.limit = old
		budget.mu.Unlock()
	}
}

// DictBytes is the bytes the built dictionaries and codes hold now.
func DictBytes() int64 {
	budget.mu.Lock()
	defer budget.mu.Unlock()
	return budget.used
}

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
	file    *DecodedFile // the file, and the column's index in it
	index   int
	mu      sync.Mutex
	arrays  []*array.String // the column's array in each batch
	rows    int64           // the rows of arrays
	tried   bool            // built, or found over the limit
	dict    *Dict           // nil when not built or over the limit
	codes   [][]int32       // per batch, beside arrays
	bytes   int64           // what dict and codes hold, charged to the budget
	lastUse atomic.Int64    // useClock at the last DictCodes
	gone    bool            // the file was released: never build again
}

// codesFor returns the column's dictionary and codes, building them if the
// budget allows.
func (c *dictColumn) codesFor() (*Dict, [][]int32) {
	c.lastUse.Store(useClock.Add(1))
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tried || c.gone {
		return c.dict, c.codes
	}
	if !reserveDict(c, c.rows*4) {
		return nil, nil // try again at a later use, when others may have gone
	}
	c.tried = true
	c.build(int(dictLimit.Load()))
	if c.dict == nil {
		releaseDict(c, c.rows*4)
		return nil, nil
	}
	extra := int64(0)
	for _, v := range c.dict.Values {
		extra += int64(len(v)) + dictValueBytes
	}
	chargeDict(c, c.rows*4, extra)
	return c.dict, c.codes
}

// dictValueBytes approximates a dictionary value's overhead (its string
// header and the build's map entry).
const dictValueBytes = 48

// reserveDict charges n bytes for c, evicting the columns used longest ago
// while it does not fit; false when even that is not enough.
func reserveDict(c *dictColumn, n int64) bool {
	budget.mu.Lock()
	defer budget.mu.Unlock()
	for budget.used+n > budget.limit {
		if !evictOne(c) {
			return false
		}
	}
	budget.used += n
	return true
}

// evictOne drops the codes of the built column used longest ago, other
// than keep and those busy building; false when there is none.
func evictOne(keep *dictColumn) bool {
	var victim *dictColumn
	for col := range budget.built {
		if col != keep && (victim == nil || col.lastUse.Load() < victim.lastUse.Load()) {
			victim = col
		}
	}
	if victim == nil || !victim.mu.TryLock() {
		return false
	}
	budget.used -= victim.bytes
	delete(budget.built, victim)
	victim.dict, victim.codes, victim.bytes, victim.tried = nil, nil, 0, false
	victim.mu.Unlock()
	evictions.Add(1)
	return true
}

// chargeDict turns c's reservation into what it holds: reserved plus extra.
func chargeDict(c *dictColumn, reserved, extra int64) {
	budget.mu.Lock()
	defer budget.mu.Unlock()
	budget.used += extra
	c.bytes = reserved + extra
	if budget.built == nil {
		budget.built = map[*dictColumn]struct{}{}
	}
	budget.built[c] = struct{}{}
}

// releaseDict gives back n reserved bytes.
func releaseDict(c *dictColumn, n int64) {
	budget.mu.Lock()
	defer budget.mu.Unlock()
	budget.used -= n
}

// drop gives back what c holds when its file is released.
func (c *dictColumn) drop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	budget.mu.Lock()
	defer budget.mu.Unlock()
	if _, ok := budget.built[c]; ok {
		budget.used -= c.bytes
		delete(budget.built, c)
	}
	c.dict, c.codes, c.bytes, c.gone = nil, nil, 0, true
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
		col := &dictColumn{file: d, index: ci}
		for _, b := range d.Batches {
			a, ok := b.Column(ci).(*array.String)
			if !ok {
				col = nil
				break
			}
			col.arrays = append(col.arrays, a)
			col.rows += int64(a.Len())
		}
		if col == nil {
			continue
		}
		d.dictCols = append(d.dictCols, col)
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
	for _, k := range d.dictKeys {
		delete(dicts.m, k)
	}
	d.dictKeys = nil
	cols := d.dictCols
	d.dictCols = nil
	dicts.mu.Unlock()
	for _, c := range cols {
		c.drop()
	}
}

// DictCodes returns the dictionary of arr's column and arr's codes (one per
// row; a NULL row's code is meaningless) when arr is a string column of a
// decoded cache file, as decoded, whose file has at most the dictionary
// limit of distinct values in it. The first call for a column builds its
// dictionary. A gather of such a column recorded by DeriveGather has the
// same dictionary and its rows' codes (derived.go). Safe for concurrent
// use; the result is valid while the caller holds arr.
func DictCodes(arr arrow.Array) (*Dict, []int32, bool) {
	if arr == nil || arr.DataType().ID() != arrow.STRING {
		return nil, nil, false
	}
	dicts.mu.RLock()
	ref, ok := dicts.m[arr.Data()]
	dicts.mu.RUnlock()
	if !ok {
		if col := findDerived(arr); col != nil {
			dict, codes := col.codesOf()
			return dict, codes, dict != nil
		}
		return nil, nil, false
	}
	dict, codes := ref.col.codesFor()
	if dict == nil {
		return nil, nil, false
	}
	return dict, codes[ref.batch], true
}
