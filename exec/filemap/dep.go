package filemap

import (
	"math"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// Dependencies between a decoded file's columns. A cache built from a join
// repeats each customer's name on every line of the customer's orders: the
// name column follows from the customer key. An aggregate grouped on both
// checks that on every row of every query (dep_keys.go in exec/aggregate),
// at a random access per row into a table of the key's range. The file
// never changes, so the check is made once per file and pair of columns,
// on first request, and kept with the file: the dictionary code of the
// string column for each value of the integer column, or the finding that
// one value has two codes (or a NULL is present), in which case the
// aggregate checks the rows itself.

// FileDep is a string column's dictionary codes by the values of an
// integer column of the same file: Codes[v-Base] is the code of the string
// on the rows whose integer is v, -1 where v does not occur. It lives with
// the file, outside the dictionary budget: four bytes a value of the
// integer's range, at most DepSpanLimit values.
type FileDep struct {
	Dict  *Dict
	Base  int64
	Codes []int32
}

// DepSpanLimit is the widest range of integer values a FileDep indexes.
const DepSpanLimit = 1 << 21

// intRef places one decoded integer array in its file.
type intRef struct {
	file  *DecodedFile
	col   int
	batch int
}

// ints maps each integer array of a live decoded file to its place.
var ints struct {
	mu sync.RWMutex
	m  map[arrow.ArrayData]intRef
}

// depMemo is a file's FileDeps (nil: not dependent), by integer and string
// column.
type depMemo struct {
	mu sync.Mutex
	m  map[[2]int]*FileDep
}

// depsBuilt counts the FileDeps computed (DepsBuilt).
var depsBuilt atomic.Int64

// DepsBuilt is the number of column pairs whose dependency was computed
// since the process started (for tests).
func DepsBuilt() int64 { return depsBuilt.Load() }

// registerInts records d's Int64 and Int32 columns for Dependency.
func registerInts(d *DecodedFile) {
	ints.mu.Lock()
	defer ints.mu.Unlock()
	if ints.m == nil {
		ints.m = map[arrow.ArrayData]intRef{}
	}
	for ci, f := range d.Schema.Fields() {
		if id := f.Type.ID(); id != arrow.INT64 && id != arrow.INT32 {
			continue
		}
		for bi, b := range d.Batches {
			a := b.Column(ci).Data()
			ints.m[a] = intRef{file: d, col: ci, batch: bi}
			d.intKeys = append(d.intKeys, a)
		}
	}
}

func unregisterInts(d *DecodedFile) {
	ints.mu.Lock()
	for _, k := range d.intKeys {
		delete(ints.m, k)
	}
	d.intKeys = nil
	ints.mu.Unlock()
	d.deps.mu.Lock()
	d.deps.m = nil
	d.deps.mu.Unlock()
}

// Dependency returns the codes of dep's dictionary by lead's values over
// the whole file, when lead is an integer column and dep a string column of
// one batch of a decoded file, as decoded, and in the whole file every
// value of lead comes with one string of dep (no NULL in either, the range
// of lead at most DepSpanLimit, dep within the dictionary limit); nil
// otherwise. The first call for a pair of columns computes it. Safe for
// concurrent use; the result is valid while the caller holds the arrays.
func Dependency(lead, dep arrow.Array) *FileDep {
	if lead == nil || dep == nil || dep.DataType().ID() != arrow.STRING {
		return nil
	}
	ints.mu.RLock()
	ir, ok := ints.m[lead.Data()]
	ints.mu.RUnlock()
	if !ok {
		return nil
	}
	dicts.mu.RLock()
	dr, ok := dicts.m[dep.Data()]
	dicts.mu.RUnlock()
	if !ok || dr.col.file != ir.file || dr.batch != ir.batch {
		return nil
	}
	f := ir.file
	key := [2]int{ir.col, dr.col.index}
	f.deps.mu.Lock()
	defer f.deps.mu.Unlock()
	if fd, done := f.deps.m[key]; done {
		return fd
	}
	fd := computeDep(f, ir.col, dr.col)
	if f.deps.m == nil {
		f.deps.m = map[[2]int]*FileDep{}
	}
	f.deps.m[key] = fd
	depsBuilt.Add(1)
	return fd
}

// computeDep finds the codes of col by the values of file column lead, or
// nil when they do not follow.
func computeDep(f *DecodedFile, lead int, col *dictColumn) *FileDep {
	dict, codes := col.codesFor()
	if dict == nil || len(codes) != len(f.Batches) {
		return nil
	}
	lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
	for _, b := range f.Batches {
		a := b.Column(lead)
		if a.NullN() > 0 {
			return nil
		}
		forInts(a, func(v int64) { lo, hi = min(lo, v), max(hi, v) })
	}
	if lo > hi || hi-lo >= DepSpanLimit {
		return nil
	}
	out := make([]int32, hi-lo+1)
	for i := range out {
		out[i] = -1
	}
	for bi, b := range f.Batches {
		if col.arrays[bi].NullN() > 0 {
			return nil
		}
		cs := codes[bi]
		ok := true
		r := 0
		forInts(b.Column(lead), func(v int64) {
			p := &out[v-lo]
			switch *p {
			case cs[r]:
			case -1:
				*p = cs[r]
			default:
				ok = false
			}
			r++
		})
		if !ok {
			return nil
		}
	}
	return &FileDep{Dict: dict, Base: lo, Codes: out}
}

// forInts calls fn with each value of a (Int64 or Int32, no NULLs).
func forInts(a arrow.Array, fn func(int64)) {
	switch x := a.(type) {
	case *array.Int64:
		for _, v := range x.Int64Values() {
			fn(v)
		}
	case *array.Int32:
		for _, v := range x.Int32Values() {
			fn(int64(v))
		}
	}
}
