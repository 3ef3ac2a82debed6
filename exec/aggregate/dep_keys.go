package aggregate

import (
	"math"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver/exec/filemap"
	"github.com/quiverdb/quiver/exec/hashtable"
	"github.com/quiverdb/quiver/exec/kernel"
	"github.com/quiverdb/quiver/qerr"
)

// Grouping on one integer key when the others follow from it. A Partial
// aggregate whose keys are one integer column (the lead) and string
// columns grouped on dictionary ids (dict_keys.go) — GROUP BY c_custkey,
// c_name, nation — often sees each lead value with one id of each other
// key only. While that holds, its hash table gets the lead alone (an
// integer key of a small range takes the direct layout, no packing, no
// hashing), and the other keys' ids are remembered per lead value and
// added back for the output groups. The first row that breaks it (a lead
// value with a second id, a NULL, a lead range too wide to index) moves
// the groups so far to a table of every key, with the same group ids, and
// the aggregate goes on as without this; so the answer never depends on it.

// depSpanLimit is the widest range of lead values indexed (four bytes a
// value per key).
const depSpanLimit = 1 << 21

// depRows counts the rows grouped on the lead key alone (DepKeyRows).
var depRows atomic.Int64

// DepKeyRows is the number of rows partial aggregates have grouped on an
// integer key alone, the other keys following from it, since the process
// started (for tests and profiles).
func DepKeyRows() int64 { return depRows.Load() }

// depKeys is the per-aggregate state while the other keys follow from the lead.
type depKeys struct {
	lead int              // the integer key's position
	full []arrow.DataType // the types of every key, as the table took them without this
	base int64            // the lead value of the first entry
	// deps holds, for lead value base+v, each other key's id side by side
	// (at; -1 unseen): the keys of one lead value share a cache line, so a
	// new lead value costs one miss, not one a key.
	deps  []int32
	empty bool // no lead value seen yet
	// merged are the files' dependencies already in deps (mergeFile).
	merged map[*filemap.FileDep]bool
}

// at is the place of key's id for lead value v (covered).
func (d *depKeys) at(v int64, key int) int64 { return (v-d.base)*d.stride() + d.place(key) }

// stride is the ids a lead value has in deps: one per key but the lead.
func (d *depKeys) stride() int64 { return int64(len(d.full) - 1) }

// place is key's place among a lead value's ids.
func (d *depKeys) place(key int) int64 {
	if key > d.lead {
		return int64(key - 1)
	}
	return int64(key)
}

// covered is how many lead values deps indexes.
func (d *depKeys) covered() int64 { return int64(len(d.deps)) / d.stride() }

// newDepKeys returns the state when the keys of types (the table's, ids as
// Int32) are one integer key and others grouped on ids (on), else nil.
func newDepKeys(on []bool, types []arrow.DataType) *depKeys {
	if len(types) < 2 {
		return nil
	}
	lead := -1
	for i, t := range types {
		if on[i] {
			continue
		}
		if lead >= 0 || (t.ID() != arrow.INT64 && t.ID() != arrow.INT32) {
			return nil
		}
		lead = i
	}
	if lead < 0 {
		return nil
	}
	return &depKeys{lead: lead, full: types, empty: true}
}

// leadTypes is the table's key types while the other keys follow.
func (d *depKeys) leadTypes() []arrow.DataType { return []arrow.DataType{d.full[d.lead]} }

// record checks that keys (every key, ids as Int32) agree with what is
// known and remembers the new lead values' ids; false when they do not
// (the caller leaves this mode; what record set for lead values not yet
// in the table is then never read).
func (d *depKeys) record(keys []arrow.Array) bool {
	lead := keys[d.lead]
	if lead.NullN() > 0 {
		return false
	}
	for i, k := range keys {
		if i != d.lead && k.NullN() > 0 {
			return false
		}
	}
	switch a := lead.(type) {
	case *array.Int64:
		return recordDeps(d, a.Int64Values(), keys)
	case *array.Int32:
		return recordDeps(d, a.Int32Values(), keys)
	}
	return false
}

func recordDeps[T int32 | int64](d *depKeys, vals []T, keys []arrow.Array) bool {
	if len(vals) == 0 {
		return true
	}
	if !d.cover(span(vals)) {
		return false
	}
	ids := make([][]int32, 0, len(keys)-1)
	places := make([]int64, 0, len(keys)-1)
	for i, k := range keys {
		if i != d.lead {
			ids = append(ids, k.(*array.Int32).Int32Values()[:len(vals)])
			places = append(places, d.place(i))
		}
	}
	deps, stride := d.deps, d.stride()
	for r, v := range vals {
		if r > 0 && v == vals[r-1] {
			// The lines of one order repeat its customer: the row before
			// was checked, so only the ids need comparing.
			for _, id := range ids {
				if id[r] != id[r-1] {
					return false
				}
			}
			continue
		}
		row := (int64(v) - d.base) * stride
		for k, id := range ids {
			p := &deps[row+places[k]]
			switch *p {
			case id[r]:
			case -1:
				*p = id[r]
			default:
				return false
			}
		}
	}
	depRows.Add(int64(len(vals)))
	return true
}

// fileDeps returns, per key (nil at the lead), the file dependency of each
// other key's strings on the lead (filemap.Dependency) when the keys are
// columns of one batch of a decoded file and every other key follows from
// the lead over the whole file; nil otherwise. keys are as evaluated,
// before the strings become ids.
func (d *depKeys) fileDeps(keys []arrow.Array) []*filemap.FileDep {
	out := make([]*filemap.FileDep, len(keys))
	for i, k := range keys {
		if i == d.lead {
			continue
		}
		if out[i] = filemap.Dependency(keys[d.lead], k); out[i] == nil {
			return nil
		}
	}
	return out
}

// mergeFile records a batch of a file whose other keys follow from the lead
// over the whole file (fds, from fileDeps, with the batch's ids the files'
// dictionary codes): each file's codes by lead value go into deps once, and
// the batch's rows need no check of their own. It reports false when a
// file's codes disagree with what deps holds (the caller leaves this mode),
// or when they cannot be indexed.
func (d *depKeys) mergeFile(fds []*filemap.FileDep, rows int) bool {
	for i, fd := range fds {
		if i == d.lead || d.merged[fd] {
			continue
		}
		if !d.cover(fd.Base, fd.Base+int64(len(fd.Codes))-1) {
			return false
		}
		for j, c := range fd.Codes {
			if c < 0 {
				continue
			}
			p := &d.deps[d.at(fd.Base+int64(j), i)]
			switch *p {
			case c:
			case -1:
				*p = c
			default:
				return false
			}
		}
		if d.merged == nil {
			d.merged = map[*filemap.FileDep]bool{}
		}
		d.merged[fd] = true
	}
	depRows.Add(int64(rows))
	fileDepRows.Add(int64(rows))
	return true
}

// fileDepRows counts the rows recorded through a file's dependency
// (FileDepRows).
var fileDepRows atomic.Int64

// FileDepRows is the number of rows partial aggregates have grouped on an
// integer key alone without checking them, a file's dependency having
// shown that the other keys follow (for tests).
func FileDepRows() int64 { return fileDepRows.Load() }

// cover widens deps to index lead values lo..hi (lo <= hi); false past
// depSpanLimit.
func (d *depKeys) cover(lo, hi int64) bool {
	if lo < math.MinInt64+4*depSpanLimit || hi > math.MaxInt64-4*depSpanLimit || hi-lo >= depSpanLimit {
		return false // too wide, or near the ends where the arithmetic below could overflow
	}
	n := d.covered()
	if d.empty {
		d.base, d.empty, n = lo, false, 0
	}
	if lo >= d.base && hi-d.base < n {
		return true
	}
	newBase, newEnd := min(d.base, lo), max(d.base+n-1, hi) // inclusive
	need := newEnd - newBase + 1
	if need <= 0 || need > depSpanLimit {
		return false
	}
	// Twice the span needed (within the limit), the slack on the side it
	// grew, so a lead that creeps batch by batch copies rarely.
	span := min(max(2*need, 1024), depSpanLimit)
	if lo < d.base {
		newBase = newEnd + 1 - span
	}
	stride := d.stride()
	grown := make([]int32, span*stride)
	for j := range grown {
		grown[j] = -1
	}
	copy(grown[(d.base-newBase)*stride:], d.deps[:n*stride])
	d.deps, d.base = grown, newBase
	return true
}

// expand returns every key's column for the lead column of some groups:
// the lead itself and, for each other key, its ids (Int32) by lead value.
// It takes over lead.
func (d *depKeys) expand(mem memory.Allocator, lead arrow.Array) []arrow.Array {
	n := lead.Len()
	vals := leadValues(lead)
	cols := make([]arrow.Array, len(d.full))
	for i := range cols {
		if i == d.lead {
			cols[i] = lead
			continue
		}
		ids := make([]int32, n)
		for r, v := range vals {
			ids[r] = d.deps[d.at(v, i)]
		}
		cols[i] = kernel.MakeFixed(&kernel.ArrayMaker{Mem: mem}, arrow.PrimitiveTypes.Int32, ids, nil)
	}
	return cols
}

// memSize is the bytes of the remembered ids.
func (d *depKeys) memSize() int64 { return int64(cap(d.deps)) * 4 }

// leave moves the groups of t (keyed on the lead alone) to a new table of
// every key with the same group ids, and returns it.
func (d *depKeys) leave(m *kernel.ArrayMaker, t *hashtable.Table) (*hashtable.Table, error) {
	return moveGroups(m, t, d.full, d.expand)
}

// moveGroups moves the groups of t (keyed on a lead alone) to a new table
// of keys of types full, with the same group ids; expand makes every key's
// column from the lead's.
func moveGroups(m *kernel.ArrayMaker, t *hashtable.Table, full []arrow.DataType, expand func(memory.Allocator, arrow.Array) []arrow.Array) (*hashtable.Table, error) {
	nt, err := hashtable.New(full)
	if err != nil {
		return nil, err
	}
	n := t.Len()
	if n == 0 {
		return nt, nil
	}
	keys := expand(m.Mem, t.Keys[0].Build(m, 0, n))
	defer kernel.ReleaseArrays(keys)
	gids := make([]uint32, n)
	var p hashtable.Probe
	nt.FindOrInsert(&p, keys, n, nil, gids)
	for r, g := range gids {
		if g != uint32(r) || nt.Len() != n {
			return nil, qerr.Internalf("exec/hashagg: moving %d groups to a table of every key gave group %d id %d", n, r, g)
		}
	}
	return nt, nil
}

// Grouping a Final aggregate on one integer key when string keys follow
// from it. The partial states of GROUP BY c_custkey, c_name, nation reach
// the Final aggregate with the names as strings (no file codes there):
// while each lead value comes with one string of each other key, the hash
// table gets the lead alone, each other key's string is kept once per
// lead value and a row's string is compared with it instead of being
// hashed into the key. A NULL, a lead value with a second string or a
// lead range too wide to index moves the groups to a table of every key,
// as for depKeys, so the answer never depends on it.

// depStrRows counts the rows a Final aggregate grouped on an integer key
// alone, its string keys following (DepStringKeyRows).
var depStrRows atomic.Int64

// DepStringKeyRows is the number of rows Final aggregates have grouped on
// an integer key alone, the string keys following from it, since the
// process started (for tests and profiles).
func DepStringKeyRows() int64 { return depStrRows.Load() }

// depStrings is the state while the string keys follow from the lead:
// the id of key i for lead value v is its entry in strs[i].
type depStrings struct {
	depKeys
	strs []strArena // per key (empty at lead)
}

// strArena holds strings end to end: entry e is bytes[offs[e]:offs[e+1]].
type strArena struct {
	bytes []byte
	offs  []int32
}

func (a *strArena) add(s string) (int32, bool) {
	if len(a.offs) == 0 {
		a.offs = append(a.offs, 0)
	}
	if int64(len(a.bytes))+int64(len(s)) > math.MaxInt32 {
		return 0, false
	}
	a.bytes = append(a.bytes, s...)
	a.offs = append(a.offs, int32(len(a.bytes)))
	return int32(len(a.offs) - 2), true
}

func (a *strArena) at(e int32) []byte { return a.bytes[a.offs[e]:a.offs[e+1]] }

// newDepStrings returns the state when types are one Int64 or Int32 key
// and string keys, else nil.
func newDepStrings(types []arrow.DataType) *depStrings {
	if len(types) < 2 {
		return nil
	}
	lead := -1
	for i, t := range types {
		switch t.ID() {
		case arrow.STRING:
		case arrow.INT64, arrow.INT32:
			if lead >= 0 {
				return nil
			}
			lead = i
		default:
			return nil
		}
	}
	if lead < 0 {
		return nil
	}
	return &depStrings{
		depKeys: depKeys{lead: lead, full: types, empty: true},
		strs:    make([]strArena, len(types)),
	}
}

// record checks that keys (every key) agree with the strings kept and
// keeps those of new lead values; false when they do not.
func (d *depStrings) record(keys []arrow.Array) bool {
	for _, k := range keys {
		if k.NullN() > 0 {
			return false
		}
	}
	switch a := keys[d.lead].(type) {
	case *array.Int64:
		return recordStrings(d, a.Int64Values(), keys)
	case *array.Int32:
		return recordStrings(d, a.Int32Values(), keys)
	}
	return false
}

func recordStrings[T int32 | int64](d *depStrings, vals []T, keys []arrow.Array) bool {
	if len(vals) == 0 {
		return true
	}
	if !d.cover(span(vals)) {
		return false
	}
	for i, k := range keys {
		if i == d.lead {
			continue
		}
		s, ok := k.(*array.String)
		if !ok {
			return false
		}
		ar := &d.strs[i]
		for r, v := range vals {
			p := &d.deps[d.at(int64(v), i)]
			val := s.Value(r)
			if *p < 0 {
				e, ok := ar.add(val)
				if !ok {
					return false
				}
				*p = e
				continue
			}
			if string(ar.at(*p)) != val {
				return false
			}
		}
	}
	depStrRows.Add(int64(len(vals)))
	return true
}

// expand returns every key's column for the lead column of some groups:
// the lead itself and each other key's strings by lead value. It takes
// over lead.
func (d *depStrings) expand(mem memory.Allocator, lead arrow.Array) []arrow.Array {
	n := lead.Len()
	vals := leadValues(lead)
	cols := make([]arrow.Array, len(d.full))
	for i := range cols {
		if i == d.lead {
			cols[i] = lead
			continue
		}
		b := array.NewStringBuilder(mem)
		ar := &d.strs[i]
		total := 0
		for _, v := range vals {
			total += len(ar.at(d.deps[d.at(v, i)]))
		}
		b.Reserve(n)
		b.ReserveData(total)
		for _, v := range vals {
			b.BinaryBuilder.UnsafeAppend(ar.at(d.deps[d.at(v, i)]))
		}
		cols[i] = b.NewArray()
		b.Release()
	}
	return cols
}

// memSize is the bytes of the kept strings and their index.
func (d *depStrings) memSize() int64 {
	n := d.depKeys.memSize()
	for _, a := range d.strs {
		n += int64(cap(a.bytes)) + int64(cap(a.offs))*4
	}
	return n
}

// leave moves the groups of t (keyed on the lead alone) to a new table of
// every key with the same group ids, and returns it.
func (d *depStrings) leave(m *kernel.ArrayMaker, t *hashtable.Table) (*hashtable.Table, error) {
	return moveGroups(m, t, d.full, d.expand)
}

// leadValues widens the lead column of some groups (Int64 or Int32, no
// NULLs) to int64s.
func leadValues(lead arrow.Array) []int64 {
	vals := make([]int64, lead.Len())
	switch a := lead.(type) {
	case *array.Int64:
		copy(vals, a.Int64Values())
	case *array.Int32:
		for r, v := range a.Int32Values() {
			vals[r] = int64(v)
		}
	}
	return vals
}

// span is the smallest and largest of vals, which is not empty.
func span[T int32 | int64](vals []T) (lo, hi int64) {
	lo, hi = int64(vals[0]), int64(vals[0])
	for _, v := range vals {
		lo, hi = min(lo, int64(v)), max(hi, int64(v))
	}
	return lo, hi
}
